//! A small HTTP/1.1 server (plain or TLS) for the probe, metrics and webhook endpoints.
//!
//! hyper directly rather than a web framework: kube already compiles hyper, and three fixed
//! routes need no router. HTTP/2 is not offered, as in controller-runtime, which disables it
//! by default since the HTTP/2 rapid-reset and stream-cancellation CVEs.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::ListenAddr;

pub(crate) type Request = http::Request<Incoming>;
pub(crate) type Response = http::Response<Full<Bytes>>;

/// Slow or idle clients cannot hold connections open for long.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections one server holds at once; further clients wait in the listen backlog, so a
/// flood of connections cannot exhaust the operator's memory or file descriptors.
const MAX_CONNECTIONS: usize = 256;

/// A plain-text response.
pub(crate) fn text(status: StatusCode, body: impl Into<Bytes>) -> Response {
    let mut response = http::Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Binds `addr`, failing with the address in the message (a port clash is a common cause).
///
/// `:port` listens on every interface as Go's `net.Listen` does: on `[::]` accepting IPv6
/// and IPv4 (so probes work on IPv6-only, IPv4-only and dual-stack clusters), or on
/// `0.0.0.0` where the host has no IPv6.
pub(crate) async fn bind(addr: impl Into<ListenAddr>, what: &str) -> anyhow::Result<TcpListener> {
    let addr = addr.into();
    let bound = match addr {
        ListenAddr::Exact(addr) => TcpListener::bind(addr).await,
        ListenAddr::AnyInterface(port) => bind_any_interface(port, listen),
    };
    bound.map_err(|error| anyhow::anyhow!("cannot listen on {addr} for {what}: {error}"))
}

/// `[::]:port` dual-stack, else `0.0.0.0:port` if IPv6 is unavailable; `listen` is a seam
/// for tests, which cannot turn the host's IPv6 off.
fn bind_any_interface(
    port: u16,
    listen: impl Fn(SocketAddr) -> io::Result<TcpListener>,
) -> io::Result<TcpListener> {
    match listen(SocketAddr::from((Ipv6Addr::UNSPECIFIED, port))) {
        Err(error) if ipv6_unavailable(&error) => {
            tracing::debug!(%error, "no IPv6: listening on IPv4 only");
            listen(SocketAddr::from((Ipv4Addr::UNSPECIFIED, port)))
        }
        bound => bound,
    }
}

/// The errors of a host without IPv6: no such address family (IPv6 compiled out or
/// `ipv6.disable=1`) or no IPv6 address to bind (`disable_ipv6` sysctl).
fn ipv6_unavailable(error: &io::Error) -> bool {
    #[cfg(unix)]
    let unsupported = matches!(
        error.raw_os_error(),
        Some(libc::EAFNOSUPPORT | libc::EPROTONOSUPPORT)
    );
    #[cfg(not(unix))]
    let unsupported = false;
    unsupported || error.kind() == io::ErrorKind::AddrNotAvailable
}

/// A listening socket on `addr`; on IPv6 it also accepts IPv4 (IPv4-mapped addresses)
/// whatever the host's `net.ipv6.bindv6only` default, as Go sets it.
fn listen(addr: SocketAddr) -> io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};

    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if addr.is_ipv6() {
        socket.set_only_v6(false)?;
    }
    // As tokio's `TcpListener::bind`: a restarted server can take its port back at once.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(1024)?;
    TcpListener::from_std(socket.into())
}

/// Serves connections from `listener` until the task is aborted; each request goes to `handle`.
pub(crate) async fn serve<H, F>(listener: TcpListener, tls: Option<TlsAcceptor>, handle: H)
where
    H: Fn(Request) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    serve_until(listener, tls, handle, CancellationToken::new()).await;
}

/// [`serve`] until `stop` is cancelled, then drains: no new connections are accepted,
/// in-flight requests are answered, idle keep-alive connections are closed, and the
/// future completes once every connection has ended.
pub(crate) async fn serve_until<H, F>(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    handle: H,
    stop: CancellationToken,
) where
    H: Fn(Request) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    serve_at_most(MAX_CONNECTIONS, listener, tls, handle, stop).await;
}

