// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! The ServiceMonitor API (monitoring.coreos.com/v1), written by `rkb create api --external-crd` from the CRD in
//! config/external-crds/: another project defines this kind and owns its CRD, which
//! this project does not install. Run the command again (with --force) when the CRD
//! changes; the test below fails while these types derive another schema.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// spec defines the specification of desired Service selection for target discovery by
/// Prometheus.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "monitoring.coreos.com",
    version = "v1",
    kind = "ServiceMonitor",
    plural = "servicemonitors",
    namespaced,
    status = "ServiceMonitorStatus",
    derive = "Default",
    derive = "PartialEq",
    doc = "The `ServiceMonitor` custom resource definition (CRD) defines how `Prometheus` and `PrometheusAgent` can scrape metrics from a group of services.\nAmong other things, it allows to specify:\n* The services to scrape via label selectors.\n* The container ports to scrape.\n* Authentication credentials to use.\n* Target and metric relabeling.\n\n`Prometheus` and `PrometheusAgent` objects select `ServiceMonitor` objects using label and namespace selectors."
)]
#[rkb(short_names = ["smon"], categories = ["prometheus-operator"])]
pub struct ServiceMonitorSpec {
    /// attachMetadata defines additional metadata which is added to the
    /// discovered targets.
    ///
    /// It requires Prometheus >= v2.37.0.
    #[serde(
        rename = "attachMetadata",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub attach_metadata: Option<ServiceMonitorSpecAttachMetadata>,
    /// bodySizeLimit when defined, bodySizeLimit specifies a job level limit on the size
    /// of uncompressed response body that will be accepted by Prometheus.
    ///
    /// It requires Prometheus >= v2.28.0.
    #[rkb(pattern = "(^0|([0-9]*[.])?[0-9]+((K|M|G|T|E|P)i?)?B)$")]
    #[serde(
        rename = "bodySizeLimit",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub body_size_limit: Option<String>,
    /// convertClassicHistogramsToNHCB defines whether to convert all scraped classic histograms into a native histogram with custom buckets.
    /// It requires Prometheus >= v3.0.0.
    #[serde(
        rename = "convertClassicHistogramsToNHCB",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub convert_classic_histograms_to_nhcb: Option<bool>,
    /// endpoints defines the list of endpoints part of this ServiceMonitor.
    /// Defines how to scrape metrics from Kubernetes [Endpoints](https://kubernetes.io/docs/concepts/services-networking/service/#endpoints) objects.
    /// In most cases, an Endpoints object is backed by a Kubernetes [Service](https://kubernetes.io/docs/concepts/services-networking/service/) object with the same name and labels.
    pub endpoints: Vec<ServiceMonitorSpecEndpoints>,
    /// fallbackScrapeProtocol defines the protocol to use if a scrape returns blank, unparseable, or otherwise invalid Content-Type.
    ///
    /// It requires Prometheus >= v3.0.0.
    #[rkb(enum_values = ["PrometheusProto", "OpenMetricsText0.0.1", "OpenMetricsText1.0.0", "PrometheusText0.0.4", "PrometheusText1.0.0"])]
    #[serde(
        rename = "fallbackScrapeProtocol",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub fallback_scrape_protocol: Option<String>,
    /// jobLabel selects the label from the associated Kubernetes `Service`
    /// object which will be used as the `job` label for all metrics.
    ///
    /// For example if `jobLabel` is set to `foo` and the Kubernetes `Service`
    /// object is labeled with `foo: bar`, then Prometheus adds the `job="bar"`
    /// label to all ingested metrics.
    ///
    /// If the value of this field is empty or if the label doesn't exist for
    /// the given Service, the `job` label of the metrics defaults to the name
    /// of the associated Kubernetes `Service`.
    #[serde(rename = "jobLabel", default, skip_serializing_if = "Option::is_none")]
    pub job_label: Option<String>,
    /// keepDroppedTargets defines the per-scrape limit on the number of targets dropped by relabeling
    /// that will be kept in memory. 0 means no limit.
    ///
    /// It requires Prometheus >= v2.47.0.
    #[rkb(minimum = 0)]
    #[serde(
        rename = "keepDroppedTargets",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub keep_dropped_targets: Option<i64>,
    /// labelLimit defines the per-scrape limit on number of labels that will be accepted for a sample.
    ///
    /// It requires Prometheus >= v2.27.0.
    #[rkb(minimum = 0)]
    #[serde(
        rename = "labelLimit",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub label_limit: Option<i64>,
    /// labelNameLengthLimit defines the per-scrape limit on length of labels name that will be accepted for a sample.
    ///
    /// It requires Prometheus >= v2.27.0.
    #[rkb(minimum = 0)]
    #[serde(
        rename = "labelNameLengthLimit",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub label_name_length_limit: Option<i64>,
    /// labelValueLengthLimit defines the per-scrape limit on length of labels value that will be accepted for a sample.
    ///
    /// It requires Prometheus >= v2.27.0.
    #[rkb(minimum = 0)]
    #[serde(
        rename = "labelValueLengthLimit",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub label_value_length_limit: Option<i64>,
    /// namespaceSelector defines in which namespace(s) Prometheus should discover the services.
    /// By default, the services are discovered in the same namespace as the `ServiceMonitor` object but it is possible to select pods across different/all namespaces.
    #[serde(
        rename = "namespaceSelector",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub namespace_selector: Option<ServiceMonitorSpecNamespaceSelector>,
    /// nativeHistogramBucketLimit defines ff there are more than this many buckets in a native histogram,
    /// buckets will be merged to stay within the limit.
    /// It requires Prometheus >= v2.45.0.
    #[rkb(minimum = 0)]
    #[serde(
        rename = "nativeHistogramBucketLimit",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub native_histogram_bucket_limit: Option<i64>,
    /// nativeHistogramMinBucketFactor defines if the growth factor of one bucket to the next is smaller than this,
    /// buckets will be merged to increase the factor sufficiently.
    /// It requires Prometheus >= v2.50.0.
    #[rkb(
        pattern = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$"
    )]
    #[serde(
        rename = "nativeHistogramMinBucketFactor",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub native_histogram_min_bucket_factor: Option<IntOrString>,
    /// podTargetLabels defines the labels which are transferred from the
    /// associated Kubernetes `Pod` object onto the ingested metrics.
    #[serde(
        rename = "podTargetLabels",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub pod_target_labels: Option<Vec<String>>,
    /// sampleLimit defines a per-scrape limit on the number of scraped samples
    /// that will be accepted.
    #[rkb(minimum = 0)]
    #[serde(
        rename = "sampleLimit",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub sample_limit: Option<i64>,
    /// scrapeClass defines the scrape class to apply.
    #[rkb(min_length = 1)]
    #[serde(
        rename = "scrapeClass",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub scrape_class: Option<String>,
    /// scrapeClassicHistograms defines whether to scrape a classic histogram that is also exposed as a native histogram.
    /// It requires Prometheus >= v2.45.0.
    ///
    /// Notice: `scrapeClassicHistograms` corresponds to the `always_scrape_classic_histograms` field in the Prometheus configuration.
    #[serde(
        rename = "scrapeClassicHistograms",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub scrape_classic_histograms: Option<bool>,
    /// scrapeNativeHistograms defines whether to enable scraping of native histograms.
    /// It requires Prometheus >= v3.8.0.
    #[serde(
        rename = "scrapeNativeHistograms",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub scrape_native_histograms: Option<bool>,
    /// scrapeProtocols defines the protocols to negotiate during a scrape. It tells clients the
    /// protocols supported by Prometheus in order of preference (from most to least preferred).
    ///
    /// If unset, Prometheus uses its default value.
    ///
    /// It requires Prometheus >= v2.49.0.
    #[rkb(items(enum_values = ["PrometheusProto", "OpenMetricsText0.0.1", "OpenMetricsText1.0.0", "PrometheusText0.0.4", "PrometheusText1.0.0"]), list_type = set)]
    #[serde(
        rename = "scrapeProtocols",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub scrape_protocols: Option<Vec<String>>,
    /// selector defines the label selector to select the Kubernetes `Endpoints` objects to scrape metrics from.
    #[rkb(map_type = atomic)]
    pub selector: ServiceMonitorSpecSelector,
    /// selectorMechanism defines the mechanism used to select the endpoints to scrape.
    /// By default, the selection process relies on relabel configurations to filter the discovered targets.
    /// Alternatively, you can opt in for role selectors, which may offer better efficiency in large clusters.
    /// Which strategy is best for your use case needs to be carefully evaluated.
    ///
    /// It requires Prometheus >= v2.17.0.
    #[rkb(enum_values = ["RelabelConfig", "RoleSelector"])]
    #[serde(
        rename = "selectorMechanism",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub selector_mechanism: Option<String>,
    /// serviceDiscoveryRole defines the service discovery role used to discover targets.
    ///
    /// If set, the value should be either "Endpoints" or "EndpointSlice".
    /// Otherwise it defaults to the value defined in the
    /// Prometheus/PrometheusAgent resource.
    #[rkb(enum_values = ["Endpoints", "EndpointSlice"])]
    #[serde(
        rename = "serviceDiscoveryRole",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub service_discovery_role: Option<String>,
    /// targetLabels defines the labels which are transferred from the
    /// associated Kubernetes `Service` object onto the ingested metrics.
    #[serde(
        rename = "targetLabels",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub target_labels: Option<Vec<String>>,
    /// targetLimit defines a limit on the number of scraped targets that will
    /// be accepted.
    #[rkb(minimum = 0)]
    #[serde(
        rename = "targetLimit",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub target_limit: Option<i64>,
}

