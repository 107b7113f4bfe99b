//! The output plan ([`samtools::view::output::plan`]) of options as `hts view` parses them.

use super::parse_view;
use bam::OutputFormat;
use index::build::Scheme;
use samtools::view::output::{plan, Plan, Unsupported};

fn plan_of(args: &[&str]) -> Result<Plan, Unsupported> {
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    v.push("in.bam".to_string());
    let args = parse_view(&v).unwrap();
    plan(&args, args.output.as_deref())
}

#[test]
fn formats_as_samtools_picks_them() {
    let f = |a: &[&str]| plan_of(a).unwrap().format;
    assert_eq!(f(&[]), OutputFormat::Sam);
    assert_eq!(f(&["-b"]), OutputFormat::Bam);
    assert_eq!(f(&["-u"]), OutputFormat::Bam);
    assert_eq!(f(&["-1", "-o", "x.sam"]), OutputFormat::Sam);
    assert_eq!(f(&["-o", "x.bam"]), OutputFormat::Bam);
    assert_eq!(f(&["-o", "x.BAM"]), OutputFormat::Bam);
    assert_eq!(f(&["-o", "x.txt"]), OutputFormat::Sam);
    assert_eq!(f(&["-u", "-o", "x.txt"]), OutputFormat::Bam);
    assert_eq!(f(&["-o", "x.sam.gz"]), OutputFormat::SamBgzf);
    assert_eq!(f(&["-O", "sam", "-o", "x.bam"]), OutputFormat::Sam);
    assert_eq!(f(&["-O", "SAM,level=5"]), OutputFormat::SamBgzf);
    assert_eq!(f(&["-b", "-O", "sam"]), OutputFormat::Sam);
    assert_eq!(plan_of(&["-o", "x.cram"]), Err(Unsupported("CRAM")));
    assert_eq!(plan_of(&["-o", "x.fq"]), Err(Unsupported("FASTQ")));
}

#[test]
fn header_level_and_index() {
    let p = plan_of(&["-b", "-O", "sam"]).unwrap();
    assert!(p.force_header);
    assert!(!plan_of(&["-O", "sam.gz"]).unwrap().force_header);
    assert_eq!(plan_of(&["-u"]).unwrap().level, 0);
    assert_eq!(
        plan_of(&["-u", "--output-fmt-option", "level=9"])
            .unwrap()
            .level,
        9
    );
    assert_eq!(plan_of(&["-b"]).unwrap().level, -1);
    let p = plan_of(&["-b", "--write-index", "-o", "o.bam##idx##o.bam.bai"]).unwrap();
    assert_eq!(p.path.as_deref(), Some("o.bam"));
    assert_eq!(p.index.unwrap(), ("o.bam.bai".to_string(), Scheme::Bai));
    let p = plan_of(&["--write-index", "-o", "o.bam"]).unwrap();
    assert_eq!(p.index.unwrap().0, "o.bam.csi");
    assert!(
        plan_of(&["-u", "-o", "x.sam.gz"])
            .unwrap()
            .warn_uncompressed_ignored
    );
}
