//! tabix 1.16's query output for text files: the sequence names (`-l`), or the header and each
//! region's lines (`query_regions`), written to any `Write`.

use std::io::Write;

use crate::{Error, Reader, RegionList};

/// What is written besides the regions' lines.
#[derive(Clone, Copy, Debug, Default)]
pub struct Print {
    /// `-h`: the header lines first.
    pub header: bool,
    /// `-H`: the header lines only.
    pub only_header: bool,
    /// `--separate-regions`: the comment character to write before each region's lines.
    pub separate: Option<u8>,
}

fn line<W: Write + ?Sized>(out: &mut W, l: &[u8]) -> Result<(), Error> {
    out.write_all(l)
        .and_then(|()| out.write_all(b"\n"))
        .map_err(Error::Write)
}

/// The regions tabix queries: those of `regions_file` (`-R`), then `regions`; the whole file
/// (`.`) when neither names any.
///
/// # Errors
/// `regions_file` cannot be read (the message of [`RegionList::read`]).
pub fn region_strings(
    regions_file: Option<&str>,
    regions: &[String],
    opts: &hfile::OpenOptions,
) -> Result<Vec<String>, String> {
    let mut regs = match regions_file {
        Some(f) => RegionList::read(f, opts)?.region_strings(),
        None => Vec::new(),
    };
    if regs.is_empty() && regions.is_empty() {
        regs.push(".".to_string());
    }
    regs.extend(regions.iter().cloned());
    Ok(regs)
}

/// `-l`: the index's sequence names, one a line.
///
/// # Errors
/// [`Error::Write`]: `out` fails.
pub fn names<W: Write + ?Sized>(reader: &Reader, out: &mut W) -> Result<(), Error> {
    reader
        .names()
        .iter()
        .try_for_each(|n| line(out, n.as_bytes()))
}

/// tabix's `query_regions`: the header, then each region's lines in turn (a region that does
/// not parse goes to `bad_region` with htslib's complaint and is passed over), those outside
/// the targets dropped, `--separate-regions`' line before the first line of each region that
/// has one.
///
/// # Errors
/// [`Error::Write`] when `out` fails, else the data's read error.
pub fn regions<W: Write + ?Sized>(
    reader: &mut Reader,
    regions: &[String],
    p: &Print,
    targets: Option<&RegionList>,
    out: &mut W,
    bad_region: &mut dyn FnMut(&str),
) -> Result<(), Error> {
    if p.header {
        for h in reader.header()? {
            line(out, &h)?;
        }
    }
    if p.only_header {
        return Ok(());
    }
    let meta = reader.meta().clone();
    for region in regions {
        let target = match crate::resolve(&meta, region) {
            Ok(t) => t,
            Err(why) => {
                bad_region(&why);
                continue;
            }
        };
        let mut q = reader.query_region(target);
        let mut found = false;
        while let Some((l, beg, end)) = q.next_record()? {
            if let Some(t) = targets {
                let name = crate::interval::parse(&meta, l).map_or(&[][..], |iv| iv.name);
                if !t.overlaps(name, beg, end - 1) {
                    continue;
                }
            }
            if let (false, Some(c)) = (found, p.separate) {
                let mut head = vec![c];
                head.extend_from_slice(region.as_bytes());
                line(out, &head)?;
            }
            found = true;
            line(out, l)?;
        }
    }
    Ok(())
}
