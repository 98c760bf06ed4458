//! Compares two CRD files as `make manifests` compares a released CRD with a new one,
//! and prints one line per finding: `<rule>@<location> (<old> -> <new>)`, with
//! `(warning)` after those the gate does not fail on. Exits 1 when one breaks. `manifests/hack/crdify-compare.sh` runs it beside crdify.
//!
//! ```sh
//! cargo run -q -p rkb-manifests --example crd-compat -- OLD.yaml NEW.yaml
//! ```

use std::process::ExitCode;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use rkb_manifests::compat;

fn read(path: &str) -> Result<CustomResourceDefinition, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))?;
    serde_yaml_ng::from_str(&text).map_err(|e| format!("{path} is no CRD: {e}"))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [old, new] = args.as_slice() else {
        eprintln!("usage: crd-compat OLD.yaml NEW.yaml");
        return ExitCode::from(2);
    };
    let (old, new) = match (read(old), read(new)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let findings = compat::compare(&old, &new);
    for finding in &findings {
        let warning = if finding.rule.breaks() {
            ""
        } else {
            " (warning)"
        };
        println!(
            "{} ({} -> {}){warning}",
            finding.allowance(),
            finding.old,
            finding.new
        );
    }
    if !findings.iter().any(|f| f.rule.breaks()) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
