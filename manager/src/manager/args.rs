//! The manager's command-line flags, named like controller-runtime's so that manifests and
//! runbooks written for kubebuilder operators carry over.

use std::fmt;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use anyhow::Context as _;
use clap::{ArgAction, ValueEnum};
use tracing::Subscriber;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::util::SubscriberInitExt;

use crate::serve::ListenAddr;

/// A controller's reconciles at once when neither a flag nor its own code says otherwise,
/// as controller-runtime's `MaxConcurrentReconciles`.
pub(crate) const DEFAULT_CONCURRENCY: u16 = 1;

/// Flags of an operator's manager; a generated `main.rs` flattens them into its own parser.
///
/// Boolean flags take Go's forms as well: `--leader-elect`, `--leader-elect=true`,
/// `--metrics-secure=false`.
#[derive(Clone, Debug, clap::Parser)]
// Not the default `Args`: the struct a `main.rs` flattens this into usually has that name too.
#[group(id = "manager")]
pub struct Args {
    /// Elect a leader through a Lease, so that only one replica reconciles at a time.
    #[arg(long, value_name = "BOOL", action = ArgAction::Set, num_args = 0..=1)]
    #[arg(require_equals = true, default_missing_value = "true")]
    #[arg(default_value_t = false)]
    #[arg(help_heading = "Leader election")]
    pub leader_elect: bool,
    /// Namespace of the Lease; by default the pod's own (its service account's namespace,
    /// or the current kubeconfig context's when run outside a cluster).
    #[arg(long, value_name = "NAMESPACE", env = "POD_NAMESPACE")]
    #[arg(help_heading = "Leader election")]
    pub leader_election_namespace: Option<String>,
    /// Name of the Lease; by default `<project>-leader`. Replicas of one operator must agree on it.
    #[arg(long, value_name = "NAME")]
    #[arg(help_heading = "Leader election")]
    pub leader_election_id: Option<String>,
    /// How long standbys wait after the leader's last renewal before taking over.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    #[arg(default_value = "15s")]
    #[arg(help_heading = "Leader election")]
    pub leader_election_lease_duration: Duration,
    /// How long the leader keeps retrying a failed renewal before giving up the lease.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    #[arg(default_value = "10s")]
    #[arg(help_heading = "Leader election")]
    pub leader_election_renew_deadline: Duration,
    /// How often the leader renews and standbys try to acquire.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    #[arg(default_value = "2s")]
    #[arg(help_heading = "Leader election")]
    pub leader_election_retry_period: Duration,

    /// Run the controllers on every replica, each reconciling the objects of the slices of
    /// the hash space it holds, handed over through Leases (one per replica and
    /// `<project>-shards`, in the leader-election namespace, with its durations). Replaces
    /// --leader-elect.
    #[arg(long, value_name = "BOOL", action = ArgAction::Set, num_args = 0..=1)]
    #[arg(require_equals = true, default_missing_value = "true")]
    #[arg(default_value_t = false)]
    #[arg(help_heading = "Sharding")]
    pub sharding: bool,
    /// Slices of the hash space shared out among replicas with --sharding (1 to 1024); the
    /// same on every replica, and more than the replicas you expect.
    #[arg(long, value_name = "N", default_value_t = 32)]
    #[arg(help_heading = "Sharding")]
    pub sharding_slices: u32,

    /// Where to serve /metrics, e.g. `:8443` (every interface, IPv6 and IPv4) or
    /// `127.0.0.1:8080`; `0` turns metrics off.
    #[arg(long, value_name = "ADDR", default_value = "0")]
    #[arg(help_heading = "Metrics")]
    pub metrics_bind_address: BindAddress,
    /// Serve metrics over HTTPS and allow only scrapers whose token passes a TokenReview and
    /// a SubjectAccessReview for `get` on the non-resource URL /metrics.
    #[arg(long, value_name = "BOOL", action = ArgAction::Set, num_args = 0..=1)]
    #[arg(require_equals = true, default_missing_value = "true")]
    #[arg(default_value_t = true)]
    #[arg(help_heading = "Metrics")]
    pub metrics_secure: bool,
    /// Directory holding the metrics server's certificate and key (e.g. a mounted cert-manager
    /// Secret; reloaded when they change). Without it a self-signed certificate is generated.
    #[arg(long, value_name = "DIR")]
    #[arg(help_heading = "Metrics")]
    pub metrics_cert_path: Option<PathBuf>,
    /// File name of the certificate in --metrics-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.crt")]
    #[arg(help_heading = "Metrics")]
    pub metrics_cert_name: String,
    /// File name of the private key in --metrics-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.key")]
    #[arg(help_heading = "Metrics")]
    pub metrics_cert_key: String,
    /// Upper bounds in seconds of the `rest_client_request_duration_seconds` buckets,
    /// increasing and comma-separated (client-go's by default), e.g. `0.01,0.1,1,10`.
    #[arg(long, value_name = "SECONDS,...")]
    #[arg(default_value_t = Buckets::client_go())]
    #[arg(help_heading = "Metrics")]
    pub rest_client_latency_buckets: Buckets,

