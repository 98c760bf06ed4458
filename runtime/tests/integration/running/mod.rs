//! A manager a test runs until it stops it, and its readiness report: shared by
//! tests/webhook_certificates.rs and tests/metrics_certificates.rs.

use std::time::Instant;

use rkb_runtime::manager::Manager;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A manager running with no runnables until [`Running::stop`].
pub struct Running {
    shutdown: CancellationToken,
    pub task: JoinHandle<Result<(), String>>,
    /// Where it serves `/readyz`: its `--health-probe-bind-address` port.
    probe_port: u16,
    /// When it was started, for the time to its first answer.
    pub started: Instant,
}

impl Running {
    /// Runs `manager`, started at `started`, whose probes are on `probe_port`.
    pub fn spawn(manager: Manager, probe_port: u16, started: Instant) -> Self {
        let shutdown = manager.shutdown_token();
        let task = tokio::spawn(async move {
            manager
                .run(vec![])
                .await
                .map_err(|error| format!("{error:#}"))
        });
        Self {
            shutdown,
            task,
            probe_port,
            started,
        }
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.unwrap().unwrap();
    }

    /// The body of `/readyz`, status line first.
    pub async fn readyz(&self) -> String {
        let Ok(mut stream) = tokio::net::TcpStream::connect(("127.0.0.1", self.probe_port)).await
        else {
            return String::new();
        };
        let request = b"GET /readyz HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n";
        let mut body = String::new();
        if stream.write_all(request).await.is_ok() {
            let _ = stream.read_to_string(&mut body).await;
        }
        body
    }
}
