//! How the selection and processing options of `hts view` read their values, as samtools
//! reads them while parsing (files read at once, numbers as C reads them).

use std::collections::HashSet;

use samtools::filter::bed::Targets;
use samtools::filter::lists;
use samtools::filter::TagTest;
use samtools::numbers::{atoi, str2flag};
use samtools::view::SelectArgs;

use super::Opt;

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
    let (seed, used) = region::strtol(arg.as_bytes(), 10);
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

/// Applies one option to `s` in command-line order; `Ok(false)` when `opt` is not one of
/// these.
pub fn apply(s: &mut SelectArgs, opt: Opt, v: &str) -> Result<bool, Refused> {
    let words = |path: &str| lists::read_words(path).map_err(refused);
    match opt {
        Opt::TargetFile | Opt::RegionFile => {
            if opt == Opt::RegionFile {
                s.multi_region = true;
            }
            let bed = Targets::read(v)
                .map_err(|e| refused(format!("Could not read file \"{v}\": {e}")))?;
            s.targets = Some(bed);
        }
        Opt::UseIndex => s.multi_region = true,
        Opt::FetchPairs => {
            s.fetch_pairs = true;
            s.multi_region = true;
        }
        Opt::ReadGroup => {
            s.read_groups
                .get_or_insert_with(HashSet::new)
                .insert(v.as_bytes().to_vec());
        }
        Opt::ReadGroupFile => {
            let w = words(v)?;
            s.read_groups.get_or_insert_with(HashSet::new).extend(w);
        }
        Opt::QnameFile => {
            let w = words(v)?;
            s.names.get_or_insert_with(HashSet::new).extend(w);
        }
        Opt::Tag => {
            let lists::TagWith { tag, with: value } = lists::parse_tag_value(v).map_err(refused)?;
            set_tag(&mut s.tag, tag, v)?;
            if let (Some(t), Some(value)) = (&mut s.tag, value) {
                t.values.get_or_insert_with(HashSet::new).insert(value);
            }
        }
        Opt::TagFile => {
            let lists::TagWith { tag, with: file } = lists::parse_tag_file(v).map_err(refused)?;
            set_tag(&mut s.tag, tag, v)?;
            let w = words(file)?;
            if let Some(t) = &mut s.tag {
                t.values.get_or_insert_with(HashSet::new).extend(w);
            }
        }
        Opt::Library => s.library = Some(v.as_bytes().to_vec()),
        Opt::MinQlen => s.min_qlen = atoi(v),
        Opt::Expr => s.expression = Some(v.to_string()),
        Opt::IncludeFlags => s.require_any |= str2flag(v),
        Opt::ExcludeAllFlags => s.exclude_all |= str2flag(v),
        Opt::Subsample => s.subsample_fraction = fraction(v)?,
        // `atoi` into a `uint32_t`.
        Opt::SubsampleSeed => s.subsample_seed = atoi(v) as u32,
        Opt::SubsampleLegacy => {
            let (seed, frac) = seed_and_fraction(v)?;
            s.subsample_seed = seed;
            s.subsample_fraction = frac;
        }
        Opt::AddFlags => s.add_flags |= str2flag(v),
        Opt::RemoveFlags => s.remove_flags |= str2flag(v),
        Opt::RemoveTag => {
            let (list, arg) = match v.strip_prefix('^') {
                Some(rest) => (&mut s.keep_tags, rest),
                None => (&mut s.remove_tags, v),
            };
            lists::parse_tag_list(arg, list.get_or_insert_with(HashSet::new)).map_err(|e| {
                Refused {
                    message: e.to_string(),
                    usage: true,
                }
            })?;
        }
        Opt::KeepTag => {
            lists::parse_tag_list(v, s.keep_tags.get_or_insert_with(HashSet::new)).map_err(
                |e| Refused {
                    message: e.to_string(),
                    usage: true,
                },
            )?;
        }
        Opt::RemoveB => s.remove_backward = true,
        Opt::OutputUnselected => s.unselected = Some(v.to_string()),
        Opt::Unmap => s.unmap = true,
        // `-t`: a reference list for SAM input; BAM input has its own.
        Opt::FaiReference => {}
        _ => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(pairs: &[(Opt, &str)]) -> Result<SelectArgs, Refused> {
        let mut s = SelectArgs::default();
        for (o, v) in pairs {
            assert!(apply(&mut s, *o, v)?, "{o:?} is a selection option");
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
        assert_eq!(apply(&mut s, Opt::MinMq, "3"), Ok(false));
    }
}
