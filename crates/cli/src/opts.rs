//! A small getopt_long for the subcommands other than `view`: short options (bundled, value
//! attached or next), long options (`--name value`, `--name=value`), options after operands,
//! and `--` to end options.

use std::process::ExitCode;

/// One option a subcommand accepts.
pub struct Spec {
    pub short: Option<char>,
    pub long: Option<&'static str>,
    pub takes_value: bool,
}

/// A parsed option: its short letter (or the long name's first letter when it has none) and
/// its value.
#[derive(Debug, PartialEq, Eq)]
pub struct Opt {
    pub name: String,
    pub value: Option<String>,
}

/// Splits `args` into options (in order) and operands; the error is the message to print.
pub fn parse(args: &[String], specs: &[Spec]) -> Result<(Vec<Opt>, Vec<String>), String> {
    let mut opts = Vec::new();
    let mut operands = Vec::new();
    let mut i = 0;
    let name_of = |s: &Spec| match (s.short, s.long) {
        (Some(c), _) => c.to_string(),
        (None, Some(l)) => l.to_string(),
        (None, None) => String::new(),
    };
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if arg == "--" {
            operands.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (key, inline) = match long.split_once('=') {
                Some((k, v)) => (k, Some(v.to_string())),
                None => (long, None),
            };
            let spec = specs
                .iter()
                .find(|s| s.long == Some(key))
                .ok_or_else(|| format!("unrecognized option '--{key}'"))?;
            let value = if spec.takes_value {
                match inline {
                    Some(v) => Some(v),
                    None => {
                        let v = args
                            .get(i)
                            .cloned()
                            .ok_or_else(|| format!("option '--{key}' requires an argument"))?;
                        i += 1;
                        Some(v)
                    }
                }
            } else if inline.is_some() {
                return Err(format!("option '--{key}' doesn't allow an argument"));
            } else {
                None
            };
            opts.push(Opt {
                name: name_of(spec),
                value,
            });
            continue;
        }
        if arg.len() < 2 || !arg.starts_with('-') {
            operands.push(arg.clone());
            continue;
        }
        let chars: Vec<char> = arg[1..].chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            let spec = specs
                .iter()
                .find(|s| s.short == Some(c))
                .ok_or_else(|| format!("invalid option -- '{c}'"))?;
            if spec.takes_value {
                let rest: String = chars[j + 1..].iter().collect();
                let value = if rest.is_empty() {
                    let v = args
                        .get(i)
                        .cloned()
                        .ok_or_else(|| format!("option requires an argument -- '{c}'"))?;
                    i += 1;
                    v
                } else {
                    rest
                };
                opts.push(Opt {
                    name: c.to_string(),
                    value: Some(value),
                });
                break;
            }
            opts.push(Opt {
                name: c.to_string(),
                value: None,
            });
            j += 1;
        }
    }
    Ok((opts, operands))
}

/// `-@`/`--threads INT`, which several subcommands take.
pub const THREADS: Spec = Spec {
    short: Some('@'),
    long: Some("threads"),
    takes_value: true,
};

/// `--verbosity INT`, accepted and ignored.
pub const VERBOSITY: Spec = Spec {
    short: None,
    long: Some("verbosity"),
    takes_value: true,
};

/// Parses `argv`, or prints the error and the usage and gives the exit status.
pub fn parse_or_usage(
    argv: &[String],
    specs: &[Spec],
    command: &str,
    usage: &str,
) -> Result<(Vec<Opt>, Vec<String>), ExitCode> {
    parse(argv, specs).map_err(|e| {
        eprint!("hts {command}: {e}\n{usage}");
        ExitCode::from(1)
    })
}

/// The one input file samtools' `flagstat` and `idxstats` take: none prints the usage and
/// succeeds, more than one is a usage error.
pub fn single_file<'a>(files: &'a [String], usage: &str) -> Result<&'a str, ExitCode> {
    match files {
        [f] => Ok(f),
        [] => {
            print!("{usage}");
            Err(ExitCode::SUCCESS)
        }
        _ => {
            eprint!("{usage}");
            Err(ExitCode::from(1))
        }
    }
}

/// The last `-@` value (0 when none).
pub fn threads(options: &[Opt]) -> usize {
    options
        .iter()
        .rev()
        .find(|o| o.name == "@")
        .and_then(|o| o.value.as_deref())
        .map_or(0, |v| atoi(v).max(0) as usize)
}

/// C's `atoi` for thread counts and the like: leading digits, 0 when none.
pub fn atoi(s: &str) -> i64 {
    let t = s.trim_start();
    let (neg, t) = match t.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let n = t.bytes().take_while(u8::is_ascii_digit).fold(0i64, |a, d| {
        a.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    });
    if neg {
        -n
    } else {
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    const SPECS: &[Spec] = &[
        Spec {
            short: Some('@'),
            long: Some("threads"),
            takes_value: true,
        },
        Spec {
            short: Some('v'),
            long: None,
            takes_value: false,
        },
        Spec {
            short: None,
            long: Some("verbosity"),
            takes_value: true,
        },
    ];

    #[test]
    fn getopt_rules() {
        let (o, rest) =
            parse(&args(&["-vv@2", "f.bam", "--threads=3", "--", "-x"]), SPECS).unwrap();
        assert_eq!(o.len(), 4);
        assert_eq!(o[2].value.as_deref(), Some("2"));
        assert_eq!(o[3].name, "@");
        assert_eq!(rest, vec!["f.bam", "-x"]);
        assert!(parse(&args(&["-x"]), SPECS).is_err());
        assert!(parse(&args(&["-@"]), SPECS).is_err());
        assert!(parse(&args(&["--bogus"]), SPECS).is_err());
        let (o, _) = parse(&args(&["--verbosity", "2", "-"]), SPECS).unwrap();
        assert_eq!(o[0].name, "verbosity");
        assert_eq!(atoi("12x"), 12);
        assert_eq!(atoi("x"), 0);
    }
}
