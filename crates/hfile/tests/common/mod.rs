//! Shared by the integration tests that serve a generated object.

use std::path::PathBuf;
use std::time::Instant;

use testkit::Server;

/// A fresh folder holding `data.bin` (`data`), served; remove the folder when done.
pub fn serve(data: &[u8]) -> (Server, PathBuf) {
    let dir = std::env::temp_dir().join(format!(
        "hfile-test-{}-{:?}",
        std::process::id(),
        Instant::now()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("data.bin"), data).unwrap();
    (Server::start(&dir).unwrap(), dir)
}
