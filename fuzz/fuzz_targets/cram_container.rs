//! CRAM framing: the file definition, every container header, every block (its CRC32 in
//! 3.x; a 2.x version byte skips the checks, so mutations reach the parsers) decoded, and the
//! compression and slice headers parsed.
#![no_main]

use cram::num::Cursor;
use cram::{Block, CompressionHeader, ContainerHeader, ContentType, FileDefinition, SliceHeader};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(def) = FileDefinition::parse(data) else {
        return;
    };
    let mut at = FileDefinition::LEN;
    while let Some(rest) = data.get(at..).filter(|r| !r.is_empty()) {
        let Ok(h) = ContainerHeader::parse(rest, at as u64, def.version) else {
            return;
        };
        let body_at = at + h.header_len;
        // parse checked the length against the input.
        let body = &data[body_at..body_at + h.length];
        let mut c = Cursor::new(body, body_at as u64);
        for _ in 0..h.blocks.clamp(0, 1024) {
            let Ok(b) = Block::read(&mut c, def.version) else {
                break;
            };
            let Ok(out) = b.decode() else { continue };
            assert_eq!(out.len(), b.raw_size, "decoded size as declared");
            match b.content_type {
                ContentType::CompressionHeader => {
                    let _ = CompressionHeader::parse(&out, b.offset);
                }
                ContentType::SliceHeader => {
                    let _ = SliceHeader::parse(&out, b.offset, def.version);
                }
                _ => {}
            }
        }
        at = body_at + h.length;
    }
});
