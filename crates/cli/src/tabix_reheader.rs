//! `hts tabix -r HEADER FILE`: tabix 1.16's `reheader_file`. The header lines at the start of
//! `FILE` (lines beginning with the comment character) are replaced by `HEADER`'s contents
//! (given a final newline unless its size is a multiple of 32767 bytes, as tabix's read loop
//! does), compressed into new blocks with the data left in the header's last block; every
//! later block is copied as it is, then an EOF marker is added (so the output ends with two,
//! as tabix's does). The result goes to standard output.

use std::io::{self, Read, Seek, SeekFrom, Write};
use std::process::ExitCode;

use crate::tabix_conf::Conf;

/// tabix reads the header file in pieces of this many bytes.
const PAGE: usize = 32767;

enum Failure {
    Data(String),
    NoBody,
    EmptyFirstBlock,
    Header(String),
    Write(io::Error),
}

pub fn run(file: &str, header: &str, conf: &Conf) -> ExitCode {
    match reheader(file, header, conf.meta_char(file)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Write(e)) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(f) => {
            match f {
                Failure::Data(e) => eprintln!("hts tabix: {e}"),
                Failure::NoBody => eprintln!("FIXME: No body in the file: {file}"),
                // tabix returns -1 from main here: exit status 255, no message.
                Failure::EmptyFirstBlock => return ExitCode::from(255),
                Failure::Header(e) => eprintln!("{header}: {e}"),
                Failure::Write(e) => eprintln!("hts tabix: writing to standard output failed: {e}"),
            }
            ExitCode::from(1)
        }
    }
}

fn reheader(file: &str, header: &str, meta: u8) -> Result<(), Failure> {
    let opts = hfile::OpenOptions::default();
    let data = |e: &dyn std::fmt::Display| Failure::Data(e.to_string());
    let src = hfile::open(file, &opts).map_err(|e| data(&e))?;
    let mut r = bgzf::Reader::with_name(src, file).map_err(|e| data(&e))?;
    let mut block = r.fill_block().map_err(|e| data(&e))?.to_vec();
    if block.is_empty() {
        return Err(Failure::EmptyFirstBlock);
    }
    // Where the header ends in the block holding its end.
    let mut skip = 0;
    if block[0] == meta {
        skip = 1;
        let mut next = |skip: &mut usize, block: &mut Vec<u8>| -> Result<(), Failure> {
            if *skip >= block.len() {
                r.advance(block.len());
                *block = r.fill_block().map_err(|e| data(&e))?.to_vec();
                if block.is_empty() {
                    return Err(Failure::NoBody);
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
        .map_err(|e| Failure::Header(strerror(&e)))?;
    if text.len() % PAGE != 0 && text.last() != Some(&b'\n') {
        text.push(b'\n');
    }
    let mut w = bgzf::Writer::new(Vec::new());
    w.write_all(&text)
        .and_then(|()| w.write_all(&block[skip..]))
        .map_err(Failure::Write)?;
    let mut head = w.finish().map_err(Failure::Write)?;
    // The writer ends with an EOF marker; tabix's flush does not.
    head.truncate(head.len().saturating_sub(bgzf::block::EOF_MARKER.len()));

    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 20, stdout.lock());
    out.write_all(&head).map_err(Failure::Write)?;
    let mut raw = hfile::open(file, &opts).map_err(|e| data(&e))?;
    raw.seek(SeekFrom::Start(copy_from))
        .map_err(|e| data(&format!("{file}: {e}")))?;
    copy(&mut raw, &mut out, file)?;
    out.write_all(&bgzf::block::EOF_MARKER)
        .and_then(|()| out.flush())
        .map_err(Failure::Write)
}

/// Copies the rest of `raw` to `out`, telling a read error from a write error.
fn copy(raw: &mut impl Read, out: &mut impl Write, file: &str) -> Result<(), Failure> {
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match raw.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::Data(format!("{file}: {e}"))),
        };
        out.write_all(&buf[..n]).map_err(Failure::Write)?;
    }
}

/// The C library's text for an I/O error (`strerror`), without Rust's "(os error N)".
fn strerror(e: &io::Error) -> String {
    let s = e.to_string();
    s.split(" (os error").next().unwrap_or(&s).to_string()
}
