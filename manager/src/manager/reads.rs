//! What a controller's client reads, so that readiness covers every watch of the
//! controller and not only its primary store.
//!
//! kube-runtime's `Controller` keeps a store for the kind it reconciles only: the watches
//! of `.owns(...)` and `.watches(...)` have none to ask, and one whose list the API server
//! refuses (typically a 403 for a kind without an RBAC rule) retries forever while the
//! controller looks healthy. The manager hands each controller a client that notes how
//! the last list or watch of each collection went; the controller is not ready while one
//! of them failed, as controller-runtime waits for every informer of a controller.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::sync::lock;
use http::{Method, Uri};
use kube::Client;

/// Collection (path and selectors) -> why its last list or watch failed, if it did.
#[derive(Clone, Debug, Default)]
pub(crate) struct Reads(Arc<Mutex<BTreeMap<String, Option<String>>>>);

impl Reads {
    /// `client`, with the outcome of every list and watch it sends noted here.
    pub(crate) fn follow(&self, client: Client) -> Client {
        let reads = self.clone();
        super::observed::observed(client, move |sent| {
            if let Some(collection) = collection_read(sent.method, sent.uri) {
                let failure = match sent.response {
                    Ok(response) if response.status().is_success() => None,
                    Ok(response) => Some(response.status().to_string()),
                    Err(error) => Some(error.to_string()),
                };
                reads.note(collection, failure);
            }
        })
    }

    /// No collection's last list or watch failed.
    pub(crate) fn healthy(&self) -> bool {
        lock(&self.0).values().all(Option::is_none)
    }

    fn note(&self, collection: String, failure: Option<String>) {
        let mut reads = lock(&self.0);
        if let Some(failure) = &failure
            && reads.get(&collection).is_none_or(Option::is_none)
        {
            tracing::warn!(%collection, %failure, "cannot list or watch: not ready until it can");
        }
        reads.insert(collection, failure);
    }
}

/// The collection a list or watch request reads (its path, with its label and field
/// selectors: two watches of one kind may differ in them), or `None` for other requests.
fn collection_read(method: &Method, uri: &Uri) -> Option<String> {
    if method != Method::GET {
        return None;
    }
    let segments: Vec<&str> = uri.path().split('/').filter(|s| !s.is_empty()).collect();
    let rest = match segments.as_slice() {
        ["api", _version, rest @ ..] | ["apis", _, _version, rest @ ..] => rest,
        _ => return None,
    };
    // `namespaces/<ns>/<resource>` is in a namespace; `namespaces/<name>` is an object.
    let resource = match rest {
        ["namespaces", _, resource @ ..] if !resource.is_empty() => resource,
        rest => rest,
    };
    if resource.len() != 1 {
        return None; // one object, or a subresource
    }
    let selectors: Vec<&str> = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|kv| kv.starts_with("labelSelector=") || kv.starts_with("fieldSelector="))
        .collect();
    Some(if selectors.is_empty() {
        uri.path().to_owned()
    } else {
        format!("{}?{}", uri.path(), selectors.join("&"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(method: Method, uri: &str) -> Option<String> {
        collection_read(&method, &uri.parse().unwrap())
    }

    #[test]
    fn lists_and_watches_name_their_collection() {
        assert_eq!(
            read(Method::GET, "/apis/apps/v1/deployments?limit=500").as_deref(),
            Some("/apis/apps/v1/deployments")
        );
        assert_eq!(
            read(
                Method::GET,
                "/api/v1/namespaces/a/pods?watch=true&labelSelector=app%3Dweb&resourceVersion=7"
            )
            .as_deref(),
            Some("/api/v1/namespaces/a/pods?labelSelector=app%3Dweb")
        );
        assert_eq!(
            read(Method::GET, "/api/v1/namespaces").as_deref(),
            Some("/api/v1/namespaces")
        );
        for other in [
            (Method::GET, "/api/v1/namespaces/a"),
            (Method::GET, "/api/v1/namespaces/a/pods/web"),
            (
                Method::GET,
                "/apis/apps/v1/namespaces/a/deployments/web/status",
            ),
            (Method::POST, "/api/v1/namespaces/a/pods"),
            (Method::GET, "/version"),
        ] {
            assert_eq!(read(other.0.clone(), other.1), None, "{other:?}");
        }
    }

    #[test]
    fn a_failed_read_is_unhealthy_until_the_collection_is_read_again() {
        let reads = Reads::default();
        assert!(reads.healthy());
        reads.note("/apis/apps/v1/deployments".into(), None);
        reads.note("/api/v1/secrets".into(), Some("403 Forbidden".into()));
        assert!(!reads.healthy());
        reads.note("/api/v1/secrets".into(), None);
        assert!(reads.healthy());
    }
}
