//! The test server of hfile's HTTP tests: a real HTTP/1.1 server on 127.0.0.1 (axum + tower-http's
//! `ServeDir`, which implements Range and keep-alive itself), plus a fault handler for what real
//! servers do only on a bad day, and object-store refusals (S3's region redirect and XML errors).
//! The server logs every request, so assertions come from the server's own view.
#![allow(dead_code)] // each test binary uses part of it

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::serve::ListenerExt;
use axum::Router;
use hfile::{Backend, OpenOptions};
use tower_http::services::ServeDir;

pub const SIZE: usize = 3 * 1024 * 1024 + 12345;

/// Global transfer statistics are process-wide: the tests take turns.
pub fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

pub fn pattern(len: usize) -> Vec<u8> {
    // Not periodic on any power of two, so a misplaced window shows.
    (0..len as u64)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect()
}

#[derive(Debug, Clone)]
pub struct Logged {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    pub range: Option<String>,
    pub x_test: Option<String>,
    /// Every request header, lower-cased names.
    pub headers: Vec<(String, String)>,
}

pub type Log = Arc<Mutex<Vec<Logged>>>;

#[derive(Clone)]
struct FaultState {
    data: Arc<Vec<u8>>,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

pub struct Server {
    base: String,
    log: Log,
    accepts: Arc<AtomicUsize>,
    pub data: Arc<Vec<u8>>,
    dir: PathBuf,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Server {
    pub fn start() -> Server {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "hfile-http-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        let data = Arc::new(pattern(SIZE));
        std::fs::write(dir.join("data.bin"), &*data).unwrap();
        std::fs::write(dir.join("empty.bin"), b"").unwrap();

        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let log: Log = Arc::default();
        let accepts = Arc::new(AtomicUsize::new(0));
        let state = FaultState {
            data: data.clone(),
            hits: Arc::default(),
        };
        let app = Router::new()
            .nest_service("/data", ServeDir::new(&dir))
            .nest_service(
                "/fault",
                Router::new()
                    .fallback(fault)
                    .with_state(state)
                    .into_service(),
            )
            .layer(middleware::from_fn_with_state(log.clone(), record));
        let counter = accepts.clone();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let listener = listener.tap_io(move |_| {
            counter.fetch_add(1, Ordering::SeqCst);
        });
        runtime.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Server {
            base: format!("http://{addr}"),
            log,
            accepts,
            data,
            dir,
            runtime: Some(runtime),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub fn log(&self) -> Vec<Logged> {
        self.log.lock().unwrap().clone()
    }

    pub fn ranges(&self, path: &str) -> Vec<Option<String>> {
        self.log()
            .into_iter()
            .filter(|l| l.path == path)
            .map(|l| l.range)
            .collect()
    }

    pub fn connections(&self) -> usize {
        self.accepts.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(Duration::from_secs(1));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

async fn record(State(log): State<Log>, req: Request, next: Next) -> Response {
    // In a block: a borrow of the request must not live across the await below.
    {
        let header = |name: &str| {
            req.headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let entry = Logged {
            method: req.method().to_string(),
            path: req.uri().path().to_string(),
            query: req.uri().query().map(str::to_string),
            range: header("range"),
            x_test: header("x-test"),
            headers: req
                .headers()
                .iter()
                .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
                .collect(),
        };
        log.lock().unwrap().push(entry);
    }
    next.run(req).await
}

/// `bytes=A-B` or `bytes=A-` against `len`, as an inclusive pair.
fn parse_range(headers: &HeaderMap, len: usize) -> Option<(usize, usize)> {
    let value = headers.get(header::RANGE)?.to_str().ok()?;
    let (a, b) = value.strip_prefix("bytes=")?.split_once('-')?;
    let a: usize = a.parse().ok()?;
    let b: usize = if b.is_empty() {
        len - 1
    } else {
        b.parse::<usize>().ok()?.min(len - 1)
    };
    Some((a, b))
}

fn partial(first: usize, last: usize, total: usize, body: Body) -> Response {
    Response::builder()
        .status(StatusCode::PARTIAL_CONTENT)
        .header(
            header::CONTENT_RANGE,
            format!("bytes {first}-{last}/{total}"),
        )
        .header(header::CONTENT_LENGTH, last + 1 - first)
        .body(body)
        .unwrap()
}

/// True when the request's SigV4 credential scope names `region`.
fn signed_for(req: &Request, region: &str) -> bool {
    req.headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains(&format!("/{region}/s3/aws4_request")))
}

fn xml(code: StatusCode, headers: &[(&str, &str)], body: &'static str) -> Response {
    let mut response = Response::builder()
        .status(code)
        .header(header::CONTENT_TYPE, "application/xml");
    for (k, v) in headers {
        response = response.header(*k, *v);
    }
    response.body(Body::from(body)).unwrap()
}

fn status(code: StatusCode) -> Response {
    Response::builder()
        .status(code)
        .header(header::RETRY_AFTER, "0")
        .body(Body::from("no"))
        .unwrap()
}

/// Half the body, then `tail`: an error (a reset), a stall, or a clean end (a short body).
fn broken(first: usize, last: usize, data: &[u8], tail: &str) -> Response {
    use futures_util::stream::{self, StreamExt};
    let half = (last + 1 - first) / 2;
    let head = Bytes::copy_from_slice(&data[first..first + half]);
    let start = stream::iter(vec![Ok::<Bytes, std::io::Error>(head)]);
    // The pause lets the server flush the first half before the fault, so the client has it.
    let pause = || tokio::time::sleep(Duration::from_millis(200));
    let body = match tail {
        "reset" => Body::from_stream(start.chain(stream::once(async move {
            pause().await;
            Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "fault: reset",
            ))
        }))),
        "stall" => Body::from_stream(start.chain(stream::pending())),
        _ => Body::from_stream(start.chain(stream::once(async move {
            pause().await;
            Ok(Bytes::new())
        }))),
    };
    partial(first, last, data.len(), body)
}

/// `/fault/<kind>`: the object of `/data/data.bin` served with a fault.
async fn fault(State(st): State<FaultState>, req: Request) -> Response {
    let kind = req.uri().path().trim_start_matches('/').to_string();
    let hit = {
        let mut hits = st.hits.lock().unwrap();
        let n = hits.entry(kind.clone()).or_insert(0);
        *n += 1;
        *n - 1
    };
    let data = &st.data;
    let len = data.len();
    let Some((a, b)) = parse_range(req.headers(), len) else {
        return status(StatusCode::BAD_REQUEST);
    };
    let good = || partial(a, b, len, Body::from(data[a..=b].to_vec()));
    match kind.as_str() {
        "reset_once" if hit == 0 => broken(a, b, data, "reset"),
        "reset_always" => broken(a, b, data, "reset"),
        "stall_once" if hit == 0 => broken(a, b, data, "stall"),
        "short_once" if hit == 0 => broken(a, b, data, "short"),
        "503_twice" if hit < 2 => status(StatusCode::SERVICE_UNAVAILABLE),
        "429_once" if hit == 0 => status(StatusCode::TOO_MANY_REQUESTS),
        "503_always" => status(StatusCode::SERVICE_UNAVAILABLE),
        "403" => status(StatusCode::FORBIDDEN),
        "bad_range" => Response::builder()
            .status(StatusCode::PARTIAL_CONTENT)
            .header(
                header::CONTENT_RANGE,
                format!("bytes {}-{}/{len}", a + 1, b + 1),
            )
            .body(Body::from(data[a + 1..=b + 1].to_vec()))
            .unwrap(),
        "wide_range" => {
            let last = (b + 100).min(len - 1);
            partial(a, last, len, Body::from(data[a..=last].to_vec()))
        }
        "ignore_range" => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_LENGTH, len)
            .body(Body::from(data.to_vec()))
            .unwrap(),
        "loop" => Response::builder()
            .status(StatusCode::FOUND)
            .header(header::LOCATION, "/fault/loop")
            .body(Body::empty())
            .unwrap(),
        "redirect" => Response::builder()
            .status(StatusCode::FOUND)
            .header(header::LOCATION, "/data/data.bin")
            .body(Body::empty())
            .unwrap(),
        // S3's answer to a request signed for the wrong region (s3s-fs has no regions).
        "s3region" if !signed_for(&req, "eu-west-1") => xml(
            StatusCode::MOVED_PERMANENTLY,
            &[("x-amz-bucket-region", "eu-west-1")],
            "<Error><Code>PermanentRedirect</Code><Message>The bucket you are attempting to \
             access must be addressed using the specified endpoint.</Message>\
             <Endpoint>fault.s3.eu-west-1.amazonaws.com</Endpoint><Bucket>fault</Bucket></Error>",
        ),
        // A refusal carrying what S3 puts in one: signing material that must never be shown.
        "s3denied" => xml(
            StatusCode::FORBIDDEN,
            &[],
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SignatureDoesNotMatch</Code>\
             <Message>The request signature we calculated does not match the signature you \
             provided.</Message><StringToSign>AWS4-HMAC-SHA256 TOPSECRET</StringToSign>\
             <SignatureProvided>feedface</SignatureProvided></Error>",
        ),
        _ => good(),
    }
}

pub fn fast_options() -> OpenOptions {
    OpenOptions {
        retries: 3,
        retry_backoff: Duration::from_millis(10),
        retry_max_time: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(2),
        low_speed_time: Duration::from_secs(1),
        low_speed_limit: 1,
        verbosity: 1,
        ..OpenOptions::default()
    }
}

/// Reads `[start, limit)` with the limit set as BGZF would set it.
pub fn read_span(b: &mut dyn Backend, start: u64, limit: u64) -> hfile::Result<Vec<u8>> {
    b.seek(start)?;
    b.set_readahead_limit(Some(limit));
    let mut out = vec![0u8; (limit - start) as usize];
    let mut done = 0;
    while done < out.len() {
        let n = b.read(&mut out[done..])?;
        if n == 0 {
            break;
        }
        done += n;
    }
    out.truncate(done);
    Ok(out)
}

pub fn range(a: u64, b: u64) -> Option<String> {
    Some(format!("bytes={a}-{b}"))
}
