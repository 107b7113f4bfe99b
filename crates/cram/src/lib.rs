//! CRAM framing (the foundation of the CRAM reader): the file definition, ITF8/LTF8 integers
//! and container headers, every length checked against the bytes that hold it.

pub mod container;
pub mod error;
pub mod file;
pub mod num;

pub use container::ContainerHeader;
pub use error::Error;
pub use file::{FileDefinition, Version};
