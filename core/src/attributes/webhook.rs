//! The keys of `#[rkb_runtime::webhook(...)]`: the [`Settings`](crate::webhook::Settings)
//! of controller-gen's `+kubebuilder:webhook` marker with Rust spellings.

/// One key of `#[rkb_runtime::webhook(...)]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    pub name: &'static str,
    /// The key of controller-gen's `+kubebuilder:webhook` marker that does the same.
    pub marker: &'static str,
    /// The key with a value.
    pub example: &'static str,
    /// The values a key of a few takes, as written (case, `_` and `-` aside).
    pub choices: &'static [&'static str],
    pub doc: &'static str,
}

/// Every key of `#[rkb_runtime::webhook(...)]`; each is optional, and each example sets
/// something else than the default.
pub const KEYS: &[Key] = &[
    Key {
        name: "path",
        marker: "+kubebuilder:webhook:path=...",
        example: r#"path = "/validate-cache-example-com-v1alpha1-memcached""#,
        choices: &[],
        doc: "The URL path the manager serves it on; by default `/mutate-<group>-<version>-<kind>` \
              or `/validate-...`, as kubebuilder names it.",
    },
    Key {
        name: "name",
        marker: "+kubebuilder:webhook:name=...",
        example: r#"name = "vmemcached-v1alpha1.kb.io""#,
        choices: &[],
        doc: "The webhook's name in its configuration; by default `m<kind>-<version>.kb.io` \
              or `v...`.",
    },
    Key {
        name: "failure_policy",
        marker: "+kubebuilder:webhook:failurePolicy=fail",
        example: r#"failure_policy = "ignore""#,
        choices: &["fail", "ignore"],
        doc: "What the API server does when it cannot call the webhook: refuse the request \
              (the default) or let it through.",
    },
    Key {
        name: "side_effects",
        marker: "+kubebuilder:webhook:sideEffects=None",
        example: r#"side_effects = "none_on_dry_run""#,
        choices: &["none", "none_on_dry_run"],
        doc: "Whether calling the webhook changes anything besides the object (`none`, the \
              default).",
    },
    Key {
        name: "operations",
        marker: "+kubebuilder:webhook:verbs=create;update",
        example: "operations(create, update, delete)",
        choices: &[],
        doc: "The operations the webhook is called for; by default create and update.",
    },
    Key {
        name: "match_policy",
        marker: "+kubebuilder:webhook:matchPolicy=Equivalent",
        example: r#"match_policy = "exact""#,
        choices: &["exact", "equivalent"],
        doc: "Whether requests to other versions of the resource reach the webhook too, \
              converted (`equivalent`, the default).",
    },
    Key {
        name: "timeout_seconds",
        marker: "+kubebuilder:webhook:timeoutSeconds=10",
        example: "timeout_seconds = 5",
        choices: &[],
        doc: "How long the API server waits for an answer, 1 to 30 seconds (10 by default).",
    },
    Key {
        name: "reinvocation_policy",
        marker: "+kubebuilder:webhook:reinvocationPolicy=IfNeeded",
        example: r#"reinvocation_policy = "if_needed""#,
        choices: &["never", "if_needed"],
        doc: "Defaulters only: whether the webhook is called again when a later mutating \
              webhook changed the object (`never`, the API server's default).",
    },
    Key {
        name: "admission_review_versions",
        marker: "+kubebuilder:webhook:admissionReviewVersions=v1",
        example: "admission_review_versions(v1, v1beta1)",
        choices: &[],
        doc: "The AdmissionReview versions the webhook accepts, most preferred first; `v1` \
              (the default) must be listed, the one the manager answers.",
    },
    Key {
        name: "url",
        marker: "+kubebuilder:webhook:url=...",
        example: r#"url = "https://webhooks.example.com:9443/validate-pods""#,
        choices: &[],
        doc: "Calls the webhook at this `https://` URL instead of the manager's Service (a \
              webhook served out of the cluster); the manager serves it at the URL's path. \
              Not with `path`.",
    },
    Key {
        name: "namespace_selector",
        marker: "namespaceSelector: no marker key",
        example: r#"namespace_selector = "environment in (prod, staging)""#,
        choices: &[],
        doc: "Only requests in namespaces whose labels match, written as kubectl's \
              `--selector` (`key=value`, `key!=value`, `key in (a, b)`, `key notin (a, b)`, \
              `key`, `!key`, comma-separated).",
    },
    Key {
        name: "object_selector",
        marker: "objectSelector: no marker key",
        example: r#"object_selector = "app.kubernetes.io/managed-by != helm""#,
        choices: &[],
        doc: "Only requests for objects whose labels (old or new) match, written like \
              `namespace_selector`.",
    },
    Key {
        name: "match_condition",
        marker: "matchConditions: no marker key",
        example: r#"match_condition(name = "not-kube-system", expression = "request.namespace != 'kube-system'")"#,
        choices: &[],
        doc: "Only requests for which this CEL expression is true; one key per condition, \
              each with a name of its own. Its syntax is checked at compile time, its types \
              by the API server.",
    },
];

/// Keys written once per item (each `match_condition`).
pub const REPEATABLE: &[&str] = &["match_condition"];

/// controller-gen's marker keys, and the key each means: suggested for an unknown key.
pub const ALIASES: &[(&str, &str)] = &[
    ("failurePolicy", "failure_policy"),
    ("sideEffects", "side_effects"),
    ("verbs", "operations"),
    ("matchPolicy", "match_policy"),
    ("timeoutSeconds", "timeout_seconds"),
    ("timeout", "timeout_seconds"),
    ("reinvocationPolicy", "reinvocation_policy"),
    ("admissionReviewVersions", "admission_review_versions"),
    ("namespaceSelector", "namespace_selector"),
    ("objectSelector", "object_selector"),
    ("matchConditions", "match_condition"),
    ("matchCondition", "match_condition"),
    ("match_conditions", "match_condition"),
];

/// The key named `name`.
pub fn find(name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|key| key.name == name)
}

impl Key {
    /// How to write the key, as messages suggest it: its choices, or its example.
    pub fn usage(&self) -> String {
        if self.choices.is_empty() {
            return self.example.to_owned();
        }
        let choices: Vec<String> = self.choices.iter().map(|c| format!("{c:?}")).collect();
        format!("{} = {}", self.name, choices.join(" or "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_names_a_key_and_every_example_starts_with_its_key() {
        for (_, key) in ALIASES {
            assert!(find(key).is_some(), "{key}");
        }
        for key in KEYS {
            assert!(key.example.starts_with(key.name), "{}", key.example);
        }
        assert_eq!(
            find("side_effects").unwrap().usage(),
            r#"side_effects = "none" or "none_on_dry_run""#
        );
    }
}
