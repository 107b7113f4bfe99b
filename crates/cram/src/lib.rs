//! CRAM reading, begun: the file definition, ITF8/LTF8 integers, container headers and
//! blocks with their codecs, every length checked against the bytes that hold it.

pub mod block;
mod codec;
pub mod container;
pub mod error;
pub mod file;
pub mod num;

pub use block::{Block, ContentType, Method};
pub use container::ContainerHeader;
pub use error::Error;
pub use file::{FileDefinition, Version};
