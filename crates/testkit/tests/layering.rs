//! The layering check passes on the workspace and fails on planted violations.

use std::fs;
use std::path::Path;

use testkit::layering::{check, LAYERS};

#[test]
fn the_workspace_keeps_its_layers() {
    let violations = check(&testkit::workspace_root().join("crates")).unwrap();
    assert!(
        violations.is_empty(),
        "layering violations:\n{}",
        violations
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A minimal copy of the layers: a manifest and a source file per crate, each naming every crate
/// it may name.
fn plant(root: &Path, extra_manifest: &str, extra_source: &str, krate: &str) {
    for layer in &LAYERS {
        let name = layer.name;
        let dir = root.join(name).join("src");
        fs::create_dir_all(&dir).unwrap();
        let mut manifest = format!("[package]\nname = \"{name}\"\n\n[dependencies]\n");
        let mut source = "pub fn f() {}\n".to_string();
        for below in layer.below {
            manifest.push_str(&format!("{below}.workspace = true\n"));
            source.push_str(&format!("use {below}::f as {below}_f;\n"));
        }
        if name == krate {
            manifest.push_str(extra_manifest);
            source.push_str(extra_source);
        }
        fs::write(root.join(name).join("Cargo.toml"), manifest).unwrap();
        fs::write(dir.join("lib.rs"), source).unwrap();
    }
}

fn scratch(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("layering-{tag}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&d);
    d
}

#[test]
fn a_clean_chain_passes() {
    let root = scratch("clean");
    plant(&root, "", "", "bgzf");
    assert_eq!(check(&root).unwrap(), vec![]);
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn an_upward_dev_dependency_is_caught() {
    let root = scratch("dev");
    plant(
        &root,
        "\n[dev-dependencies]\nbam.workspace = true\n",
        "",
        "bgzf",
    );
    let v = check(&root).unwrap();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!((v[0].krate.as_str(), v[0].names.as_str()), ("bgzf", "bam"));
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn an_upward_path_in_source_is_caught() {
    let root = scratch("src");
    plant(&root, "", "fn g() { let _ = cli::main; }\n", "index");
    let v = check(&root).unwrap();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!((v[0].krate.as_str(), v[0].names.as_str()), ("index", "cli"));
    assert_eq!(v[0].line, 4);
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn the_format_library_may_not_name_the_commands() {
    let root = scratch("commands");
    plant(
        &root,
        "samtools.workspace = true\n",
        "use samtools::filter;\n",
        "bam",
    );
    let v = check(&root).unwrap();
    let found: Vec<(&str, &str)> = v
        .iter()
        .map(|v| (v.krate.as_str(), v.names.as_str()))
        .collect();
    assert_eq!(
        found,
        vec![("bam", "samtools"), ("bam", "samtools")],
        "{v:?}"
    );
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn crates_beside_each_other_may_not_name_each_other() {
    let root = scratch("beside");
    plant(
        &root,
        "",
        "fn g() { let _ = bam::Reader::open; }\n",
        "tabix",
    );
    let v = check(&root).unwrap();
    assert_eq!(v.len(), 1, "{v:?}");
    assert_eq!((v[0].krate.as_str(), v[0].names.as_str()), ("tabix", "bam"));
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn the_commands_crate_sits_between_cli_and_bam() {
    let at = |name: &str| LAYERS.iter().find(|l| l.name == name).unwrap();
    assert!(at("samtools").below.contains(&"bam"));
    assert!(at("cli").below.contains(&"samtools"));
    for layer in LAYERS.iter().filter(|l| l.name != "cli") {
        assert!(
            !layer.below.contains(&"samtools"),
            "{} names samtools",
            layer.name
        );
    }
}

#[test]
fn no_crate_below_the_commands_names_them() {
    // Every crate the commands sit on, and the formats beside `bam`.
    for krate in ["hfile", "bgzf", "index", "bam", "tabix", "cram"] {
        let root = scratch(&format!("below-{krate}"));
        plant(
            &root,
            "samtools.workspace = true\n",
            "fn g() { let _ = samtools::flagstat::count; }\n",
            krate,
        );
        let v = check(&root).unwrap();
        let found: Vec<(&str, &str)> = v
            .iter()
            .map(|v| (v.krate.as_str(), v.names.as_str()))
            .collect();
        assert_eq!(
            found,
            vec![(krate, "samtools"), (krate, "samtools")],
            "{v:?}"
        );
        let _ = fs::remove_dir_all(&root);
    }
}

#[test]
fn the_commands_may_not_name_the_cli_nor_the_formats_beside_bam() {
    for above in ["cli", "tabix", "cram"] {
        let root = scratch(&format!("commands-{above}"));
        plant(&root, "", &format!("use {above}::f as g;\n"), "samtools");
        let v = check(&root).unwrap();
        assert_eq!(v.len(), 1, "{above}: {v:?}");
        assert_eq!(
            (v[0].krate.as_str(), v[0].names.as_str()),
            ("samtools", above)
        );
        let _ = fs::remove_dir_all(&root);
    }
}

#[test]
fn cram_and_tabix_sit_beside_bam() {
    let at = |name: &str| LAYERS.iter().find(|l| l.name == name).unwrap();
    for beside in ["tabix", "cram"] {
        assert_eq!(at(beside).below, at("bam").below, "{beside}");
        assert!(!at("bam").below.contains(&beside));
        assert!(at("cli").below.contains(&beside));
        // bam may not name them either.
        let root = scratch(&format!("bam-{beside}"));
        plant(&root, "", &format!("use {beside}::f as g;\n"), "bam");
        let v = check(&root).unwrap();
        assert_eq!(v.len(), 1, "{beside}: {v:?}");
        assert_eq!((v[0].krate.as_str(), v[0].names.as_str()), ("bam", beside));
        let _ = fs::remove_dir_all(&root);
    }
}
