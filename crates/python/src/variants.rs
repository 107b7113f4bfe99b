//! The seam for tabix-indexed text (VCF, BED, GFF, any tab-separated columns): today
//! `tabix::Reader`; the `hts` facade's `variant::Reader` takes its place.

use ::region::{Position, RefId, Region};

use crate::Error;

/// One open tabix-indexed file.
pub struct Variants {
    reader: tabix::Reader,
    location: String,
    index: Option<String>,
    transport: hfile::OpenOptions,
    /// Lines have been read: a query from the first line (`.`) needs a fresh reader, the
    /// tabix reader reading on from where it stands.
    used: bool,
}

/// What a `TabixFile.fetch` reads: pysam's `reference, start, end` (0-based, half-open) or a
/// region string in tabix's syntax; neither: every line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Fetch {
    /// A sequence name.
    pub reference: Option<String>,
    /// 0-based start.
    pub start: Option<i64>,
    /// 0-based end, exclusive.
    pub end: Option<i64>,
    /// A region string (`chr1:1,000-2,000`, `{name}`, `.`).
    pub region: Option<String>,
}

impl Variants {
    /// Opens `location` with the index `index`, or the `.csi` or `.tbi` beside it.
    pub fn open(
        location: &str,
        index: Option<&str>,
        transport: &hfile::OpenOptions,
    ) -> Result<Variants, Error> {
        Ok(Variants {
            reader: tabix::Reader::open(location, index, transport)?,
            location: location.to_string(),
            index: index.map(str::to_string),
            transport: transport.clone(),
            used: false,
        })
    }

    /// The sequence names of the index (pysam's `contigs`).
    pub fn contigs(&self) -> &[String] {
        self.reader.names()
    }

    /// The header lines (those starting with the index's comment character), without their
    /// line ends.
    pub fn header(&mut self) -> Result<Vec<Vec<u8>>, Error> {
        self.used = true;
        Ok(self.reader.header()?)
    }

    /// What `fetch` reads; pysam's error for what htslib cannot make an iterator of (an
    /// unknown sequence, a reversed range, a region that does not parse).
    pub fn target(&self, fetch: &Fetch) -> Result<Region, Error> {
        let text = match (&fetch.region, &fetch.reference) {
            (Some(region), _) => region.clone(),
            (None, None) if fetch.start.is_some() || fetch.end.is_some() => {
                return Err(Error::Argument("start and end need a reference".into()))
            }
            (None, None) => return Ok(Region::All),
            (None, Some(reference)) => {
                let tid = self.contigs().iter().position(|c| c == reference);
                let beg = fetch.start.unwrap_or(0);
                let end = fetch
                    .end
                    .unwrap_or(i64::try_from(Position::MAX.get()).unwrap_or(i64::MAX));
                return match tid {
                    Some(tid) if 0 <= beg && beg <= end => Ok(Region::Ref {
                        tid: RefId::new(tid),
                        beg: Position::saturating_from(beg),
                        end: Position::saturating_from(end),
                    }),
                    _ => Err(no_iterator(&format!(
                        "{reference}:{}-{}",
                        beg.saturating_add(1),
                        end
                    ))),
                };
            }
        };
        match tabix::resolve(self.reader.meta(), &text) {
            Ok(Some(target)) => Ok(target),
            Ok(None) | Err(_) => Err(no_iterator(&text)),
        }
    }

    /// The lines of `target`, handed to `each` until it returns `false`.
    pub fn run(
        &mut self,
        target: Region,
        each: &mut dyn FnMut(&[u8]) -> bool,
    ) -> Result<(), Error> {
        if self.used && matches!(target, Region::All | Region::Unplaced) {
            self.reader =
                tabix::Reader::open(&self.location, self.index.as_deref(), &self.transport)?;
        }
        self.used = true;
        let mut query = self.reader.query_region(Some(target));
        while let Some(line) = query.next_line()? {
            if !each(line) {
                break;
            }
        }
        Ok(())
    }
}

fn no_iterator(region: &str) -> Error {
    Error::Argument(format!("could not create iterator for region '{region}'"))
}
