//! YAML documents as controller-gen writes them.

use serde::Serialize;

use super::Error;

/// One YAML document introduced by `---`, as controller-gen writes them.
pub(super) fn yaml_document<T: Serialize>(what: &str, doc: &T) -> Result<String, Error> {
    let yaml_error = |source| Error::Yaml {
        what: what.to_owned(),
        source,
    };
    // Through a Value, so that whole numbers print as integers: k8s-openapi keeps schema
    // bounds as f64, which would otherwise write `minimum: 1.0` for `#[rkb(minimum = 1)]`.
    let mut value = serde_yaml_ng::to_value(doc).map_err(yaml_error)?;
    integral_floats_to_integers(&mut value);
    let yaml = serde_yaml_ng::to_string(&value).map_err(yaml_error)?;
    Ok(format!("---\n{yaml}"))
}

fn integral_floats_to_integers(value: &mut serde_yaml_ng::Value) {
    use serde_yaml_ng::Value;
    match value {
        Value::Number(n) => {
            if let Some(f) = n.as_f64().filter(|_| n.is_f64())
                && f.fract() == 0.0
                && f.abs() < 9_007_199_254_740_992.0
            {
                *n = (f as i64).into();
            }
        }
        Value::Sequence(items) => items.iter_mut().for_each(integral_floats_to_integers),
        Value::Mapping(map) => map.values_mut().for_each(integral_floats_to_integers),
        Value::Tagged(tagged) => integral_floats_to_integers(&mut tagged.value),
        _ => {}
    }
}
