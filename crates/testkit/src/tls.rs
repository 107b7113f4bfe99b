//! HTTPS for tests: a TLS front on 127.0.0.1 that decrypts and relays every connection to a
//! plain server on this machine (a [`crate::Server`], whose log, faults and link then apply to
//! HTTPS too), with a self-signed certificate made at start for `localhost` and `127.0.0.1`.
//! A client trusts it through the certificate's PEM file (`CURL_CA_BUNDLE`).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio_rustls::rustls::{self, ServerConfig};
use tokio_rustls::TlsAcceptor;

/// A running TLS front; dropping it stops it.
pub struct TlsFront {
    addr: SocketAddr,
    cert_file: PathBuf,
    runtime: Option<tokio::runtime::Runtime>,
}

impl TlsFront {
    /// Serves TLS on 127.0.0.1 at a free port, relaying to `upstream`; the certificate's PEM
    /// is written into `dir`.
    pub fn start(upstream: SocketAddr, dir: &Path) -> Result<TlsFront, String> {
        TlsFront::start_for(upstream, dir, &["localhost", "127.0.0.1"])
    }

    /// As [`TlsFront::start`], with a certificate for `names` only (a certificate for another
    /// name than the one a client connects to).
    pub fn start_for(upstream: SocketAddr, dir: &Path, names: &[&str]) -> Result<TlsFront, String> {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let file_name = format!("testkit-tls-{}.pem", names.join("+"));
        let made = rcgen::generate_simple_self_signed(names).map_err(|e| e.to_string())?;
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        let cert_file = dir.join(file_name);
        std::fs::write(&cert_file, made.cert.pem()).map_err(|e| e.to_string())?;
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der()));
        let chain = vec![CertificateDer::from(made.cert.der().to_vec())];
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| e.to_string())?;
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the TLS runtime: {e}"))?;
        let listener = runtime
            .block_on(TcpListener::bind(("127.0.0.1", 0)))
            .map_err(|e| format!("cannot bind 127.0.0.1: {e}"))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        runtime.spawn(async move {
            loop {
                let Ok((client, _)) = listener.accept().await else {
                    continue;
                };
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A client that refuses the certificate ends its handshake here.
                    let Ok(mut tls) = acceptor.accept(client).await else {
                        return;
                    };
                    let Ok(mut plain) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut tls, &mut plain).await;
                });
            }
        });
        Ok(TlsFront {
            addr,
            cert_file,
            runtime: Some(runtime),
        })
    }

    /// `https://127.0.0.1:PORT/path`.
    pub fn url(&self, path: &str) -> String {
        format!("https://{}/{}", self.addr, path.trim_start_matches('/'))
    }

    /// `https://localhost:PORT/path` (the certificate names both).
    pub fn url_by_name(&self, path: &str) -> String {
        format!(
            "https://localhost:{}/{}",
            self.addr.port(),
            path.trim_start_matches('/')
        )
    }

    /// The certificate (PEM) to trust.
    pub fn cert_file(&self) -> &Path {
        &self.cert_file
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}
