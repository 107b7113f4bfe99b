//! Where a slice's reference bases come from: `-T`'s FASTA or one found by the `@SQ` tags
//! (`refpath`), a single-reference slice's span or, for multi-reference slices, the span of
//! each reference their records reach; checked against the slice's MD5.

use std::sync::Arc;

use super::ahead::Span;
use super::decode::SliceRef;
use super::Reader;
use crate::fasta::Fasta;
use crate::md5::SpanCheck;
use crate::refpath::Candidate;
use crate::{Error, SliceHeader};

impl Reader {
    /// Bases `from..=to` of reference `id` (cut to the reference), for the records of a
    /// multi-reference slice on it.
    pub(super) fn load_span(&mut self, id: i32, from: i64, to: i64, at: u64) -> Result<(), Error> {
        let (bases, start, _) = self.span(id, from, to, at)?;
        self.whole.insert(id, (bases, start));
        Ok(())
    }

    /// Bases `from..=to` of reference `id`, cut to the reference (1-based), with the span
    /// they are.
    pub(super) fn span(
        &mut self,
        id: i32,
        from: i64,
        to: i64,
        at: u64,
    ) -> Result<(Vec<u8>, i64, i64), Error> {
        let name = self.ref_name(id, at)?;
        let fasta = self.fasta(&name, at)?;
        let len = fasta
            .entry(&name)
            .map(|e| e.length as i64)
            .ok_or_else(|| missing(&name, at))?;
        let start = from.max(1);
        let end = to.min(len);
        let bases = if end >= start {
            fasta
                .fetch(&name, start as u64, end as u64)
                .map_err(|e| Error::at(at, e.what))?
        } else {
            Vec::new()
        };
        Ok((bases, start, end))
    }

