//! The selection and processing options of `hts view` (samtools view's filters, region files,
//! subsampling and record edits): their values as samtools reads them, the [`Selection`] they
//! make, and what happens to each record (`process_one_record` in `sam_view.c`).

use std::collections::HashSet;

use bam::filter::bed::Targets;
use bam::filter::expr::Expression;
use bam::filter::lists::{self, parse_flag};
use bam::filter::subsample::{self, Subsample};
use bam::filter::{FlagTests, Selection, TagTest};
use bam::{Header, Record};

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

/// The options this module reads, by their long name in samtools.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelOpt {
    TargetFile,
    RegionFile,
    UseIndex,
    FetchPairs,
    ReadGroup,
    ReadGroupFile,
    QnameFile,
    Tag,
    TagFile,
    Library,
    MinQlen,
    Expr,
    IncludeFlags,
    ExcludeAllFlags,
    Subsample,
    SubsampleSeed,
    SubsampleLegacy,
    AddFlags,
    RemoveFlags,
    RemoveTag,
    KeepTag,
    RemoveB,
    Unselected,
    Unmap,
    FaiReference,
}

fn set_tag(slot: &mut Option<TagTest>, tag: [u8; 2], arg: &str) -> Result<(), String> {
    match slot {
        Some(t) if t.tag != tag => Err(format!(
            "Different tag \"{}\" was specified before: \"{arg}\"",
            String::from_utf8_lossy(&t.tag)
        )),
        Some(_) => Ok(()),
        None => {
            *slot = Some(TagTest { tag, values: None });
            Ok(())
        }
    }
}

