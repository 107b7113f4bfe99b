//! The layering rule: each crate depends only on the crates below it
//! (cli -> bam -> index -> bgzf -> hfile), so each is usable on its own.

#[cfg(test)]
mod tests {
    use std::path::Path;

    const LAYERS: [&str; 5] = ["hfile", "bgzf", "index", "bam", "cli"];

    /// The project crates named in the `[dependencies]` table of a crate's manifest.
    fn project_dependencies(manifest: &str) -> Vec<String> {
        let mut deps = Vec::new();
        let mut in_deps = false;
        for line in manifest.lines() {
            let line = line.trim();
            if line.starts_with('[') {
                in_deps = line == "[dependencies]";
                continue;
            }
            if in_deps {
                if let Some((name, _)) = line.split_once('=') {
                    let name = name.trim().trim_end_matches(".workspace").to_string();
                    if LAYERS.contains(&name.as_str()) {
                        deps.push(name);
                    }
                }
            }
        }
        deps
    }

    #[test]
    fn crates_import_only_the_layers_below() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates");
        for (level, krate) in LAYERS.iter().enumerate() {
            let manifest = std::fs::read_to_string(root.join(krate).join("Cargo.toml"))
                .unwrap_or_else(|e| panic!("crates/{krate}/Cargo.toml: {e}"));
            for dep in project_dependencies(&manifest) {
                let dep_level = LAYERS.iter().position(|l| *l == dep).unwrap_or(usize::MAX);
                assert!(
                    dep_level < level,
                    "{krate} depends on {dep}, which is not below it"
                );
            }
        }
    }

    #[test]
    fn the_parser_sees_dependencies() {
        let m = "[package]\nname = \"x\"\n[dependencies]\nbgzf.workspace = true\nfoo = \"1\"\n[dev-dependencies]\nbam.workspace = true\n";
        assert_eq!(project_dependencies(m), vec!["bgzf".to_string()]);
    }
}
