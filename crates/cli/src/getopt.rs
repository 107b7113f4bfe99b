//! A command-line parser with GNU `getopt_long` semantics, driven by a table of options: short
//! options may be bundled (`-hc`, `-F4`, `-@4`), a short option's value may follow it or be the
//! next argument, long options take `--name=value` or `--name value` and may be abbreviated to
//! a unique prefix, options may follow positional arguments, `-` is a positional argument, and
//! `--` ends the options.

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    None,
    Required,
}

/// One option of a command: what it is called and whether it takes a value. `id` is what the
/// parser reports for it.
#[derive(Debug, Clone, Copy)]
pub struct Spec<Id: Copy> {
    pub id: Id,
    pub short: Option<char>,
    pub long: &'static [&'static str],
    pub value: Value,
}

/// An option as found on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<Id> {
    pub id: Id,
    /// How the user wrote it (`-q`, `--min-MQ`), for messages.
    pub spelled: String,
    pub value: Option<String>,
}

/// Why the arguments cannot be parsed (getopt's complaints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseError {
    UnknownShort(char),
    UnknownLong(String),
    Ambiguous(String, Vec<&'static str>),
    MissingValue(String),
    UnexpectedValue(String),
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::UnknownShort(c) => write!(f, "invalid option -- '{c}'"),
            ParseError::UnknownLong(s) => write!(f, "unrecognised option '--{s}'"),
            ParseError::Ambiguous(s, all) => write!(
                f,
                "option '--{s}' is ambiguous; possibilities: {}",
                all.iter()
                    .map(|l| format!("'--{l}'"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            ParseError::MissingValue(s) => write!(f, "option '{s}' requires an argument"),
            ParseError::UnexpectedValue(s) => write!(f, "option '{s}' doesn't allow an argument"),
        }
    }
}

/// Options in command-line order, and the positional arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed<Id> {
    pub options: Vec<Found<Id>>,
    pub positional: Vec<String>,
}

/// Parses `args` (without the program and command names) against `table`.
pub fn parse<Id: Copy + PartialEq>(
    table: &[Spec<Id>],
    args: &[String],
) -> Result<Parsed<Id>, ParseError> {
    let mut options = Vec::new();
    let mut positional = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            positional.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let spec = find_long(table, name)?;
            let spelled = format!("--{name}");
            if spec.value == Value::None && inline.is_some() {
                return Err(ParseError::UnexpectedValue(spelled));
            }
            let value = value_for(spec, inline, args, &mut i, &spelled)?;
            options.push(Found {
                id: spec.id,
                spelled,
                value,
            });
            continue;
        }
        if arg.len() < 2 || !arg.starts_with('-') {
            positional.push(arg.clone());
            continue;
        }
        // A bundle of short options: each takes the rest of the bundle, or the next
        // argument, as its value if it needs one.
        let mut rest = &arg[1..];
        while let Some(c) = rest.chars().next() {
            rest = &rest[c.len_utf8()..];
            let spec = table
                .iter()
                .find(|s| s.short == Some(c))
                .ok_or(ParseError::UnknownShort(c))?;
            let spelled = format!("-{c}");
            let attached = (spec.value == Value::Required && !rest.is_empty()).then(|| {
                let v = rest.to_string();
                rest = "";
                v
            });
            let value = value_for(spec, attached, args, &mut i, &spelled)?;
            options.push(Found {
                id: spec.id,
                spelled,
                value,
            });
        }
    }
    Ok(Parsed {
        options,
        positional,
    })
}

/// The value of an option: the one attached to it (`--name=value`, `-q30`), else the next
/// argument (consumed), for an option that takes one.
fn value_for<Id: Copy>(
    spec: &Spec<Id>,
    attached: Option<String>,
    args: &[String],
    next: &mut usize,
    spelled: &str,
) -> Result<Option<String>, ParseError> {
    if spec.value == Value::None {
        return Ok(None);
    }
    if attached.is_some() {
        return Ok(attached);
    }
    let v = args
        .get(*next)
        .ok_or_else(|| ParseError::MissingValue(spelled.to_string()))?;
    *next += 1;
    Ok(Some(v.clone()))
}

