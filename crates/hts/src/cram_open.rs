//! Opening a CRAM with its reference: the file through [`RemoteParts`] (the cache for a URL),
//! the reference a local or remote FASTA (`-T`), else found by each `@SQ` line's `M5`/`UR`
//! through `REF_PATH`/`REF_CACHE`, with URLs read through hfile ([`References`]).

use std::sync::Arc;

use crate::cram_cache::RemoteParts;
use crate::cram_refs::References;
use crate::Error;

/// Data requests in flight at once for a remote CRAM, unless the transport says (`--fetchers`;
/// BAM's default is 8). A container is decoded whole and in order, once all of it has arrived;
/// eight fetched at once over a link they share all finish together, and decoding starts only
/// then. Six let the first ones finish early and be decoded while the rest arrive, and still
/// fill a store that caps each connection. `bench-remote --format cram --runs 5 --cases r10
/// --variants`, 2026-12-06: ec2 r10 0.150 s with 8, 0.134 s with 6, 0.135 s with 4; s3 0.112 s
/// with 8, 0.109 s with 6, 0.115 s with 4.
pub const FETCHERS: usize = 6;

/// hfile's default transport with [`FETCHERS`]: what a remote CRAM is read with unless the
/// options give a transport of their own.
pub fn transport() -> hfile::OpenOptions {
    hfile::OpenOptions {
        fetchers: FETCHERS,
        ..Default::default()
    }
}

/// Opens the CRAM `file` (path, URL or `-`) through `parts`, with `reference` (a FASTA path or
/// URL) if given. A remote reference's index and first bytes are fetched on a thread of their
/// own while the CRAM's opening is read: neither needs an answer from the other.
pub fn open(
    file: &str,
    reference: Option<&str>,
    transport: &hfile::OpenOptions,
    parts: &mut RemoteParts,
) -> Result<cram::Reader, Error> {
    let references = Arc::new(References::new(transport));
    let remote = reference.filter(|p| cram::remote::is_url(p)).map(|p| {
        let (p, refs) = (p.to_string(), references.clone());
        std::thread::spawn(move || cram::Fasta::open_remote(&p, refs.as_ref()))
    });
    let local = match reference {
        Some(p) if remote.is_none() => {
            Some(cram::Fasta::open(std::path::Path::new(p)).map_err(Error::Reference)?)
        }
        _ => None,
    };
    // htslib names generated reads after the file name as given, less its directories.
    let prefix = file.rsplit('/').next().unwrap_or(file);
    let (input, opening) = parts.open(file).map_err(|e| Error::cram(file, e))?;
    let mut reader = cram::Reader::open_source(input, prefix, local).map_err(|e| {
        if e.is_not_cram() {
            // Another format under a CRAM's name: the caller may try it as one.
            Error::Format {
                file: hfile::redact_text(file),
                message: e.to_string(),
            }
        } else {
            Error::cram(file, e)
        }
    })?;
    parts.keep_opening(opening);
    if let Some(fetch) = remote {
        let fasta = fetch
            .join()
            .map_err(|_| Error::Reference("the reference's fetch failed".to_string()))?
            .map_err(Error::Reference)?;
        reader.set_reference(fasta);
    }
    reader.set_remote(references);
    Ok(reader)
}

/// htslib's warnings about `@SQ` lengths that differ from the reference's
/// (`sanitise_SQ_lines`), one line each.
pub fn length_warnings(reader: &cram::Reader) -> Vec<String> {
    let Some(fasta) = reader.reference() else {
        return Vec::new();
    };
    reader
        .header()
        .length_mismatches(fasta)
        .into_iter()
        .map(|(name, stated, found)| {
            let name = String::from_utf8_lossy(&name);
            format!("[W::sanitise_SQ_lines] Header @SQ length mismatch for ref {name}, {stated} vs {found}")
        })
        .collect()
}

/// Opens the CRAM `file` (path, URL or `-`) with no reference and no cache, for what reads its
/// opening and end only (samtools' quickcheck: the header's references and the EOF container).
/// The error names no file (the caller does, in its command's words).
pub fn open_unreferenced(
    file: &str,
    transport: &hfile::OpenOptions,
) -> Result<cram::Reader, String> {
    let input = cram::input::open(file, transport)?;
    cram::Reader::open_source(input, file, None).map_err(|e| e.to_string())
}
