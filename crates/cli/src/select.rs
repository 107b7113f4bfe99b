//! The selection and processing options of `hts view` (samtools view's filters, region files,
//! subsampling and record edits): their values as samtools reads them, the [`Selection`] they
//! make, and what happens to each record (`process_one_record` in `sam_view.c`).

use std::collections::HashSet;

use bam::Record;
use samtools::edit::Edit;
use samtools::filter::bed::Targets;
use samtools::filter::expr::Expression;
use samtools::filter::lists;
use samtools::filter::subsample::Subsample;
use samtools::filter::{FlagTests, Selection, TagTest};

use crate::args::Opt;
use crate::numbers::{atoi, str2flag, strtol};

/// The options, as given (files already read, as samtools reads them while parsing).
#[derive(Debug, Clone)]
pub struct SelectArgs {
    /// `-L`/`--region-file`: the BED targets.
    pub targets: Option<Targets>,
    /// `-M`, `--region-file` or `-P`: regions and targets through the index, each record once.
    pub multi_region: bool,
    /// `-P`.
    pub fetch_pairs: bool,
    pub read_groups: Option<HashSet<Vec<u8>>>,
    pub names: Option<HashSet<Vec<u8>>>,
    pub tag: Option<TagTest>,
    pub library: Option<Vec<u8>>,
    pub min_qlen: i32,
    pub expression: Option<String>,
    /// `--rf`.
    pub require_any: i32,
    /// `-G`.
    pub exclude_all: i32,
    /// Negative: no subsampling (samtools' -1.0).
    pub subsample_fraction: f64,
    pub subsample_seed: u32,
    pub add_flags: i32,
    pub remove_flags: i32,
    pub remove_tags: Option<HashSet<[u8; 2]>>,
    pub keep_tags: Option<HashSet<[u8; 2]>>,
    pub remove_backward: bool,
    /// `-U FILE`.
    pub unselected: Option<String>,
    /// `-p`.
    pub unmap: bool,
}

impl Default for SelectArgs {
    fn default() -> SelectArgs {
        SelectArgs {
            targets: None,
            multi_region: false,
            fetch_pairs: false,
            read_groups: None,
            names: None,
            tag: None,
            library: None,
            min_qlen: 0,
            expression: None,
            require_any: 0,
            exclude_all: 0,
            subsample_fraction: -1.0,
            subsample_seed: 0,
            add_flags: 0,
            remove_flags: 0,
            remove_tags: None,
            keep_tags: None,
            remove_backward: false,
            unselected: None,
            unmap: false,
        }
    }
}

/// An option's value samtools refuses; `usage`: samtools prints its usage after the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub message: String,
    pub usage: bool,
}

fn refused(message: impl ToString) -> Refused {
    Refused {
        message: message.to_string(),
        usage: false,
    }
}

fn set_tag(slot: &mut Option<TagTest>, tag: [u8; 2], arg: &str) -> Result<(), Refused> {
    match slot {
        Some(t) if t.tag != tag => Err(refused(format!(
            "Different tag \"{}\" was specified before: \"{arg}\"",
            String::from_utf8_lossy(&t.tag)
        ))),
        Some(_) => Ok(()),
        None => {
            *slot = Some(TagTest { tag, values: None });
            Ok(())
        }
    }
}

/// samtools' complaint about `-s`, `--subsample`.
fn bad_sampling(arg: &str) -> Refused {
    refused(format!("Incorrect sampling argument \"{arg}\""))
}

/// `-s INT.FRAC`: `strtol` gives the seed, then `strtod` of the rest (from the `.`) the
/// fraction, which must use it all.
fn seed_and_fraction(arg: &str) -> Result<(u32, f64), Refused> {
    let (seed, used) = strtol(arg, 10);
    let rest = &arg[used..];
    if !rest.starts_with('.') {
        return Err(bad_sampling(arg));
    }
    let fraction: f64 = rest.parse().map_err(|_| bad_sampling(arg))?;
    Ok((seed as u32, fraction))
}

/// `--subsample FLOAT`: all of it a number in 0..=1.
fn fraction(arg: &str) -> Result<f64, Refused> {
    match arg.parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(bad_sampling(arg)),
    }
}

