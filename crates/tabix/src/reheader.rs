//! tabix 1.16's `reheader_file` (`tabix -r HEADER FILE`): the header lines at the start of
//! `FILE` (lines beginning with the comment character) are replaced by `HEADER`'s contents
//! (given a final newline unless its size is a multiple of 32767 bytes, as tabix's read loop
//! does), compressed into new blocks with the data left in the header's last block; every
//! later block is copied as it is, then an EOF marker is added (so the output ends with two,
//! as tabix's does).

use std::io::{self, Read, Seek, SeekFrom, Write};

use crate::Error;

/// tabix reads the header file in pieces of this many bytes.
const PAGE: usize = 32767;

/// Writes `file` with the header of the local file `header` to `out` (flushed at the end);
/// `meta` is the comment character that starts a header line.
///
/// # Errors
/// [`Error::EmptyFirstBlock`] and [`Error::NoBody`] where tabix refuses the file,
/// [`Error::HeaderFile`] when the header cannot be read, [`Error::Write`] when `out` fails,
/// else the data's read error.
pub fn reheader(file: &str, header: &str, meta: u8, out: &mut dyn Write) -> Result<(), Error> {
    let opts = hfile::OpenOptions::default();
    let src = hfile::open(file, &opts).map_err(Error::Open)?;
    let mut r = bgzf::Reader::with_name(src, file)?;
    let mut block = r.fill_block()?.to_vec();
    if block.is_empty() {
        return Err(Error::EmptyFirstBlock { name: file.into() });
    }
    // Where the header ends in the block holding its end.
    let mut skip = 0;
    if block[0] == meta {
        skip = 1;
        let mut next = |skip: &mut usize, block: &mut Vec<u8>| -> Result<(), Error> {
            if *skip >= block.len() {
                r.advance(block.len());
                *block = r.fill_block()?.to_vec();
                if block.is_empty() {
                    return Err(Error::NoBody { name: file.into() });
                }
                *skip = 0;
            }
            Ok(())
        };
        loop {
            next(&mut skip, &mut block)?;
            if block[skip] == b'\n' {
                skip += 1;
                next(&mut skip, &mut block)?;
                if block[skip] != meta {
                    break;
                }
            }
            skip += 1;
        }
    }
    r.advance(block.len());
    let copy_from = r.virtual_offset().coffset();

    let mut text = Vec::new();
    std::fs::File::open(header)
        .and_then(|mut f| f.read_to_end(&mut text))
        .map_err(|source| Error::HeaderFile {
            name: header.into(),
            source,
        })?;
    if text.len() % PAGE != 0 && text.last() != Some(&b'\n') {
        text.push(b'\n');
    }
    let mut w = bgzf::Writer::new(Vec::new());
    w.write_all(&text)
        .and_then(|()| w.write_all(&block[skip..]))
        .map_err(Error::Write)?;
    let mut head = w.finish().map_err(Error::Write)?;
    // The writer ends with an EOF marker; tabix's flush does not.
    head.truncate(head.len().saturating_sub(bgzf::block::EOF_MARKER.len()));

    out.write_all(&head).map_err(Error::Write)?;
    let mut raw = hfile::open(file, &opts).map_err(Error::Open)?;
    raw.seek(SeekFrom::Start(copy_from))
        .map_err(|source| Error::Io {
            name: file.into(),
            source,
        })?;
    copy(&mut raw, out, file)?;
    out.write_all(&bgzf::block::EOF_MARKER)
        .and_then(|()| out.flush())
        .map_err(Error::Write)
}

/// Copies the rest of `raw` to `out`, telling a read error from a write error.
fn copy(raw: &mut impl Read, out: &mut dyn Write, file: &str) -> Result<(), Error> {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match raw.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(source) => {
                return Err(Error::Io {
                    name: file.into(),
                    source,
                })
            }
        };
        out.write_all(&buf[..n]).map_err(Error::Write)?;
    }
}
