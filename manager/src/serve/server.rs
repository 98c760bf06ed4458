//! A small HTTP/1.1 server (plain or TLS) for the probe, metrics and webhook endpoints, and
//! HTTP/2 over TLS where a TLS acceptor offers it ([`HttpVersions`](super::HttpVersions)).
//!
//! hyper directly rather than a web framework: kube already compiles hyper, and three fixed
//! routes need no router. HTTP/2 is off by default, as in controller-runtime, which disables
//! it since the HTTP/2 rapid-reset and stream-cancellation CVEs.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{HeaderValue, StatusCode, header};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::ListenAddr;
use crate::sync::lock;

pub(crate) type Request = http::Request<Incoming>;
pub(crate) type Response = http::Response<Full<Bytes>>;

/// How long a client may take to send a request's headers; an idle keep-alive connection
/// is closed after as long (hyper starts this timer as soon as it waits for a request).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a handler waits for a request's body once the headers are in ([`read_body`]): a
/// client announcing a body and sending nothing (or `Expect: 100-continue` and no body, or
/// an unterminated chunked body) is answered 408 and loses its connection.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);
const TLS_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Requests one HTTP/2 connection may have in progress at once (hyper's default is 200);
/// the connection limit below bounds the total.
#[cfg(feature = "http2")]
const MAX_HTTP2_STREAMS: u32 = 100;
/// The headers of one HTTP/2 request, in bytes (hyper's default is 16 MiB); an
/// AdmissionReview's are a few hundred.
#[cfg(feature = "http2")]
const MAX_HTTP2_HEADERS: u32 = 64 * 1024;
/// Connections one server holds at once. Beyond that the connection idle longest (no
/// request in progress) is closed to make room, so idle or slow clients cannot keep the
/// slots from new ones; only when every slot has a request in progress do new clients wait
/// in the listen backlog, so a flood of connections cannot exhaust memory or descriptors.
const MAX_CONNECTIONS: usize = 256;
/// A connection idle for less than this is not closed for a newcomer: a client reusing its
/// connection at once, or in the middle of a TLS handshake on a loaded node, is not cut
/// off. It also bounds how fast a full server turns over the slots of connections that
/// have sent something: each lasts at least this long.
const IDLE_GRACE: Duration = Duration::from_secs(1);
/// The grace of a connection that has not sent a byte since its task started: a client
/// writes its request (or its TLS ClientHello) as soon as it is connected, so under a
/// flood it is there by the first read, and a connection silent for longer is not a
/// client in the middle of anything. Short, so that a full server turns the slots of a
/// flood of silent connections over fast: newcomers behind 1,000 of them reconnecting as
/// they are closed wait in the backlog about (1,000 − 256) / 256 × 0.1 s, 0.3 s, not 3 s.
const SILENT_GRACE: Duration = Duration::from_millis(100);

/// How many connections a server holds, and how long one must be idle (having sent
/// something, or not) before a newcomer may take its slot.
#[derive(Clone, Copy, Debug)]
struct Limits {
    connections: usize,
    grace: Duration,
    silent_grace: Duration,
}

const LIMITS: Limits = Limits {
    connections: MAX_CONNECTIONS,
    grace: IDLE_GRACE,
    silent_grace: SILENT_GRACE,
};
/// The listen backlog, for exact addresses as for `:port` (the kernel caps it at somaxconn).
const BACKLOG: i32 = 1024;

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
        // Through socket2 as for `:port`: tokio's `bind` would leave a backlog of 128.
        ListenAddr::Exact(addr) => listen(addr, false),
        ListenAddr::AnyInterface(port) => bind_any_interface(port, |addr| listen(addr, true)),
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

/// A listening socket on `addr`; with `dual_stack`, on IPv6 it also accepts IPv4
/// (IPv4-mapped addresses) whatever the host's `net.ipv6.bindv6only` default, as Go sets it.
fn listen(addr: SocketAddr, dual_stack: bool) -> io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};

    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    if dual_stack && addr.is_ipv6() {
        socket.set_only_v6(false)?;
    }
    // As tokio's `TcpListener::bind`: a restarted server can take its port back at once.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
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
    serve_at_most(LIMITS, listener, tls, handle, stop).await;
}

