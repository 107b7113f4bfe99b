//! Where a slice's reference bases come from: `-T`'s FASTA or one found by the `@SQ` tags
//! (`refpath`), a single-reference slice's span or whole references for multi-reference
//! slices, checked against the slice's MD5.

use super::Reader;
use crate::fasta::Fasta;
use crate::{Error, SliceHeader};

impl Reader {
    /// A whole reference, for multi-reference slices (htslib loads them whole too); kept while
    /// later slices may need it.
    pub(super) fn load_whole(&mut self, id: i32, at: u64) -> Result<(), Error> {
        if self.whole.contains_key(&id) {
            return Ok(());
        }
        let name = self.ref_name(id, at)?;
        let fasta = self.fasta(&name, at)?;
        let len = fasta
            .entry(&name)
            .map(|e| e.length)
            .ok_or_else(|| missing(&name, at))?;
        let bases = fasta
            .fetch(&name, 1, len)
            .map_err(|e| Error::at(at, e.what))?;
        self.whole.insert(id, bases);
        Ok(())
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
        let found = crate::refpath::find(md5.as_deref(), ur.as_deref()).ok_or_else(|| {
            Error::at(
                at,
                format!(
                    "reference {} is needed to decode this CRAM; give it with -T/--reference \
                     (or in REF_PATH/REF_CACHE by its M5, or at its @SQ UR path)",
                    String::from_utf8_lossy(name)
                ),
            )
        })?;
        let fasta = match found {
            crate::refpath::Found::Bare(p) => Fasta::bare(&p, name),
            crate::refpath::Found::Fasta(p) => Fasta::open(&p),
        }
        .map_err(|e| Error::at(at, e))?;
        self.reference = Some(fasta);
        self.reference.as_mut().ok_or_else(|| missing(name, at))
    }

    /// The bases of a single-reference slice: its span, cut at the reference's end.
    pub(super) fn slice_reference(
        &mut self,
        sh: &SliceHeader,
        at: u64,
    ) -> Result<(Vec<u8>, i64, i64), Error> {
        let name = self.ref_name(sh.reference_id, at)?;
        let fasta = self.fasta(&name, at)?;
        let len = fasta
            .entry(&name)
            .map(|e| e.length as i64)
            .ok_or_else(|| missing(&name, at))?;
        let start = i64::from(sh.start).max(1);
        let end = (i64::from(sh.start) + i64::from(sh.span) - 1).min(len);
        let bases = if end >= start {
            fasta
                .fetch(&name, start as u64, end as u64)
                .map_err(|e| Error::at(at, e.what))?
        } else {
            Vec::new()
        };
        self.check_md5(sh, &bases, at)?;
        Ok((bases, start, end))
    }

    pub(super) fn check_md5(&self, sh: &SliceHeader, bases: &[u8], at: u64) -> Result<(), Error> {
        if sh.reference_md5 == [0; 16] || self.ignore_md5 {
            return Ok(());
        }
        let span = usize::try_from(sh.span).unwrap_or(0).min(bases.len());
        let got = crate::md5::digest(&bases[..span]);
        if got != sh.reference_md5 {
            let name = self
                .header
                .reference_name(sh.reference_id)
                .map_or("?".into(), String::from_utf8_lossy);
            return Err(Error::at(
                at,
                format!(
                    "MD5 checksum reference mismatch at {name}:{}-{} (CRAM {}, reference {}): wrong reference?",
                    sh.start,
                    i64::from(sh.start) + i64::from(sh.span) - 1,
                    crate::md5::hex(&sh.reference_md5),
                    crate::md5::hex(&got)
                ),
            ));
        }
        Ok(())
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