/// A long option by exact name, else by a prefix naming one option (getopt_long accepts a
/// prefix shared by several names of the same option).
fn find_long<'t, Id: Copy + PartialEq>(
    table: &'t [Spec<Id>],
    name: &str,
) -> Result<&'t Spec<Id>, ParseError> {
    if let Some(spec) = table.iter().find(|s| s.long.contains(&name)) {
        return Ok(spec);
    }
    let matches: Vec<(&Spec<Id>, &'static str)> = table
        .iter()
        .flat_map(|s| s.long.iter().map(move |l| (s, *l)))
        .filter(|(_, l)| !name.is_empty() && l.starts_with(name))
        .collect();
    match matches.first() {
        None => Err(ParseError::UnknownLong(name.to_string())),
        Some((first, _)) if matches.iter().all(|(s, _)| s.id == first.id) => Ok(first),
        Some(_) => Err(ParseError::Ambiguous(
            name.to_string(),
            matches.iter().map(|(_, l)| *l).collect(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum T {
        H,
        C,
        Q,
        Out,
        NoHeader,
        NoPg,
    }

    const TABLE: &[Spec<T>] = &[
        Spec {
            id: T::H,
            short: Some('h'),
            long: &["with-header"],
            value: Value::None,
        },
        Spec {
            id: T::C,
            short: Some('c'),
            long: &["count"],
            value: Value::None,
        },
        Spec {
            id: T::Q,
            short: Some('q'),
            long: &["min-MQ", "min-mapq"],
            value: Value::Required,
        },
        Spec {
            id: T::Out,
            short: Some('o'),
            long: &["output"],
            value: Value::Required,
        },
        Spec {
            id: T::NoHeader,
            short: None,
            long: &["no-header"],
            value: Value::None,
        },
        Spec {
            id: T::NoPg,
            short: None,
            long: &["no-PG"],
            value: Value::None,
        },
    ];

    fn p(args: &[&str]) -> Result<Parsed<T>, ParseError> {
        parse(
            TABLE,
            &args.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        )
    }

    #[test]
    fn bundles_values_and_late_options() {
        let r = p(&[
            "-hcq30",
            "x.bam",
            "-o",
            "y",
            "--min-MQ=5",
            "--output",
            "z",
            "-",
            "r1",
        ])
        .unwrap();
        let ids: Vec<T> = r.options.iter().map(|o| o.id).collect();
        assert_eq!(ids, [T::H, T::C, T::Q, T::Out, T::Q, T::Out]);
        assert_eq!(r.options[2].value.as_deref(), Some("30"));
        assert_eq!(r.options[4].spelled, "--min-MQ");
        assert_eq!(r.positional, ["x.bam", "-", "r1"]);
    }

    #[test]
    fn prefixes_double_dash_and_errors() {
        assert_eq!(p(&["--no-h"]).unwrap().options[0].id, T::NoHeader);
        assert_eq!(p(&["--min-m", "3"]).unwrap().options[0].id, T::Q);
        assert!(matches!(p(&["--no"]), Err(ParseError::Ambiguous(..))));
        assert_eq!(p(&["--", "-h"]).unwrap().positional, ["-h"]);
        assert_eq!(p(&["-Z"]), Err(ParseError::UnknownShort('Z')));
        assert_eq!(
            p(&["--bogus"]),
            Err(ParseError::UnknownLong("bogus".into()))
        );
        assert_eq!(p(&["-q"]), Err(ParseError::MissingValue("-q".into())));
        assert_eq!(
            p(&["--count=1"]),
            Err(ParseError::UnexpectedValue("--count".into()))
        );
    }
}
