//! The VCF side of `bench-remote` (`--format vcf`): the folder served, and the request log
//! printed with `--request-log`.

use std::path::{Path, PathBuf};

use testkit::Server;

/// The folder served for the VCF: the data and its TBI only (hard links), so that tabix and hts
/// probing for `.csi` first find what a plain `tabix -p vcf` leaves beside a file.
pub(crate) fn served_dir(vcf: &Path) -> Result<(PathBuf, String), String> {
    let file = vcf
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or("bad benchmark file name")?
        .to_string();
    let parent = vcf.parent().ok_or("benchmark VCF has no folder")?;
    let dir = parent.join(format!("served-tbi-{file}"));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    for name in [file.clone(), format!("{file}.tbi")] {
        let link = dir.join(&name);
        if !link.exists() {
            std::fs::hard_link(parent.join(&name), &link)
                .map_err(|e| format!("{}: {e}", link.display()))?;
        }
    }
    Ok((dir, file))
}

/// The server's log as a table (milliseconds from the first request, connection, request,
/// status, bytes advertised), and whether every Range was bounded.
pub(crate) fn print_log(case: &str, server: &Server, cwd: &Path) {
    let log = server.log();
    let t0 = log.iter().map(|e| e.arrived).min();
    println!("\nRequest log of hts's first cold run, {case} (as the server saw it):\n");
    println!(
        "| ms | head after (ms) | conn | request | Range | status | bytes |\n\
         |---|---|---|---|---|---|---|"
    );
    for e in &log {
        let ms = t0.map_or(0.0, |t| e.arrived.duration_since(t).as_secs_f64() * 1e3);
        println!(
            "| {ms:.0} | {:.1} | {} | {} {} | {} | {} | {} |",
            e.answered.duration_since(e.arrived).as_secs_f64() * 1e3,
            e.connection,
            e.method,
            e.path,
            e.range.as_deref().unwrap_or("(none)"),
            e.status,
            e.content_length
        );
    }
    let unbounded = log
        .iter()
        .filter(|e| e.method == "GET" && !e.is_bounded())
        .count();
    let left = std::fs::read_dir(cwd).map(|d| d.count()).unwrap_or(0);
    println!(
        "\n{} requests, {unbounded} GET(s) without a bounded Range; files in the working \
         directory after the run: {left}\n",
        log.len()
    );
}
