//! The 26-byte file definition: `CRAM`, major and minor version, a 20-byte file id.

use crate::Error;

/// The CRAM versions this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    pub major: u8,
    pub minor: u8,
}

impl Version {
    /// 3.x containers carry CRC32s on headers and blocks.
    pub fn has_crc(self) -> bool {
        self.major >= 3
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDefinition {
    pub version: Version,
    pub file_id: [u8; 20],
}

impl FileDefinition {
    pub const LEN: usize = 26;

    pub fn parse(data: &[u8]) -> Result<Self, Error> {
        if data.len() < Self::LEN {
            return Err(Error::at(
                data.len() as u64,
                "truncated CRAM file definition",
            ));
        }
        if &data[..4] != b"CRAM" {
            return Err(Error::at(0, "not a CRAM file (no CRAM magic)"));
        }
        let version = Version {
            major: data[4],
            minor: data[5],
        };
        if !matches!((version.major, version.minor), (2, 1) | (3, 0) | (3, 1)) {
            return Err(Error::at(
                4,
                format!(
                    "unsupported CRAM version {}.{}",
                    version.major, version.minor
                ),
            ));
        }
        let mut file_id = [0; 20];
        file_id.copy_from_slice(&data[6..26]);
        Ok(FileDefinition { version, file_id })
    }
}
