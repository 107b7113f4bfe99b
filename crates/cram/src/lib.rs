//! CRAM reading, begun: the file definition, ITF8/LTF8 integers, container headers and
//! blocks with their codecs, every length checked against the bytes that hold it.

pub mod block;
mod codec;
pub mod compression;
pub mod container;
pub mod encoding;
pub mod error;
pub mod file;
pub mod num;
pub mod record;
pub mod series;
pub mod slice;

pub use block::{Block, ContentType, Method};
pub use compression::CompressionHeader;
pub use container::ContainerHeader;
pub use encoding::Encoding;
pub use error::Error;
pub use file::{FileDefinition, Version};
pub use slice::SliceHeader;
