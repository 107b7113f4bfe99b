//! The server as a reverse proxy: in front of a server whose own log would not show what the
//! tests need (the S3 implementation under test), so that its requests are logged, counted and
//! paced like the file server's.

use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{StatusCode, Uri};
use axum::response::IntoResponse;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// Routes that forward every request to `upstream`.
pub(super) fn routes(upstream: SocketAddr) -> axum::Router {
    let connector = tower::service_fn(move |_: Uri| {
        Box::pin(async move {
            let stream = TcpStream::connect(upstream).await?;
            stream.set_nodelay(true)?;
            Ok::<_, std::io::Error>(TokioIo::new(QuickAck(stream)))
        })
    });
    let client: Client<_, Body> = Client::builder(TokioExecutor::new()).build(connector);
    axum::Router::new().fallback(move |mut request: Request| {
        let client = client.clone();
        async move {
            let target = request
                .uri()
                .path_and_query()
                .map(|p| p.as_str())
                .unwrap_or("/")
                .to_string();
            match format!("http://{upstream}{target}").parse() {
                Ok(uri) => *request.uri_mut() = uri,
                Err(e) => return (StatusCode::BAD_REQUEST, format!("proxy: {e}")).into_response(),
            }
            match client.request(request).await {
                Ok(response) => response.map(Body::new),
                Err(e) => (StatusCode::BAD_GATEWAY, format!("proxy: {e}")).into_response(),
            }
        }
    })
}

/// The upstream connection, acknowledging every segment at once. s3s-fs does not disable
/// Nagle's algorithm, so the last piece of a body waits for an ACK that a delayed-ACK receiver
/// holds back 40 ms: an artefact of the test server (a real S3 answers without it) that would
/// add 40 ms to most bounded responses and distort every timing through the proxy.
struct QuickAck(TcpStream);

impl AsyncRead for QuickAck {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        // Not sticky in the kernel: set again before every read.
        let _ = socket2::SockRef::from(&self.0).set_tcp_quickack(true);
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for QuickAck {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    /// Vectored, so that hyper writes a request's head and body pieces as they are, uncopied.
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

impl Connection for QuickAck {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}
