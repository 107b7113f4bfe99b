//! The figures of `bench-remote`: medians of runs, and the tables and JSON they are shown as.

use testkit::Summary;

use crate::bench_minimum::Needed;

/// One run of one mode.
pub struct Sample {
    pub wall: f64,
    pub first_record: f64,
    pub summary: Summary,
    pub index_bytes: u64,
    pub output_ok: bool,
}

/// One measured cell: medians over the runs.
#[derive(Debug, Clone)]
pub struct Cell {
    pub profile: String,
    pub case: String,
    pub mode: String,
    pub temperature: &'static str,
    pub wall: f64,
    pub first_record: f64,
    pub written: u64,
    pub index_bytes: u64,
    pub advertised: u64,
    pub gets: usize,
    pub connections: u64,
    pub unbounded: usize,
    pub output_ok: bool,
}

pub(crate) fn median_f(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

pub(crate) fn median_u(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

impl Cell {
    pub fn median(
        profile: &str,
        case: &str,
        mode: &str,
        temperature: &'static str,
        runs: &[Sample],
    ) -> Cell {
        Cell {
            profile: profile.to_string(),
            case: case.to_string(),
            mode: mode.to_string(),
            temperature,
            wall: median_f(runs.iter().map(|r| r.wall).collect()),
            first_record: median_f(runs.iter().map(|r| r.first_record).collect()),
            written: median_u(runs.iter().map(|r| r.summary.written).collect()),
            index_bytes: median_u(runs.iter().map(|r| r.index_bytes).collect()),
            advertised: median_u(runs.iter().map(|r| r.summary.advertised).collect()),
            gets: median_u(runs.iter().map(|r| r.summary.gets as u64).collect()) as usize,
            connections: median_u(runs.iter().map(|r| r.summary.connections).collect()),
            unbounded: runs.iter().map(|r| r.summary.unbounded).max().unwrap_or(0),
            output_ok: runs.iter().all(|r| r.output_ok),
        }
    }

    fn label(&self) -> String {
        if self.temperature == "warm" {
            format!("{} (warm)", self.mode)
        } else {
            self.mode.clone()
        }
    }

    /// A progress line.
    pub fn line(&self) -> String {
        format!(
            "{:>5} {:>6} {:>16}: {:>7.3} s, first record {:.3} s, {:>10} B written ({} B index), {} GETs, {} conns{}",
            self.profile,
            self.case,
            self.label(),
            self.wall,
            self.first_record,
            self.written,
            self.index_bytes,
            self.gets,
            self.connections,
            if self.output_ok { "" } else { "  OUTPUT DIFFERS (void)" }
        )
    }
}

fn mb(b: u64) -> String {
    format!("{:.2} MB", b as f64 / 1e6)
}

fn pct(new: f64, old: f64) -> f64 {
    if old == 0.0 {
        0.0
    } else {
        (new - old) / old * 100.0
    }
}

/// Per profile: the seed's table (htslib's request pattern against PR #1998's), then every
/// mode with ratios to samtools (cold to cold, warm to warm) and to the minimum.
/// `baseline` is the mode the speed ratios divide (samtools, or tabix for the VCF).
pub fn tables(cells: &[Cell], minimum: &dyn Fn(&str) -> Option<Needed>, baseline: &str) -> String {
    let mut s = String::new();
    let mut profiles: Vec<&str> = cells.iter().map(|c| c.profile.as_str()).collect();
    profiles.dedup();
    for p in profiles {
        let find = |case: &str, mode: &str, t: &str| {
            cells
                .iter()
                .find(|c| c.profile == p && c.case == case && c.mode == mode && c.temperature == t)
        };
        let mut cases: Vec<&str> = cells
            .iter()
            .filter(|c| c.profile == p)
            .map(|c| c.case.as_str())
            .collect();
        cases.dedup();
        let patterns = cells.iter().any(|c| c.profile == p && c.mode == "htslib");
        if patterns {
            s += &format!("\nProfile {p}: htslib's request pattern against PR #1998's (both reproduced by hts)\n\n");
            s += "| Query | htslib | PR #1998 | Bandwidth | Time |\n|---|---|---|---|---|\n";
        }
        for case in &cases {
            if let (Some(u), Some(b)) = (find(case, "htslib", "cold"), find(case, "pr1998", "cold"))
            {
                s += &format!(
                    "| {case} | {} / {:.2} s | {} / {:.2} s | {:+.0}% | {:+.0}% |\n",
                    mb(u.written),
                    u.wall,
                    mb(b.written),
                    b.wall,
                    pct(b.written as f64, u.written as f64),
                    pct(b.wall, u.wall)
                );
            }
        }
        s += &format!("\nProfile {p}: every mode (median of runs; bytes are what the server wrote to sockets)\n\n");
        s += &format!("| Query | mode | wall | first record | written | index bytes | GETs | conns | unbounded | written / minimum | speed vs {baseline} |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
        for case in &cases {
            let min = minimum(case);
            for c in cells.iter().filter(|c| c.profile == p && &c.case == case) {
                // Each mode against the baseline of its own transport (hts-s3 to samtools-s3).
                let base = find(case, baseline, c.temperature);
                let base = match c.mode.strip_suffix("-s3") {
                    Some(_) => find(case, &format!("{baseline}-s3"), c.temperature).or(base),
                    None => base,
                };
                let ratio = min
                    .map(|m| format!("{:.2}x", c.written as f64 / m.bytes.max(1) as f64))
                    .unwrap_or_default();
                let vs = base
                    .map(|b| format!("{:.2}x", b.wall / c.wall.max(1e-9)))
                    .unwrap_or_default();
                s +=
                    &format!(
                    "| {case} | {} | {:.3} s | {:.3} s | {} | {} | {} | {} | {} | {ratio} | {vs}{} |\n",
                    c.label(),
                    c.wall,
                    c.first_record,
                    mb(c.written),
                    mb(c.index_bytes),
                    c.gets,
                    c.connections,
                    c.unbounded,
                    if c.output_ok { "" } else { " VOID: output differs" }
                );
            }
            if let Some(m) = min {
                s += &format!(
                    "| {case} | minimum | | | {} | {} | | | | 1.00x | |\n",
                    mb(m.bytes),
                    mb(m.index_bytes)
                );
            }
        }
        s += &transports(&cases, &find, p);
    }
    s
}

/// hts on each transport side by side, cold, and the gap of the signed transport taken apart:
/// `hts-s3 / hts` is the whole of it, `hts-s3 / hts-presigned` what signing costs the client
/// (same store, proxy, link and GETs), `hts-presigned / hts-proxied` what the store costs
/// beside the file server (both behind the same proxy), `hts-proxied / hts` the proxy's share.
fn transports<'a>(
    cases: &[&str],
    find: &dyn Fn(&str, &str, &str) -> Option<&'a Cell>,
    profile: &str,
) -> String {
    let mut s = String::new();
    for case in cases {
        let wall = |mode: &str| find(case, mode, "cold").map(|c| c.wall);
        let (Some(http), Some(signed)) = (wall("hts"), wall("hts-s3")) else {
            continue;
        };
        let (presigned, proxied) = (wall("hts-presigned"), wall("hts-proxied"));
        let time = |t: Option<f64>| t.map(|t| format!("{t:.3} s")).unwrap_or_default();
        let over = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => format!("{:+.0}%", pct(a, b)),
            _ => String::new(),
        };
        if s.is_empty() {
            s += &format!("\nProfile {profile}: hts on each transport (cold medians)\n\n");
            s += "| Query | hts | hts-proxied | hts-presigned | hts-s3 | hts-s3 / hts | hts-s3 / hts-presigned | hts-presigned / hts-proxied | hts-proxied / hts |\n|---|---|---|---|---|---|---|---|---|\n";
        }
        s += &format!(
            "| {case} | {http:.3} s | {} | {} | {signed:.3} s | {} | {} | {} | {} |\n",
            time(proxied),
            time(presigned),
            over(Some(signed), Some(http)),
            over(Some(signed), presigned),
            over(presigned, proxied),
            over(proxied, Some(http)),
        );
    }
    s
}

pub fn to_json(cells: &[Cell], minimum: &dyn Fn(&str) -> Option<Needed>) -> String {
    let mut s = String::from("{\n  \"cells\": [\n");
    for (i, c) in cells.iter().enumerate() {
        s += &format!(
            "    {{\"profile\": \"{}\", \"case\": \"{}\", \"mode\": \"{}\", \"temperature\": \"{}\", \"wall_s\": {:.4}, \"first_record_s\": {:.4}, \"bytes_written\": {}, \"index_bytes\": {}, \"bytes_advertised\": {}, \"gets\": {}, \"connections\": {}, \"unbounded_requests\": {}, \"output_identical\": {}}}{}\n",
            c.profile, c.case, c.mode, c.temperature, c.wall, c.first_record, c.written, c.index_bytes, c.advertised, c.gets, c.connections, c.unbounded, c.output_ok,
            if i + 1 < cells.len() { "," } else { "" }
        );
    }
    s += "  ],\n  \"minimum\": {";
    let mut cases: Vec<&str> = cells.iter().map(|c| c.case.as_str()).collect();
    cases.sort_unstable();
    cases.dedup();
    let mins: Vec<String> = cases
        .iter()
        .filter_map(|c| {
            minimum(c).map(|m| {
                format!(
                    "\"{c}\": {{\"bytes\": {}, \"index_bytes\": {}, \"data_bytes\": {}}}",
                    m.bytes, m.index_bytes, m.data_bytes
                )
            })
        })
        .collect();
    s += &mins.join(", ");
    s += "}\n}\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(case: &str, mode: &str, wall: f64) -> Cell {
        Cell {
            profile: "s3".into(),
            case: case.into(),
            mode: mode.into(),
            temperature: "cold",
            wall,
            first_record: wall,
            written: 0,
            index_bytes: 0,
            advertised: 0,
            gets: 0,
            connections: 0,
            unbounded: 0,
            output_ok: true,
        }
    }

    /// The transports table divides the right modes: the signed transport by plain HTTP and by
    /// the pre-signed URLs, the pre-signed URLs by the proxied file server, and that by plain
    /// HTTP; a case without those runs keeps its row with their ratios blank, and a case
    /// without hts-s3 has no row.
    #[test]
    fn transports_table_divides_the_right_modes() {
        let cells = vec![
            cell("r1", "hts", 0.100),
            cell("r1", "hts-proxied", 0.102),
            cell("r1", "hts-presigned", 0.105),
            cell("r1", "hts-s3", 0.126),
            cell("r5", "hts", 0.200),
            cell("r5", "hts-s3", 0.210),
            cell("r10", "hts", 0.300),
        ];
        let table = tables(&cells, &|_| None, "samtools");
        assert!(
            table.contains(
                "| r1 | 0.100 s | 0.102 s | 0.105 s | 0.126 s | +26% | +20% | +3% | +2% |"
            ),
            "{table}"
        );
        assert!(
            table.contains("| r5 | 0.200 s |  |  | 0.210 s | +5% |  |  |  |"),
            "{table}"
        );
        assert!(!table.contains("| r10 | 0.300 s"), "{table}");
    }
}
