//! `hts view` arguments: the samtools view subset, parsed as getopt_long would (options may follow
//! the file, short options may be bundled, `--` ends options).

use std::fmt;

/// Which of the header and the records to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HeaderMode {
    /// Records only (the default).
    #[default]
    None,
    /// `-h`: header, then records.
    With,
    /// `-H`: header only.
    Only,
}

/// Parsed `view` options.
#[derive(Debug, Clone, Default)]
pub struct ViewArgs {
    pub header: HeaderMode,
    pub no_pg: bool,
    pub count: bool,
    pub require_flags: u16,
    pub exclude_flags: u16,
    pub min_mapq: u8,
    pub explicit_index: bool,
    pub threads: usize,
    pub verbosity: u8,
    pub request_headers: Vec<(String, String)>,
    /// `--fetch-mode`: planned (default), per-chunk (PR #1998) or open-ended (htslib).
    pub fetch_mode: Option<String>,
    /// `--no-cache`: neither read nor write the index cache.
    pub no_cache: bool,
    /// `--fetchers N`: requests in flight at once for a remote file.
    pub fetchers: Option<usize>,
    /// `FILE [INDEX] REGION...`
    pub positional: Vec<String>,
    /// The command line, for the @PG line.
    pub command_line: String,
}

/// A usage error; printed as `hts view: <message>`.
#[derive(Debug)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub const USAGE: &str = "\
Usage: hts view [options] FILE [INDEX] [REGION ...]
  -h            include the header in the output
  -H            print the header only
  -c            print only the count of matching records
  -f INT        only records with all bits of INT set in FLAG
  -F INT        only records with none of the bits of INT set in FLAG
  -q INT        only records with MAPQ >= INT
  -X            the second positional argument is the index (path or URL)
  -@, --threads INT     BGZF decompression threads
  --no-PG       do not add a @PG line to the header
  -v, --verbosity INT   1 and up: log every remote request on stderr
  --header 'Name: value'  add a request header for remote files (repeatable)
  --fetchers N            remote files: up to N requests in flight at once (default 6)
  --fetch-mode MODE       planned (default: one plan per query, spans fetched in parallel),
                          per-chunk (PR #1998: a bounded request per run of chunks, in turn) or
                          open-ended (htslib: bytes=X- requests, a new connection per seek)
  --no-cache              do not use the index cache ($XDG_CACHE_HOME/hts)
FILE and INDEX may be local paths, http(s):// URLs or other registered schemes.
REGION: chr, chr:beg, chr:beg-end, {name}:beg-end, or * for unplaced reads.";

fn parse_int(opt: &str, value: &str) -> Result<i64, UsageError> {
    let v = value.trim();
    let (neg, digits) = match v.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let parsed = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16)
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8)
    } else {
        digits.parse::<i64>()
    };
    parsed
        .map(|n| if neg { -n } else { n })
        .map_err(|_| UsageError(format!("invalid value '{value}' for option {opt}")))
}

/// FLAG values: a number (decimal, 0x hex, 0 octal) or comma-separated names as samtools accepts.
fn parse_flags(opt: &str, value: &str) -> Result<u16, UsageError> {
    if value.starts_with(|c: char| c.is_ascii_digit()) {
        let n = parse_int(opt, value)?;
        return u16::try_from(n)
            .map_err(|_| UsageError(format!("flag value '{value}' out of range for {opt}")));
    }
    let mut flags = 0u16;
    for name in value.split(',') {
        let bit = match name.to_ascii_uppercase().as_str() {
            "PAIRED" => 0x1,
            "PROPER_PAIR" => 0x2,
            "UNMAP" => 0x4,
            "MUNMAP" => 0x8,
            "REVERSE" => 0x10,
            "MREVERSE" => 0x20,
            "READ1" => 0x40,
            "READ2" => 0x80,
            "SECONDARY" => 0x100,
            "QCFAIL" => 0x200,
            "DUP" => 0x400,
            "SUPPLEMENTARY" => 0x800,
            _ => {
                return Err(UsageError(format!(
                    "could not parse flag '{name}' for {opt}"
                )))
            }
        };
        flags |= bit;
    }
    Ok(flags)
}