/// [`serve`] on a thread with a runtime of its own, until the returned future is dropped:
/// however busy the shared async workers are (large reviews, reconciles, a flood on another
/// port), these requests are answered. For the probes, which the kubelet gives 1 s.
pub(crate) async fn serve_apart<H, F>(listener: TcpListener, what: &'static str, handle: H)
where
    H: Fn(Request) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    let stop = CancellationToken::new();
    let _stop_when_dropped = stop.clone().drop_guard();
    // Moved from this runtime's reactor to the new one's.
    let listener = match listener.into_std() {
        Ok(listener) => listener,
        Err(error) => {
            tracing::error!(%error, server = what, "cannot move the listener to its thread");
            return;
        }
    };
    let serve = move || -> io::Result<()> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async move {
            let listener = TcpListener::from_std(listener)?;
            serve_until(listener, None, handle, stop).await;
            Ok(())
        })
    };
    let thread = std::thread::Builder::new()
        .name(what.to_owned())
        .spawn(move || {
            if let Err(error) = serve() {
                tracing::error!(%error, server = what, "the server stopped");
            }
        });
    if let Err(error) = thread {
        tracing::error!(%error, server = what, "cannot start the server's thread");
    }
    std::future::pending::<()>().await;
}

async fn serve_at_most<H, F>(
    limits: Limits,
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    handle: H,
    stop: CancellationToken,
) where
    H: Fn(Request) -> F + Clone + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    let handle = Arc::new(handle);
    let permits = Arc::new(tokio::sync::Semaphore::new(limits.connections));
    let slots = Arc::new(Slots::default());
    let connections = TaskTracker::new();
    'accept: loop {
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
        let permit = match permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            // Full: close the connection idle longest, or, if none is idle past the grace
            // yet, look again when one will be (not only when a connection closes by
            // itself: under a flood of fresh idle connections that is the header timeout,
            // seconds during which every newcomer, valid clients too, waits in the backlog).
            Err(_) => loop {
                let again = slots.make_room(limits);
                tokio::select! {
                    () = stop.cancelled() => break 'accept,
                    permit = permits.clone().acquire_owned() => {
                        break permit.expect("the semaphore is never closed");
                    }
                    () = tokio::time::sleep(again) => {}
                }
            },
        };
        let (slot, evicted) = slots.open();
        let connection = connection(
            (stream, peer),
            (slot, evicted),
            handle.clone(),
            tls.clone(),
            stop.clone(),
        );
        connections.spawn(async move {
            let _permit = permit; // held until the connection closes
            connection.await;
        });
    }
    drop(listener);
    connections.close();
    connections.wait().await;
}