    /// Where to serve the admission and conversion webhooks over HTTPS; `0` turns them off.
    /// Only operators that register webhooks start the server.
    #[arg(long, value_name = "ADDR", default_value = ":9443")]
    #[arg(help_heading = "Webhooks")]
    pub webhook_bind_address: BindAddress,
    /// Directory holding the webhook server's certificate and key (a mounted cert-manager
    /// Secret; reloaded when they change). The API server must trust its CA.
    #[arg(long, value_name = "DIR", default_value = crate::serve::DEFAULT_CERT_DIR)]
    #[arg(help_heading = "Webhooks")]
    pub webhook_cert_path: PathBuf,
    /// File name of the certificate in --webhook-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.crt")]
    #[arg(help_heading = "Webhooks")]
    pub webhook_cert_name: String,
    /// File name of the private key in --webhook-cert-path.
    #[arg(long, value_name = "FILE", default_value = "tls.key")]
    #[arg(help_heading = "Webhooks")]
    pub webhook_cert_key: String,
    /// Offer HTTP/2 on the metrics and webhook servers (over TLS) besides HTTP/1.1. Off by
    /// default since the HTTP/2 rapid-reset and stream-cancellation CVEs; needs
    /// rkb-runtime's `http2` feature.
    #[arg(long, value_name = "BOOL", action = ArgAction::Set, num_args = 0..=1)]
    #[arg(require_equals = true, default_missing_value = "true")]
    #[arg(default_value_t = false)]
    #[arg(help_heading = "Webhooks")]
    pub enable_http2: bool,

    /// Where to serve /healthz (liveness) and /readyz (readiness); `0` turns them off.
    #[arg(long, value_name = "ADDR", default_value = ":8081")]
    #[arg(help_heading = "Probes")]
    pub health_probe_bind_address: BindAddress,

    /// Reconciles each controller runs at once (never two for the same object); unset:
    /// each controller's own default, one unless its code sets another.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    #[arg(help_heading = "Controllers")]
    pub concurrency: Option<u16>,
    /// Concurrency of one controller, overriding --concurrency; repeatable.
    #[arg(long, value_name = "CONTROLLER=N", value_parser = parse_controller_concurrency)]
    #[arg(help_heading = "Controllers")]
    pub controller_concurrency: Vec<(String, u16)>,
    /// Watch only these namespaces (comma-separated, e.g. `team-a,team-b`), so that Roles in
    /// them are all the manager needs; empty or unset: every namespace. The manifests of a
    /// project made with `rkb init --namespaced` set it to the manager's own namespace.
    #[arg(
        long,
        value_name = "NAMESPACES",
        env = "WATCH_NAMESPACE",
        default_value = ""
    )]
    #[arg(hide_default_value = true)]
    #[arg(help_heading = "Controllers")]
    pub watch_namespace: crate::cache::Namespaces,
    /// How long to wait for in-flight reconciles after SIGTERM before exiting anyway.
    #[arg(long, value_name = "DURATION", value_parser = humantime::parse_duration)]
    #[arg(default_value = "30s")]
    #[arg(help_heading = "Controllers")]
    pub graceful_shutdown_timeout: Duration,

    /// Instead of running the controllers: rewrite every stored object of the operator's CRDs
    /// at their current storage version, trim their `status.storedVersions` to it, and exit
    /// (non-zero if any CRD is left unmigrated). Run it after moving a storage version, while
    /// the operator (its conversion webhook) runs; running it again is harmless.
    #[arg(long, value_name = "BOOL", action = ArgAction::Set, num_args = 0..=1)]
    #[arg(require_equals = true, default_missing_value = "true")]
    #[arg(default_value_t = false)]
    #[arg(help_heading = "Storage version migration")]
    pub migrate_storage: bool,
    /// Requests per second --migrate-storage makes at most (lists, patches, reads).
    #[arg(long, value_name = "N", value_parser = parse_requests_per_second)]
    #[arg(default_value_t = crate::migrate::DEFAULT_REQUESTS_PER_SECOND)]
    #[arg(help_heading = "Storage version migration")]
    pub migrate_storage_qps: f64,

    /// Log format: `text` for people, `json` for log pipelines.
    #[arg(long, value_enum, env = "LOG_FORMAT", default_value_t = LogFormat::Text)]
    #[arg(help_heading = "Logging")]
    pub log_format: LogFormat,
    /// Log filter in `RUST_LOG` syntax, e.g. `info` or `my_operator=debug,kube=info`.
    #[arg(long, value_name = "FILTER", env = "RUST_LOG", default_value = "info")]
    #[arg(help_heading = "Logging")]
    pub log_level: String,
}