/// Parses the arguments after `view`.
pub fn parse_view(args: &[String]) -> Result<ViewArgs, UsageError> {
    let mut out = ViewArgs {
        command_line: format!("hts view {}", args.join(" ")),
        ..ViewArgs::default()
    };
    let mut i = 0;
    let mut only_positional = false;
    let value_of =
        |i: &mut usize, opt: &str, inline: Option<String>| -> Result<String, UsageError> {
            if let Some(v) = inline {
                return Ok(v);
            }
            *i += 1;
            args.get(*i)
                .cloned()
                .ok_or_else(|| UsageError(format!("option {opt} requires an argument")))
        };
    while i < args.len() {
        let arg = &args[i];
        if only_positional || arg == "-" || !arg.starts_with('-') {
            out.positional.push(arg.clone());
            i += 1;
            continue;
        }
        if arg == "--" {
            only_positional = true;
            i += 1;
            continue;
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            match name {
                "no-PG" => out.no_pg = true,
                "threads" => {
                    out.threads = parse_count("--threads", &value_of(&mut i, "--threads", inline)?)?
                }
                "verbosity" => {
                    out.verbosity =
                        parse_count("--verbosity", &value_of(&mut i, "--verbosity", inline)?)?
                            .min(255) as u8
                }
                "header" => {
                    let v = value_of(&mut i, "--header", inline)?;
                    let (k, val) = v.split_once(':').ok_or_else(|| {
                        UsageError(format!("--header '{v}' is not of the form 'Name: value'"))
                    })?;
                    out.request_headers
                        .push((k.trim().to_string(), val.trim().to_string()));
                }
                "fetch-mode" => {
                    let v = value_of(&mut i, "--fetch-mode", inline)?;
                    if !matches!(v.as_str(), "planned" | "per-chunk" | "open-ended") {
                        return Err(UsageError(format!(
                            "--fetch-mode must be planned, per-chunk or open-ended, not '{v}'"
                        )));
                    }
                    out.fetch_mode = Some(v);
                }
                "no-cache" => out.no_cache = true,
                "fetchers" => {
                    out.fetchers = Some(parse_count(
                        "--fetchers",
                        &value_of(&mut i, "--fetchers", inline)?,
                    )?)
                }
                "count" => out.count = true,
                "help" => return Err(UsageError(USAGE.to_string())),
                _ => return Err(UsageError(format!("unknown option '--{name}'\n{USAGE}"))),
            }
            i += 1;
            continue;
        }
        // Bundled short options: -hc, -F4, -F 4.
        let chars: Vec<char> = arg[1..].chars().collect();
        let mut j = 0;
        while j < chars.len() {
            let c = chars[j];
            let rest: String = chars[j + 1..].iter().collect();
            let inline = (!rest.is_empty()).then_some(rest);
            match c {
                'h' => {
                    out.header = if out.header == HeaderMode::Only {
                        HeaderMode::Only
                    } else {
                        HeaderMode::With
                    }
                }
                'H' => out.header = HeaderMode::Only,
                'c' => out.count = true,
                'X' => out.explicit_index = true,
                'f' | 'F' | 'q' | '@' | 'v' => {
                    let opt = format!("-{c}");
                    let v = value_of(&mut i, &opt, inline)?;
                    match c {
                        'f' => out.require_flags = parse_flags(&opt, &v)?,
                        'F' => out.exclude_flags = parse_flags(&opt, &v)?,
                        'q' => {
                            let q = parse_int(&opt, &v)?;
                            out.min_mapq = q.clamp(0, 255) as u8;
                        }
                        '@' => out.threads = parse_count(&opt, &v)?,
                        _ => out.verbosity = parse_count(&opt, &v)?.min(255) as u8,
                    }
                    break;
                }
                _ => return Err(UsageError(format!("invalid option -- '{c}'\n{USAGE}"))),
            }
            j += 1;
        }
        i += 1;
    }
    Ok(out)
}

fn parse_count(opt: &str, v: &str) -> Result<usize, UsageError> {
    let n = parse_int(opt, v)?;
    usize::try_from(n).map_err(|_| UsageError(format!("invalid value '{v}' for option {opt}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> ViewArgs {
        parse_view(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn bundles_values_and_positionals() {
        let a = p(&["-hc", "-F4", "-q", "30", "x.bam", "-f", "0x2", "chr1", "*"]);
        assert_eq!(a.header, HeaderMode::With);
        assert!(a.count);
        assert_eq!(a.exclude_flags, 4);
        assert_eq!(a.require_flags, 2);
        assert_eq!(a.min_mapq, 30);
        assert_eq!(a.positional, vec!["x.bam", "chr1", "*"]);
    }

    #[test]
    fn flag_names_octal_and_errors() {
        assert_eq!(p(&["-F", "UNMAP,SECONDARY", "x"]).exclude_flags, 0x104);
        assert_eq!(p(&["-f", "010", "x"]).require_flags, 8);
        assert!(parse_view(&["-F".to_string()]).is_err());
        assert!(parse_view(&["-F".to_string(), "BOGUS".to_string()]).is_err());
        assert!(parse_view(&["-Z".to_string()]).is_err());
        assert!(parse_view(&["--fetch-mode=sideways".to_string()]).is_err());
    }

    #[test]
    fn headers_and_double_dash() {
        let a = p(&["--header", "Authorization: Bearer abc", "--", "-weird.bam"]);
        assert_eq!(
            a.request_headers,
            vec![("Authorization".to_string(), "Bearer abc".to_string())]
        );
        assert_eq!(a.positional, vec!["-weird.bam"]);
        assert_eq!(p(&["-H", "-h", "x"]).header, HeaderMode::Only);
    }
}