async fn serve_at_most<H, F>(
    max_connections: usize,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    handle: H,
    stop: CancellationToken,
) where
    H: Fn(Request) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    let handle = Arc::new(handle);
    let permits = Arc::new(tokio::sync::Semaphore::new(max_connections));
    let connections = TaskTracker::new();
    loop {
        let permit = tokio::select! {
            () = stop.cancelled() => break,
            permit = permits.clone().acquire_owned() => permit.expect("the semaphore is never closed"),
        };
        let accepted = tokio::select! {
            () = stop.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Usually out of file descriptors: back off instead of spinning.
                tracing::warn!(%error, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let handle = handle.clone();
        let tls = tls.clone();
        let stop = stop.clone();
        connections.spawn(async move {
            let _permit = permit; // held until the connection closes
            let service = service_fn(move |request| {
                let handle = handle.clone();
                async move { Ok::<_, Infallible>(handle(request).await) }
            });
            let served = match tls {
                None => serve_connection(TokioIo::new(stream), service, &stop).await,
                Some(tls) => {
                    match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, tls.accept(stream)).await {
                        Ok(Ok(stream)) => {
                            serve_connection(TokioIo::new(stream), service, &stop).await
                        }
                        Ok(Err(error)) => {
                            tracing::debug!(%peer, %error, "TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            tracing::debug!(%peer, "TLS handshake timed out");
                            return;
                        }
                    }
                }
            };
            if let Err(error) = served {
                tracing::debug!(%peer, %error, "HTTP connection failed");
            }
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

/// One HTTP/1.1 connection; once `stop` is cancelled it finishes the request in flight
/// and closes instead of waiting for the next one.
async fn serve_connection<IO, S>(
    io: IO,
    service: S,
    stop: &CancellationToken,
) -> Result<(), hyper::Error>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Full<Bytes>>,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT);
    let connection = http.serve_connection(io, service);
    tokio::pin!(connection);
    tokio::select! {
        served = connection.as_mut() => served,
        () = stop.cancelled() => {
            connection.as_mut().graceful_shutdown();
            connection.await
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, TcpStream};

    use super::*;

    fn connects(addr: SocketAddr) -> bool {
        TcpStream::connect_timeout(&addr, Duration::from_secs(2)).is_ok()
    }

    #[tokio::test]
    async fn any_interface_listens_on_ipv6_and_ipv4() {
        let listener = bind(ListenAddr::AnyInterface(0), "test").await.unwrap();
        let bound = listener.local_addr().unwrap();
        assert_eq!(
            bound.ip(),
            Ipv6Addr::UNSPECIFIED,
            "dual-stack [::], not 0.0.0.0"
        );
        let port = bound.port();
        assert!(
            connects(SocketAddr::from((Ipv6Addr::LOCALHOST, port))),
            "::1"
        );
        assert!(
            connects(SocketAddr::from((Ipv4Addr::LOCALHOST, port))),
            "127.0.0.1"
        );
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn any_interface_falls_back_to_ipv4_without_ipv6() {
        for no_ipv6 in [
            io::Error::from_raw_os_error(libc::EAFNOSUPPORT),
            io::Error::from(io::ErrorKind::AddrNotAvailable),
        ] {
            let no_ipv6 = std::sync::Mutex::new(Some(no_ipv6));
            let tried = std::sync::Mutex::new(Vec::new());
            let listener = bind_any_interface(0, |addr| {
                tried.lock().unwrap().push(addr.ip());
                match addr {
                    SocketAddr::V6(_) => Err(no_ipv6.lock().unwrap().take().unwrap()),
                    SocketAddr::V4(_) => listen(addr),
                }
            })
            .unwrap();
            let bound = listener.local_addr().unwrap();
            assert_eq!(bound.ip(), Ipv4Addr::UNSPECIFIED);
            assert_eq!(
                *tried.lock().unwrap(),
                [
                    IpAddr::from(Ipv6Addr::UNSPECIFIED),
                    IpAddr::from(Ipv4Addr::UNSPECIFIED)
                ]
            );
            assert!(connects(SocketAddr::from((
                Ipv4Addr::LOCALHOST,
                bound.port()
            ))));
        }
    }

    #[tokio::test]
    async fn a_taken_port_is_not_mistaken_for_missing_ipv6() {
        let taken = bind(ListenAddr::AnyInterface(0), "test").await.unwrap();
        let port = taken.local_addr().unwrap().port();
        let error = bind(ListenAddr::AnyInterface(port), "health probes")
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with(&format!("cannot listen on :{port} for health probes: ")),
            "{error}"
        );
    }

    /// Beyond the cap, a connection waits in the backlog until another one closes.
    #[tokio::test]
    async fn connections_beyond_the_cap_wait_for_one_to_close() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let listener = bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), "test")
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(serve_at_most(
            2,
            listener,
            None,
            |_| async { text(StatusCode::OK, "ok") },
            CancellationToken::new(),
        ));
        let connect = || tokio::net::TcpStream::connect(addr);
        let (first, _second) = (connect().await.unwrap(), connect().await.unwrap());
        let mut third = connect().await.unwrap();
        third
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = [0; 12];
        let early = tokio::time::timeout(Duration::from_millis(300), third.read_exact(&mut answer));
        assert!(early.await.is_err(), "a third connection was served");
        drop(first);
        tokio::time::timeout(Duration::from_secs(5), third.read_exact(&mut answer))
            .await
            .expect("served once a connection closed")
            .unwrap();
        assert_eq!(&answer, b"HTTP/1.1 200");
        server.abort();
    }

    #[tokio::test]
    async fn an_address_given_in_full_is_used_as_given() {
        let listener = bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), "test")
            .await
            .unwrap();
        let bound = listener.local_addr().unwrap();
        assert_eq!(bound.ip(), Ipv4Addr::LOCALHOST);
        assert!(!connects(SocketAddr::from((
            Ipv6Addr::LOCALHOST,
            bound.port()
        ))));
    }
}
