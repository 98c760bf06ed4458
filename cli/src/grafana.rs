//! The grafana plugin's custom metrics, as kubebuilder's grafana plugin has them: the
//! metrics an operator exports itself, listed in `grafana/custom-metrics/config.yaml`,
//! become a dashboard of their own, one panel each, when `rkb edit --plugins grafana` runs.
//!
//! Derive (read the list), check (every entry, all problems at once, naming the file and the
//! entry), then the panels the dashboard's template lays out.

use anyhow::bail;
use serde::{Deserialize, Serialize};

/// The list of custom metrics; the user's file, which rkb writes only when it is missing.
pub const CONFIG: &str = "grafana/custom-metrics/config.yaml";
/// The dashboard made of it, written again by each `rkb edit --plugins grafana`.
pub const DASHBOARD: &str = "grafana/custom-metrics/custom-metrics-dashboard.json";
pub const CONFIG_TEMPLATE: &str = "grafana/custom-metrics/config.yaml.tera";
pub const DASHBOARD_TEMPLATE: &str = "grafana/custom-metrics/custom-metrics-dashboard.json.tera";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Config {
    /// `customMetrics:` with every entry commented out reads as null.
    #[serde(default)]
    custom_metrics: Option<Vec<Metric>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Metric {
    metric: String,
    #[serde(rename = "type")]
    kind: Kind,
    expr: Option<String>,
    unit: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

/// One panel of the dashboard, where its template places it.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct Panel {
    pub title: String,
    pub description: String,
    pub expr: String,
    pub legend: String,
    pub unit: String,
    pub x: u32,
    pub y: u32,
}

/// The panels of the metrics `config` (the text of [`CONFIG`]) lists, in its order; none
/// when it lists none. Every problem is reported at once.
pub fn panels(config: &str) -> anyhow::Result<Vec<Panel>> {
    let parsed: Config = serde_yaml_ng::from_str(config).map_err(|error| {
        anyhow::anyhow!(
            "{CONFIG} cannot be read: {error}\n  \
             Each entry of customMetrics has `metric` and `type` (counter, gauge or histogram), \
             and may have `expr` and `unit`, e.g.:\n  \
             customMetrics:\n    - metric: memcached_deployment_replicas\n      type: gauge"
        )
    })?;
    let metrics = parsed.custom_metrics.unwrap_or_default();
    let problems: Vec<String> = metrics
        .iter()
        .enumerate()
        .flat_map(|(i, metric)| {
            metric
                .problems()
                .into_iter()
                .map(move |p| format!("customMetrics[{i}] ({}): {p}", metric.metric))
        })
        .collect();
    if !problems.is_empty() {
        bail!(
            "{CONFIG} lists metrics Grafana could not show:\n  {}\n  Fix the entries and run \
             `rkb edit --plugins grafana` again; nothing was written",
            problems.join("\n  ")
        );
    }
    Ok(metrics
        .iter()
        .enumerate()
        .map(|(i, metric)| metric.panel(i as u32))
        .collect())
}

impl Metric {
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if !is_metric_name(&self.metric) {
            problems.push(
                "`metric` is not a Prometheus metric name: letters, digits, `_` and `:`, not \
                 starting with a digit, e.g. memcached_pods_ready"
                    .to_owned(),
            );
        }
        if let Some(unit) = &self.unit
            && (unit.is_empty() || unit.contains(char::is_whitespace))
        {
            problems.push(format!(
                "`unit` {unit:?} is not a Grafana unit id, e.g. s, bytes, percent or short"
            ));
        }
        let expr = self.expr();
        if let Err(error) = promql_parser::parser::parse(&without_grafana_variables(&expr)) {
            let whose = if self.expr.is_some() {
                "`expr`"
            } else {
                "the query made of `metric`"
            };
            problems.push(format!("{whose} is not PromQL ({expr}): {error}"));
        }
        problems
    }

    /// The query: the entry's own, or the usual one for its type.
    fn expr(&self) -> String {
        if let Some(expr) = &self.expr {
            return expr.clone();
        }
        let name = &self.metric;
        let job = r#"{job=~"$job"}"#;
        match self.kind {
            Kind::Counter => format!("sum by (pod) (rate({name}{job}[$__rate_interval]))"),
            Kind::Gauge => format!("sum by (pod) ({name}{job})"),
            Kind::Histogram => {
                let bucket = if name.ends_with("_bucket") {
                    name.clone()
                } else {
                    format!("{name}_bucket")
                };
                format!(
                    "histogram_quantile(0.99, sum by (le) (rate({bucket}{job}[$__rate_interval])))"
                )
            }
        }
    }

    fn panel(&self, index: u32) -> Panel {
        let (legend, what) = match self.kind {
            Kind::Counter => ("{{pod}}", "per second, by pod"),
            Kind::Gauge => ("{{pod}}", "by pod"),
            Kind::Histogram => ("p99", "99th percentile"),
        };
        let description = match &self.expr {
            Some(_) => format!(
                "{} (the query of grafana/custom-metrics/config.yaml)",
                self.metric
            ),
            None => format!("{}, {what}", self.metric),
        };
        Panel {
            title: self.metric.clone(),
            description,
            expr: self.expr(),
            legend: legend.to_owned(),
            unit: self.unit.clone().unwrap_or_else(|| "short".to_owned()),
            // Two panels a row, each half the dashboard's 24 columns wide and 8 rows high.
            x: index % 2 * 12,
            y: index / 2 * 8,
        }
    }
}

