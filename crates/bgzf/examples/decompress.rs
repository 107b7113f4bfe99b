//! Decompresses a BGZF (or gzip, or uncompressed) file to stdout.
//!
//! `cargo run -p hts-bgzf --example decompress -- FILE [THREADS]`

use std::io::Write;
use std::process::ExitCode;

fn run(location: &str, threads: usize) -> Result<(), Box<dyn std::error::Error>> {
    let hfile = hfile::open(location, &hfile::OpenOptions::default())?;
    let mut reader = bgzf::Reader::new(hfile)?;
    reader.set_threads(threads);
    if reader.format() == bgzf::Format::Bgzf && !reader.check_eof_marker()? {
        eprintln!("warning: {location}: EOF marker is absent; the file may be truncated");
    }
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read_data(&mut buf)?;
        if n == 0 {
            break;
        }
        out.write_all(&buf[..n])?;
    }
    out.flush()?;
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(location) = args.first() else {
        eprintln!("usage: decompress FILE [THREADS]");
        return ExitCode::from(2);
    };
    let threads = match args.get(1).map(|t| t.parse::<usize>()) {
        None => 1,
        Some(Ok(t)) => t,
        Some(Err(_)) => {
            eprintln!("decompress: THREADS must be a number");
            return ExitCode::from(2);
        }
    };
    match run(location, threads) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("decompress: {e}");
            ExitCode::FAILURE
        }
    }
}
