//! What the subcommands other than `view` (`flagstat`, `idxstats`, `quickcheck`) share: their
//! options parsed with getopt_long's rules ([`crate::getopt`], keyed by the short letter or,
//! for a long-only option, a letter of its own), the usage on a bad option, the single input
//! file, and `-@`.

use std::process::ExitCode;

use crate::getopt::{self, Found, Spec, Value};
use crate::numbers::atoi;

/// `-@`/`--threads INT`, which several subcommands take.
pub const THREADS: Spec<char> = Spec {
    id: '@',
    short: Some('@'),
    long: &["threads"],
    value: Value::Required,
};

/// `--verbosity INT`, accepted and ignored.
pub const VERBOSITY: Spec<char> = Spec {
    id: 'V',
    short: None,
    long: &["verbosity"],
    value: Value::Required,
};

/// Parses `argv`, or prints the error and the usage and gives the exit status.
pub fn parse_or_usage(
    argv: &[String],
    specs: &[Spec<char>],
    command: &str,
    usage: &str,
) -> Result<(Vec<Found<char>>, Vec<String>), ExitCode> {
    match getopt::parse(specs, argv) {
        Ok(p) => Ok((p.options, p.positional)),
        Err(e) => {
            eprint!("hts {command}: {e}\n{usage}");
            Err(ExitCode::from(1))
        }
    }
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

/// The last value of option `id`, if given.
pub fn last(options: &[Found<char>], id: char) -> Option<&str> {
    options
        .iter()
        .rev()
        .find(|o| o.id == id)
        .and_then(|o| o.value.as_deref())
}

/// `first`, or, when it failed on a cached part of a remote file that turned out stale (`stale`
/// gives the reason; nothing was output), the warning and `again`: the same work without the
/// cache. Once only: without the cache nothing can be stale.
pub fn again_if_stale<T, E>(
    first: Result<T, E>,
    stale: impl Fn(&E) -> Option<String>,
    again: impl FnOnce() -> Result<T, E>,
) -> Result<T, E> {
    if let Some(why) = first.as_ref().err().and_then(stale) {
        eprintln!("[W::hts] {why}; reading the file again without the cache");
        return again();
    }
    first
}

/// Prints a warning of samtools' file-level commands as the CLI words it (`command` on `file`).
pub fn warn<'a>(command: &'a str, file: &'a str) -> impl FnMut(samtools::Warning) + 'a {
    move |w| match w {
        samtools::Warning::Stale(why) => {
            eprintln!("[W::hts] {why}; reading the file again without the cache")
        }
        samtools::Warning::SlowMethod(e) => eprintln!(
            "hts {command}: fail to load index for \"{file}\", reverting to slow method ({e})"
        ),
    }
}

/// The last `-@` value (0 when none).
pub fn threads(options: &[Found<char>]) -> usize {
    last(options, '@').map_or(0, |v| atoi(v).max(0) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    const SPECS: &[Spec<char>] = &[
        THREADS,
        Spec {
            id: 'v',
            short: Some('v'),
            long: &[],
            value: Value::None,
        },
        VERBOSITY,
    ];

    #[test]
    fn subcommand_options() {
        let (o, rest) = parse_or_usage(
            &args(&["-vv@2", "f.bam", "--threads=3", "--", "-x"]),
            SPECS,
            "t",
            "",
        )
        .unwrap();
        assert_eq!(o.len(), 4);
        assert_eq!(threads(&o), 3);
        assert_eq!(o.iter().filter(|f| f.id == 'v').count(), 2);
        assert_eq!(rest, vec!["f.bam", "-x"]);
        assert!(parse_or_usage(&args(&["-x"]), SPECS, "t", "").is_err());
        assert!(parse_or_usage(&args(&["-@"]), SPECS, "t", "").is_err());
        let (o, _) = parse_or_usage(&args(&["--verbosity", "2", "-"]), SPECS, "t", "").unwrap();
        assert_eq!(last(&o, 'V'), Some("2"));
        assert_eq!(threads(&o), 0);
    }
}
