//! tabix 1.16's column configuration from its command line: options applied in the order
//! given (`-p` replaces the whole configuration, `-s -b -e -c -0` change one field of it), the
//! preset picked from the file name (`.gff.gz`, `.bed.gz`, `.sam.gz`, `.vcf.gz`, any case) or a
//! VCF's first line when no option fixed the columns, and its complaints.

use index::tbi::{Meta, UCSC_FLAG};

/// The configuration the command line gives.
#[derive(Clone, Debug)]
pub struct Conf {
    /// The columns, comment character and skipped lines.
    pub meta: Meta,
    /// No option fixed the columns: the file's name or content picks the preset.
    pub detect: bool,
    /// `-m`: 0 when not given.
    pub min_shift: i64,
    /// `-C`.
    pub csi: bool,
    /// `-f`.
    pub force: bool,
}

fn meta(format: i32, cols: (i32, i32, i32), meta_char: u8) -> Meta {
    Meta {
        format,
        col_seq: cols.0,
        col_beg: cols.1,
        col_end: cols.2,
        meta_char: i32::from(meta_char),
        skip: 0,
        names: Vec::new(),
    }
}

/// tabix's presets (`tbx_conf_*`).
pub fn preset(name: &str) -> Option<Meta> {
    Some(match name {
        "gff" => meta(0, (1, 4, 5), b'#'),
        "bed" => meta(UCSC_FLAG, (1, 2, 3), b'#'),
        "sam" => meta(1, (3, 4, 0), b'@'),
        "vcf" => meta(2, (1, 2, 0), b'#'),
        _ => return None,
    })
}

/// The preset `file_type` picks from the name alone.
pub fn preset_by_name(file: &str) -> Option<Meta> {
    let lower = file.to_ascii_lowercase();
    ["gff", "bed", "sam", "vcf"]
        .into_iter()
        .find(|p| lower.ends_with(&format!(".{p}.gz")))
        .and_then(preset)
}

/// One option as tabix's loop sees it.
pub enum Setting<'a> {
    Zero,
    Csi,
    Force,
    /// A valued option: its letter and value.
    Value(char, &'a str),
}

/// `strtol(v, &end, 10)` with nothing left after the number (an empty value is 0, as in C).
fn strict(letter: char, v: &str) -> Result<i64, String> {
    let (n, used) = crate::numbers::strtol(v, 10);
    if used < v.len() {
        return Err(format!("Could not parse argument: -{letter} {v}"));
    }
    Ok(n)
}

impl Conf {
    /// Applies the options in order, as tabix's `getopt` loop does.
    ///
    /// # Errors
    /// tabix's message for a number with trailing text or an unknown preset.
    pub fn from_settings<'a>(
        settings: impl IntoIterator<Item = Setting<'a>>,
    ) -> Result<Conf, String> {
        let mut c = Conf {
            meta: meta(0, (1, 4, 5), b'#'),
            detect: true,
            min_shift: 0,
            csi: false,
            force: false,
        };
        let mut skip = None;
        let int = |v: i64| i32::try_from(v).unwrap_or(v as i32);
        for s in settings {
            match s {
                Setting::Zero => {
                    c.meta.format |= UCSC_FLAG;
                    c.detect = false;
                }
                Setting::Csi => c.csi = true,
                Setting::Force => c.force = true,
                Setting::Value('p', v) => {
                    c.detect = false;
                    match (preset(v), v) {
                        (Some(m), _) => c.meta = m,
                        // Found from the content by tabix; not indexed by hts.
                        (None, "bcf" | "bam") => c.detect = true,
                        _ => return Err(format!("The preset string not recognised: '{v}'")),
                    }
                }
                Setting::Value('c', v) => {
                    c.meta.meta_char = i32::from(v.bytes().next().unwrap_or(0));
                    c.detect = false;
                }
                Setting::Value('m', v) => c.min_shift = strict('m', v)?,
                Setting::Value(l @ ('s' | 'b' | 'e' | 'S'), v) => {
                    let n = int(strict(l, v)?);
                    match l {
                        's' => c.meta.col_seq = n,
                        'b' => c.meta.col_beg = n,
                        'e' => c.meta.col_end = n,
                        _ => skip = Some(n),
                    }
                    c.detect = false;
                }
                Setting::Value(..) => {}
            }
        }
        if let Some(n) = skip.filter(|n| *n >= 0) {
            c.meta.skip = n;
        }
        Ok(c)
    }

    /// The comment character tabix prints before a region with `--separate-regions`: the
    /// command line's configuration, or the preset the file's name picks.
    pub fn meta_char(&self, file: &str) -> u8 {
        let m = match self.detect {
            true => preset_by_name(file).unwrap_or_else(|| self.meta.clone()),
            false => self.meta.clone(),
        };
        u8::try_from(m.meta_char).unwrap_or(b'#')
    }
}