/// Prometheus's metric names: `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn is_metric_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == ':')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
}

/// `expr` with Grafana's variables replaced by values PromQL parses: ranges by `5m`, others
/// (`$job`, `${namespace}`) by a word, so that a query is checked as Grafana will send it.
fn without_grafana_variables(expr: &str) -> String {
    let mut out = String::with_capacity(expr.len());
    let mut rest = expr;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let (name, len) = match after.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(end) => (&braced[..end], end + 2),
                None => (braced, braced.len() + 1),
            },
            None => {
                let end = after
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..end], end)
            }
        };
        let range = matches!(name, "__rate_interval" | "__interval" | "__range");
        out.push_str(if range { "5m" } else { "x" });
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scaffolded_config_lists_nothing() {
        let config = crate::scaffold::Templates::source(CONFIG_TEMPLATE).unwrap();
        assert_eq!(panels(config).unwrap(), []);
    }

    #[test]
    fn each_type_gets_its_usual_query() {
        let panels = panels(
            "customMetrics:\n\
             - {metric: a_total, type: counter}\n\
             - {metric: b, type: gauge, unit: bytes}\n\
             - {metric: c_seconds, type: histogram}\n\
             - {metric: d, type: gauge, expr: 'max(d{job=~\"$job\"})'}\n",
        )
        .unwrap();
        let exprs: Vec<_> = panels.iter().map(|p| p.expr.as_str()).collect();
        assert_eq!(
            exprs,
            [
                r#"sum by (pod) (rate(a_total{job=~"$job"}[$__rate_interval]))"#,
                r#"sum by (pod) (b{job=~"$job"})"#,
                r#"histogram_quantile(0.99, sum by (le) (rate(c_seconds_bucket{job=~"$job"}[$__rate_interval])))"#,
                r#"max(d{job=~"$job"})"#,
            ]
        );
        assert_eq!(panels[1].unit, "bytes");
        assert_eq!(panels[0].unit, "short");
        let places: Vec<_> = panels.iter().map(|p| (p.x, p.y)).collect();
        assert_eq!(places, [(0, 0), (12, 0), (0, 8), (12, 8)]);
    }

    #[test]
    fn every_bad_entry_is_named_at_once() {
        let error = panels(
            "customMetrics:\n\
             - {metric: 9lives, type: gauge}\n\
             - {metric: ok, type: gauge, expr: 'sum(ok', unit: 'per second'}\n",
        )
        .unwrap_err()
        .to_string();
        for expected in [
            "customMetrics[0] (9lives): `metric` is not a Prometheus metric name",
            "customMetrics[1] (ok): `unit` \"per second\" is not a Grafana unit id",
            "customMetrics[1] (ok): `expr` is not PromQL (sum(ok)",
            "nothing was written",
        ] {
            assert!(error.contains(expected), "{expected}\n{error}");
        }
    }

    #[test]
    fn an_unknown_type_names_the_accepted_ones() {
        let error = panels("customMetrics:\n- {metric: a, type: summary}\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("unknown variant `summary`"), "{error}");
        assert!(error.contains("counter, gauge or histogram"), "{error}");
        assert!(error.starts_with(CONFIG), "{error}");
    }

    #[test]
    fn grafana_variables_are_checked_as_grafana_sends_them() {
        assert_eq!(
            without_grafana_variables(
                r#"rate(x{job=~"$job",ns="${namespace}"}[$__rate_interval])"#
            ),
            r#"rate(x{job=~"x",ns="x"}[5m])"#
        );
    }
}