impl SelectArgs {
    /// Applies one option in command-line order; `Ok(false)` when `opt` is not one of these.
    pub fn apply(&mut self, opt: Opt, v: &str) -> Result<bool, Refused> {
        let words = |path: &str| lists::read_words(path).map_err(refused);
        match opt {
            Opt::TargetFile | Opt::RegionFile => {
                if opt == Opt::RegionFile {
                    self.multi_region = true;
                }
                let bed = Targets::read(v)
                    .map_err(|e| refused(format!("Could not read file \"{v}\": {e}")))?;
                self.targets = Some(bed);
            }
            Opt::UseIndex => self.multi_region = true,
            Opt::FetchPairs => {
                self.fetch_pairs = true;
                self.multi_region = true;
            }
            Opt::ReadGroup => {
                self.read_groups
                    .get_or_insert_with(HashSet::new)
                    .insert(v.as_bytes().to_vec());
            }
            Opt::ReadGroupFile => {
                let w = words(v)?;
                self.read_groups.get_or_insert_with(HashSet::new).extend(w);
            }
            Opt::QnameFile => {
                let w = words(v)?;
                self.names.get_or_insert_with(HashSet::new).extend(w);
            }
            Opt::Tag => {
                let lists::TagWith { tag, with: value } =
                    lists::parse_tag_value(v).map_err(refused)?;
                set_tag(&mut self.tag, tag, v)?;
                if let (Some(t), Some(value)) = (&mut self.tag, value) {
                    t.values.get_or_insert_with(HashSet::new).insert(value);
                }
            }
            Opt::TagFile => {
                let lists::TagWith { tag, with: file } =
                    lists::parse_tag_file(v).map_err(refused)?;
                set_tag(&mut self.tag, tag, v)?;
                let w = words(file)?;
                if let Some(t) = &mut self.tag {
                    t.values.get_or_insert_with(HashSet::new).extend(w);
                }
            }
            Opt::Library => self.library = Some(v.as_bytes().to_vec()),
            Opt::MinQlen => self.min_qlen = atoi(v),
            Opt::Expr => self.expression = Some(v.to_string()),
            Opt::IncludeFlags => self.require_any |= str2flag(v),
            Opt::ExcludeAllFlags => self.exclude_all |= str2flag(v),
            Opt::Subsample => self.subsample_fraction = fraction(v)?,
            // `atoi` into a `uint32_t`.
            Opt::SubsampleSeed => self.subsample_seed = atoi(v) as u32,
            Opt::SubsampleLegacy => {
                let (seed, frac) = seed_and_fraction(v)?;
                self.subsample_seed = seed;
                self.subsample_fraction = frac;
            }
            Opt::AddFlags => self.add_flags |= str2flag(v),
            Opt::RemoveFlags => self.remove_flags |= str2flag(v),
            Opt::RemoveTag => {
                let (list, arg) = match v.strip_prefix('^') {
                    Some(rest) => (&mut self.keep_tags, rest),
                    None => (&mut self.remove_tags, v),
                };
                lists::parse_tag_list(arg, list.get_or_insert_with(HashSet::new)).map_err(|e| {
                    Refused {
                        message: e.to_string(),
                        usage: true,
                    }
                })?;
            }
            Opt::KeepTag => {
                lists::parse_tag_list(v, self.keep_tags.get_or_insert_with(HashSet::new)).map_err(
                    |e| Refused {
                        message: e.to_string(),
                        usage: true,
                    },
                )?;
            }
            Opt::RemoveB => self.remove_backward = true,
            Opt::OutputUnselected => self.unselected = Some(v.to_string()),
            Opt::Unmap => self.unmap = true,
            // `-t`: a reference list for SAM input; BAM input has its own.
            Opt::FaiReference => {}
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The record selection, with the view options samtools checks in the same function
    /// (`-f`, `-F`, `-q`). A syntax error in `-e` names its column.
    pub fn selection(
        &self,
        require_all: i32,
        exclude_any: i32,
        min_mapq: i32,
    ) -> Result<Selection, String> {
        let expression = match &self.expression {
            Some(text) => Some(
                Expression::parse(text)
                    .map_err(|e| format!("filter expression \"{text}\": syntax error {e}"))?,
            ),
            None => None,
        };
        Ok(Selection {
            expression,
            remove_backward: self.remove_backward,
            min_query_len: self.min_qlen,
            min_mapq,
            flags: FlagTests {
                require_all,
                exclude_any,
                require_any: self.require_any,
                exclude_all: self.exclude_all,
            },
            // Without -M the BED is a filter; with it, the regions' iterator does the work.
            targets: if self.multi_region {
                None
            } else {
                self.targets.clone()
            },
            subsample: (self.subsample_fraction > 0.0)
                .then(|| Subsample::new(self.subsample_fraction, self.subsample_seed)),
            read_groups: self.read_groups.clone(),
            tag: self.tag.clone(),
            names: self.names.clone(),
            library: self.library.clone(),
            state: Default::default(),
        })
    }

    /// `-x`/`--keep-tag` (samtools' `adjust_tags`; all that `-P` applies).
    pub fn adjust_tags(&self, r: &mut Record) -> Result<(), String> {
        let result = if let Some(keep) = &self.keep_tags {
            r.retain_tags(|t| keep.contains(&t))
        } else if let Some(remove) = &self.remove_tags {
            r.retain_tags(|t| !remove.contains(&t))
        } else {
            Ok(())
        };
        result.map_err(|e| e.to_string())
    }

    /// Whether any record may be edited: `--add-flags`/`--remove-flags`, `-x`/`--keep-tag`,
    /// `-p`, or `-P` (which applies the tag edits and drops unselected records).
    pub fn edits(&self) -> bool {
        self.add_flags != 0
            || self.remove_flags != 0
            || self.keep_tags.is_some()
            || self.remove_tags.is_some()
            || self.unmap
            || self.fetch_pairs
    }

    /// `--add-flags`/`--remove-flags` (`change_flag`), then [`SelectArgs::adjust_tags`].
    fn edit_selected(&self, r: &mut Record) -> Result<(), String> {
        if self.add_flags != 0 || self.remove_flags != 0 {
            let flag = (i32::from(r.flags().bits()) | self.add_flags) & !self.remove_flags;
            r.set_flags(bam::Flags::from_bits(flag as u16));
        }
        self.adjust_tags(r)
    }
}

/// Where one record goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    /// Selected: to the output (edited), and counted.
    Selected,
    /// Not selected, `-p`: to the output, marked unmapped.
    Unmapped,
    /// Not selected: to `-U` if given.
    Unselected,
    /// Not selected, with `-P`: nowhere.
    Dropped,
}

/// samtools' `process_one_record`: selects, edits, and says where the record goes. With `-c`
/// (`count`) selected records are not edited and `-p` does not apply; with `-P` (`pairs`,
/// `fetch_pairs_collect_mates`) only the tag edits apply and unselected records go nowhere.
pub fn process(
    args: &SelectArgs,
    sel: &mut Selection,
    r: &mut Record,
    header: &bam::Header,
    count: bool,
) -> Result<Fate, String> {
    if sel.select(r, header) {
        if args.fetch_pairs {
            args.adjust_tags(r)?;
        } else if !count {
            args.edit_selected(r)?;
        }
        Ok(Fate::Selected)
    } else if args.fetch_pairs {
        Ok(Fate::Dropped)
    } else if args.unmap && !count {
        r.make_unmapped();
        Ok(Fate::Unmapped)
    } else {
        Ok(Fate::Unselected)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(pairs: &[(Opt, &str)]) -> Result<SelectArgs, Refused> {
        let mut s = SelectArgs::default();
        for (o, v) in pairs {
            assert!(s.apply(*o, v)?, "{o:?} is a selection option");
        }
        Ok(s)
    }

    #[test]
    fn options_as_samtools_reads_them() {
        let s = a(&[(Opt::Tag, "NM:1"), (Opt::Tag, "NM:2")]).unwrap();
        assert_eq!(s.tag.unwrap().values.unwrap().len(), 2);
        assert!(a(&[(Opt::Tag, "NM:1"), (Opt::Tag, "AS:1")]).is_err());
        let s = a(&[(Opt::RemoveTag, "^NM,RG"), (Opt::KeepTag, "AS")]).unwrap();
        assert_eq!(s.keep_tags.unwrap().len(), 3);
        assert!(a(&[(Opt::RemoveTag, "NMX")]).unwrap_err().usage);
        let s = a(&[(Opt::SubsampleLegacy, "7.25")]).unwrap();
        assert_eq!((s.subsample_seed, s.subsample_fraction), (7, 0.25));
        let s = a(&[(Opt::SubsampleLegacy, ".5")]).unwrap();
        assert_eq!((s.subsample_seed, s.subsample_fraction), (0, 0.5));
        let s = a(&[(Opt::SubsampleLegacy, "4000000000.4")]).unwrap();
        assert_eq!(s.subsample_seed, 4_000_000_000);
        assert!(a(&[(Opt::SubsampleLegacy, "3")]).is_err());
        assert!(a(&[(Opt::SubsampleLegacy, "3.5x")]).is_err());
        assert!(a(&[(Opt::Subsample, "2")]).is_err());
        assert!(a(&[(Opt::Subsample, "x")]).is_err());
        let s = a(&[(Opt::SubsampleSeed, "-1")]).unwrap();
        assert_eq!(s.subsample_seed, u32::MAX);
        let s = a(&[(Opt::IncludeFlags, "DUP"), (Opt::IncludeFlags, "0x200")]).unwrap();
        assert_eq!(s.require_any, 0x600);
        let s = a(&[(Opt::FetchPairs, "")]).unwrap();
        assert!(s.multi_region);
        assert!(a(&[(Opt::TargetFile, "/nonexistent.bed")]).is_err());
        let e = a(&[(Opt::Expr, "mapq >")])
            .unwrap()
            .selection(0, 0, 0)
            .unwrap_err();
        assert!(e.contains("column 7"), "{e}");
        let mut s = SelectArgs::default();
        assert_eq!(s.apply(Opt::MinMq, "3"), Ok(false));
    }
}