/// status defines the status subresource. It is under active development and is updated only when the
/// "StatusForConfigurationResources" feature gate is enabled.
///
/// Most recent observed status of the ServiceMonitor. Read-only.
/// More info:
/// https://github.com/kubernetes/community/blob/master/contributors/devel/sig-architecture/api-conventions.md#spec-and-status
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorStatus {
    /// bindings defines the list of workload resources (Prometheus, PrometheusAgent, ThanosRuler or Alertmanager) which select the configuration resource.
    #[rkb(list_map_keys = ["group", "resource", "name", "namespace"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bindings: Option<Vec<ServiceMonitorStatusBindings>>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecAttachMetadata {
    /// node when set to true, Prometheus attaches node metadata to the discovered
    /// targets.
    ///
    /// The Prometheus service account must have the `list` and `watch`
    /// permissions on the `Nodes` objects.
    ///
    /// Node metadata labels are not automatically added to scraped metrics. They are
    /// exposed as `__meta_kubernetes_node_*` labels and can be copied to timeseries
    /// with relabeling configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsAuthorizationCredentials {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsAuthorization {
    /// credentials defines a key of a Secret in the namespace that contains the credentials for authentication.
    #[rkb(map_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<ServiceMonitorSpecEndpointsAuthorizationCredentials>,
    /// type defines the authentication type. The value is case-insensitive.
    ///
    /// "Basic" is not a supported value.
    ///
    /// Default: "Bearer"
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsBasicAuthPassword {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsBasicAuthUsername {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsBasicAuth {
    /// password defines a key of a Secret containing the password for
    /// authentication.
    #[rkb(map_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<ServiceMonitorSpecEndpointsBasicAuthPassword>,
    /// username defines a key of a Secret containing the username for
    /// authentication.
    #[rkb(map_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<ServiceMonitorSpecEndpointsBasicAuthUsername>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsBearerTokenSecret {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// RelabelConfig allows dynamic rewriting of the label set for targets, alerts,
/// scraped samples and remote write samples.
///
/// More info: https://prometheus.io/docs/prometheus/latest/configuration/configuration/#relabel_config
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsMetricRelabelings {
    /// action to perform based on the regex matching.
    ///
    /// `Uppercase` and `Lowercase` actions require Prometheus >= v2.36.0.
    /// `DropEqual` and `KeepEqual` actions require Prometheus >= v2.41.0.
    ///
    /// Default: "Replace"
    #[rkb(default = "replace", enum_values = ["replace", "Replace", "keep", "Keep", "drop", "Drop", "hashmod", "HashMod", "labelmap", "LabelMap", "labeldrop", "LabelDrop", "labelkeep", "LabelKeep", "lowercase", "Lowercase", "uppercase", "Uppercase", "keepequal", "KeepEqual", "dropequal", "DropEqual"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// modulus to take of the hash of the source label values.
    ///
    /// Only applicable when the action is `HashMod`.
    #[rkb(minimum = 0)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modulus: Option<i64>,
    /// regex defines the regular expression against which the extracted value is matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// replacement value against which a Replace action is performed if the
    /// regular expression matches.
    ///
    /// Regex capture groups are available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    /// separator defines the string between concatenated SourceLabels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separator: Option<String>,
    /// sourceLabels defines the source labels select values from existing labels. Their content is
    /// concatenated using the configured Separator and matched against the
    /// configured regular expression.
    #[serde(
        rename = "sourceLabels",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub source_labels: Option<Vec<String>>,
    /// targetLabel defines the label to which the resulting string is written in a replacement.
    ///
    /// It is mandatory for `Replace`, `HashMod`, `Lowercase`, `Uppercase`,
    /// `KeepEqual` and `DropEqual` actions.
    ///
    /// Regex capture groups are available.
    #[serde(
        rename = "targetLabel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub target_label: Option<String>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2ClientIdConfigMap {
    /// The key to select.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the ConfigMap or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2ClientIdSecret {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2ClientId {
    /// configMap defines the ConfigMap containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(rename = "configMap", default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ServiceMonitorSpecEndpointsOauth2ClientIdConfigMap>,
    /// secret defines the Secret containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ServiceMonitorSpecEndpointsOauth2ClientIdSecret>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2ClientSecret {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// SecretKeySelector selects a key of a Secret.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[rkb(map_type = atomic)]
pub struct ServiceMonitorSpecEndpointsOauth2ProxyConnectHeader {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2TlsConfigCaConfigMap {
    /// The key to select.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the ConfigMap or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2TlsConfigCaSecret {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2TlsConfigCa {
    /// configMap defines the ConfigMap containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(rename = "configMap", default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ServiceMonitorSpecEndpointsOauth2TlsConfigCaConfigMap>,
    /// secret defines the Secret containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ServiceMonitorSpecEndpointsOauth2TlsConfigCaSecret>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2TlsConfigCertConfigMap {
    /// The key to select.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the ConfigMap or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2TlsConfigCertSecret {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2TlsConfigCert {
    /// configMap defines the ConfigMap containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(rename = "configMap", default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ServiceMonitorSpecEndpointsOauth2TlsConfigCertConfigMap>,
    /// secret defines the Secret containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ServiceMonitorSpecEndpointsOauth2TlsConfigCertSecret>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2TlsConfigKeySecret {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2TlsConfig {
    /// ca defines the Certificate authority used when verifying server certificates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<ServiceMonitorSpecEndpointsOauth2TlsConfigCa>,
    /// cert defines the Client certificate to present when doing client-authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<ServiceMonitorSpecEndpointsOauth2TlsConfigCert>,
    /// insecureSkipVerify defines how to disable target certificate validation.
    #[serde(
        rename = "insecureSkipVerify",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub insecure_skip_verify: Option<bool>,
    /// keySecret defines the Secret containing the client key file for the targets.
    #[rkb(map_type = atomic)]
    #[serde(rename = "keySecret", default, skip_serializing_if = "Option::is_none")]
    pub key_secret: Option<ServiceMonitorSpecEndpointsOauth2TlsConfigKeySecret>,
    /// maxVersion defines the maximum acceptable TLS version.
    ///
    /// It requires Prometheus >= v2.41.0 or Thanos >= v0.31.0.
    #[rkb(enum_values = ["TLS10", "TLS11", "TLS12", "TLS13"])]
    #[serde(
        rename = "maxVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_version: Option<String>,
    /// minVersion defines the minimum acceptable TLS version.
    ///
    /// It requires Prometheus >= v2.35.0 or Thanos >= v0.28.0.
    #[rkb(enum_values = ["TLS10", "TLS11", "TLS12", "TLS13"])]
    #[serde(
        rename = "minVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub min_version: Option<String>,
    /// serverName is used to verify the hostname for the targets.
    #[serde(
        rename = "serverName",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_name: Option<String>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsOauth2 {
    /// clientId defines a key of a Secret or ConfigMap containing the
    /// OAuth2 client's ID.
    #[serde(rename = "clientId")]
    pub client_id: ServiceMonitorSpecEndpointsOauth2ClientId,
    /// clientSecret defines a key of a Secret containing the OAuth2
    /// client's secret.
    #[rkb(map_type = atomic)]
    #[serde(rename = "clientSecret")]
    pub client_secret: ServiceMonitorSpecEndpointsOauth2ClientSecret,
    /// endpointParams configures the HTTP parameters to append to the token
    /// URL.
    #[serde(
        rename = "endpointParams",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub endpoint_params: Option<BTreeMap<String, String>>,
    /// noProxy defines a comma-separated string that can contain IPs, CIDR notation, domain names
    /// that should be excluded from proxying. IP and domain names can
    /// contain port numbers.
    ///
    /// It requires Prometheus >= v2.43.0, Alertmanager >= v0.25.0 or Thanos >= v0.32.0.
    #[serde(rename = "noProxy", default, skip_serializing_if = "Option::is_none")]
    pub no_proxy: Option<String>,
    /// proxyConnectHeader optionally specifies headers to send to
    /// proxies during CONNECT requests.
    ///
    /// It requires Prometheus >= v2.43.0, Alertmanager >= v0.25.0 or Thanos >= v0.32.0.
    #[rkb(map_type = atomic)]
    #[serde(
        rename = "proxyConnectHeader",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub proxy_connect_header:
        Option<BTreeMap<String, Vec<ServiceMonitorSpecEndpointsOauth2ProxyConnectHeader>>>,
    /// proxyFromEnvironment defines whether to use the proxy configuration defined by environment variables (HTTP_PROXY, HTTPS_PROXY, and NO_PROXY).
    ///
    /// It requires Prometheus >= v2.43.0, Alertmanager >= v0.25.0 or Thanos >= v0.32.0.
    #[serde(
        rename = "proxyFromEnvironment",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub proxy_from_environment: Option<bool>,
    /// proxyUrl defines the HTTP proxy server to use.
    #[rkb(pattern = "^(http|https|socks5)://.+$")]
    #[serde(rename = "proxyUrl", default, skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<String>,
    /// scopes defines the OAuth2 scopes used for the token request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    /// tlsConfig defines the TLS configuration to use when connecting to the OAuth2 server.
    /// It requires Prometheus >= v2.43.0.
    #[serde(rename = "tlsConfig", default, skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<ServiceMonitorSpecEndpointsOauth2TlsConfig>,
    /// tokenUrl defines the URL to fetch the token from.
    #[rkb(pattern = "^(http|https)://.+$")]
    #[serde(rename = "tokenUrl")]
    pub token_url: String,
}

/// SecretKeySelector selects a key of a Secret.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[rkb(map_type = atomic)]
pub struct ServiceMonitorSpecEndpointsProxyConnectHeader {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

/// RelabelConfig allows dynamic rewriting of the label set for targets, alerts,
/// scraped samples and remote write samples.
///
/// More info: https://prometheus.io/docs/prometheus/latest/configuration/configuration/#relabel_config
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsRelabelings {
    /// action to perform based on the regex matching.
    ///
    /// `Uppercase` and `Lowercase` actions require Prometheus >= v2.36.0.
    /// `DropEqual` and `KeepEqual` actions require Prometheus >= v2.41.0.
    ///
    /// Default: "Replace"
    #[rkb(default = "replace", enum_values = ["replace", "Replace", "keep", "Keep", "drop", "Drop", "hashmod", "HashMod", "labelmap", "LabelMap", "labeldrop", "LabelDrop", "labelkeep", "LabelKeep", "lowercase", "Lowercase", "uppercase", "Uppercase", "keepequal", "KeepEqual", "dropequal", "DropEqual"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// modulus to take of the hash of the source label values.
    ///
    /// Only applicable when the action is `HashMod`.
    #[rkb(minimum = 0)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub modulus: Option<i64>,
    /// regex defines the regular expression against which the extracted value is matched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub regex: Option<String>,
    /// replacement value against which a Replace action is performed if the
    /// regular expression matches.
    ///
    /// Regex capture groups are available.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacement: Option<String>,
    /// separator defines the string between concatenated SourceLabels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub separator: Option<String>,
    /// sourceLabels defines the source labels select values from existing labels. Their content is
    /// concatenated using the configured Separator and matched against the
    /// configured regular expression.
    #[serde(
        rename = "sourceLabels",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub source_labels: Option<Vec<String>>,
    /// targetLabel defines the label to which the resulting string is written in a replacement.
    ///
    /// It is mandatory for `Replace`, `HashMod`, `Lowercase`, `Uppercase`,
    /// `KeepEqual` and `DropEqual` actions.
    ///
    /// Regex capture groups are available.
    #[serde(
        rename = "targetLabel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub target_label: Option<String>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsTlsConfigCaConfigMap {
    /// The key to select.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the ConfigMap or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsTlsConfigCaSecret {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsTlsConfigCa {
    /// configMap defines the ConfigMap containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(rename = "configMap", default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ServiceMonitorSpecEndpointsTlsConfigCaConfigMap>,
    /// secret defines the Secret containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ServiceMonitorSpecEndpointsTlsConfigCaSecret>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsTlsConfigCertConfigMap {
    /// The key to select.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the ConfigMap or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsTlsConfigCertSecret {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsTlsConfigCert {
    /// configMap defines the ConfigMap containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(rename = "configMap", default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<ServiceMonitorSpecEndpointsTlsConfigCertConfigMap>,
    /// secret defines the Secret containing data to use for the targets.
    #[rkb(map_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<ServiceMonitorSpecEndpointsTlsConfigCertSecret>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsTlsConfigKeySecret {
    /// The key of the secret to select from.  Must be a valid secret key.
    pub key: String,
    /// Name of the referent.
    /// This field is effectively required, but due to backwards compatibility is
    /// allowed to be empty. Instances of this type with an empty value here are
    /// almost certainly wrong.
    /// More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names
    #[rkb(default = "")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Specify whether the Secret or its key must be defined
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optional: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpointsTlsConfig {
    /// ca defines the Certificate authority used when verifying server certificates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca: Option<ServiceMonitorSpecEndpointsTlsConfigCa>,
    /// caFile defines the path to the CA cert in the Prometheus container to use for the targets.
    #[serde(rename = "caFile", default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<String>,
    /// cert defines the Client certificate to present when doing client-authentication.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<ServiceMonitorSpecEndpointsTlsConfigCert>,
    /// certFile defines the path to the client cert file in the Prometheus container for the targets.
    #[serde(rename = "certFile", default, skip_serializing_if = "Option::is_none")]
    pub cert_file: Option<String>,
    /// insecureSkipVerify defines how to disable target certificate validation.
    #[serde(
        rename = "insecureSkipVerify",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub insecure_skip_verify: Option<bool>,
    /// keyFile defines the path to the client key file in the Prometheus container for the targets.
    #[serde(rename = "keyFile", default, skip_serializing_if = "Option::is_none")]
    pub key_file: Option<String>,
    /// keySecret defines the Secret containing the client key file for the targets.
    #[rkb(map_type = atomic)]
    #[serde(rename = "keySecret", default, skip_serializing_if = "Option::is_none")]
    pub key_secret: Option<ServiceMonitorSpecEndpointsTlsConfigKeySecret>,
    /// maxVersion defines the maximum acceptable TLS version.
    ///
    /// It requires Prometheus >= v2.41.0 or Thanos >= v0.31.0.
    #[rkb(enum_values = ["TLS10", "TLS11", "TLS12", "TLS13"])]
    #[serde(
        rename = "maxVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub max_version: Option<String>,
    /// minVersion defines the minimum acceptable TLS version.
    ///
    /// It requires Prometheus >= v2.35.0 or Thanos >= v0.28.0.
    #[rkb(enum_values = ["TLS10", "TLS11", "TLS12", "TLS13"])]
    #[serde(
        rename = "minVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub min_version: Option<String>,
    /// serverName is used to verify the hostname for the targets.
    #[serde(
        rename = "serverName",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_name: Option<String>,
}

/// Endpoint defines an endpoint serving Prometheus metrics to be scraped by
/// Prometheus.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecEndpoints {
    /// authorization configures the Authorization header credentials used by
    /// the client.
    ///
    /// Cannot be set at the same time as `basicAuth`, `bearerTokenSecret` or `oauth2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization: Option<ServiceMonitorSpecEndpointsAuthorization>,
    /// basicAuth defines the Basic Authentication credentials used by the
    /// client.
    ///
    /// Cannot be set at the same time as `authorization`, `bearerTokenSecret` or `oauth2`.
    #[serde(rename = "basicAuth", default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<ServiceMonitorSpecEndpointsBasicAuth>,
    /// bearerTokenFile defines the file to read bearer token for scraping the target.
    ///
    /// Deprecated: use `authorization` instead.
    #[serde(
        rename = "bearerTokenFile",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub bearer_token_file: Option<String>,
    /// bearerTokenSecret defines a key of a Secret containing the bearer token
    /// used by the client for authentication. The secret needs to be in the
    /// same namespace as the custom resource and readable by the Prometheus
    /// Operator.
    ///
    /// Cannot be set at the same time as `authorization`, `basicAuth` or `oauth2`.
    ///
    /// Deprecated: use `authorization` instead.
    #[rkb(map_type = atomic)]
    #[serde(
        rename = "bearerTokenSecret",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub bearer_token_secret: Option<ServiceMonitorSpecEndpointsBearerTokenSecret>,
    /// enableHttp2 can be used to disable HTTP2.
    #[serde(
        rename = "enableHttp2",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub enable_http2: Option<bool>,
    /// filterRunning when true, the pods which are not running (e.g. either in Failed or
    /// Succeeded state) are dropped during the target discovery.
    ///
    /// If unset, the filtering is enabled.
    ///
    /// More info: https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-phase
    #[serde(
        rename = "filterRunning",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub filter_running: Option<bool>,
    /// followRedirects defines whether the client should follow HTTP 3xx
    /// redirects.
    #[serde(
        rename = "followRedirects",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub follow_redirects: Option<bool>,
    /// honorLabels defines when true the metric's labels when they collide
    /// with the target's labels.
    #[serde(
        rename = "honorLabels",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub honor_labels: Option<bool>,
    /// honorTimestamps defines whether Prometheus preserves the timestamps
    /// when exposed by the target.
    #[serde(
        rename = "honorTimestamps",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub honor_timestamps: Option<bool>,
    /// interval at which Prometheus scrapes the metrics from the target.
    ///
    /// If empty, Prometheus uses the global scrape interval.
    #[rkb(
        pattern = "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// metricRelabelings defines the relabeling rules to apply to the
    /// samples before ingestion.
    #[serde(
        rename = "metricRelabelings",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub metric_relabelings: Option<Vec<ServiceMonitorSpecEndpointsMetricRelabelings>>,
    /// noProxy defines a comma-separated string that can contain IPs, CIDR notation, domain names
    /// that should be excluded from proxying. IP and domain names can
    /// contain port numbers.
    ///
    /// It requires Prometheus >= v2.43.0, Alertmanager >= v0.25.0 or Thanos >= v0.32.0.
    #[serde(rename = "noProxy", default, skip_serializing_if = "Option::is_none")]
    pub no_proxy: Option<String>,
    /// oauth2 defines the OAuth2 settings used by the client.
    ///
    /// It requires Prometheus >= 2.27.0.
    ///
    /// Cannot be set at the same time as `authorization`, `basicAuth` or `bearerTokenSecret`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth2: Option<ServiceMonitorSpecEndpointsOauth2>,
    /// params define optional HTTP URL parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<BTreeMap<String, Vec<String>>>,
    /// path defines the HTTP path from which to scrape for metrics.
    ///
    /// If empty, Prometheus uses the default value (e.g. `/metrics`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// port defines the name of the Service port which this endpoint refers to
    /// (e.g. `.spec.ports[].name`).
    ///
    /// It takes precedence over `targetPort`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<String>,
    /// proxyConnectHeader optionally specifies headers to send to
    /// proxies during CONNECT requests.
    ///
    /// It requires Prometheus >= v2.43.0, Alertmanager >= v0.25.0 or Thanos >= v0.32.0.
    #[rkb(map_type = atomic)]
    #[serde(
        rename = "proxyConnectHeader",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub proxy_connect_header:
        Option<BTreeMap<String, Vec<ServiceMonitorSpecEndpointsProxyConnectHeader>>>,
    /// proxyFromEnvironment defines whether to use the proxy configuration defined by environment variables (HTTP_PROXY, HTTPS_PROXY, and NO_PROXY).
    ///
    /// It requires Prometheus >= v2.43.0, Alertmanager >= v0.25.0 or Thanos >= v0.32.0.
    #[serde(
        rename = "proxyFromEnvironment",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub proxy_from_environment: Option<bool>,
    /// proxyUrl defines the HTTP proxy server to use.
    #[rkb(pattern = "^(http|https|socks5)://.+$")]
    #[serde(rename = "proxyUrl", default, skip_serializing_if = "Option::is_none")]
    pub proxy_url: Option<String>,
    /// relabelings defines the relabeling rules to apply the target's
    /// metadata labels.
    ///
    /// The Operator automatically adds relabelings for a few standard Kubernetes fields.
    ///
    /// The original scrape job's name is available via the `__tmp_prometheus_job_name` label.
    ///
    /// More info: https://prometheus.io/docs/prometheus/latest/configuration/configuration/#relabel_config
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relabelings: Option<Vec<ServiceMonitorSpecEndpointsRelabelings>>,
    /// scheme defines the HTTP scheme to use when scraping the metrics.
    #[rkb(enum_values = ["http", "https", "HTTP", "HTTPS"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// scrapeTimeout defines the timeout after which Prometheus considers the scrape to be failed.
    ///
    /// If empty, Prometheus uses the global scrape timeout unless it is less
    /// than the target's scrape interval value in which the latter is used.
    /// The value cannot be greater than the scrape interval otherwise the operator will reject the resource.
    #[rkb(
        pattern = "^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"
    )]
    #[serde(
        rename = "scrapeTimeout",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub scrape_timeout: Option<String>,
    /// targetPort defines the name or number of a container port on Pods selected
    /// by the Service.
    /// If a name, it matches against `.spec.containers[].ports[].name` of the Pods.
    /// If a number, it matches against `.spec.containers[].ports[].containerPort` of the Pods.
    #[serde(
        rename = "targetPort",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub target_port: Option<IntOrString>,
    /// tlsConfig defines TLS configuration used by the client.
    #[serde(rename = "tlsConfig", default, skip_serializing_if = "Option::is_none")]
    pub tls_config: Option<ServiceMonitorSpecEndpointsTlsConfig>,
    /// trackTimestampsStaleness defines whether Prometheus tracks staleness of
    /// the metrics that have an explicit timestamp present in scraped data.
    /// Has no effect if `honorTimestamps` is false.
    ///
    /// It requires Prometheus >= v2.48.0.
    #[serde(
        rename = "trackTimestampsStaleness",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub track_timestamps_staleness: Option<bool>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecNamespaceSelector {
    /// any defines the boolean describing whether all namespaces are selected in contrast to a
    /// list restricting them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub any: Option<bool>,
    /// matchNames defines the list of namespace names to select from.
    #[serde(
        rename = "matchNames",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub match_names: Option<Vec<String>>,
}

/// A label selector requirement is a selector that contains values, a key, and an operator that
/// relates the key and values.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecSelectorMatchExpressions {
    /// key is the label key that the selector applies to.
    pub key: String,
    /// operator represents a key's relationship to a set of values.
    /// Valid operators are In, NotIn, Exists and DoesNotExist.
    pub operator: String,
    /// values is an array of string values. If the operator is In or NotIn,
    /// the values array must be non-empty. If the operator is Exists or DoesNotExist,
    /// the values array must be empty. This array is replaced during a strategic
    /// merge patch.
    #[rkb(list_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<String>>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorSpecSelector {
    /// matchExpressions is a list of label selector requirements. The requirements are ANDed.
    #[rkb(list_type = atomic)]
    #[serde(
        rename = "matchExpressions",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub match_expressions: Option<Vec<ServiceMonitorSpecSelectorMatchExpressions>>,
    /// matchLabels is a map of {key,value} pairs. A single {key,value} in the matchLabels
    /// map is equivalent to an element of matchExpressions, whose key field is "key", the
    /// operator is "In", and the values array contains only "value". The requirements are ANDed.
    #[serde(
        rename = "matchLabels",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub match_labels: Option<BTreeMap<String, String>>,
}

/// ConfigResourceCondition describes the status of configuration resources linked to Prometheus, PrometheusAgent, Alertmanager or ThanosRuler.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorStatusBindingsConditions {
    /// lastTransitionTime defines the time of the last update to the current status property.
    #[rkb(format = "date-time")]
    #[serde(rename = "lastTransitionTime")]
    pub last_transition_time: String,
    /// message defines the human-readable message indicating details for the condition's last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// observedGeneration defines the .metadata.generation that the
    /// condition was set based upon. For instance, if `.metadata.generation` is
    /// currently 12, but the `.status.conditions[].observedGeneration` is 9, the
    /// condition is out of date with respect to the current state of the object.
    #[serde(
        rename = "observedGeneration",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub observed_generation: Option<i64>,
    /// reason for the condition's last transition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// status of the condition.
    #[rkb(min_length = 1)]
    pub status: String,
    /// type of the condition being reported.
    /// Currently, only "Accepted" is supported.
    #[rkb(enum_values = ["Accepted"], min_length = 1)]
    pub r#type: String,
}

/// WorkloadBinding is a link between a configuration resource and a workload resource.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ServiceMonitorStatusBindings {
    /// conditions defines the current state of the configuration resource when bound to the referenced Workload object.
    #[rkb(list_map_keys = ["type"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conditions: Option<Vec<ServiceMonitorStatusBindingsConditions>>,
    /// group defines the group of the referenced resource.
    #[rkb(enum_values = ["monitoring.coreos.com"])]
    pub group: String,
    /// name defines the name of the referenced object.
    #[rkb(min_length = 1)]
    pub name: String,
    /// namespace defines the namespace of the referenced object.
    #[rkb(min_length = 1)]
    pub namespace: String,
    /// resource defines the type of resource being referenced (e.g. Prometheus, PrometheusAgent, ThanosRuler or Alertmanager).
    #[rkb(enum_values = ["prometheuses", "prometheusagents", "thanosrulers", "alertmanagers"])]
    pub resource: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema rkb derives from these types is the external CRD's; the differences
    /// listed are what `#[rkb(...)]` cannot express, which the command reported.
    #[test]
    fn types_derive_the_external_crd() {
        let derived =
            rkb_runtime::crd::<ServiceMonitor>().unwrap_or_else(|error| panic!("{error}"));
        let external = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../config/external-crds/monitoring.coreos.com_servicemonitors.yaml"
        ));
        let left_out: &[(&str, &str)] = &[
            (
                ".spec.endpoints[].metricRelabelings[].sourceLabels[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
            (
                ".spec.endpoints[].relabelings[].sourceLabels[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
            (
                ".spec.scrapeProtocols[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
        ];
        rkb_runtime::testing::external::assert_same_schema(&derived, external, "v1", left_out);
    }
}
