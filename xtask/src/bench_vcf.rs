//! `cargo xtask bench-data --vcf`: the benchmark VCF, a population-style call set generated
//! deterministically here (a fixed seed gives the same text, and bgzip 1.16 the same bytes),
//! streamed into Debian's `bgzip -@ 2`, then indexed by Debian's tabix 1.16 (TBI and CSI).

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use testkit::Rng;

use crate::bench_data::cache_dir;

pub const VCF_SEED: u64 = 20261206;

/// The default size of the bgzipped file, in MB (10^6 bytes).
pub const DEFAULT_MB: u64 = 1100;

/// Samples (genotype columns) of the call set.
const SAMPLES: usize = 300;

/// Compressed bytes per site, measured on this generator (bgzip 1.16, default level): the site
/// density is the size asked for divided by this, spread over the genome.
const BYTES_PER_SITE: f64 = 931.0;

/// GRCh37's primary assembly, as in `gen_bam.py`.
const CHROMS: &[(&str, u64)] = &[
    ("1", 249250621),
    ("2", 243199373),
    ("3", 198022430),
    ("4", 191154276),
    ("5", 180915260),
    ("6", 171115067),
    ("7", 159138663),
    ("8", 146364022),
    ("9", 141213431),
    ("10", 135534747),
    ("11", 135006516),
    ("12", 133851895),
    ("13", 115169878),
    ("14", 107349540),
    ("15", 102531392),
    ("16", 90354753),
    ("17", 81195210),
    ("18", 78077248),
    ("19", 59128983),
    ("20", 63025520),
    ("21", 48129895),
    ("22", 51304566),
    ("X", 155270560),
    ("Y", 59373566),
];

/// Query cases on the VCF: the small regions of `regions.txt`'s r1/r5/r10 widened to 20 kb
/// (at about one site per 2.6 kb a 100 bp region is usually empty), and chromosome 22.
pub const VCF_CASES: &[(&str, &str)] = &[
    ("vcf-r1", "1:1000000-1020000"),
    (
        "vcf-r5",
        "1:1000000-1020000 2:5000000-5020000 3:10000000-10020000 5:50000000-50020000 \
         7:117188547-117208547",
    ),
    (
        "vcf-r10",
        "1:1000000-1020000 2:5000000-5020000 3:10000000-10020000 5:50000000-50020000 \
         7:117188547-117208547 9:133738300-133758300 12:25398200-25418200 \
         13:32914400-32934400 17:7577500-7597500 X:153296000-153316000",
    ),
    ("vcf-chr22", "22"),
];

/// The VCF cases named in `filter` (all when None).
pub fn cases(filter: Option<&str>) -> Vec<(String, Vec<String>)> {
    let wanted: Option<Vec<&str>> = filter.map(|f| f.split(',').collect());
    VCF_CASES
        .iter()
        .filter(|(name, _)| wanted.as_ref().is_none_or(|w| w.contains(name)))
        .map(|(name, regions)| {
            (
                name.to_string(),
                regions.split_whitespace().map(str::to_string).collect(),
            )
        })
        .collect()
}

pub fn vcf_path(mb: u64) -> PathBuf {
    cache_dir().join(format!("bench-{mb}M.vcf.gz"))
}

fn done_marker(vcf: &std::path::Path) -> PathBuf {
    PathBuf::from(format!("{}.done", vcf.display()))
}

/// `--size N` (MB) from the arguments, else the default.
pub fn size_mb(args: &[String]) -> Result<u64, String> {
    match crate::flag_value(args, "--size") {
        Some(s) => s
            .trim_end_matches(['M', 'm'])
            .parse()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("--size '{s}' is not a size in MB")),
        None => Ok(DEFAULT_MB),
    }
}

/// The benchmark VCF for `--size` (default the full one); an error saying how to make it when
/// it is missing.
pub fn existing_vcf(args: &[String]) -> Result<PathBuf, String> {
    let mb = size_mb(args)?;
    let vcf = vcf_path(mb);
    if !done_marker(&vcf).exists() {
        return Err(format!(
            "{} is missing: run `cargo xtask bench-data --vcf{}` first",
            vcf.display(),
            if mb == DEFAULT_MB {
                String::new()
            } else {
                format!(" --size {mb}")
            }
        ));
    }
    Ok(vcf)
}

