//! The file server's file access: `ServeDir` (which keeps all of HTTP: ranges, `HEAD`,
//! conditional requests, validators) over `std::fs`, called in place on the server's own
//! threads.
//!
//! `ServeDir`'s default backend is `tokio::fs`, which hands every open, metadata call and
//! 64 KiB read to tokio's blocking pool and waits for the answer: two thread switches each.
//! Serving a cohort of 1,000 objects (4,000 requests) that way cost the server about as much
//! CPU as the client it served, on the same two cores, so every contender in a benchmark was
//! slowed by the test rig rather than by its own work (three quarters of the server's CPU was
//! the blocking pool's hand-offs). The files served are the fixtures and benchmark data on a
//! local disk, read again and again from the page cache: a read takes microseconds, so doing
//! it in place costs less than handing it over. (The first read of a file not yet in the page
//! cache holds the server's thread for the disk: a benchmark's first, cold pass over new data
//! is slower for every connection, which is why benchmarks make their data before timing.)

use std::future::{ready, Ready};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncSeek, ReadBuf};
use tower_http::services::fs::{Backend, File};

/// `ServeDir`'s backend: files opened and read with `std::fs` in place.
#[derive(Clone, Debug, Default)]
pub(crate) struct InPlace;

/// An open file, read and sought in place.
#[derive(Debug)]
pub(crate) struct InPlaceFile(std::fs::File);

impl Backend for InPlace {
    type File = InPlaceFile;
    type Metadata = std::fs::Metadata;
    type OpenFuture = Ready<io::Result<InPlaceFile>>;
    type MetadataFuture = Ready<io::Result<std::fs::Metadata>>;

    fn open(&self, path: PathBuf) -> Self::OpenFuture {
        ready(std::fs::File::open(path).map(InPlaceFile))
    }

    fn metadata(&self, path: PathBuf) -> Self::MetadataFuture {
        ready(std::fs::metadata(path))
    }
}

impl AsyncRead for InPlaceFile {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let n = match self.0.read(buf.initialize_unfilled()) {
            Ok(n) => n,
            Err(e) => return Poll::Ready(Err(e)),
        };
        buf.advance(n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncSeek for InPlaceFile {
    fn start_seek(mut self: Pin<&mut Self>, position: SeekFrom) -> io::Result<()> {
        self.0.seek(position).map(|_| ())
    }

    fn poll_complete(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<u64>> {
        Poll::Ready(self.0.stream_position())
    }
}

impl File for InPlaceFile {
    type Metadata = std::fs::Metadata;
    type MetadataFuture<'a> = Ready<io::Result<std::fs::Metadata>>;

    fn metadata(&self) -> Self::MetadataFuture<'_> {
        ready(self.0.metadata())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncSeekExt};

    #[test]
    fn reads_and_seeks_in_place() {
        let dir = std::env::temp_dir().join(format!("testkit-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f.bin");
        std::fs::write(&path, b"0123456789").unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            let backend = InPlace;
            assert_eq!(backend.metadata(path.clone()).await.unwrap().len(), 10);
            let mut f = backend.open(path.clone()).await.unwrap();
            assert_eq!(f.seek(SeekFrom::Start(4)).await.unwrap(), 4);
            let mut got = String::new();
            f.read_to_string(&mut got).await.unwrap();
            assert_eq!(got, "456789");
            assert!(backend.open(dir.join("missing")).await.is_err());
        });
        std::fs::remove_dir_all(&dir).ok();
    }
}
