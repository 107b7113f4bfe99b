//! The README's Rust example is `examples/region_to_bam.rs` (which `cargo test` compiles), from
//! its first `use` on, the block after the example's name: a change to either shows here.

#[test]
fn the_readme_shows_the_region_to_bam_example() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).expect("README.md");
    let example = include_str!("../examples/region_to_bam.rs");
    let code = &example[example.find("use ").expect("a use line")..];
    // The block after the example's name (the facade's example comes first).
    let after = &readme[readme
        .find("crates/bam/examples/region_to_bam.rs")
        .expect("the README names the example")..];
    let start = after.find("```rust\n").expect("a rust block in the README") + "```rust\n".len();
    let block = &after[start..];
    let block = &block[..block.find("```").expect("the block ends")];
    assert_eq!(
        block, code,
        "README's Rust example differs from examples/region_to_bam.rs"
    );
}