/// Generates, compresses and indexes the VCF unless it is already there.
pub fn run(mb: u64) -> Result<PathBuf, String> {
    crate::bench_data::ensure_samtools()?;
    let dir = cache_dir();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let vcf = vcf_path(mb);
    if done_marker(&vcf).exists() {
        println!("{} is ready", vcf.display());
        return Ok(vcf);
    }
    let started = std::time::Instant::now();
    let tmp = PathBuf::from(format!("{}.tmp", vcf.display()));
    let out = std::fs::File::create(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    println!(
        "$ cargo xtask bench-data --vcf --size {mb} | bgzip -@ 2 -c > {}",
        tmp.display()
    );
    let mut bgzip = Command::new("bgzip")
        .args(["-@", "2", "-c"])
        .stdin(Stdio::piped())
        .stdout(out)
        .spawn()
        .map_err(|e| format!("cannot run bgzip: {e}"))?;
    let stdin = bgzip.stdin.take().ok_or("no pipe to bgzip")?;
    let sites = (mb as f64 * 1e6 / BYTES_PER_SITE) as u64;
    let written = generate(stdin, sites)?;
    let status = bgzip.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("bgzip failed ({status})"));
    }
    std::fs::rename(&tmp, &vcf).map_err(|e| e.to_string())?;
    let size = std::fs::metadata(&vcf).map_err(|e| e.to_string())?.len();
    println!(
        "{}: {written} sites, {:.2} GB bgzipped, in {:.0} s",
        vcf.display(),
        size as f64 / 1e9,
        started.elapsed().as_secs_f64()
    );
    for args in [&["-f", "-p", "vcf"][..], &["-f", "-C", "-p", "vcf"][..]] {
        println!("$ tabix {} {}", args.join(" "), vcf.display());
        let ok = Command::new("tabix")
            .args(args)
            .arg(&vcf)
            .status()
            .map_err(|e| format!("cannot run tabix: {e}"))?;
        if !ok.success() {
            return Err(format!("tabix {} failed ({ok})", args.join(" ")));
        }
    }
    std::fs::write(done_marker(&vcf), b"").map_err(|e| e.to_string())?;
    println!(
        "{} is ready ({:.0} s in all)",
        vcf.display(),
        started.elapsed().as_secs_f64()
    );
    Ok(vcf)
}

/// Pre-formatted genotype fields (`GT:AD:DP:GQ`) of one kind, picked by random bits.
struct Table(Vec<Vec<u8>>);

impl Table {
    fn new(rng: &mut Rng, n: usize, make: impl Fn(&mut Rng) -> String) -> Table {
        Table((0..n).map(|_| make(rng).into_bytes()).collect())
    }

    fn pick(&self, bits: u64) -> &[u8] {
        &self.0[(bits as usize) % self.0.len()]
    }
}

/// The genotype tables: hom-ref, het, hom-alt, missing.
fn tables(rng: &mut Rng) -> [Table; 4] {
    let hom_ref = Table::new(rng, 1024, |r| {
        let dp = 8 + r.below(40);
        format!("0/0:{dp},0:{dp}:{}", (dp * 3).min(99) - r.below(4))
    });
    let het = Table::new(rng, 1024, |r| {
        let a = 4 + r.below(25);
        let b = 4 + r.below(25);
        format!("0/1:{a},{b}:{}:{}", a + b, 40 + r.below(60))
    });
    let hom_alt = Table::new(rng, 512, |r| {
        let dp = 6 + r.below(40);
        format!("1/1:0,{dp}:{dp}:{}", (dp * 3).min(99))
    });
    let missing = Table::new(rng, 4, |r| {
        format!("./.:0,0:0:{}", if r.below(2) == 0 { "." } else { "0" })
    });
    [hom_ref, het, hom_alt, missing]
}

fn push_u(buf: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[i..]);
}

