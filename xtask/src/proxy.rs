//! A logging reverse proxy: the test server's request log, counters and emulated link in front of
//! another HTTP server (the S3 implementation under test). Requests are forwarded unchanged,
//! `Host` included, so signatures made for the proxy's address verify upstream.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use crate::server::{Link, Server};

/// Starts a proxy on 127.0.0.1:`port` (0: any) to `upstream`.
pub fn start(upstream: SocketAddr, port: u16, link: Link) -> Result<Server, String> {
    let client: Client<HttpConnector, Body> = Client::builder(TokioExecutor::new()).build_http();
    let routes = axum::Router::new().fallback(move |request: Request| {
        let client = client.clone();
        async move { forward(client, upstream, request).await }
    });
    Server::start_routes(routes, port, link)
}

async fn forward(
    client: Client<HttpConnector, Body>,
    upstream: SocketAddr,
    mut request: Request,
) -> Response {
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