/// Serves one accepted connection in its slot until it closes, the server stops, or a
/// newcomer takes the slot (`evicted`).
async fn connection<H, F>(
    (stream, peer): (TcpStream, SocketAddr),
    (slot, evicted): (Slot, CancellationToken),
    handle: Arc<H>,
    tls: Option<TlsAcceptor>,
    stop: CancellationToken,
) where
    H: Fn(Request) -> F + Send + Sync + 'static,
    F: Future<Output = Response> + Send + 'static,
{
    let _registered = Registered(slot.clone());
    // Idle from now, not from the accept: under a flood this task may start late,
    // and the request its client sent at once must not count as idle time.
    slot.slots.idle_from_now(slot.id);
    let service = service_fn({
        let slot = slot.clone();
        move |request| {
            let handle = handle.clone();
            let mut request = request;
            let busy = slot.busy();
            if !hyper::body::Body::is_end_stream(request.body()) {
                // Waiting for the client's body is idle time: a client that sends
                // headers and no body can lose its slot like an idle one.
                request.extensions_mut().insert(busy.awaiting_body());
            }
            async move {
                let response = handle(request).await;
                Ok::<_, Infallible>(response.map(|body| Tracked { body, _busy: busy }))
            }
        }
    });
    let stream = Heard {
        stream,
        slot: Some(slot.clone()),
    };
    let serve = async {
        match tls {
            None => serve_connection(TokioIo::new(stream), service, &stop).await,
            Some(tls) => {
                match tokio::time::timeout(TLS_HANDSHAKE_TIMEOUT, tls.accept(stream)).await {
                    #[cfg(feature = "http2")]
                    Ok(Ok(stream)) if stream.get_ref().1.alpn_protocol() == Some(b"h2") => {
                        serve_http2(TokioIo::new(stream), service, &stop).await
                    }
                    Ok(Ok(stream)) => serve_connection(TokioIo::new(stream), service, &stop).await,
                    Ok(Err(error)) => {
                        tracing::debug!(%peer, %error, "TLS handshake failed");
                        Ok(())
                    }
                    Err(_) => {
                        tracing::debug!(%peer, "TLS handshake timed out");
                        Ok(())
                    }
                }
            }
        }
    };
    let served = tokio::select! {
        served = serve => served,
        () = evicted.cancelled() => {
            tracing::debug!(%peer, "closed an idle connection to make room for a new one");
            Ok(())
        }
    };
    if let Err(error) = served {
        tracing::debug!(%peer, %error, "HTTP connection failed");
    }
}

/// The connections of one server, so that a newcomer can take the slot of the one idle
/// longest.
#[derive(Debug, Default)]
struct Slots {
    next: std::sync::atomic::AtomicU64,
    open: Mutex<HashMap<u64, SlotState>>,
    /// When the slots were last reported full, so that a flood logs once in a while.
    reported: Mutex<Option<Instant>>,
}

#[derive(Debug)]
struct SlotState {
    /// Since when no request is in progress (or its body is awaited); `None` while one
    /// is, and before the connection's task first runs.
    idle_since: Option<Instant>,
    /// Requests in progress, not counting those whose body is awaited (HTTP/2 has several
    /// on one connection).
    working: u32,
    /// Whether the client has sent a byte: until then its grace is [`SILENT_GRACE`].
    heard: bool,
    evict: CancellationToken,
}

/// A connection's place in [`Slots`].
#[derive(Clone, Debug)]
struct Slot {
    id: u64,
    slots: Arc<Slots>,
}

/// A request in progress on a connection, from its headers until its response's body is
/// dropped (written out, or the connection gone); it does not count while its body is
/// awaited.
#[derive(Debug)]
struct Busy {
    slot: Slot,
    counted: Arc<std::sync::atomic::AtomicBool>,
}

/// A request whose body is awaited, in its extensions: [`read_body`] counts it again once
/// the body is in.
#[derive(Clone, Debug)]
struct AwaitingBody {
    slot: Slot,
    counted: Arc<std::sync::atomic::AtomicBool>,
}

impl Slots {
    fn open(self: &Arc<Self>) -> (Slot, CancellationToken) {
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let evict = CancellationToken::new();
        let state = SlotState {
            idle_since: None,
            working: 0,
            heard: false,
            evict: evict.clone(),
        };
        lock(&self.open).insert(id, state);
        let slot = Slot {
            id,
            slots: self.clone(),
        };
        (slot, evict)
    }

