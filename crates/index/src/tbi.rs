//! Tabix's column meta: the header of a `.tbi` (after `n_ref`), also carried in a tabix-made
//! CSI's aux data. Laid out as htslib's `tbx_conf_t` followed by the sequence names
//! (`tbx.c`, `tbx_index_load3`): seven little-endian int32 (format, seq/begin/end columns,
//! comment character, lines to skip, `l_nm`) then `l_nm` bytes of NUL-terminated names.

/// The fixed part of the meta: seven int32.
pub const FIXED_LEN: usize = 28;

/// The format's preset kind, the low 16 bits of the first field (`TBX_GENERIC`, `TBX_SAM`,
/// `TBX_VCF`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Preset {
    /// Any tab-separated columns (`-s -b -e`; also what `-p bed` and `-p gff` store).
    Generic,
    /// SAM text: the end is computed from the CIGAR.
    Sam,
    /// VCF: the end is `POS + len(REF) - 1`, or `INFO/END`.
    Vcf,
}

/// `TBX_UCSC`: positions are 0-based, intervals half-open (`-0`, BED).
pub const UCSC_FLAG: i32 = 0x10000;

/// Why meta bytes do not parse ([`Meta::from_bytes`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaError {
    /// The byte of the meta where the fault is.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// How a tabix file's lines are read: which columns hold the sequence name and interval, which
/// lines are comments, the names in index order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    /// The raw format field (preset in the low 16 bits, [`UCSC_FLAG`] above).
    pub format: i32,
    /// 1-based column of the sequence name.
    pub col_seq: i32,
    /// 1-based column of the start position.
    pub col_beg: i32,
    /// 1-based column of the end position (0: none, the end is derived).
    pub col_end: i32,
    /// Lines starting with this character are header lines.
    pub meta_char: i32,
    /// Lines skipped at the start of the file.
    pub skip: i32,
    /// Sequence names in index order (reference `tid` is `names[tid]`).
    pub names: Vec<String>,
}

impl Meta {
    /// The preset; an unknown kind is read as generic, as htslib's `get_intv` does (its
    /// `switch` has no case for it, so it splits columns as for generic files).
    pub fn preset(&self) -> Preset {
        match self.format & 0xffff {
            1 => Preset::Sam,
            2 => Preset::Vcf,
            _ => Preset::Generic,
        }
    }

    /// Whether positions are 0-based and half-open (`TBX_UCSC`).
    pub fn zero_based(&self) -> bool {
        self.format & UCSC_FLAG != 0
    }

    /// The index of `name` in [`Meta::names`].
    pub fn tid(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The meta's stored bytes: the seven fields then the names, each NUL-terminated (what
    /// `tbx_index_build` writes, and a CSI's aux data).
    pub fn to_bytes(&self) -> Vec<u8> {
        let names: usize = self.names.iter().map(|n| n.len() + 1).sum();
        let mut out = Vec::with_capacity(FIXED_LEN + names);
        let l_nm = i32::try_from(names).unwrap_or(i32::MAX);
        for v in [
            self.format,
            self.col_seq,
            self.col_beg,
            self.col_end,
            self.meta_char,
            self.skip,
            l_nm,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for n in &self.names {
            out.extend_from_slice(n.as_bytes());
            out.push(0);
        }
        out
    }

    /// Parses meta bytes (the seven fields and the names), as a CSI's aux holds them. Errors
    /// say what is wrong and at which byte of `bytes`.
    pub fn from_bytes(bytes: &[u8]) -> Result<Meta, MetaError> {
        let error = |offset: usize, message: String| MetaError { offset, message };
        let fixed = bytes.get(..FIXED_LEN).ok_or_else(|| {
            let len = bytes.len();
            error(
                0,
                format!("tabix meta is {len} bytes, shorter than its {FIXED_LEN} fixed bytes"),
            )
        })?;
        let f = fields(fixed);
        let l_nm = l_nm(f[6]).map_err(|m| error(24, m))?;
        let names = bytes.get(FIXED_LEN..FIXED_LEN + l_nm).ok_or_else(|| {
            error(
                24,
                format!("l_nm {l_nm} runs past the end of the tabix meta"),
            )
        })?;
        Meta::new(f, names).map_err(|m| error(FIXED_LEN, m))
    }

    /// A meta from its seven fields and its name bytes.
    pub(crate) fn new(f: [i32; 7], names: &[u8]) -> Result<Meta, String> {
        Ok(Meta {
            format: f[0],
            col_seq: f[1],
            col_beg: f[2],
            col_end: f[3],
            meta_char: f[4],
            skip: f[5],
            names: split_names(names)?,
        })
    }
}

/// The seven int32 of the fixed part.
pub(crate) fn fields(fixed: &[u8]) -> [i32; 7] {
    let mut f = [0i32; 7];
    for (v, b) in f.iter_mut().zip(fixed.chunks_exact(4)) {
        *v = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    }
    f
}

/// `l_nm` as a length; htslib refuses a negative one.
pub(crate) fn l_nm(v: i32) -> Result<usize, String> {
    usize::try_from(v).map_err(|_| format!("tabix l_nm is negative ({v})"))
}

/// The names as `tbx_index_load3` splits them: at each NUL; bytes after the last NUL (a list
/// not NUL-terminated) are not a name, as htslib's loop stops at the end of `l_nm`.
fn split_names(bytes: &[u8]) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    let mut rest = bytes;
    while let Some(nul) = rest.iter().position(|&b| b == 0) {
        let name = std::str::from_utf8(&rest[..nul])
            .map_err(|_| format!("sequence name {} is not UTF-8", names.len()))?;
        names.push(name.to_string());
        rest = &rest[nul + 1..];
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vcf() -> Meta {
        Meta {
            format: 2,
            col_seq: 1,
            col_beg: 2,
            col_end: 0,
            meta_char: i32::from(b'#'),
            skip: 0,
            names: vec!["chr1".into(), "chr2".into()],
        }
    }

    #[test]
    fn round_trip() {
        let m = vcf();
        let b = m.to_bytes();
        assert_eq!(b.len(), FIXED_LEN + 10);
        assert_eq!(Meta::from_bytes(&b), Ok(m.clone()));
        assert_eq!(m.preset(), Preset::Vcf);
        assert!(!m.zero_based());
        assert_eq!(m.tid("chr2"), Some(1));
        assert_eq!(m.tid("chr3"), None);
    }

    #[test]
    fn bed_flags() {
        let m = Meta {
            format: UCSC_FLAG,
            ..vcf()
        };
        assert_eq!(m.preset(), Preset::Generic);
        assert!(m.zero_based());
    }

    #[test]
    fn bad_meta() {
        assert_eq!(Meta::from_bytes(&[0; 27]).unwrap_err().offset, 0);
        let mut b = vcf().to_bytes();
        b[24..28].copy_from_slice(&(-1i32).to_le_bytes());
        assert!(Meta::from_bytes(&b)
            .unwrap_err()
            .message
            .contains("negative"));
        b[24..28].copy_from_slice(&100i32.to_le_bytes());
        assert!(Meta::from_bytes(&b)
            .unwrap_err()
            .message
            .contains("past the end"));
    }
}