/// A fixed-point number with two decimals (`-1.25`).
fn push_fixed(buf: &mut Vec<u8>, hundredths: i64) {
    if hundredths < 0 {
        buf.push(b'-');
    }
    let h = hundredths.unsigned_abs();
    push_u(buf, h / 100);
    buf.push(b'.');
    buf.push(b'0' + (h / 10 % 10) as u8);
    buf.push(b'0' + (h % 10) as u8);
}

fn header(out: &mut Vec<u8>) {
    out.extend_from_slice(
        b"##fileformat=VCFv4.2\n\
##FILTER=<ID=PASS,Description=\"All filters passed\">\n\
##FILTER=<ID=LowQual,Description=\"Low quality\">\n\
##FILTER=<ID=VQSRTrancheSNP99.90to100.00,Description=\"Truth sensitivity tranche level for SNP model\">\n\
##FORMAT=<ID=GT,Number=1,Type=String,Description=\"Genotype\">\n\
##FORMAT=<ID=AD,Number=R,Type=Integer,Description=\"Allelic depths for the ref and alt alleles\">\n\
##FORMAT=<ID=DP,Number=1,Type=Integer,Description=\"Approximate read depth\">\n\
##FORMAT=<ID=GQ,Number=1,Type=Integer,Description=\"Genotype Quality\">\n\
##INFO=<ID=AC,Number=A,Type=Integer,Description=\"Allele count in genotypes\">\n\
##INFO=<ID=AF,Number=A,Type=Float,Description=\"Allele Frequency\">\n\
##INFO=<ID=AN,Number=1,Type=Integer,Description=\"Total number of alleles in called genotypes\">\n\
##INFO=<ID=BaseQRankSum,Number=1,Type=Float,Description=\"Z-score from Wilcoxon rank sum test of Alt Vs. Ref base qualities\">\n\
##INFO=<ID=DB,Number=0,Type=Flag,Description=\"dbSNP Membership\">\n\
##INFO=<ID=DP,Number=1,Type=Integer,Description=\"Approximate read depth\">\n\
##INFO=<ID=ExcessHet,Number=1,Type=Float,Description=\"Phred-scaled p-value for exact test of excess heterozygosity\">\n\
##INFO=<ID=FS,Number=1,Type=Float,Description=\"Phred-scaled p-value using Fisher's exact test to detect strand bias\">\n\
##INFO=<ID=InbreedingCoeff,Number=1,Type=Float,Description=\"Inbreeding coefficient\">\n\
##INFO=<ID=MQ,Number=1,Type=Float,Description=\"RMS Mapping Quality\">\n\
##INFO=<ID=MQRankSum,Number=1,Type=Float,Description=\"Z-score From Wilcoxon rank sum test of Alt vs. Ref read mapping qualities\">\n\
##INFO=<ID=QD,Number=1,Type=Float,Description=\"Variant Confidence/Quality by Depth\">\n\
##INFO=<ID=ReadPosRankSum,Number=1,Type=Float,Description=\"Z-score from Wilcoxon rank sum test of Alt vs. Ref read position bias\">\n\
##INFO=<ID=SOR,Number=1,Type=Float,Description=\"Symmetric Odds Ratio of 2x2 contingency table to detect strand bias\">\n\
##INFO=<ID=VQSLOD,Number=1,Type=Float,Description=\"Log odds of being a true variant versus being false\">\n\
##INFO=<ID=culprit,Number=1,Type=String,Description=\"The annotation which was the worst performing in the VQSR\">\n",
    );
    for (name, len) in CHROMS {
        out.extend_from_slice(b"##contig=<ID=");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b",length=");
        push_u(out, *len);
        out.extend_from_slice(b",assembly=GRCh37>\n");
    }
    out.extend_from_slice(
        b"##reference=GRCh37\n#CHROM\tPOS\tID\tREF\tALT\tQUAL\tFILTER\tINFO\tFORMAT",
    );
    for s in 0..SAMPLES {
        out.extend_from_slice(format!("\tS{:04}", s + 1).as_bytes());
    }
    out.push(b'\n');
}

