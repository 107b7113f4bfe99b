//! `cargo xtask bench-remote --python --format cram`: the Python package's CRAM reading
//! against pysam 0.24.1, each run a whole Python process, cold, in turn, medians of `--runs`:
//! the benchmark CRAM and its `.crai` behind the `ec2` link, both sides reading the reference
//! from the local FASTA (`reference_filename`), regions r1, r5, r10 and chr22 (hts's
//! `fetch_many` against pysam's `fetch` region by region), then chr22 locally. Every pair's
//! outputs are compared.

use testkit::{Link, Server};

use crate::bench_python::{compare, print_rows, Side, QUERY};
use crate::python::{venv_with_wheel, Build};

pub fn run(args: &[String]) -> Result<(), String> {
    let (cram, fasta) = crate::bench_cram::existing(args)?;
    let dir = cram.parent().ok_or("no folder")?.to_path_buf();
    let file = crate::bench_cram::file_name(&cram)?;
    let crai = format!("{file}.crai");
    let reference = fasta.display().to_string();
    let runs = crate::flag_value(args, "--runs")
        .and_then(|r| r.parse().ok())
        .unwrap_or(3);
    let python = venv_with_wheel(Build::Release)?.join("bin/python");
    let cases = crate::bench_data::cases(Some("r1,r5,r10,chr22"))?;
    let load = crate::bench_local::load_average();
    println!("load average before: {load}");
    let started = std::time::Instant::now();
    let side = |lib, url: &str, index: &str, regions: &[String]| Side {
        script: QUERY,
        lib,
        url: url.to_string(),
        index: index.to_string(),
        args: regions.to_vec(),
        env: vec![("HTS_BENCH_REFERENCE".into(), Some(reference.clone()))],
    };
    let mut rows = Vec::new();
    let server = Server::start_with(&dir, 0, Link::profile("ec2").ok_or("profile")?)?;
    let (url, index) = (server.url(&file), server.url(&crai));
    for (case, regions) in &cases {
        let hts = side("hts", &url, &index, regions);
        let pysam = side("pysam", &url, &index, regions);
        rows.push(compare(
            &python,
            format!("ec2 CRAM {case}"),
            &hts,
            &pysam,
            "pysam",
            runs,
        )?);
    }
    let local = |name: &str| dir.join(name).display().to_string();
    let chr22 = ["22".to_string()];
    let (path, index) = (local(&file), local(&crai));
    let hts = side("hts", &path, &index, &chr22);
    let pysam = side("pysam", &path, &index, &chr22);
    rows.push(compare(
        &python,
        "local CRAM chr22 iterated".into(),
        &hts,
        &pysam,
        "pysam",
        runs,
    )?);
    print_rows(&rows);
    println!(
        "(cargo xtask bench-remote {}, {runs} run(s) a cell, medians, cold, {:.0} s in all, {}; \
         load average before {load}, after {})",
        args.join(" "),
        started.elapsed().as_secs_f64(),
        cram.display(),
        crate::bench_local::load_average()
    );
    Ok(())
}
