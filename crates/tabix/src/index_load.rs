//! Finding and loading a tabix index with as few round trips and bytes as a query needs: every
//! candidate name asked for at once (its first bytes), the first that exists read, and only the
//! sequences the query's regions name kept, reading stopping after the last of them (a TBI or
//! CSI is BGZF, laid out sequence by sequence, so a query on chromosome 1 needs only the start
//! of it).

use std::io::{Cursor, Read};

use hfile::{HFile, Hints, OpenOptions};
use index::{Index, Loader, Outcome, Wanted};

use crate::Error;

/// The first request for an index asks for this much for each sequence the regions name (the
/// 2.2 MB TBI of a 1.1 GB whole-genome VCF holds chromosome 1 in its first 0.2 MB), at most
/// [`FIRST_REQUEST_CAP`]; the rest is read on as the load needs it.
const FIRST_PIECE: u64 = 256 * 1024;
const FIRST_REQUEST_CAP: u64 = 4 << 20;

/// Which sequences of an index a query keeps.
#[derive(Clone, Debug)]
pub enum Keep {
    /// All of them (listing, `.` and `*`, a reader opened without regions).
    All,
    /// Those these region strings name; any that does not parse is left to the query to
    /// report, and `.` or `*` keep all.
    Regions(Vec<String>),
}

impl Keep {
    /// The first request's size: a piece per distinct name in the regions.
    fn first_request(&self) -> u64 {
        match self {
            Keep::All => FIRST_REQUEST_CAP,
            Keep::Regions(r) => {
                let mut names: Vec<&str> = r
                    .iter()
                    .map(|s| s.rsplit_once(':').map_or(s.as_str(), |(n, _)| n))
                    .collect();
                names.sort_unstable();
                names.dedup();
                let n = u64::try_from(names.len().max(1)).unwrap_or(u64::MAX);
                FIRST_PIECE.saturating_mul(n).min(FIRST_REQUEST_CAP)
            }
        }
    }

    /// The sequences to keep, given the index's names (its tabix meta).
    fn wanted(&self, header: &Index) -> Wanted {
        let Keep::Regions(regions) = self else {
            return Wanted::all();
        };
        let Ok(Some(meta)) = header.tabix() else {
            return Wanted::all();
        };
        let mut tids = Vec::new();
        for r in regions {
            match crate::resolve(&meta, r) {
                Ok(Some(region::Region::Ref { tid, .. })) => tids.push(tid.get()),
                Ok(Some(region::Region::All | region::Region::Unplaced)) => return Wanted::all(),
                Ok(None) | Err(_) => {}
            }
        }
        Wanted::refs(tids)
    }
}

/// Whether `e` says the object is not there: a missing file, a 404, or an object store's 403,
/// which is what S3 answers for a missing key without list permission (as the bam facade
/// reads it).
fn absent(name: &str, e: &hfile::Error) -> bool {
    let object_store = matches!(
        hfile::scheme_of(name).as_deref(),
        Some("s3" | "s3+http" | "s3+https" | "gs" | "gs+http" | "gs+https")
    );
    e.is_not_found() || (object_store && matches!(e, hfile::Error::Status { status: 403, .. }))
}

/// A reader that keeps what it passes on, so that the bytes read for the header can be read
/// again for the full load.
struct Tee<'a> {
    inner: &'a mut HFile,
    seen: Vec<u8>,
}

impl Read for Tee<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.seen.extend_from_slice(&buf[..n]);
        Ok(n)
    }
}

/// Loads the index `name` (already opened, its first bytes asked for), keeping what `keep`
/// needs: first its header (the names), then, from the same bytes and on, the sequences the
/// regions name. `None` when it does not exist.
fn load(
    name: &str,
    mut file: HFile,
    keep: &Keep,
    each: &mut dyn FnMut(usize, &Index),
) -> Result<Option<Index>, Error> {
    let len = match file.size() {
        Ok(len) => Some(len),
        Err(e) if absent(name, &e) => return Ok(None),
        Err(e) if e.is_size_unknown() => None,
        Err(e) => return Err(Error::Open(e)),
    };
    let with_len = |l: Loader| match len {
        Some(n) => l.file_len(n),
        None => l,
    };
    let index = match keep {
        Keep::All => with_len(Loader::new(name)).read(&mut file),
        Keep::Regions(_) => {
            let mut tee = Tee {
                inner: &mut file,
                seen: Vec::new(),
            };
            let header = match with_len(Loader::new(name).wanted(Wanted::none()))
                .read_prefix(&mut tee)
                .map_err(Error::Index)?
            {
                Outcome::Loaded(l) => l.index,
                // The whole file was read and still held no header: say so as a full load would.
                Outcome::NeedMore(_) => {
                    let seen = std::mem::take(&mut tee.seen);
                    return with_len(Loader::new(name))
                        .read(Cursor::new(seen))
                        .map(|l| Some(l.index))
                        .map_err(Error::Index);
                }
            };
            let seen = std::mem::take(&mut tee.seen);
            let wanted = keep.wanted(&header);
            let mut loader = with_len(Loader::new(name).wanted(wanted));
            if hfile::scheme_of(name).is_none() {
                // A local index is read to its end (its bytes cost nothing): damage past the
                // sequences kept fails the query as it fails tabix's whole load.
                loader = loader.to_the_end();
            }
            loader.read_with(Cursor::new(seen).chain(&mut file), each)
        }
    };
    // Reading stopped after the last sequence wanted: the rest of the file is not fetched.
    file.abandon();
    index.map(|l| Some(l.index)).map_err(Error::Index)
}

/// Opens every name in `names` and asks for the first bytes of each at once, then loads the
/// first that exists (the others' requests are stopped). `each` sees the index after each
/// sequence kept is loaded (with its id), while the rest arrives.
pub(crate) fn find(
    names: &[String],
    opts: &OpenOptions,
    keep: &Keep,
    each: &mut dyn FnMut(usize, &Index),
) -> Result<Option<Index>, Error> {
    let first = keep.first_request();
    let mut opened: Vec<(&String, Result<HFile, hfile::Error>)> = names
        .iter()
        .map(|n| {
            let f = hfile::open(n, opts).map(|mut f| {
                // Asking for the first bytes at once tells the size and whether the index
                // exists, where a size asked alone costs a HEAD (which a pre-signed GET URL
                // refuses).
                f.advise(std::slice::from_ref(&(0..first)));
                f
            });
            (n, f)
        })
        .collect();
    let mut found = None;
    let mut rest = opened.drain(..);
    for (n, f) in rest.by_ref() {
        let file = match f {
            Ok(f) => f,
            Err(e) if absent(n, &e) => continue,
            Err(e) => return Err(Error::Open(e)),
        };
        if let Some(i) = load(n, file, keep, each)? {
            found = Some(i);
            break;
        }
    }
    for (_, f) in rest {
        if let Ok(mut f) = f {
            f.abandon();
        }
    }
    Ok(found)
}