    /// Closes the connection idle longest of those idle past their grace ([`IDLE_GRACE`],
    /// or [`SILENT_GRACE`] if it has sent nothing); how long to wait for its slot before
    /// looking again: until the next one passes its grace, or, with none idle, a while.
    fn make_room(&self, limits: Limits) -> Duration {
        let now = Instant::now();
        let (idlest, again) = {
            let open = lock(&self.open);
            let mut idlest: Option<(Instant, &CancellationToken)> = None;
            let mut again = limits.grace / 4;
            for state in open.values() {
                let Some(since) = state.idle_since else {
                    continue;
                };
                let grace = if state.heard {
                    limits.grace
                } else {
                    limits.silent_grace
                };
                match grace.checked_sub(now.duration_since(since)) {
                    Some(left) if !left.is_zero() => again = again.min(left),
                    _ => {
                        if idlest.is_none_or(|(idlest, _)| since < idlest) {
                            idlest = Some((since, &state.evict));
                        }
                    }
                }
            }
            (idlest.map(|(_, evict)| evict.clone()), again)
        };
        let mut reported = lock(&self.reported);
        if reported.is_none_or(|at| now.duration_since(at) >= Duration::from_secs(10)) {
            *reported = Some(now);
            tracing::info!(
                max_connections = limits.connections,
                "every connection slot is taken: closing idle connections for new ones \
                 (logged every 10 s at most while it lasts)"
            );
        }
        match idlest {
            Some(evict) => {
                evict.cancel();
                // Its slot comes back as soon as its task has run; should it not, another.
                limits.silent_grace
            }
            None => again,
        }
    }

    fn heard(&self, id: u64) {
        if let Some(state) = lock(&self.open).get_mut(&id) {
            state.heard = true;
        }
    }

    /// A new connection, idle until its first request.
    fn idle_from_now(&self, id: u64) {
        if let Some(state) = lock(&self.open).get_mut(&id) {
            state.idle_since = Some(Instant::now());
        }
    }

    /// A request starts (or its body is in): the connection is not idle.
    fn enter(&self, id: u64) {
        if let Some(state) = lock(&self.open).get_mut(&id) {
            state.working += 1;
            state.idle_since = None;
        }
    }

    /// A request ends (or waits for its body): the connection is idle once none is left.
    fn leave(&self, id: u64) {
        if let Some(state) = lock(&self.open).get_mut(&id) {
            state.working = state.working.saturating_sub(1);
            if state.working == 0 {
                state.idle_since = Some(Instant::now());
            }
        }
    }
}

impl Slot {
    fn busy(&self) -> Busy {
        self.slots.enter(self.id);
        Busy {
            slot: self.clone(),
            counted: Arc::new(true.into()),
        }
    }
}

impl Busy {
    /// Stops counting the request until its body is in.
    fn awaiting_body(&self) -> AwaitingBody {
        let awaiting = AwaitingBody {
            slot: self.slot.clone(),
            counted: self.counted.clone(),
        };
        awaiting.set_counted(false);
        awaiting
    }
}

impl AwaitingBody {
    fn set_counted(&self, counted: bool) {
        use std::sync::atomic::Ordering::Relaxed;
        if self.counted.swap(counted, Relaxed) != counted {
            match counted {
                true => self.slot.slots.enter(self.slot.id),
                false => self.slot.slots.leave(self.slot.id),
            }
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        if self
            .counted
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            self.slot.slots.leave(self.slot.id);
        }
    }
}

/// The connection task's hold on its slot: the entry goes when the connection does.
struct Registered(Slot);

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.0.slots.open).remove(&self.0.id);
    }
}

