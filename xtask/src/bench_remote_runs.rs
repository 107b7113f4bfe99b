//! `bench-remote`'s runs of one case: every mode in turn, cold and warm, each timed and
//! checked, with their CPU seconds (client, s3s-fs, this process) and peak memory when asked.

use std::path::Path;

use testkit::corpus::EnvChange;
use testkit::s3::{S3Stack, S3sFs};
use testkit::{Server, Summary};

use crate::bench_remote::{
    fresh_dir, index_bytes, timed, timed_against, Format, Mode, Options, Run, Transport,
};
use crate::bench_table;

/// Where a mode's requests go: the server whose log counts them, and the S3 server behind it.
pub(crate) struct Endpoint<'a> {
    pub(crate) server: &'a Server,
    pub(crate) store: Option<&'a S3sFs>,
    /// The store's stack and a pre-signed URL of one of its objects, to wake it before each
    /// cold run (see [`S3Stack::wake`]).
    pub(crate) wake: Option<(&'a S3Stack, &'a str)>,
}

/// CPU seconds used so far by this process (`RUSAGE_SELF`) or its waited-for children.
pub(crate) fn cpu_seconds(who: libc::c_int) -> f64 {
    // SAFETY: getrusage writes only into the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(who, &mut usage) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The CPU seconds of one run: the client's, the S3 server's, this process's.
fn cpu_now(store: Option<&S3sFs>) -> [f64; 3] {
    [
        cpu_seconds(libc::RUSAGE_CHILDREN),
        store.and_then(S3sFs::cpu_seconds).unwrap_or(0.0),
        cpu_seconds(libc::RUSAGE_SELF),
    ]
}

/// What every mode's runs share: our binary, the index's size, the options.
pub(crate) struct Bench<'a> {
    pub(crate) hts: &'a Path,
    pub(crate) index_size: u64,
    pub(crate) opts: &'a Options,
}

/// One mode made ready for one case: its arguments, environment and endpoint.
pub(crate) struct Planned<'a> {
    pub(crate) mode: &'a Mode,
    pub(crate) args: Vec<String>,
    pub(crate) env: Vec<EnvChange>,
    pub(crate) at: Endpoint<'a>,
}

/// What the runs of one mode gave: cold and warm samples, and each cold run's CPU seconds.
#[derive(Default)]
pub(crate) struct Samples {
    pub(crate) cold: Vec<bench_table::Sample>,
    pub(crate) warm: Vec<bench_table::Sample>,
    cpu: Vec<[f64; 3]>,
}

impl Bench<'_> {
    /// `opts.runs` rounds of every mode of a case, one cold run (and its warm one) of each in
    /// turn: alternated, so that a change in the shared machine's load, or a server idle
    /// since the modes before, weighs on every mode alike rather than on one mode's block.
    pub(crate) fn case(
        &self,
        planned: &[Planned],
        case: &str,
        reference: &[u8],
    ) -> Result<Vec<Samples>, String> {
        let mut samples: Vec<Samples> = planned.iter().map(|_| Samples::default()).collect();
        for _ in 0..self.opts.runs {
            for (p, into) in planned.iter().zip(samples.iter_mut()) {
                self.once(p, case, reference, into)?;
            }
        }
        if self.opts.cpu {
            for (p, s) in planned.iter().zip(&samples) {
                let median = |i: usize| {
                    let mut v: Vec<f64> = s.cpu.iter().map(|c| c[i]).collect();
                    v.sort_by(f64::total_cmp);
                    v.get(v.len() / 2).copied().unwrap_or(0.0)
                };
                println!(
                    "  {case:>6} {:>16}: CPU per cold run (medians): client {:.3} s, s3s-fs \
                     {:.3} s, bench process {:.3} s",
                    p.mode.name,
                    median(0),
                    median(1),
                    median(2)
                );
            }
        }
        Ok(samples)
    }

    /// One cold run of a mode (a fresh working directory and cache), then a warm one if the
    /// mode has them.
    fn once(
        &self,
        p: &Planned,
        case: &str,
        reference: &[u8],
        into: &mut Samples,
    ) -> Result<(), String> {
        let (hts, index_size, server) = (self.hts, self.index_size, p.at.server);
        let mode = p.mode;
        let cwd = fresh_dir("cold")?;
        let cache = fresh_dir("cache")?;
        let mut env = p.env.clone();
        env.push((
            "XDG_CACHE_HOME".to_string(),
            Some(cache.display().to_string()),
        ));
        if let Some((stack, url)) = p.at.wake {
            stack.wake(url)?;
        }
        server.reset();
        let before = cpu_now(p.at.store);
        let r = timed_against(&mode.program, &p.args, &cwd, &env, reference)?;
        let after = cpu_now(p.at.store);
        into.cpu.push(std::array::from_fn(|i| after[i] - before[i]));
        into.cold.push(measure(&r, server, index_size, reference));
        if self.opts.request_log
            && mode.program == hts
            && !["htslib", "pr1998"].contains(&mode.name.as_str())
            && into.cold.len() == 1
        {
            crate::bench_remote_vcf::print_log(&format!("{case} ({})", mode.name), server, &cwd);
        }
        if mode.warm {
            server.reset();
            let r = timed_against(&mode.program, &p.args, &cwd, &env, reference)?;
            into.warm.push(measure(&r, server, index_size, reference));
        }
        // hts never writes into the working directory (tabix and samtools leave the index
        // they downloaded there).
        let left = std::fs::read_dir(&cwd).map(|d| d.count()).unwrap_or(0);
        let _ = std::fs::remove_dir_all(&cache);
        if mode.program == hts && left > 0 {
            return Err(format!(
                "{} left {left} file(s) in its working directory {}",
                mode.name,
                cwd.display()
            ));
        }
        let _ = std::fs::remove_dir_all(&cwd);
        Ok(())
    }
}

