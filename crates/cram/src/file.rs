//! The 26-byte file definition: `CRAM`, major and minor version, a 20-byte file id.

use crate::Error;

/// The CRAM versions this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// The major version.
    pub major: u8,
    /// The minor version.
    pub minor: u8,
}

impl Version {
    /// 3.x containers carry CRC32s on headers and blocks.
    pub fn has_crc(self) -> bool {
        self.major >= 3
    }
}

/// The file definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDefinition {
    /// The CRAM version.
    pub version: Version,
    /// The file id (free text, zero-padded).
    pub file_id: [u8; 20],
}

impl FileDefinition {
    /// Its length in bytes.
    pub const LEN: usize = 26;

    /// Reads it from the first bytes of a file.
    pub fn parse(data: &[u8]) -> Result<Self, Error> {
        if data.len() < Self::LEN {
            return Err(Error::at(
                data.len() as u64,
                "truncated CRAM file definition",
            ));
        }
        if &data[..4] != b"CRAM" {
            return Err(Error::at(0, crate::error::NOT_CRAM));
        }
        let version = Version {
            major: data[4],
            minor: data[5],
        };
        // 2.0 is read as 2.1 is (htslib tells them apart only by the EOF container, which
        // 2.1 brought).
        if !matches!(
            (version.major, version.minor),
            (2, 0) | (2, 1) | (3, 0) | (3, 1)
        ) {
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

/// The EOF container 3.x files end with (htslib's `TEMPLATE_3`).
const EOF_3: [u8; 38] = [
    0x0f, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xe0, 0x45, 0x4f, 0x46, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x00, 0x05, 0xbd, 0xd9, 0x4f, 0x00, 0x01, 0x00, 0x06, 0x06, 0x01, 0x00, 0x01, 0x00,
    0x01, 0x00, 0xee, 0x63, 0x01, 0x4b,
];

/// The EOF container of 2.1 files (`TEMPLATE_2_1`).
const EOF_2_1: [u8; 30] = [
    0x0b, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, 0x0f, 0xe0, 0x45, 0x4f, 0x46, 0x00, 0x00, 0x00,
    0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x06, 0x06, 0x01, 0x00, 0x01, 0x00, 0x01, 0x00,
];

impl Version {
    /// Whether files of this version end in an EOF container: from 2.1 on (htslib's
    /// `cram_check_EOF` answers 3, "no EOF block in this format", for 2.0, and a 2.0 file that
    /// ends without one is not called truncated).
    pub fn has_eof_container(self) -> bool {
        (self.major, self.minor) >= (2, 1)
    }

    /// How many bytes at the end of a file hold its EOF container (none in 2.0: its last
    /// data container ends the file).
    pub fn eof_len(self) -> usize {
        if self.major >= 3 {
            EOF_3.len()
        } else if self.has_eof_container() {
            EOF_2_1.len()
        } else {
            0
        }
    }

    /// Whether `tail` (the file's last [`Version::eof_len`] bytes) is the EOF container, as
    /// htslib's `cram_check_EOF` compares it (the ninth byte's high bits ignored: early Java
    /// and C writers disagreed on that ITF8).
    pub fn is_eof_container(self, tail: &[u8]) -> bool {
        let want: &[u8] = if self.major >= 3 { &EOF_3 } else { &EOF_2_1 };
        tail.len() == want.len()
            && tail
                .iter()
                .zip(want)
                .enumerate()
                .all(|(i, (&a, &b))| if i == 8 { a & 0x0f == b } else { a == b })
    }
}