/// A response body that keeps its connection busy until hyper drops it.
#[derive(Debug)]
struct Tracked {
    body: Full<Bytes>,
    _busy: Busy,
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Bytes>, Infallible>>> {
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection's stream, which records in its slot the first byte the client sends.
struct Heard<S> {
    stream: S,
    /// Until the first byte.
    slot: Option<Slot>,
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Heard<S> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = std::pin::Pin::new(&mut self.stream).poll_read(cx, buf);
        if buf.filled().len() > before
            && let Some(slot) = self.slot.take()
        {
            slot.slots.heard(slot.id);
        }
        read
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Heard<S> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> std::task::Poll<io::Result<usize>> {
        std::pin::Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<io::Result<()>> {
        std::pin::Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

/// Reads a request's body of at most `max` bytes within [`BODY_TIMEOUT`]; otherwise the
/// response to send (413, 408 or 400), which closes the connection.
pub(crate) async fn read_body(
    request: Request,
    max: usize,
) -> Result<(http::request::Parts, Bytes), Response> {
    read_body_within(request, max, BODY_TIMEOUT).await
}

async fn read_body_within(
    request: Request,
    max: usize,
    timeout: Duration,
) -> Result<(http::request::Parts, Bytes), Response> {
    use http_body_util::{BodyExt as _, Limited};

    let too_large = || {
        text(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a request body may be at most {max} bytes\n"),
        )
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|length| length > max as u64) {
        return Err(closing(too_large()));
    }
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(timeout, Limited::new(body, max).collect()).await {
        Ok(Ok(body)) => {
            if let Some(awaiting) = parts.extensions.get::<AwaitingBody>() {
                awaiting.set_counted(true);
            }
            Ok((parts, body.to_bytes()))
        }
        Ok(Err(error)) if error.is::<http_body_util::LengthLimitError>() => {
            Err(closing(too_large()))
        }
        Ok(Err(error)) => Err(closing(text(
            StatusCode::BAD_REQUEST,
            format!("cannot read the request: {error}\n"),
        ))),
        Err(_) => Err(closing(text(
            StatusCode::REQUEST_TIMEOUT,
            format!("the request body did not arrive within {timeout:?}\n"),
        ))),
    }
}

/// `response` with `Connection: close`: the rest of an unread body is not worth waiting for.
fn closing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
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
    S: hyper::service::HttpService<Incoming, ResBody = Tracked>,
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

/// One HTTP/2 connection (negotiated by ALPN over TLS); once `stop` is cancelled it tells
/// the client to open no more streams, finishes those in flight and closes.
#[cfg(feature = "http2")]
async fn serve_http2<IO, S>(
    io: IO,
    service: S,
    stop: &CancellationToken,
) -> Result<(), hyper::Error>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Tracked> + Send,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // Rapid reset (CVE-2023-44487): hyper counts the streams a client opens and cancels at
    // once, and closes the connection past its default of 20 pending.
    let mut http = hyper::server::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new());
    http.timer(TokioTimer::new())
        .max_concurrent_streams(MAX_HTTP2_STREAMS)
        .max_header_list_size(MAX_HTTP2_HEADERS);
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
                    SocketAddr::V4(_) => listen(addr, true),
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

    /// HTTP/2 runs several requests on one connection: it is idle (its slot free for a
    /// newcomer) only once none is in progress, and a request awaiting its body is idle time.
    #[test]
    fn a_connection_is_idle_only_while_no_request_is_in_progress() {
        let slots = Arc::new(Slots::default());
        let (slot, _) = slots.open();
        let idle = || lock(&slots.open)[&slot.id].idle_since.is_some();
        slots.idle_from_now(slot.id);
        assert!(idle());
        let (first, second) = (slot.busy(), slot.busy());
        drop(first);
        assert!(!idle(), "the second request is still in progress");
        let awaiting = second.awaiting_body();
        assert!(idle(), "the second request awaits its body");
        awaiting.set_counted(true);
        assert!(!idle(), "the second request's body is in");
        drop(second);
        assert!(idle());
        // A body that never comes: its request ends without being let go of twice.
        let (running, bodiless) = (slot.busy(), slot.busy());
        let _awaiting = bodiless.awaiting_body();
        drop(bodiless);
        assert!(!idle(), "the other request is still in progress");
        drop(running);
        assert!(idle());
    }

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn local() -> (TcpListener, SocketAddr) {
        let listener = bind(SocketAddr::from((Ipv4Addr::LOCALHOST, 0)), "test")
            .await
            .unwrap();
        let addr = listener.local_addr().unwrap();
        (listener, addr)
    }

    fn start<H, F>(max: usize, listener: TcpListener, handler: H) -> tokio::task::JoinHandle<()>
    where
        H: Fn(Request) -> F + Clone + Send + Sync + 'static,
        F: Future<Output = Response> + Send + 'static,
    {
        let limits = Limits {
            connections: max,
            ..LIMITS
        };
        start_with(limits, listener, handler)
    }

    fn start_with<H, F>(
        limits: Limits,
        listener: TcpListener,
        handler: H,
    ) -> tokio::task::JoinHandle<()>
    where
        H: Fn(Request) -> F + Clone + Send + Sync + 'static,
        F: Future<Output = Response> + Send + 'static,
    {
        tokio::spawn(serve_at_most(
            limits,
            listener,
            None,
            handler,
            CancellationToken::new(),
        ))
    }

    fn assert_ok(answered: Option<&str>) {
        assert!(
            answered.is_some_and(|a| a.starts_with("HTTP/1.1 200")),
            "{answered:?}"
        );
    }

    const GET: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

    /// Reads what the server sends until it closes the connection (or `within` passes).
    async fn answer(stream: &mut tokio::net::TcpStream, within: Duration) -> Option<String> {
        let mut answer = Vec::new();
        let read = tokio::time::timeout(within, stream.read_to_end(&mut answer)).await;
        read.ok()
            .map(|_| String::from_utf8_lossy(&answer).into_owned())
    }

    /// When every slot has a request in progress, a new connection waits in the backlog
    /// until one closes.
    #[tokio::test]
    async fn connections_beyond_the_cap_wait_while_every_slot_is_busy() {
        let (listener, addr) = local().await;
        let release = Arc::new(tokio::sync::Notify::new());
        let handler = {
            let release = release.clone();
            move |_| {
                let release = release.clone();
                async move {
                    release.notified().await;
                    text(StatusCode::OK, "ok")
                }
            }
        };
        let server = start(2, listener, handler);
        let connect = || tokio::net::TcpStream::connect(addr);
        let (mut first, mut second) = (connect().await.unwrap(), connect().await.unwrap());
        first.write_all(GET).await.unwrap();
        second.write_all(GET).await.unwrap();
        tokio::time::sleep(IDLE_GRACE * 2).await;
        let mut third = connect().await.unwrap();
        third.write_all(GET).await.unwrap();
        assert_eq!(
            answer(&mut third, Duration::from_millis(300)).await,
            None,
            "a third connection was served"
        );
        release.notify_waiters();
        for busy in [&mut first, &mut second] {
            let answered = answer(busy, Duration::from_secs(5)).await.unwrap();
            assert!(
                answered.starts_with("HTTP/1.1 200"),
                "busy requests are not cut: {answered}"
            );
        }
        release.notify_one();
        let answered = answer(&mut third, Duration::from_secs(5)).await.unwrap();
        assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
        server.abort();
    }

    /// Idle connections cannot keep the slots: a newcomer takes the place of the one idle
    /// longest, at once rather than after the idle timeout.
    #[tokio::test]
    async fn a_new_connection_takes_the_slot_of_the_one_idle_longest() {
        let (listener, addr) = local().await;
        let handler = |_| async { text(StatusCode::OK, "ok") };
        let server = start(2, listener, handler);
        let connect = || tokio::net::TcpStream::connect(addr);
        let mut oldest = connect().await.unwrap();
        tokio::time::sleep(IDLE_GRACE * 2).await;
        let _younger = connect().await.unwrap();
        tokio::time::sleep(IDLE_GRACE * 2).await;
        let mut newcomer = connect().await.unwrap();
        newcomer.write_all(GET).await.unwrap();
        let answered = answer(&mut newcomer, Duration::from_secs(1)).await;
        assert_ok(answered.as_deref());
        assert_eq!(
            answer(&mut oldest, Duration::from_secs(1)).await.as_deref(),
            Some(""),
            "the idlest connection was closed"
        );
        server.abort();
    }

    /// Every slot taken by connections that are not yet idle past the grace when the
    /// newcomer arrives: it gets the slot of the first to pass it, not after the header
    /// timeout (as when the full server only looked again once a connection closed).
    #[tokio::test]
    async fn a_newcomer_finding_only_fresh_idle_connections_gets_a_slot_once_one_is_stale() {
        let (listener, addr) = local().await;
        let handler = |_| async { text(StatusCode::OK, "ok") };
        let server = start(2, listener, handler);
        let connect = || tokio::net::TcpStream::connect(addr);
        let (_first, _second) = (connect().await.unwrap(), connect().await.unwrap());
        tokio::time::sleep(IDLE_GRACE / 4).await; // their tasks run: idle, but not long
        let mut newcomer = connect().await.unwrap();
        newcomer.write_all(GET).await.unwrap();
        let answered = answer(&mut newcomer, IDLE_GRACE * 3).await;
        assert_ok(answered.as_deref());
        server.abort();
    }

    /// A flood of silent connections, four times the slots, each opened again as soon as
    /// it is closed: a newcomer sending its request at once is answered within 1 s (with
    /// the grace of connections that sent something it would wait about 3 s).
    #[tokio::test]
    async fn a_flood_of_silent_reconnecting_connections_delays_newcomers_briefly() {
        let (listener, addr) = local().await;
        let limits = Limits {
            connections: 16,
            ..LIMITS
        };
        let server = start_with(limits, listener, |_| async { text(StatusCode::OK, "ok") });
        let flood: Vec<_> = (0..limits.connections * 4)
            .map(|_| {
                tokio::spawn(async move {
                    loop {
                        match tokio::net::TcpStream::connect(addr).await {
                            Ok(mut idle) => {
                                let _ = idle.read_to_end(&mut Vec::new()).await;
                            }
                            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
                        }
                    }
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_secs(1)).await; // the flood takes hold
        for _ in 0..5 {
            let started = Instant::now();
            let mut newcomer = tokio::net::TcpStream::connect(addr).await.unwrap();
            newcomer.write_all(GET).await.unwrap();
            let answered = answer(&mut newcomer, Duration::from_secs(1)).await;
            assert_ok(answered.as_deref());
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "{:?}",
                started.elapsed()
            );
        }
        flood.iter().for_each(tokio::task::JoinHandle::abort);
        server.abort();
    }

    /// A client that has sent part of its request keeps the full grace: a newcomer does
    /// not take its slot once it has been quiet for longer than a silent connection's.
    #[tokio::test]
    async fn a_client_that_sent_something_keeps_the_full_grace() {
        let (listener, addr) = local().await;
        let server = start(1, listener, |_| async { text(StatusCode::OK, "ok") });
        let mut started = tokio::net::TcpStream::connect(addr).await.unwrap();
        started
            .write_all(b"GET / HTTP/1.1\r\nHost: x\r\n")
            .await
            .unwrap();
        tokio::time::sleep(SILENT_GRACE * 3).await;
        let mut newcomer = tokio::net::TcpStream::connect(addr).await.unwrap();
        newcomer.write_all(GET).await.unwrap();
        tokio::time::sleep(SILENT_GRACE * 3).await;
        started
            .write_all(b"Connection: close\r\n\r\n")
            .await
            .unwrap();
        let answered = answer(&mut started, Duration::from_secs(2)).await;
        assert_ok(answered.as_deref());
        let answered = answer(&mut newcomer, Duration::from_secs(2)).await;
        assert_ok(answered.as_deref());
        server.abort();
    }

    /// A body announced and never sent (or sent in part, or awaited with `Expect:
    /// 100-continue`) is answered 408 after the time limit, and the connection closed.
    #[tokio::test]
    async fn a_body_that_does_not_arrive_in_time_is_answered_408() {
        let (listener, addr) = local().await;
        let handler = |request| async move {
            match read_body_within(request, 1 << 20, Duration::from_millis(300)).await {
                Ok((_, body)) => text(StatusCode::OK, body),
                Err(response) => response,
            }
        };
        let server = start(8, listener, handler);
        let heads: [&[u8]; 3] = [
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n",
            b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n10\r\npart",
            b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\nExpect: 100-continue\r\n\r\n",
        ];
        for head in heads {
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            stream.write_all(head).await.unwrap();
            let answered = answer(&mut stream, Duration::from_secs(5)).await;
            let answered = answered.expect("the connection was closed within the limit");
            assert!(answered.contains("HTTP/1.1 408"), "{answered}");
        }
        let mut complete = tokio::net::TcpStream::connect(addr).await.unwrap();
        complete
            .write_all(
                b"POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 2\r\n\r\nhi",
            )
            .await
            .unwrap();
        let answered = answer(&mut complete, Duration::from_secs(5)).await.unwrap();
        assert!(
            answered.starts_with("HTTP/1.1 200") && answered.ends_with("hi"),
            "{answered}"
        );
        server.abort();
    }

    /// A client that sent headers announcing a body, and no body, is as idle as one that
    /// sent nothing: it loses its slot to a newcomer.
    #[tokio::test]
    async fn a_client_holding_back_its_body_loses_its_slot_to_a_newcomer() {
        let (listener, addr) = local().await;
        let handler = |request| async move {
            match read_body(request, 1 << 20).await {
                Ok(_) => text(StatusCode::OK, "ok"),
                Err(response) => response,
            }
        };
        let server = start(1, listener, handler);
        let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
        slow.write_all(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
            .await
            .unwrap();
        tokio::time::sleep(IDLE_GRACE * 2).await;
        let mut newcomer = tokio::net::TcpStream::connect(addr).await.unwrap();
        newcomer.write_all(GET).await.unwrap();
        let answered = answer(&mut newcomer, Duration::from_secs(1)).await;
        assert_ok(answered.as_deref());
        server.abort();
    }

    /// An exact address gets the backlog `:port` gets, not tokio's 128.
    #[tokio::test]
    async fn an_exact_address_gets_the_full_listen_backlog() {
        let (_listener, addr) = local().await; // never accepts
        let connects = (0..400).map(|_| {
            tokio::time::timeout(Duration::from_secs(2), tokio::net::TcpStream::connect(addr))
        });
        let connected = futures::future::join_all(connects).await;
        let waiting = connected.iter().filter(|c| matches!(c, Ok(Ok(_)))).count();
        assert_eq!(waiting, 400, "connections taken into the backlog");
    }

    /// Served apart, requests are answered while every shared async worker is blocked.
    #[tokio::test(flavor = "current_thread")]
    async fn a_server_apart_answers_while_the_async_workers_are_blocked() {
        let (listener, addr) = local().await;
        let server = tokio::spawn(serve_apart(listener, "test-probes", |_| async {
            text(StatusCode::OK, "ok")
        }));
        tokio::task::yield_now().await; // starts the thread
        let client = std::thread::spawn(move || {
            use std::io::{Read, Write};
            let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(1)))
                .unwrap();
            stream.write_all(GET).unwrap();
            let mut answer = String::new();
            stream.read_to_string(&mut answer).map(|_| answer)
        });
        // This runtime's only worker is busy for longer than a probe may take.
        std::thread::sleep(Duration::from_secs(2));
        let answered = client.join().unwrap().expect("answered within 1 s");
        assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
        server.abort();
        let _ = server.await;
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while connects(addr) {
            assert!(
                std::time::Instant::now() < deadline,
                "the server stops when its future is dropped"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
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