const BASES: &[u8; 4] = b"ACGT";
const CULPRITS: &[&str] = &["MQ", "FS", "QD", "SOR", "MQRankSum", "ReadPosRankSum"];

/// Writes the VCF text of about `sites` sites, sorted, spread evenly over the genome; returns
/// the number of sites written.
fn generate(mut sink: impl Write, sites: u64) -> Result<u64, String> {
    let mut rng = Rng::new(VCF_SEED);
    let tables = tables(&mut rng);
    let genome: u64 = CHROMS.iter().map(|c| c.1).sum();
    // Gaps uniform in 1..=2g-1: mean g.
    let gap = (genome / sites.max(1)).max(2);
    let mut buf = Vec::with_capacity(1 << 22);
    header(&mut buf);
    let mut genotypes = Vec::with_capacity(SAMPLES * 16);
    let mut written = 0u64;
    for (name, len) in CHROMS {
        let mut pos = 1 + rng.below(gap as usize) as u64;
        while pos < *len - 100 {
            let counts = push_genotypes(&mut genotypes, &mut rng, &tables);
            buf.extend_from_slice(name.as_bytes());
            buf.push(b'\t');
            push_u(&mut buf, pos);
            buf.push(b'\t');
            push_alleles(&mut buf, rng.next_u64());
            push_info(&mut buf, &mut rng, counts);
            buf.extend_from_slice(b"\tGT:AD:DP:GQ");
            buf.extend_from_slice(&genotypes);
            buf.push(b'\n');
            written += 1;
            if buf.len() > (1 << 22) - (1 << 16) {
                sink.write_all(&buf)
                    .map_err(|e| format!("writing to bgzip: {e}"))?;
                buf.clear();
            }
            pos += 1 + rng.below(2 * gap as usize - 1) as u64;
        }
    }
    sink.write_all(&buf)
        .map_err(|e| format!("writing to bgzip: {e}"))?;
    Ok(written)
}

/// A site's allele counts and depth, from its samples: `AC` (at least 1), `AN`, `DP`.
struct Counts {
    ac: u64,
    an: u64,
    dp: u64,
}

/// Draws one site's alt allele frequency and its samples' genotype fields into `genotypes`
/// (each after a tab).
fn push_genotypes(genotypes: &mut Vec<u8>, rng: &mut Rng, tables: &[Table; 4]) -> Counts {
    // Alt allele frequency: mostly rare, as in a population call set.
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let af = u * u * u * 0.5;
    let p_alt = (af * af * 1e6) as u64;
    let p_het = p_alt + (2.0 * af * (1.0 - af) * 1e6) as u64;
    let p_missing = p_het + 8_000;
    genotypes.clear();
    let (mut ac, mut an, mut dp) = (0u64, 0u64, 0u64);
    for _ in 0..SAMPLES {
        let bits = rng.next_u64();
        let roll = (bits & 0xFFFFF) % 1_000_000;
        let kind = if roll < p_alt {
            ac += 2;
            2
        } else if roll < p_het {
            ac += 1;
            1
        } else if roll < p_missing {
            3
        } else {
            0
        };
        if kind != 3 {
            an += 2;
        }
        let field = tables[kind].pick(bits >> 20);
        dp += 20;
        genotypes.push(b'\t');
        genotypes.extend_from_slice(field);
    }
    Counts {
        ac: ac.max(1),
        an,
        dp,
    }
}

/// ID, REF and ALT (one site in ten an indel) from the random word `r`, each with the tab
/// after it but ALT.
fn push_alleles(buf: &mut Vec<u8>, r: u64) {
    if r % 5 < 2 {
        buf.extend_from_slice(b"rs");
        push_u(buf, 1000 + (r >> 8) % 900_000_000);
    } else {
        buf.push(b'.');
    }
    buf.push(b'\t');
    let reference = BASES[(r >> 40) as usize % 4];
    let alt = BASES[((r >> 40) as usize + 1 + (r >> 44) as usize % 3) % 4];
    buf.push(reference);
    match (r >> 50) % 20 {
        0 => {
            for k in 0..1 + (r >> 55) % 6 {
                buf.push(BASES[((r >> (k * 2)) & 3) as usize]);
            }
            buf.push(b'\t');
            buf.push(reference);
        }
        1 => {
            buf.push(b'\t');
            buf.push(reference);
            for k in 0..1 + (r >> 55) % 6 {
                buf.push(BASES[((r >> (k * 2 + 12)) & 3) as usize]);
            }
        }
        _ => {
            buf.push(b'\t');
            buf.push(alt);
        }
    }
}