impl Default for Args {
    /// The defaults of every flag, as if none were given.
    fn default() -> Self {
        clap::Parser::parse_from(["manager"])
    }
}

impl Args {
    /// The concurrency the flags give the controller `name`: its
    /// `--controller-concurrency`, else `--concurrency`, else none.
    pub fn concurrency_flag(&self, name: &str) -> Option<u16> {
        self.controller_concurrency
            .iter()
            .rev()
            .find(|(controller, _)| controller == name)
            .map(|&(_, n)| n)
            .or(self.concurrency)
    }

    /// The concurrency of the controller `name`: the flags', else one (a controller can
    /// set its own default with [`Context::default_concurrency`]).
    ///
    /// [`Context::default_concurrency`]: crate::manager::Context::default_concurrency
    pub fn concurrency_of(&self, name: &str) -> u16 {
        self.concurrency_flag(name).unwrap_or(DEFAULT_CONCURRENCY)
    }

    /// Installs the global `tracing` subscriber these flags describe; call it first in `main`.
    ///
    /// Text logs are coloured only on a terminal (and without `NO_COLOR`): in a pod,
    /// `kubectl logs` and log collectors would store the escape codes.
    ///
    /// It also makes ring the process's rustls crypto provider unless one was chosen:
    /// rustls refuses to pick one itself when both ring and aws-lc-rs are compiled in,
    /// as they are when any other dependency of the operator turns on rustls's default
    /// features or kube's `aws-lc-rs`, and creating the kube client then panics.
    pub fn init_logging(&self) -> anyhow::Result<()> {
        let _ = tokio_rustls::rustls::crypto::ring::default_provider().install_default();
        let colour = std::io::stdout().is_terminal()
            && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
        self.subscriber(std::io::stdout, colour)?
            .try_init()
            .map_err(|error| anyhow::anyhow!("cannot install the logger: {error}"))
    }

    /// The subscriber [`init_logging`](Self::init_logging) installs, writing to `writer`.
    fn subscriber<W>(
        &self,
        writer: W,
        colour: bool,
    ) -> anyhow::Result<Box<dyn Subscriber + Send + Sync>>
    where
        W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
    {
        let filter = EnvFilter::try_new(&self.log_level)
            .with_context(|| format!("invalid --log-level {:?}", self.log_level))?;
        let logs = tracing_subscriber::fmt()
            .with_env_filter(filter)
            .with_writer(writer);
        Ok(match self.log_format {
            LogFormat::Text => Box::new(logs.with_ansi(colour).finish()),
            // One flat object per line: log pipelines index `message` and the fields directly.
            LogFormat::Json => Box::new(logs.json().flatten_event(true).with_ansi(false).finish()),
        })
    }
}

/// `--log-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

/// A listen address in controller-runtime's syntax: `host:port`, `:port` (every
/// interface), or `0` (off).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BindAddress(pub Option<ListenAddr>);

impl FromStr for BindAddress {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "0" {
            return Ok(Self(None));
        }
        let parsed = match s.strip_prefix(':') {
            Some(port) => port.parse::<u16>().map(ListenAddr::AnyInterface).ok(),
            None => s.parse().map(ListenAddr::Exact).ok(),
        };
        parsed.map(|addr| Self(Some(addr))).ok_or_else(|| {
            format!("{s:?} is not a listen address: use `:8443`, `127.0.0.1:8443`, `[::]:8443` or `0` (off)")
        })
    }
}

impl fmt::Display for BindAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(addr) => addr.fmt(f),
            None => f.write_str("0"),
        }
    }
}

/// Histogram buckets: finite upper bounds in seconds, increasing.
#[derive(Clone, Debug, PartialEq)]
pub struct Buckets(Vec<f64>);

