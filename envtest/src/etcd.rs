//! Reading etcd directly, behind the API server's back: what it stores is what a test of
//! storage (the version an object is encoded at, say) must look at, since the API server
//! converts every object it serves to the version asked for.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::{Environment, Error};

/// One key of etcd and the bytes stored under it (for a custom resource, its JSON at the
/// storage version it was written with).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    pub key: String,
    pub value: Vec<u8>,
}

impl Stored {
    /// The stored bytes as JSON (custom resources are stored as JSON; built-in kinds as
    /// protobuf, which this returns `None` for).
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_slice(&self.value).ok()
    }
}

impl Environment {
    /// etcd's client URL, when this test binary started the control plane (not with
    /// `USE_EXISTING_CLUSTER`).
    pub fn etcd_url(&self) -> Option<&str> {
        self.control_plane
            .as_ref()
            .map(|plane| plane.etcd_url.as_str())
    }

    /// Every key of etcd under `prefix` with its value, read from etcd itself, in key order.
    /// The API server keeps objects under `/registry/`: a custom resource at
    /// `/registry/<group>/<plural>/<namespace>/<name>`.
    ///
    /// Uses etcd's JSON gateway (`POST /v3/kv/range`). Fails on an existing cluster, whose
    /// etcd a test cannot reach.
    pub async fn etcd_prefix(&self, prefix: &str) -> Result<Vec<Stored>, Error> {
        let url = self.etcd_url().ok_or_else(|| {
            Error::Response("etcd is not reachable with USE_EXISTING_CLUSTER=true".into())
        })?;
        let host = url.strip_prefix("http://").unwrap_or(url);
        let mut end = prefix.as_bytes().to_vec();
        // The range end of a prefix: its last byte plus one (etcd's `WithPrefix`).
        match end.last_mut() {
            Some(last) if *last < 0xff => *last += 1,
            _ => return Err(Error::Response(format!("cannot range over {prefix:?}"))),
        }
        let body = serde_json::json!({
            "key": STANDARD.encode(prefix),
            "range_end": STANDARD.encode(&end),
        })
        .to_string();
        // HTTP/1.0: the answer is the body up to the end of the connection, never chunked.
        let request = format!(
            "POST /v3/kv/range HTTP/1.0\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let failed = |what: &str, e: &dyn std::fmt::Display| {
            Error::Response(format!("cannot read etcd at {url} ({what}): {e}"))
        };
        let mut stream = tokio::net::TcpStream::connect(host)
            .await
            .map_err(|e| failed("connect", &e))?;
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| failed("write", &e))?;
        let mut response = Vec::new();
        stream
            .read_to_end(&mut response)
            .await
            .map_err(|e| failed("read", &e))?;
        let split = response
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| failed("answer", &"no HTTP header"))?;
        let (head, body) = (&response[..split], &response[split + 4..]);
        if !head.starts_with(b"HTTP/1.0 200") && !head.starts_with(b"HTTP/1.1 200") {
            let head = String::from_utf8_lossy(head);
            return Err(failed("answer", &head));
        }
        #[derive(serde::Deserialize)]
        struct Range {
            #[serde(default)]
            kvs: Vec<Kv>,
        }
        #[derive(serde::Deserialize)]
        struct Kv {
            key: String,
            #[serde(default)]
            value: String,
        }
        let range: Range = serde_json::from_slice(body).map_err(|e| failed("JSON", &e))?;
        range
            .kvs
            .into_iter()
            .map(|kv| {
                let key = STANDARD.decode(kv.key).map_err(|e| failed("key", &e))?;
                let value = STANDARD.decode(kv.value).map_err(|e| failed("value", &e))?;
                Ok(Stored {
                    key: String::from_utf8_lossy(&key).into_owned(),
                    value,
                })
            })
            .collect()
    }
}
