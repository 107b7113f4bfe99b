//! Links `hts` as a position-dependent executable on Linux.
//!
//! Start-up (issue 21): libcurl and OpenSSL are built into `hts` (statically, see
//! `.cargo/config.toml`) and used only once a remote file is opened, but in a position-
//! independent executable the dynamic loader still rewrites every pointer in their tables at
//! each start: some 33,000 relocations over 650 KB of `.data.rel.ro`, 185 of the 300 page faults
//! of `hts --version`, more than samtools' whole run. Linked at a fixed address those tables are
//! plain file-backed pages, read only if TLS is used. Shared libraries, the heap and the stack
//! are still placed at random; the executable's own image is not.
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
}