/// QUAL, FILTER and INFO (GATK's annotations), each after a tab.
fn push_info(buf: &mut Vec<u8>, rng: &mut Rng, Counts { ac, an, dp }: Counts) {
    let q = rng.next_u64();
    buf.push(b'\t');
    push_fixed(buf, 3000 + (q % 500_000) as i64);
    buf.extend_from_slice(match (q >> 20) % 20 {
        0 => b"\tLowQual\t",
        1 => b"\tVQSRTrancheSNP99.90to100.00\t",
        _ => b"\tPASS\t",
    });
    buf.extend_from_slice(b"AC=");
    push_u(buf, ac);
    buf.extend_from_slice(b";AF=");
    let af_milli = ac * 100_000 / an.max(1);
    push_u(buf, af_milli / 100_000);
    buf.push(b'.');
    buf.extend_from_slice(format!("{:05}", af_milli % 100_000).as_bytes());
    buf.extend_from_slice(b";AN=");
    push_u(buf, an);
    buf.extend_from_slice(b";BaseQRankSum=");
    push_fixed(buf, (q >> 24) as i64 % 400 - 200);
    if (q >> 33).is_multiple_of(3) {
        buf.extend_from_slice(b";DB");
    }
    buf.extend_from_slice(b";DP=");
    push_u(buf, dp + (q >> 35) % 2000);
    buf.extend_from_slice(b";ExcessHet=");
    push_fixed(buf, 301 + ((q >> 40) % 300) as i64);
    buf.extend_from_slice(b";FS=");
    push_fixed(buf, ((q >> 44) % 3000) as i64);
    let s = rng.next_u64();
    buf.extend_from_slice(b";InbreedingCoeff=");
    push_fixed(buf, (s % 40) as i64 - 20);
    buf.extend_from_slice(b";MQ=");
    push_fixed(buf, 5000 + ((s >> 8) % 1000) as i64);
    buf.extend_from_slice(b";MQRankSum=");
    push_fixed(buf, ((s >> 18) % 600) as i64 - 300);
    buf.extend_from_slice(b";QD=");
    push_fixed(buf, ((s >> 28) % 4000) as i64);
    buf.extend_from_slice(b";ReadPosRankSum=");
    push_fixed(buf, ((s >> 40) % 500) as i64 - 250);
    buf.extend_from_slice(b";SOR=");
    push_fixed(buf, ((s >> 50) % 900) as i64);
    buf.extend_from_slice(b";VQSLOD=");
    push_fixed(buf, ((s >> 20) % 3000) as i64 - 1000);
    buf.extend_from_slice(b";culprit=");
    buf.extend_from_slice(CULPRITS[(s >> 60) as usize % CULPRITS.len()].as_bytes());
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_seed_same_text_and_sorted() {
        let mut a = Vec::new();
        let mut b = Vec::new();
        assert!(super::generate(&mut a, 2000).is_ok());
        assert!(super::generate(&mut b, 2000).is_ok());
        assert_eq!(a, b);
        let text = String::from_utf8(a).unwrap_or_default();
        let mut last: Option<(usize, u64)> = None;
        let mut rows = 0;
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split('\t').collect();
            assert_eq!(f.len(), 9 + super::SAMPLES, "{line}");
            let chrom = super::CHROMS.iter().position(|c| c.0 == f[0]);
            let pos: u64 = f[1].parse().unwrap_or(0);
            let key = (chrom.unwrap_or(usize::MAX), pos);
            assert!(last.is_none_or(|l| l < key), "unsorted at {line:.40}");
            last = Some(key);
            rows += 1;
        }
        assert!((1500..2500).contains(&rows), "{rows} sites");
    }
}