impl SelectArgs {
    /// Applies one option in command-line order; the error is samtools' message.
    pub fn apply(&mut self, opt: SelOpt, v: &str) -> Result<(), String> {
        match opt {
            SelOpt::TargetFile | SelOpt::RegionFile => {
                if opt == SelOpt::RegionFile {
                    self.multi_region = true;
                }
                self.targets = Some(Targets::read(v).map_err(|e| e.to_string())?);
            }
            SelOpt::UseIndex => self.multi_region = true,
            SelOpt::FetchPairs => {
                self.fetch_pairs = true;
                self.multi_region = true;
            }
            SelOpt::ReadGroup => {
                self.read_groups
                    .get_or_insert_with(HashSet::new)
                    .insert(v.as_bytes().to_vec());
            }
            SelOpt::ReadGroupFile => {
                let words = lists::read_words(v).map_err(|e| e.to_string())?;
                self.read_groups
                    .get_or_insert_with(HashSet::new)
                    .extend(words);
            }
            SelOpt::QnameFile => {
                let words = lists::read_words(v).map_err(|e| e.to_string())?;
                self.names.get_or_insert_with(HashSet::new).extend(words);
            }
            SelOpt::Tag => {
                let (tag, value) = lists::parse_tag_value(v).map_err(|e| e.to_string())?;
                set_tag(&mut self.tag, tag, v)?;
                if let (Some(t), Some(value)) = (&mut self.tag, value) {
                    t.values.get_or_insert_with(HashSet::new).insert(value);
                }
            }
            SelOpt::TagFile => {
                let (tag, file) = lists::parse_tag_file(v).map_err(|e| e.to_string())?;
                set_tag(&mut self.tag, tag, v)?;
                let words = lists::read_words(file).map_err(|e| e.to_string())?;
                if let Some(t) = &mut self.tag {
                    t.values.get_or_insert_with(HashSet::new).extend(words);
                }
            }
            SelOpt::Library => self.library = Some(v.as_bytes().to_vec()),
            SelOpt::MinQlen => {
                self.min_qlen =
                    crate::opts::atoi(v).clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
            }
            SelOpt::Expr => self.expression = Some(v.to_string()),
            SelOpt::IncludeFlags => self.require_any |= parse_flag(v),
            SelOpt::ExcludeAllFlags => self.exclude_all |= parse_flag(v),
            SelOpt::Subsample => {
                self.subsample_fraction = subsample::parse_fraction(v).map_err(|e| e.to_string())?
            }
            SelOpt::SubsampleSeed => self.subsample_seed = subsample::parse_seed(v),
            SelOpt::SubsampleLegacy => {
                let (seed, frac) = subsample::parse_seed_fraction(v).map_err(|e| e.to_string())?;
                self.subsample_seed = seed;
                self.subsample_fraction = frac;
            }
            SelOpt::AddFlags => self.add_flags |= parse_flag(v),
            SelOpt::RemoveFlags => self.remove_flags |= parse_flag(v),
            SelOpt::RemoveTag => {
                let (list, arg) = match v.strip_prefix('^') {
                    Some(rest) => (&mut self.keep_tags, rest),
                    None => (&mut self.remove_tags, v),
                };
                lists::parse_tag_list(arg, list.get_or_insert_with(HashSet::new))
                    .map_err(|e| e.to_string())?;
            }
            SelOpt::KeepTag => {
                lists::parse_tag_list(v, self.keep_tags.get_or_insert_with(HashSet::new))
                    .map_err(|e| e.to_string())?;
            }
            SelOpt::RemoveB => self.remove_backward = true,
            SelOpt::Unselected => self.unselected = Some(v.to_string()),
            SelOpt::Unmap => self.unmap = true,
            // `-t`: a reference list for SAM input; BAM input has its own.
            SelOpt::FaiReference => {}
        }
        Ok(())
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

    /// The header text to print: `-r`/`-R` drop the `@RG` lines of other groups.
    pub fn header_text(&self, text: Vec<u8>) -> Vec<u8> {
        match &self.read_groups {
            Some(groups) => bam::filter::readgroup::keep_read_groups(&text, groups),
            None => text,
        }
    }

    /// `--add-flags`/`--remove-flags` and `-x`/`--keep-tag` on a selected record (samtools'
    /// `change_flag` and `adjust_tags`).
    pub fn edit_selected(&self, r: &mut Record) -> Result<(), String> {
        if self.add_flags != 0 || self.remove_flags != 0 {
            let flag = (i32::from(r.flag()) | self.add_flags) & !self.remove_flags;
            r.set_flag(flag as u16);
        }
        self.adjust_tags(r)
    }

    /// `-x`/`--keep-tag` only (what `-P` applies).
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
}

/// samtools' `process_one_record`: selects, edits, and says where the record goes. `count`:
/// with `-c` the edits and `-p` do not apply.
pub fn process(
    args: &SelectArgs,
    sel: &mut Selection,
    r: &mut Record,
    header: &Header,
    count: bool,
) -> Result<Fate, String> {
    if sel.select(r, header) {
        if !count {
            args.edit_selected(r)?;
        }
        Ok(Fate::Selected)
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

    fn a(pairs: &[(SelOpt, &str)]) -> Result<SelectArgs, String> {
        let mut s = SelectArgs::default();
        for (o, v) in pairs {
            s.apply(*o, v)?;
        }
        Ok(s)
    }

    #[test]
    fn options_as_samtools_reads_them() {
        let s = a(&[(SelOpt::Tag, "NM:1"), (SelOpt::Tag, "NM:2")]).unwrap();
        assert_eq!(s.tag.unwrap().values.unwrap().len(), 2);
        assert!(a(&[(SelOpt::Tag, "NM:1"), (SelOpt::Tag, "AS:1")]).is_err());
        let s = a(&[(SelOpt::RemoveTag, "^NM,RG"), (SelOpt::KeepTag, "AS")]).unwrap();
        assert_eq!(s.keep_tags.unwrap().len(), 3);
        let s = a(&[(SelOpt::SubsampleLegacy, "7.25")]).unwrap();
        assert_eq!((s.subsample_seed, s.subsample_fraction), (7, 0.25));
        assert!(a(&[(SelOpt::Subsample, "2")]).is_err());
        let s = a(&[
            (SelOpt::IncludeFlags, "DUP"),
            (SelOpt::IncludeFlags, "0x200"),
        ])
        .unwrap();
        assert_eq!(s.require_any, 0x600);
        let s = a(&[(SelOpt::FetchPairs, "")]).unwrap();
        assert!(s.multi_region);
        assert!(a(&[(SelOpt::TargetFile, "/nonexistent.bed")]).is_err());
        let e = a(&[(SelOpt::Expr, "mapq >")])
            .unwrap()
            .selection(0, 0, 0)
            .unwrap_err();
        assert!(e.contains("column 7"), "{e}");
    }
}