impl Buckets {
    /// client-go's buckets for `rest_client_request_duration_seconds`.
    pub fn client_go() -> Self {
        Self(vec![
            0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
        ])
    }

    pub fn bounds(&self) -> &[f64] {
        &self.0
    }
}

impl FromStr for Buckets {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let usage = |why: String| {
            format!(
                "{s:?} is not a list of bucket bounds: {why}; give seconds, increasing and comma-separated, e.g. `0.01,0.1,1,10`"
            )
        };
        let mut bounds = Vec::new();
        for bound in s.split(',').map(str::trim) {
            let value: f64 = bound
                .parse()
                .ok()
                .filter(|value: &f64| value.is_finite() && *value > 0.0)
                .ok_or_else(|| usage(format!("{bound:?} is not a number of seconds above 0")))?;
            if let Some(&last) = bounds.last()
                && value <= last
            {
                return Err(usage(format!("{bound} does not follow {last} upwards")));
            }
            bounds.push(value);
        }
        Ok(Self(bounds))
    }
}

impl fmt::Display for Buckets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bounds: Vec<String> = self.0.iter().map(f64::to_string).collect();
        f.write_str(&bounds.join(","))
    }
}

fn parse_requests_per_second(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(n) if n.is_finite() && n > 0.0 => Ok(n),
        _ => Err(format!(
            "{s:?} is not a number of requests per second above 0, e.g. 20 or 0.5"
        )),
    }
}