    pub(super) fn ref_name(&self, id: i32, at: u64) -> Result<Vec<u8>, Error> {
        self.header
            .reference_name(id)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Error::at(at, format!("reference id {id} not in the header")))
    }

    /// The FASTA holding reference `name`: `-T`'s, else one found by its `@SQ` tags
    /// (`refpath`), kept for the references after it.
    pub(super) fn fasta(&mut self, name: &[u8], at: u64) -> Result<&mut Fasta, Error> {
        if self
            .reference
            .as_ref()
            .is_some_and(|f| f.entry(name).is_some())
            || self.explicit
        {
            return self.reference.as_mut().ok_or_else(|| missing(name, at));
        }
        let md5 = self.header.sq_tag(name, b"M5");
        let ur = self.header.sq_tag(name, b"UR");
        let fasta = self.find_reference(name, md5.as_deref(), ur.as_deref(), at)?;
        // Bases read ahead came from the FASTA this one replaces.
        self.forget_ahead();
        self.reference = Some(fasta);
        self.reference.as_mut().ok_or_else(|| missing(name, at))
    }

    /// htslib's `cram_populate_ref`: by `md5` in the cache and each `REF_PATH` entry in turn
    /// (a URL fetched through the caller's transport, checked and stored in the cache), else
    /// the FASTA `ur` names. Failures of URLs tried are named if nothing is found.
    fn find_reference(
        &self,
        name: &[u8],
        md5: Option<&str>,
        ur: Option<&str>,
        at: u64,
    ) -> Result<Fasta, Error> {
        let shown = String::from_utf8_lossy(name);
        let mut failures = Vec::new();
        if let Some(md5) = md5 {
            for place in crate::refpath::candidates(md5) {
                match place {
                    Candidate::Local(p) if p.is_file() => {
                        return Fasta::bare(&p, name).map_err(|e| Error::at(at, e))
                    }
                    Candidate::Local(_) => {}
                    Candidate::Url(url) => match self.fetch_by_md5(name, md5, &url, at)? {
                        Ok(Some(fasta)) => return Ok(fasta),
                        Ok(None) => {}
                        Err(why) => failures.push(why),
                    },
                }
            }
        }
        if let Some(path) = ur.and_then(crate::refpath::ur_file) {
            return Fasta::open(&path).map_err(|e| Error::at(at, e));
        }
        let tried = if failures.is_empty() {
            String::new()
        } else {
            format!("; {}", failures.join("; "))
        };
        Err(Error::at(
            at,
            format!(
                "reference {shown} is needed to decode this CRAM; give it with -T/--reference \
                 (or in REF_PATH/REF_CACHE by its M5, or at its @SQ UR path){tried}"
            ),
        ))
    }

    /// Reference `name` from a `REF_PATH` URL: its `@SQ LN` bytes asked for as one bounded
    /// range. `Ok(Ok(None))`: not there; `Ok(Err)`: the URL failed (named); `Err`: the bytes
    /// are not the reference (an MD5 mismatch, an error naming both).
    fn fetch_by_md5(
        &self,
        name: &[u8],
        md5: &str,
        url: &str,
        at: u64,
    ) -> Result<Result<Option<Fasta>, String>, Error> {
        let shown = String::from_utf8_lossy(name);
        let Some(remote) = self.remote.as_deref() else {
            return Ok(Err(format!("{url}: no transport for remote references")));
        };
        let len = self
            .header
            .references
            .iter()
            .find(|(n, _)| n.as_slice() == name)
            .map_or(0, |(_, len)| *len);
        let range = (len > 0).then_some(0..len);
        let bases = match remote.fetch(url, range) {
            Ok(Some(b)) => b,
            Ok(None) => return Ok(Ok(None)),
            Err(e) => return Ok(Err(format!("reference {shown} from {url}: {e}"))),
        };
        let got = crate::md5::hex(&crate::md5::digest(&bases));
        if !got.eq_ignore_ascii_case(md5) {
            return Err(Error::at(
                at,
                format!(
                    "reference {shown} from {url} is not the one the file names: MD5 {got}, \
                     @SQ M5 {md5}"
                ),
            ));
        }
        crate::refpath::store(md5, &bases);
        Ok(Ok(Some(Fasta::in_memory(url, name, bases))))
    }

    /// The bases of a single-reference slice: its span, cut at the reference's end.
    pub(super) fn slice_reference(
        &mut self,
        sh: &SliceHeader,
        at: u64,
    ) -> Result<(Vec<u8>, i64, i64), Error> {
        let (span, check) = self.slice_bases(sh, at)?;
        span.check(check)?;
        Ok(Arc::unwrap_or_clone(span).bases)
    }

    /// [`Reader::slice_reference`] with the MD5 check still to make: the bases read ahead
    /// (`ahead`, their digest perhaps made), else read now.
    pub(super) fn slice_bases(
        &mut self,
        sh: &SliceHeader,
        at: u64,
    ) -> Result<(Arc<Span>, Option<SpanCheck>), Error> {
        let check = self.md5_check(sh, at);
        if let Some(span) = self.take_ahead(sh) {
            return Ok((span, check));
        }
        let (start, len) = (i64::from(sh.start), i64::from(sh.span));
        let bases = self.span_from(sh.reference_id, start, len, at)?;
        Ok((Arc::new(Span::new(bases)), check))
    }

    /// [`Reader::span`] of `len` bases from `start`.
    pub(super) fn span_from(
        &mut self,
        id: i32,
        start: i64,
        len: i64,
        at: u64,
    ) -> Result<SliceRef, Error> {
        self.span(id, start, start + len - 1, at)
    }

    pub(super) fn check_md5(&self, sh: &SliceHeader, bases: &[u8], at: u64) -> Result<(), Error> {
        self.md5_check(sh, at).map_or(Ok(()), |c| c.check(bases))
    }

    /// The check of a slice's reference bases against its MD5; none when it has no MD5 or
    /// `ignore_md5` is set.
    pub(super) fn md5_check(&self, sh: &SliceHeader, at: u64) -> Option<SpanCheck> {
        if sh.reference_md5 == [0; 16] || self.ignore_md5 {
            return None;
        }
        let name = self
            .header
            .reference_name(sh.reference_id)
            .map_or("?".into(), String::from_utf8_lossy);
        Some(SpanCheck {
            expected: sh.reference_md5,
            name: name.into_owned(),
            start: sh.start,
            span: sh.span,
            at,
        })
    }
}

fn missing(name: &[u8], at: u64) -> Error {
    Error::at(
        at,
        format!(
            "reference {} is not in the FASTA given",
            String::from_utf8_lossy(name)
        ),
    )
}
