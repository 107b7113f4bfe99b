//! tabix 1.16's column configuration from its command line: options applied in the order
//! given (`-p` replaces the whole configuration, `-s -b -e -c -0` change one field of it), the
//! preset picked from the file name (`.gff.gz`, `.bed.gz`, `.sam.gz`, `.vcf.gz`, any case) or a
//! VCF's first line when no option fixed the columns, and its complaints.

use index::tbi::{Meta, UCSC_FLAG};

use crate::Error;

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

/// tabix's presets (`tbx_conf_*`): `gff`, `bed`, `sam`, `vcf`.
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
#[derive(Clone, Copy, Debug)]
pub enum Setting<'a> {
    /// `-0`.
    Zero,
    /// `-C`.
    Csi,
    /// `-f`.
    Force,
    /// `-p`'s name.
    Preset(&'a str),
    /// `-c`'s character (the first byte; none when empty).
    Comment(&'a str),
    /// `-s`, `-b`, `-e`, `-S` or `-m`: the letter, the text given, and its number when C's
    /// `strtol` leaves nothing after it (parsing is the command line's; an empty text is 0).
    Number(char, &'a str, Option<i64>),
}

impl Conf {
    /// Applies the options in order, as tabix's `getopt` loop does.
    ///
    /// # Errors
    /// [`Error::Argument`] for a number with trailing text, [`Error::Preset`] for an unknown
    /// preset (the first met).
    pub fn from_settings<'a>(
        settings: impl IntoIterator<Item = Setting<'a>>,
    ) -> Result<Conf, Error> {
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
                Setting::Preset(v) => {
                    c.detect = false;
                    match (preset(v), v) {
                        (Some(m), _) => c.meta = m,
                        // Found from the content by tabix; not indexed by hts.
                        (None, "bcf" | "bam") => c.detect = true,
                        _ => return Err(Error::Preset { name: v.into() }),
                    }
                }
                Setting::Comment(v) => {
                    c.meta.meta_char = i32::from(v.bytes().next().unwrap_or(0));
                    c.detect = false;
                }
                Setting::Number(letter, v, n) => {
                    let n = n.ok_or_else(|| Error::Argument {
                        letter,
                        value: v.into(),
                    })?;
                    match letter {
                        'm' => c.min_shift = n,
                        's' => c.meta.col_seq = int(n),
                        'b' => c.meta.col_beg = int(n),
                        'e' => c.meta.col_end = int(n),
                        _ => skip = Some(int(n)),
                    }
                    c.detect &= letter == 'm';
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_apply_in_order_and_complain_as_tabix() {
        let c = Conf::from_settings([Setting::Preset("bed"), Setting::Number('b', "7", Some(7))])
            .unwrap();
        assert_eq!((c.meta.col_seq, c.meta.col_beg, c.detect), (1, 7, false));
        let e = Conf::from_settings([Setting::Number('s', "1x", None)]).unwrap_err();
        assert_eq!(e.to_string(), "Could not parse argument: -s 1x");
        let e = Conf::from_settings([Setting::Preset("xyz")]).unwrap_err();
        assert_eq!(e.to_string(), "The preset string not recognised: 'xyz'");
        let c = Conf::from_settings([Setting::Number('m', "12", Some(12))]).unwrap();
        assert!(c.detect);
        assert_eq!(c.meta_char("x.sam.gz"), b'@');
    }
}