/// Where each transport finds the data on one profile: the file server, and s3s-fs behind
/// its proxy with boto3's pre-signed URLs of the data and its index.
pub(crate) struct Targets<'a> {
    pub(crate) server: &'a Server,
    pub(crate) stack: Option<&'a S3Stack>,
    pub(crate) presigned: Option<&'a (String, String)>,
    /// The file server again, unpaced, behind the proxy and link that s3s-fs is behind.
    pub(crate) proxied: Option<&'a Server>,
    pub(crate) file: &'a str,
    pub(crate) ext: &'a str,
}

impl<'a> Targets<'a> {
    /// `mode` made ready to query `regions`, or None when its transport is not served.
    pub(crate) fn plan(
        &self,
        mode: &'a Mode,
        format: Format,
        regions: &[String],
    ) -> Option<Planned<'a>> {
        let (file, ext) = (self.file, self.ext);
        let (bam_url, bai_url, env, server) = match (mode.transport, self.stack) {
            (Transport::Http, _) => {
                let url = self.server.url(file);
                (url.clone(), format!("{url}.{ext}"), Vec::new(), self.server)
            }
            (Transport::S3, Some(st)) => (
                format!("s3://bench/{file}"),
                format!("s3://bench/{file}.{ext}"),
                st.env(testkit::s3::SECRET_KEY),
                &st.proxy,
            ),
            (Transport::Proxied, _) => {
                let proxy = self.proxied?;
                let url = proxy.url(file);
                (url.clone(), format!("{url}.{ext}"), Vec::new(), proxy)
            }
            (Transport::Presigned, Some(st)) => {
                let (data, index) = self.presigned?;
                (data.clone(), index.clone(), Vec::new(), &st.proxy)
            }
            (Transport::HtslibS3, Some(st)) => (
                format!("s3+http://bench/{file}"),
                format!("s3+http://bench/{file}.{ext}"),
                st.htslib_env(),
                &st.proxy,
            ),
            _ => return None,
        };
        let mut args = mode.extra.clone();
        args.extend(format.query_args(bam_url, bai_url, regions));
        // The store, and a URL to wake it by, for the transports it serves.
        let stack = self
            .stack
            .filter(|_| !matches!(mode.transport, Transport::Http | Transport::Proxied));
        let at = Endpoint {
            server,
            store: stack.and_then(|st| st.s3s.as_ref()),
            wake: stack
                .zip(self.presigned)
                .map(|(st, (_, index))| (st, index.as_str())),
        };
        Some(Planned {
            mode,
            args,
            env,
            at,
        })
    }
}

/// The peak RSS in KiB of one more cold run (a fresh working directory and cache) under GNU
/// time: `wait4` alone would report this process's own peak, which the child starts with.
pub(crate) fn peak_rss(program: &Path, args: &[String], env: &[EnvChange]) -> Result<u64, String> {
    let cwd = fresh_dir("rss")?;
    let cache = fresh_dir("rss-cache")?;
    let out = cwd.with_extension("time");
    let mut env = env.to_vec();
    env.push((
        "XDG_CACHE_HOME".to_string(),
        Some(cache.display().to_string()),
    ));
    let mut timed_args = vec![
        "-f".to_string(),
        "%M".to_string(),
        "-o".to_string(),
        out.display().to_string(),
        program.display().to_string(),
    ];
    timed_args.extend(args.iter().cloned());
    let run = timed(Path::new("/usr/bin/time"), &timed_args, &cwd, &env);
    let text = std::fs::read_to_string(&out).unwrap_or_default();
    for p in [&cwd, &cache] {
        let _ = std::fs::remove_dir_all(p);
    }
    let _ = std::fs::remove_file(&out);
    run?;
    text.lines()
        .filter_map(|l| l.trim().parse().ok())
        .next_back()
        .ok_or_else(|| format!("GNU time gave no peak RSS: {text:?}"))
}

/// One run's figures: (wall, first record, summary, index bytes, output identical).
fn measure(r: &Run, server: &Server, index_size: u64, reference: &[u8]) -> bench_table::Sample {
    let summary: Summary = server.summary();
    bench_table::Sample {
        wall: r.wall,
        first_record: r.first_record.unwrap_or(r.wall),
        summary,
        index_bytes: index_bytes(server, index_size),
        output_ok: r.same.unwrap_or_else(|| r.stdout == reference),
    }
}
