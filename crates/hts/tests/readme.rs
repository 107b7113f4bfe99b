//! The README's example of the facade is the body of `examples/mapped.rs` (which `cargo test`
//! compiles): a change to either shows here.

#[test]
fn the_readme_shows_the_mapped_example() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let section = &readme[readme.find("### The facade: `hts`\n").unwrap()..];
    let start = section.find("```rust\n").unwrap() + "```rust\n".len();
    let block = &section[start..];
    let block = &block[..block.find("```").unwrap()];
    let example = include_str!("../examples/mapped.rs");
    let body_start = example.find("{\n").unwrap() + 2;
    let body = &example[body_start..example.find("    Ok(())").unwrap()];
    let dedented: String = body
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("    ").unwrap_or(l)))
        .collect();
    assert_eq!(
        block, dedented,
        "README's example differs from examples/mapped.rs"
    );
}
