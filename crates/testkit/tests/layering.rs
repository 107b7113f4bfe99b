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
    // After `pub fn f` and one `use` line for each crate below `index`.
    let below = LAYERS
        .iter()
        .find(|l| l.name == "index")
        .unwrap()
        .below
        .len();
    assert_eq!(v[0].line, 2 + below);
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn the_format_library_may_not_name_the_commands() {
    let found = violations(
        "bam",
        "samtools.workspace = true\n",
        "use samtools::filter;\n",
    );
    assert_eq!(found, pairs(&[("bam", "samtools"), ("bam", "samtools")]));
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
    // On the facade too: it tells BAM from CRAM and reads CRAM for the commands.
    assert!(at("samtools").below.contains(&"hts"));
    assert!(at("cli").below.contains(&"samtools"));
    for layer in LAYERS.iter().filter(|l| l.name != "cli") {
        assert!(
            !layer.below.contains(&"samtools"),
            "{} names samtools",
            layer.name
        );
    }
}

/// The violations `check` finds in a clean chain with `manifest` and `source` added to `krate`,
/// as (crate, name) pairs.
fn violations(krate: &str, manifest: &str, source: &str) -> Vec<(String, String)> {
    // Tests run side by side: each call plants in a folder of its own.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let root = scratch(&format!("{krate}-{n}"));
    plant(&root, manifest, source, krate);
    let v = check(&root).unwrap();
    let _ = fs::remove_dir_all(&root);
    v.into_iter().map(|v| (v.krate, v.names)).collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|&(k, n)| (k.to_string(), n.to_string()))
        .collect()
}

#[test]
fn no_crate_below_the_commands_names_them() {
    // Every crate the commands sit on (the facade among them), and the formats beside `bam`.
    for krate in ["hfile", "bgzf", "index", "bam", "tabix", "cram", "hts"] {
        let found = violations(
            krate,
            "samtools.workspace = true\n",
            "fn g() { let _ = samtools::flagstat::count; }\n",
        );
        assert_eq!(
            found,
            pairs(&[(krate, "samtools"), (krate, "samtools")]),
            "{krate}"
        );
    }
}

#[test]
fn the_commands_may_not_name_the_cli_nor_the_formats_beside_bam() {
    for above in ["cli", "tabix", "cram"] {
        let found = violations("samtools", "", &format!("use {above}::f as g;\n"));
        assert_eq!(found, pairs(&[("samtools", above)]), "{above}");
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
        let found = violations("bam", "", &format!("use {beside}::f as g;\n"));
        assert_eq!(found, pairs(&[("bam", beside)]), "{beside}");
    }
}

#[test]
fn a_back_door_through_a_re_export_is_caught() {
    use testkit::layering::Breach;
    // bam re-exports hfile, and the CLI (which may name both) reaches hfile through it.
    let root = scratch("backdoor");
    plant(&root, "", "pub use hfile;\n", "bam");
    fs::write(
        root.join("cli/src/door.rs"),
        "fn g() { let _ = bam::hfile::f; }\nuse bam::{hfile, f};\n",
    )
    .unwrap();
    let mut v = check(&root).unwrap();
    v.sort_by(|a, b| (&a.krate, a.line).cmp(&(&b.krate, b.line)));
    let found: Vec<(&str, &str, &Breach)> = v
        .iter()
        .map(|v| (v.krate.as_str(), v.names.as_str(), &v.breach))
        .collect();
    let through = Breach::Through("bam".to_string());
    assert_eq!(
        found,
        vec![
            ("bam", "hfile", &Breach::ReExport),
            ("cli", "hfile", &through),
            ("cli", "hfile", &through),
        ]
    );
    assert!(
        v[0].to_string().contains("bam re-exports hfile"),
        "{}",
        v[0]
    );
    let _ = fs::remove_dir_all(&root);
}

#[test]
fn re_exported_items_of_a_layer_below_are_caught() {
    // bgzf handing out hfile's trait lets cram use hfile without declaring it.
    let found = violations("bgzf", "", "pub use hfile::Hints;\n");
    assert_eq!(found, pairs(&[("bgzf", "hfile")]));
}

#[test]
fn the_python_package_sits_on_the_readers_beside_the_cli() {
    let at = |name: &str| LAYERS.iter().find(|l| l.name == name).unwrap();
    assert!(at("python").below.contains(&"bam"));
    assert!(at("python").below.contains(&"tabix"));
    for above in ["cli", "samtools"] {
        let found = violations("python", "", &format!("use {above}::f as g;\n"));
        assert_eq!(found, pairs(&[("python", above)]), "{above}");
    }
    // No library names it.
    let found = violations("bam", "python.workspace = true\n", "");
    assert_eq!(found, pairs(&[("bam", "python")]));
}

#[test]
fn the_facade_sits_on_the_formats_under_the_cli() {
    let at = |name: &str| LAYERS.iter().find(|l| l.name == name).unwrap();
    for format in ["bam", "cram", "tabix"] {
        assert!(at("hts").below.contains(&format), "{format}");
        // No format names the facade.
        let found = violations(format, "", "use hts::f as g;\n");
        assert_eq!(found, pairs(&[(format, "hts")]), "{format}");
    }
    assert!(at("cli").below.contains(&"hts"));
    assert!(at("python").below.contains(&"hts"));
    // The facade names neither the commands nor what sits on it.
    for above in ["cli", "samtools", "python"] {
        let found = violations("hts", "", &format!("use {above}::f as g;\n"));
        assert_eq!(found, pairs(&[("hts", above)]), "{above}");
    }
    // Nor hands a format's items on: its users name `bam::Record` themselves.
    let found = violations("hts", "", "pub use bam::Record;\n");
    assert_eq!(found, pairs(&[("hts", "bam")]));
}