fn parse_controller_concurrency(s: &str) -> Result<(String, u16), String> {
    let usage = || format!("{s:?} is not CONTROLLER=N with N >= 1, e.g. memcached=4");
    let (name, n) = s.split_once('=').ok_or_else(usage)?;
    match n.parse::<u16>() {
        Ok(n) if n > 0 && !name.is_empty() => Ok((name.to_owned(), n)),
        _ => Err(usage()),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn defaults_match_controller_runtime() {
        let args = Args::default();
        assert!(!args.leader_elect);
        assert!(args.metrics_secure);
        assert_eq!(args.metrics_bind_address, BindAddress(None));
        assert_eq!(
            args.health_probe_bind_address,
            BindAddress(Some(ListenAddr::AnyInterface(8081)))
        );
        assert_eq!(args.leader_election_lease_duration, Duration::from_secs(15));
        assert_eq!(args.leader_election_renew_deadline, Duration::from_secs(10));
        assert_eq!(args.leader_election_retry_period, Duration::from_secs(2));
        assert_eq!(args.concurrency, None);
        assert_eq!(args.concurrency_of("memcached"), 1);
        assert!(!args.migrate_storage);
        assert_eq!(args.migrate_storage_qps, 20.0);
        assert_eq!(
            args.webhook_bind_address,
            BindAddress(Some(ListenAddr::AnyInterface(9443)))
        );
        assert_eq!(
            args.webhook_cert_path,
            PathBuf::from("/tmp/k8s-webhook-server/serving-certs")
        );
    }

    #[test]
    fn rest_client_buckets_default_to_client_gos_and_refuse_what_is_not_increasing() {
        let default = Args::default().rest_client_latency_buckets;
        assert_eq!(
            default.bounds(),
            [
                0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0
            ]
        );
        let given: Buckets = "0.01, 0.1,1,10".parse().unwrap();
        assert_eq!(given.bounds(), [0.01, 0.1, 1.0, 10.0]);
        assert_eq!(given.to_string(), "0.01,0.1,1,10");
        for (bad, why) in [
            ("1,0.5", "0.5 does not follow 1 upwards"),
            ("1,1", "1 does not follow 1 upwards"),
            ("0,1", "\"0\" is not a number of seconds above 0"),
            ("1,x", "\"x\" is not a number of seconds above 0"),
            ("", "\"\" is not a number of seconds above 0"),
            ("inf", "\"inf\" is not a number of seconds above 0"),
        ] {
            let message = bad.parse::<Buckets>().unwrap_err();
            assert!(message.contains(why), "{bad}: {message}");
            assert!(message.contains("e.g. `0.01,0.1,1,10`"), "{message}");
        }
    }

    #[test]
    fn flattening_into_a_main_args_struct_is_a_valid_command() {
        /// As in a generated main.rs.
        #[derive(Parser)]
        struct Args {
            #[command(flatten)]
            manager: super::Args,
        }
        <Args as clap::CommandFactory>::command().debug_assert();
        let help = <Args as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        assert!(help.contains("--leader-elect"), "{help}");
        assert!(
            Args::parse_from(["op", "--leader-elect"])
                .manager
                .leader_elect
        );
    }

    #[test]
    fn go_style_flags_parse() {
        let args = Args::try_parse_from([
            "manager",
            "--leader-elect",
            "--metrics-secure=false",
            "--metrics-bind-address=:8443",
            "--health-probe-bind-address",
            "127.0.0.1:9000",
            "--leader-election-lease-duration=30s",
            "--concurrency=2",
            "--controller-concurrency=memcached=8",
            "--migrate-storage",
            "--migrate-storage-qps=2.5",
        ])
        .unwrap();
        assert!(args.leader_elect);
        assert!(!args.metrics_secure);
        assert_eq!(
            args.metrics_bind_address,
            BindAddress(Some(ListenAddr::AnyInterface(8443)))
        );
        assert_eq!(args.metrics_bind_address.to_string(), ":8443");
        assert_eq!(
            args.health_probe_bind_address,
            BindAddress(Some(ListenAddr::Exact("127.0.0.1:9000".parse().unwrap()))),
            "an address given in full is used as given"
        );
        assert_eq!(args.leader_election_lease_duration, Duration::from_secs(30));
        assert_eq!(args.concurrency_of("memcached"), 8);
        assert_eq!(args.concurrency_of("other"), 2);
        assert_eq!(args.concurrency_flag("other"), Some(2));
        assert!(args.migrate_storage);
        assert_eq!(args.migrate_storage_qps, 2.5);
    }

    #[test]
    fn watched_namespaces_come_from_the_flag_and_bad_names_are_refused() {
        // (WATCH_NAMESPACE is read the same way; the tests do not set it, as they share the
        // process environment.)
        assert_eq!(
            Args::try_parse_from(["manager"]).unwrap().watch_namespace,
            crate::cache::Namespaces::All
        );
        let args = Args::try_parse_from(["manager", "--watch-namespace=team-a,team-b"]).unwrap();
        assert_eq!(
            args.watch_namespace,
            crate::cache::Namespaces::only(["team-a", "team-b"])
        );
        let error = Args::try_parse_from(["manager", "--watch-namespace=team-a,Team_B"])
            .unwrap_err()
            .to_string();
        assert!(error.contains("--watch-namespace"), "{error}");
        assert!(
            error.contains("\"Team_B\" is not a namespace name"),
            "{error}"
        );
    }

    /// What `args` log for one event in a span, written to a buffer.
    fn logged(args: &[&str], colour: bool) -> String {
        use std::sync::{Arc, Mutex};

        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Buffer {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().write(bytes)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }

        let buffer = Buffer::default();
        let subscriber = Args::parse_from(args)
            .subscriber(
                {
                    let buffer = buffer.clone();
                    move || buffer.clone()
                },
                colour,
            )
            .unwrap();
        tracing::subscriber::with_default(subscriber, || {
            let _span = tracing::info_span!("controller", controller = "memcached").entered();
            tracing::warn!(object = "default/sample", "reconcile failed");
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert!(text.contains("reconcile failed"), "{text:?}");
        text
    }

    #[test]
    fn logs_are_coloured_only_as_text_on_a_terminal() {
        const ESCAPE: char = '\x1b';
        assert!(
            logged(&["manager"], true).contains(ESCAPE),
            "text on a terminal is coloured"
        );
        let piped = logged(&["manager"], false);
        assert!(!piped.contains(ESCAPE), "text to a pipe or file: {piped:?}");
        for colour in [true, false] {
            let json = logged(&["manager", "--log-format=json"], colour);
            assert!(!json.contains(ESCAPE), "JSON: {json:?}");
            serde_json::from_str::<serde_json::Value>(json.trim()).unwrap();
        }
    }

    #[test]
    fn bad_values_are_rejected_with_a_hint() {
        for bad in [
            ["manager", "--metrics-bind-address=8443"],
            ["manager", "--concurrency=0"],
            ["manager", "--controller-concurrency=memcached"],
            ["manager", "--leader-election-retry-period=soon"],
            ["manager", "--migrate-storage-qps=0"],
            ["manager", "--migrate-storage-qps=-1"],
            ["manager", "--migrate-storage-qps=inf"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?} was accepted");
        }
        let error = "x".parse::<BindAddress>().unwrap_err();
        assert!(error.contains(":8443"), "{error}");
    }
}
