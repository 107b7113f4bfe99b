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

/// A minimal copy of the chain: a manifest and a source file per crate.
fn plant(root: &Path, extra_manifest: &str, extra_source: &str, krate: &str) {
    for (i, name) in LAYERS.iter().enumerate() {
        let dir = root.join(name).join("src");
        fs::create_dir_all(&dir).unwrap();
        let below = if i == 0 {
            String::new()
        } else {
            format!("{}.workspace = true\n", LAYERS[i - 1])
        };
        let mut manifest = format!("[package]\nname = \"{name}\"\n\n[dependencies]\n{below}");
        let mut source = if i == 0 {
            "pub fn f() {}\n".to_string()
        } else {
            format!("use {}::f;\n", LAYERS[i - 1])
        };
        if *name == krate {
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
    assert_eq!(v[0].line, 2);
    let _ = fs::remove_dir_all(&root);
}
