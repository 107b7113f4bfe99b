//! BGZF: blocked gzip as used by BAM, CSI and tabix files.

mod virtual_offset;

pub use virtual_offset::VirtualOffset;
