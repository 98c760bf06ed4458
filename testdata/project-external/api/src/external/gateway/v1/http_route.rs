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

//! The HTTPRoute API (gateway.networking.k8s.io/v1), written by `rkb create api --external-crd` from the CRD in
//! config/external-crds/: another project defines this kind and owns its CRD, which
//! this project does not install. Run the command again (with --force) when the CRD
//! changes; the test below fails while these types derive another schema.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Spec defines the desired state of HTTPRoute.
#[rkb_runtime::api]
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[kube(
    group = "gateway.networking.k8s.io",
    version = "v1",
    kind = "HTTPRoute",
    plural = "httproutes",
    namespaced,
    status = "HTTPRouteStatus",
    annotation(
        "api-approved.kubernetes.io",
        "https://github.com/kubernetes-sigs/gateway-api/pull/4530"
    ),
    derive = "Default",
    derive = "PartialEq",
    doc = "HTTPRoute provides a way to route HTTP requests. This includes the capability\nto match requests by hostname, path, header, or query param. Filters can be\nused to specify additional processing steps. Backends specify where matching\nrequests should be routed."
)]
#[rkb(categories = ["gateway-api"], printcolumn(name = "Hostnames", type = string, json_path = ".spec.hostnames"), printcolumn(name = "Age", type = date, json_path = ".metadata.creationTimestamp"))]
pub struct HTTPRouteSpec {
    #[schemars(
        description = "Hostnames defines a set of hostnames that should match against the HTTP Host\nheader to select a HTTPRoute used to process the request. Implementations\nMUST ignore any port value specified in the HTTP Host header while\nperforming a match and (absent of any applicable header modification\nconfiguration) MUST forward this header unmodified to the backend.\n\nValid values for Hostnames are determined by RFC 1123 definition of a\nhostname with 2 notable exceptions:\n\n1. IPs are not allowed.\n2. A hostname may be prefixed with a wildcard label (`*.`). The wildcard\n   label must appear by itself as the first label.\n\nIf a hostname is specified by both the Listener and HTTPRoute, there\nmust be at least one intersecting hostname for the HTTPRoute to be\nattached to the Listener. For example:\n\n* A Listener with `test.example.com` as the hostname matches HTTPRoutes\n  that have either not specified any hostnames, or have specified at\n  least one of `test.example.com` or `*.example.com`.\n* A Listener with `*.example.com` as the hostname matches HTTPRoutes\n  that have either not specified any hostnames or have specified at least\n  one hostname that matches the Listener hostname. For example,\n  `*.example.com`, `test.example.com`, and `foo.test.example.com` would\n  all match. On the other hand, `example.com` and `test.example.net` would\n  not match.\n\nHostnames that are prefixed with a wildcard label (`*.`) are interpreted\nas a suffix match. That means that a match for `*.example.com` would match\nboth `test.example.com`, and `foo.test.example.com`, but not `example.com`.\n\nIf both the Listener and HTTPRoute have specified hostnames, any\nHTTPRoute hostnames that do not match the Listener hostname MUST be\nignored. For example, if a Listener specified `*.example.com`, and the\nHTTPRoute specified `test.example.com` and `test.example.net`,\n`test.example.net` must not be considered for a match.\n\nIf both the Listener and HTTPRoute have specified hostnames, and none\nmatch with the criteria above, then the HTTPRoute is not accepted. The\nimplementation must raise an 'Accepted' Condition with a status of\n`False` in the corresponding RouteParentStatus.\n\nIn the event that multiple HTTPRoutes specify intersecting hostnames (e.g.\noverlapping wildcard matching and exact matching hostnames), precedence must\nbe given to rules from the HTTPRoute with the largest number of:\n\n* Characters in a matching non-wildcard hostname.\n* Characters in a matching hostname.\n\nIf ties exist across multiple Routes, the matching precedence rules for\nHTTPRouteMatches takes over.\n\nSupport: Core"
    )]
    #[rkb(items(max_length = 253, min_length = 1, pattern = "^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"), max_items = 16, list_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostnames: Option<Vec<String>>,
    #[schemars(
        description = "ParentRefs references the resources (usually Gateways) that a Route wants\nto be attached to. Note that the referenced parent resource needs to\nallow this for the attachment to be complete. For Gateways, that means\nthe Gateway needs to allow attachment from Routes of this kind and\nnamespace. For Services, that means the Service must either be in the same\nnamespace for a \"producer\" route, or the mesh implementation must support\nand allow \"consumer\" routes for the referenced Service. ReferenceGrant is\nnot applicable for governing ParentRefs to Services - it is not possible to\ncreate a \"producer\" route for a Service in a different namespace from the\nRoute.\n\nThere are two kinds of parent resources with \"Core\" support:\n\n* Gateway (Gateway conformance profile)\n* Service (Mesh conformance profile, ClusterIP Services only)\n\nThis API may be extended in the future to support additional kinds of parent\nresources.\n\nParentRefs must be _distinct_. This means either that:\n\n* They select different objects.  If this is the case, then parentRef\n  entries are distinct. In terms of fields, this means that the\n  multi-part key defined by `group`, `kind`, `namespace`, and `name` must\n  be unique across all parentRef entries in the Route.\n* They do not select different objects, but for each optional field used,\n  each ParentRef that selects the same object must set the same set of\n  optional fields to different values. If one ParentRef sets a\n  combination of optional fields, all must set the same combination.\n\nSome examples:\n\n* If one ParentRef sets `sectionName`, all ParentRefs referencing the\n  same object must also set `sectionName`.\n* If one ParentRef sets `port`, all ParentRefs referencing the same\n  object must also set `port`.\n* If one ParentRef sets `sectionName` and `port`, all ParentRefs\n  referencing the same object must also set `sectionName` and `port`.\n\nIt is possible to separately reference multiple distinct objects that may\nbe collapsed by an implementation. For example, some implementations may\nchoose to merge compatible Gateway Listeners together. If that is the\ncase, the list of routes attached to those resources should also be\nmerged.\n\nNote that for ParentRefs that cross namespace boundaries, there are specific\nrules. Cross-namespace references are only valid if they are explicitly\nallowed by something in the namespace they are referring to. For example,\nGateway has the AllowedRoutes field, and ReferenceGrant provides a\ngeneric way to enable other kinds of cross-namespace reference."
    )]
    #[rkb(max_items = 32, list_type = atomic, validation(rule = "self.all(p1, self.all(p2, p1.group == p2.group && p1.kind == p2.kind && p1.name == p2.name && (((!has(p1.__namespace__) || p1.__namespace__ == '') && (!has(p2.__namespace__) || p2.__namespace__ == '')) || (has(p1.__namespace__) && has(p2.__namespace__) && p1.__namespace__ == p2.__namespace__ )) ? ((!has(p1.sectionName) || p1.sectionName == '') == (!has(p2.sectionName) || p2.sectionName == '')) : true))", message = "sectionName must be specified when parentRefs includes 2 or more references to the same parent"), validation(rule = "self.all(p1, self.exists_one(p2, p1.group == p2.group && p1.kind == p2.kind && p1.name == p2.name && (((!has(p1.__namespace__) || p1.__namespace__ == '') && (!has(p2.__namespace__) || p2.__namespace__ == '')) || (has(p1.__namespace__) && has(p2.__namespace__) && p1.__namespace__ == p2.__namespace__ )) && (((!has(p1.sectionName) || p1.sectionName == '') && (!has(p2.sectionName) || p2.sectionName == '')) || (has(p1.sectionName) && has(p2.sectionName) && p1.sectionName == p2.sectionName))))", message = "sectionName must be unique when parentRefs includes 2 or more references to the same parent"))]
    #[serde(
        rename = "parentRefs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub parent_refs: Option<Vec<HTTPRouteSpecParentRefs>>,
    /// Rules are a list of HTTP matchers, filters and actions.
    #[rkb(default = [{"matches":[{"path":{"type":"PathPrefix","value":"/"}}]}], max_items = 16, min_items = 1, list_type = atomic, validation(rule = "(self.size() > 0 ? self[0].matches.size() : 0) + (self.size() > 1 ? self[1].matches.size() : 0) + (self.size() > 2 ? self[2].matches.size() : 0) + (self.size() > 3 ? self[3].matches.size() : 0) + (self.size() > 4 ? self[4].matches.size() : 0) + (self.size() > 5 ? self[5].matches.size() : 0) + (self.size() > 6 ? self[6].matches.size() : 0) + (self.size() > 7 ? self[7].matches.size() : 0) + (self.size() > 8 ? self[8].matches.size() : 0) + (self.size() > 9 ? self[9].matches.size() : 0) + (self.size() > 10 ? self[10].matches.size() : 0) + (self.size() > 11 ? self[11].matches.size() : 0) + (self.size() > 12 ? self[12].matches.size() : 0) + (self.size() > 13 ? self[13].matches.size() : 0) + (self.size() > 14 ? self[14].matches.size() : 0) + (self.size() > 15 ? self[15].matches.size() : 0) <= 128", message = "While 16 rules and 64 matches per rule are allowed, the total number of matches across all rules in a route must be less than 128"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<Vec<HTTPRouteSpecRules>>,
}

/// Status defines the current state of HTTPRoute.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteStatus {
    /// Parents is a list of parent resources (usually Gateways) that are
    /// associated with the route, and the status of the route with respect to
    /// each parent. When this route attaches to a parent, the controller that
    /// manages the parent must add an entry to this list when the controller
    /// first sees the route and should update the entry as appropriate when the
    /// route or gateway is modified.
    ///
    /// Note that parent references that cannot be resolved by an implementation
    /// of this API will not be added to this list. Implementations of this API
    /// can only populate Route status for the Gateways/parent resources they are
    /// responsible for.
    ///
    /// A maximum of 32 Gateways will be represented in this list. An empty list
    /// means the route has not been attached to any Gateway.
    #[rkb(max_items = 32, list_type = atomic)]
    pub parents: Vec<HTTPRouteStatusParents>,
}

/// ParentReference identifies an API object (usually a Gateway) that can be considered
/// a parent of this resource (usually a route). There are two kinds of parent resources
/// with "Core" support:
///
/// * Gateway (Gateway conformance profile)
/// * Service (Mesh conformance profile, ClusterIP Services only)
///
/// This API may be extended in the future to support additional kinds of parent
/// resources.
///
/// The API object must be valid in the cluster; the Group and Kind must
/// be registered in the cluster for this reference to be valid.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecParentRefs {
    /// Group is the group of the referent.
    /// When unspecified, "gateway.networking.k8s.io" is inferred.
    /// To set the core API group (such as for a "Service" kind referent),
    /// Group must be explicitly set to "" (empty string).
    ///
    /// Support: Core
    #[rkb(
        default = "gateway.networking.k8s.io",
        max_length = 253,
        pattern = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind is kind of the referent.
    ///
    /// There are two kinds of parent resources with "Core" support:
    ///
    /// * Gateway (Gateway conformance profile)
    /// * Service (Mesh conformance profile, ClusterIP Services only)
    ///
    /// Support for other resources is Implementation-Specific.
    #[rkb(
        default = "Gateway",
        max_length = 63,
        min_length = 1,
        pattern = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name is the name of the referent.
    ///
    /// Support: Core
    #[rkb(max_length = 253, min_length = 1)]
    pub name: String,
    /// Namespace is the namespace of the referent. When unspecified, this refers
    /// to the local namespace of the Route.
    ///
    /// Note that there are specific rules for ParentRefs which cross namespace
    /// boundaries. Cross-namespace references are only valid if they are explicitly
    /// allowed by something in the namespace they are referring to. For example:
    /// Gateway has the AllowedRoutes field, and ReferenceGrant provides a
    /// generic way to enable any other kind of cross-namespace reference.
    ///
    /// Support: Core
    #[rkb(
        max_length = 63,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Port is the network port this Route targets. It can be interpreted
    /// differently based on the type of parent resource.
    ///
    /// When the parent resource is a Gateway, this targets all listeners
    /// listening on the specified port that also support this kind of Route(and
    /// select this Route). It's not recommended to set `Port` unless the
    /// networking behaviors specified in a Route must apply to a specific port
    /// as opposed to a listener(s) whose port(s) may be changed. When both Port
    /// and SectionName are specified, the name and port of the selected listener
    /// must match both specified values.
    ///
    /// Implementations MAY choose to support other parent resources.
    /// Implementations supporting other types of parent resources MUST clearly
    /// document how/if Port is interpreted.
    ///
    /// For the purpose of status, an attachment is considered successful as
    /// long as the parent resource accepts it partially. For example, Gateway
    /// listeners can restrict which Routes can attach to them by Route kind,
    /// namespace, or hostname. If 1 of 2 Gateway listeners accept attachment
    /// from the referencing Route, the Route MUST be considered successfully
    /// attached. If no Gateway listeners accept attachment from this Route,
    /// the Route MUST be considered detached from the Gateway.
    ///
    /// Support: Extended
    #[rkb(maximum = 65535, minimum = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// SectionName is the name of a section within the target resource. In the
    /// following resources, SectionName is interpreted as the following:
    ///
    /// * Gateway: Listener name. When both Port (experimental) and SectionName
    /// are specified, the name and port of the selected listener must match
    /// both specified values.
    /// * Service: Port name. When both Port (experimental) and SectionName
    /// are specified, the name and port of the selected listener must match
    /// both specified values.
    ///
    /// Implementations MAY choose to support attaching Routes to other resources.
    /// If that is the case, they MUST clearly document how SectionName is
    /// interpreted.
    ///
    /// When unspecified (empty string), this will reference the entire resource.
    /// For the purpose of status, an attachment is considered successful if at
    /// least one section in the parent resource accepts it. For example, Gateway
    /// listeners can restrict which Routes can attach to them by Route kind,
    /// namespace, or hostname. If 1 of 2 Gateway listeners accept attachment from
    /// the referencing Route, the Route MUST be considered successfully
    /// attached. If no Gateway listeners accept attachment from this Route, the
    /// Route MUST be considered detached from the Gateway.
    ///
    /// Support: Core
    #[rkb(
        max_length = 253,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(
        rename = "sectionName",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub section_name: Option<String>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersCors {
    /// AllowCredentials indicates whether the actual cross-origin request allows
    /// to include credentials.
    ///
    /// When set to true, the gateway will include the `Access-Control-Allow-Credentials`
    /// response header with value true (case-sensitive).
    ///
    /// When set to false or omitted the gateway will omit the header
    /// `Access-Control-Allow-Credentials` entirely (this is the standard CORS
    /// behavior).
    ///
    /// Support: Extended
    #[serde(
        rename = "allowCredentials",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub allow_credentials: Option<bool>,
    /// AllowHeaders indicates which HTTP request headers are supported for
    /// accessing the requested resource.
    ///
    /// Header names are not case-sensitive.
    ///
    /// Multiple header names in the value of the `Access-Control-Allow-Headers`
    /// response header are separated by a comma (",").
    ///
    /// When the `allowHeaders` field is configured with one or more headers, the
    /// gateway must return the `Access-Control-Allow-Headers` response header
    /// which value is present in the `allowHeaders` field.
    ///
    /// If any header name in the `Access-Control-Request-Headers` request header
    /// is not included in the list of header names specified by the response
    /// header `Access-Control-Allow-Headers`, it will present an error on the
    /// client side.
    ///
    /// If any header name in the `Access-Control-Allow-Headers` response header
    /// does not recognize by the client, it will also occur an error on the
    /// client side.
    ///
    /// A wildcard indicates that the requests with all HTTP headers are allowed.
    ///
    /// If the configuration contains the wildcard `*` in `allowHeaders` and
    /// `allowCredentials` is set to `false`, the `Access-Control-Allow-Headers`
    /// response header may either contain the wildcard `*` or echo the value
    /// of the `Access-Control-Request-Headers` request header.
    ///
    /// If the configuration contains the wildcard `*` in `allowHeaders` and
    /// `allowCredentials` is set to `true`, the gateway must not return `*`
    /// in the `Access-Control-Allow-Headers` response header. Instead, it must
    /// return one or more header names matching the value of the
    /// `Access-Control-Request-Headers` request header.
    /// If the `Access-Control-Request-Headers` header is not present in the
    /// request, the gateway must omit the `Access-Control-Allow-Headers`
    /// response header.
    ///
    /// Support: Extended
    #[rkb(items(max_length = 256, min_length = 1, pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"), max_items = 64, list_type = set, validation(rule = "!('*' in self && self.size() > 1)", message = "AllowHeaders cannot contain '*' alongside other methods"))]
    #[serde(
        rename = "allowHeaders",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub allow_headers: Option<Vec<String>>,
    /// AllowMethods indicates which HTTP methods are supported for accessing the
    /// requested resource.
    ///
    /// Valid values are any method defined by RFC9110, along with the special
    /// value `*`, which represents all HTTP methods are allowed.
    ///
    /// Method names are case-sensitive, so these values are also case-sensitive.
    /// (See https://www.rfc-editor.org/rfc/rfc2616#section-5.1.1)
    ///
    /// Multiple method names in the value of the `Access-Control-Allow-Methods`
    /// response header are separated by a comma (",").
    ///
    /// A CORS-safelisted method is a method that is `GET`, `HEAD`, or `POST`.
    /// (See https://fetch.spec.whatwg.org/#cors-safelisted-method) The
    /// CORS-safelisted methods are always allowed, regardless of whether they
    /// are specified in the `allowMethods` field.
    ///
    /// When the `allowMethods` field is configured with one or more methods, the
    /// gateway must return the `Access-Control-Allow-Methods` response header
    /// which value is present in the `allowMethods` field.
    ///
    /// If the HTTP method of the `Access-Control-Request-Method` request header
    /// is not included in the list of methods specified by the response header
    /// `Access-Control-Allow-Methods`, it will present an error on the client
    /// side.
    ///
    /// If the configuration contains the wildcard `*` in `allowMethods` and
    /// `allowCredentials` is set to `false`, the `Access-Control-Allow-Methods`
    /// response header may either contain the wildcard `*` or echo the value
    /// of the `Access-Control-Request-Method` request header.
    ///
    /// If the configuration contains the wildcard `*` in `allowMethods` and
    /// `allowCredentials` is set to `true`, the gateway must not return `*`
    /// in the `Access-Control-Allow-Methods` response header. Instead, it must
    /// return a single HTTP method matching the value of the
    /// `Access-Control-Request-Method` request header.
    /// If the `Access-Control-Request-Method` header is not present in the request,
    /// the gateway must omit the `Access-Control-Allow-Methods` response header.
    ///
    /// Support: Extended
    #[rkb(items(enum_values = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "*"]), max_items = 9, list_type = set, validation(rule = "!('*' in self && self.size() > 1)", message = "AllowMethods cannot contain '*' alongside other methods"))]
    #[serde(
        rename = "allowMethods",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub allow_methods: Option<Vec<String>>,
    #[schemars(
        description = "AllowOrigins indicates whether the response can be shared with requested\nresource from the given `Origin`.\n\nThe `Origin` consists of a scheme and a host, with an optional port, and\ntakes the form `<scheme>://<host>(:<port>)`.\n\nValid values for scheme are: `http` and `https`.\n\nValid values for port are any integer between 1 and 65535 (the list of\navailable TCP/UDP ports). Note that, if not included, port `80` is\nassumed for `http` scheme origins, and port `443` is assumed for `https`\norigins. This may affect origin matching.\n\nThe host part of the origin may contain the wildcard character `*`. These\nwildcard characters behave as follows:\n\n* `*` is a greedy match to the _left_, including any number of\n  DNS labels to the left of its position. This also means that\n  `*` will include any number of period `.` characters to the\n  left of its position.\n* A wildcard by itself matches all hosts.\n\nAn origin value that includes _only_ the `*` character indicates requests\nfrom all `Origin`s are allowed.\n\nWhen the `allowOrigins` field is configured with multiple origins, it\nmeans the server supports clients from multiple origins. If the request\n`Origin` matches the configured allowed origins, the gateway must return\nthe given `Origin` and sets value of the header\n`Access-Control-Allow-Origin` same as the `Origin` header provided by the\nclient.\n\nThe status code of a successful response to a \"preflight\" request is\nalways an OK status (i.e., 204 or 200).\n\nIf the request `Origin` does not match the configured allowed origins,\nthe gateway returns 204/200 response but doesn't set the relevant\ncross-origin response headers. Alternatively, the gateway responds with\n403 status to the \"preflight\" request is denied, coupled with omitting\nthe CORS headers. The cross-origin request fails on the client side.\nTherefore, the client doesn't attempt the actual cross-origin request.\n\nConversely, if the request `Origin` matches one of the configured\nallowed origins, the gateway sets the response header\n`Access-Control-Allow-Origin` to the same value as the `Origin`\nheader provided by the client.\n\nIf the configuration contains the wildcard `*` in `allowOrigins` and\n`allowCredentials` is set to `false`, the `Access-Control-Allow-Origin`\nresponse header may either contain the wildcard `*` or echo the value\nof the `Origin` request header.\n\nIf the configuration contains the wildcard `*` in `allowOrigins` and\n`allowCredentials` is set to `true`, the gateway must not return `*`\nin the `Access-Control-Allow-Origin` response header. Instead, it must\nreturn a single origin matching the value of the `Origin` request header.\n\nSupport: Extended"
    )]
    #[rkb(items(max_length = 253, min_length = 1, pattern = "(^\\*$)|(^(http(s)?):\\/\\/(((\\*\\.)?([a-zA-Z0-9\\-]+\\.)*[a-zA-Z0-9-]+|\\*)(:([0-9]{1,5}))?)$)"), max_items = 64, list_type = set, validation(rule = "!('*' in self && self.size() > 1)", message = "AllowOrigins cannot contain '*' alongside other origins"))]
    #[serde(
        rename = "allowOrigins",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub allow_origins: Option<Vec<String>>,
    /// ExposeHeaders indicates which HTTP response headers can be exposed
    /// to client-side scripts in response to a cross-origin request.
    ///
    /// A CORS-safelisted response header is an HTTP header in a CORS response
    /// that it is considered safe to expose to the client scripts.
    /// The CORS-safelisted response headers include the following headers:
    /// `Cache-Control`
    /// `Content-Language`
    /// `Content-Length`
    /// `Content-Type`
    /// `Expires`
    /// `Last-Modified`
    /// `Pragma`
    /// (See https://fetch.spec.whatwg.org/#cors-safelisted-response-header-name)
    /// The CORS-safelisted response headers are exposed to client by default.
    ///
    /// When an HTTP header name is specified using the `exposeHeaders` field,
    /// this additional header will be exposed as part of the response to the
    /// client.
    ///
    /// Header names are not case-sensitive.
    ///
    /// Multiple header names in the value of the `Access-Control-Expose-Headers`
    /// response header are separated by a comma (",").
    ///
    /// A wildcard indicates that the responses with all HTTP headers are exposed
    /// to clients.
    ///
    /// If the configuration contains the wildcard `*` in `exposeHeaders` and
    /// `allowCredentials` is set to `false`, the `Access-Control-Expose-Headers`
    /// response header can contain the wildcard `*`.
    ///
    /// If the configuration contains the wildcard `*` in `exposeHeaders` and
    /// `allowCredentials` is set to `true`, the gateway cannot use the `*`
    /// in the `Access-Control-Expose-Headers` response header.
    ///
    /// Support: Extended
    #[rkb(items(max_length = 256, min_length = 1, pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"), max_items = 64, list_type = set)]
    #[serde(
        rename = "exposeHeaders",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub expose_headers: Option<Vec<String>>,
    /// MaxAge indicates the duration (in seconds) for the client to cache the
    /// results of a "preflight" request.
    ///
    /// The information provided by the `Access-Control-Allow-Methods` and
    /// `Access-Control-Allow-Headers` response headers can be cached by the
    /// client until the time specified by `Access-Control-Max-Age` elapses.
    ///
    /// The default value of `Access-Control-Max-Age` response header is 5
    /// (seconds).
    ///
    /// When the `MaxAge` field is unspecified, the gateway sets the response
    /// header "Access-Control-Max-Age: 5" by default.
    #[rkb(default = 5, minimum = 1)]
    #[serde(rename = "maxAge", default, skip_serializing_if = "Option::is_none")]
    pub max_age: Option<i32>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersExtensionRef {
    /// Group is the group of the referent. For example, "gateway.networking.k8s.io".
    /// When unspecified or empty string, core API group is inferred.
    #[rkb(
        max_length = 253,
        pattern = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    pub group: String,
    /// Kind is kind of the referent. For example "HTTPRoute" or "Service".
    #[rkb(
        max_length = 63,
        min_length = 1,
        pattern = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
    )]
    pub kind: String,
    /// Name is the name of the referent.
    #[rkb(max_length = 253, min_length = 1)]
    pub name: String,
}

/// HTTPHeader represents an HTTP Header name and value as defined by RFC 7230.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersRequestHeaderModifierAdd {
    /// Name is the name of the HTTP Header to be matched. Name matching MUST be
    /// case-insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).
    ///
    /// If multiple entries specify equivalent header names, the first entry with
    /// an equivalent name MUST be considered for a match. Subsequent entries
    /// with an equivalent header name MUST be ignored. Due to the
    /// case-insensitivity of header names, "foo" and "Foo" are considered
    /// equivalent.
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Value is the value of HTTP Header to be matched.
    #[rkb(max_length = 4096, min_length = 1)]
    pub value: String,
}

/// HTTPHeader represents an HTTP Header name and value as defined by RFC 7230.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersRequestHeaderModifierSet {
    /// Name is the name of the HTTP Header to be matched. Name matching MUST be
    /// case-insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).
    ///
    /// If multiple entries specify equivalent header names, the first entry with
    /// an equivalent name MUST be considered for a match. Subsequent entries
    /// with an equivalent header name MUST be ignored. Due to the
    /// case-insensitivity of header names, "foo" and "Foo" are considered
    /// equivalent.
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Value is the value of HTTP Header to be matched.
    #[rkb(max_length = 4096, min_length = 1)]
    pub value: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersRequestHeaderModifier {
    #[schemars(
        description = "Add adds the given header(s) (name, value) to the request\nbefore the action. It appends to any existing values associated\nwith the header name.\n\nInput:\n  GET /foo HTTP/1.1\n  my-header: foo\n\nConfig:\n  add:\n  - name: \"my-header\"\n    value: \"bar,baz\"\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header: foo,bar,baz"
    )]
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add: Option<Vec<HTTPRouteSpecRulesBackendRefsFiltersRequestHeaderModifierAdd>>,
    #[schemars(
        description = "Remove the given header(s) from the HTTP request before the action. The\nvalue of Remove is a list of HTTP header names. Note that the header\nnames are case-insensitive (see\nhttps://datatracker.ietf.org/doc/html/rfc2616#section-4.2).\n\nInput:\n  GET /foo HTTP/1.1\n  my-header1: foo\n  my-header2: bar\n  my-header3: baz\n\nConfig:\n  remove: [\"my-header1\", \"my-header3\"]\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header2: bar"
    )]
    #[rkb(max_items = 16, list_type = set)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove: Option<Vec<String>>,
    #[schemars(
        description = "Set overwrites the request with the given header (name, value)\nbefore the action.\n\nInput:\n  GET /foo HTTP/1.1\n  my-header: foo\n\nConfig:\n  set:\n  - name: \"my-header\"\n    value: \"bar\"\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header: bar"
    )]
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<Vec<HTTPRouteSpecRulesBackendRefsFiltersRequestHeaderModifierSet>>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersRequestMirrorBackendRef {
    /// Group is the group of the referent. For example, "gateway.networking.k8s.io".
    /// When unspecified or empty string, core API group is inferred.
    #[rkb(
        default = "",
        max_length = 253,
        pattern = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind is the Kubernetes resource kind of the referent. For example
    /// "Service".
    ///
    /// Defaults to "Service" when not specified.
    ///
    /// ExternalName services can refer to CNAME DNS records that may live
    /// outside of the cluster and as such are difficult to reason about in
    /// terms of conformance. They also may not be safe to forward to (see
    /// CVE-2021-25740 for more information). Implementations SHOULD NOT
    /// support ExternalName Services.
    ///
    /// Support: Core (Services with a type other than ExternalName)
    ///
    /// Support: Implementation-specific (Services with type ExternalName)
    #[rkb(
        default = "Service",
        max_length = 63,
        min_length = 1,
        pattern = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name is the name of the referent.
    #[rkb(max_length = 253, min_length = 1)]
    pub name: String,
    /// Namespace is the namespace of the backend. When unspecified, the local
    /// namespace is inferred.
    ///
    /// Note that when a namespace different than the local namespace is specified,
    /// a ReferenceGrant object is required in the referent namespace to allow that
    /// namespace's owner to accept the reference. See the ReferenceGrant
    /// documentation for details.
    ///
    /// Support: Core
    #[rkb(
        max_length = 63,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Port specifies the destination port number to use for this resource.
    /// Port is required when the referent is a Kubernetes Service. In this
    /// case, the port number is the service port number, not the target port.
    /// For other resources, destination port might be derived from the referent
    /// resource or this field.
    #[rkb(maximum = 65535, minimum = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersRequestMirrorFraction {
    #[rkb(default = 100, minimum = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denominator: Option<i32>,
    #[rkb(minimum = 0)]
    pub numerator: i32,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersRequestMirror {
    /// BackendRef references a resource where mirrored requests are sent.
    ///
    /// Mirrored requests must be sent only to a single destination endpoint
    /// within this BackendRef, irrespective of how many endpoints are present
    /// within this BackendRef.
    ///
    /// If the referent cannot be found, this BackendRef is invalid and must be
    /// dropped from the Gateway. The controller must ensure the "ResolvedRefs"
    /// condition on the Route status is set to `status: False` and not configure
    /// this backend in the underlying implementation.
    ///
    /// If there is a cross-namespace reference to an *existing* object
    /// that is not allowed by a ReferenceGrant, the controller must ensure the
    /// "ResolvedRefs"  condition on the Route is set to `status: False`,
    /// with the "RefNotPermitted" reason and not configure this backend in the
    /// underlying implementation.
    ///
    /// In either error case, the Message of the `ResolvedRefs` Condition
    /// should be used to provide more detail about the problem.
    ///
    /// Support: Extended for Kubernetes Service
    ///
    /// Support: Implementation-specific for any other resource
    ///
    /// If the backend service requires TLS, use BackendTLSPolicy to tell the
    /// implementation to supply the TLS details to be used to connect to that
    /// backend.
    #[rkb(validation(
        rule = "(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true",
        message = "Must have port for Service reference"
    ))]
    #[serde(rename = "backendRef")]
    pub backend_ref: HTTPRouteSpecRulesBackendRefsFiltersRequestMirrorBackendRef,
    /// Fraction represents the fraction of requests that should be
    /// mirrored to BackendRef.
    ///
    /// Only one of Fraction or Percent may be specified. If neither field
    /// is specified, 100% of requests will be mirrored.
    #[rkb(validation(
        rule = "self.numerator <= self.denominator",
        message = "numerator must be less than or equal to denominator"
    ))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<HTTPRouteSpecRulesBackendRefsFiltersRequestMirrorFraction>,
    /// Percent represents the percentage of requests that should be
    /// mirrored to BackendRef. Its minimum value is 0 (indicating 0% of
    /// requests) and its maximum value is 100 (indicating 100% of requests).
    ///
    /// Only one of Fraction or Percent may be specified. If neither field
    /// is specified, 100% of requests will be mirrored.
    #[rkb(maximum = 100, minimum = 0)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<i32>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersRequestRedirectPath {
    /// ReplaceFullPath specifies the value with which to replace the full path
    /// of a request during a rewrite or redirect.
    #[rkb(max_length = 1024)]
    #[serde(
        rename = "replaceFullPath",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub replace_full_path: Option<String>,
    /// ReplacePrefixMatch specifies the value with which to replace the prefix
    /// match of a request during a rewrite or redirect. For example, a request
    /// to "/foo/bar" with a prefix match of "/foo" and a ReplacePrefixMatch
    /// of "/xyz" would be modified to "/xyz/bar".
    ///
    /// Note that this matches the behavior of the PathPrefix match type. This
    /// matches full path elements. A path element refers to the list of labels
    /// in the path split by the `/` separator. When specified, a trailing `/` is
    /// ignored. For example, the paths `/abc`, `/abc/`, and `/abc/def` would all
    /// match the prefix `/abc`, but the path `/abcd` would not.
    ///
    /// ReplacePrefixMatch is only compatible with a `PathPrefix` HTTPRouteMatch.
    /// Using any other HTTPRouteMatch type on the same HTTPRouteRule will result in
    /// the implementation setting the Accepted Condition for the Route to `status: False`.
    ///
    /// Request Path | Prefix Match | Replace Prefix | Modified Path
    #[rkb(max_length = 1024)]
    #[serde(
        rename = "replacePrefixMatch",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub replace_prefix_match: Option<String>,
    /// Type defines the type of path modifier. Additional types may be
    /// added in a future release of the API.
    ///
    /// Note that values may be added to this enum, implementations
    /// must ensure that unknown values will not cause a crash.
    ///
    /// Unknown values here must result in the implementation setting the
    /// Accepted Condition for the Route to `status: False`, with a
    /// Reason of `UnsupportedValue`.
    #[rkb(enum_values = ["ReplaceFullPath", "ReplacePrefixMatch"])]
    pub r#type: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersRequestRedirect {
    /// Hostname is the hostname to be used in the value of the `Location`
    /// header in the response.
    /// When empty, the hostname in the `Host` header of the request is used.
    ///
    /// Support: Core
    #[rkb(
        max_length = 253,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Path defines parameters used to modify the path of the incoming request.
    /// The modified path is then used to construct the `Location` header. When
    /// empty, the request path is used as-is.
    ///
    /// Support: Extended
    #[rkb(
        validation(
            rule = "self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true",
            message = "replaceFullPath must be specified when type is set to 'ReplaceFullPath'"
        ),
        validation(
            rule = "has(self.replaceFullPath) ? self.type == 'ReplaceFullPath' : true",
            message = "type must be 'ReplaceFullPath' when replaceFullPath is set"
        ),
        validation(
            rule = "self.type == 'ReplacePrefixMatch' ? has(self.replacePrefixMatch) : true",
            message = "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'"
        ),
        validation(
            rule = "has(self.replacePrefixMatch) ? self.type == 'ReplacePrefixMatch' : true",
            message = "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set"
        )
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<HTTPRouteSpecRulesBackendRefsFiltersRequestRedirectPath>,
    #[schemars(
        description = "Port is the port to be used in the value of the `Location`\nheader in the response.\n\nIf no port is specified, the redirect port MUST be derived using the\nfollowing rules:\n\n* If redirect scheme is not-empty, the redirect port MUST be the well-known\n  port associated with the redirect scheme. Specifically \"http\" to port 80\n  and \"https\" to port 443. If the redirect scheme does not have a\n  well-known port, the listener port of the Gateway SHOULD be used.\n* If redirect scheme is empty, the redirect port MUST be the Gateway\n  Listener port.\n\nImplementations SHOULD NOT add the port number in the 'Location'\nheader in the following cases:\n\n* A Location header that will use HTTP (whether that is determined via\n  the Listener protocol or the Scheme field) _and_ use port 80.\n* A Location header that will use HTTPS (whether that is determined via\n  the Listener protocol or the Scheme field) _and_ use port 443.\n\nSupport: Extended"
    )]
    #[rkb(maximum = 65535, minimum = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// Scheme is the scheme to be used in the value of the `Location` header in
    /// the response. When empty, the scheme of the request is used.
    ///
    /// Scheme redirects can affect the port of the redirect, for more information,
    /// refer to the documentation for the port field of this filter.
    ///
    /// Note that values may be added to this enum, implementations
    /// must ensure that unknown values will not cause a crash.
    ///
    /// Unknown values here must result in the implementation setting the
    /// Accepted Condition for the Route to `status: False`, with a
    /// Reason of `UnsupportedValue`.
    ///
    /// Support: Extended
    #[rkb(enum_values = ["http", "https"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// StatusCode is the HTTP status code to be used in response.
    ///
    /// Note that values may be added to this enum, implementations
    /// must ensure that unknown values will not cause a crash.
    ///
    /// Unknown values here must result in the implementation setting the
    /// Accepted Condition for the Route to `status: False`, with a
    /// Reason of `UnsupportedValue`.
    ///
    /// Support: statusCode 301 and 302 are Core; all others are Extended.
    #[rkb(default = 302, enum_values = [301, 302, 303, 307, 308])]
    #[schemars(schema_with = "integer")]
    #[serde(
        rename = "statusCode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub status_code: Option<i64>,
}

/// HTTPHeader represents an HTTP Header name and value as defined by RFC 7230.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersResponseHeaderModifierAdd {
    /// Name is the name of the HTTP Header to be matched. Name matching MUST be
    /// case-insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).
    ///
    /// If multiple entries specify equivalent header names, the first entry with
    /// an equivalent name MUST be considered for a match. Subsequent entries
    /// with an equivalent header name MUST be ignored. Due to the
    /// case-insensitivity of header names, "foo" and "Foo" are considered
    /// equivalent.
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Value is the value of HTTP Header to be matched.
    #[rkb(max_length = 4096, min_length = 1)]
    pub value: String,
}

/// HTTPHeader represents an HTTP Header name and value as defined by RFC 7230.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersResponseHeaderModifierSet {
    /// Name is the name of the HTTP Header to be matched. Name matching MUST be
    /// case-insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).
    ///
    /// If multiple entries specify equivalent header names, the first entry with
    /// an equivalent name MUST be considered for a match. Subsequent entries
    /// with an equivalent header name MUST be ignored. Due to the
    /// case-insensitivity of header names, "foo" and "Foo" are considered
    /// equivalent.
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Value is the value of HTTP Header to be matched.
    #[rkb(max_length = 4096, min_length = 1)]
    pub value: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersResponseHeaderModifier {
    #[schemars(
        description = "Add adds the given header(s) (name, value) to the request\nbefore the action. It appends to any existing values associated\nwith the header name.\n\nInput:\n  GET /foo HTTP/1.1\n  my-header: foo\n\nConfig:\n  add:\n  - name: \"my-header\"\n    value: \"bar,baz\"\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header: foo,bar,baz"
    )]
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add: Option<Vec<HTTPRouteSpecRulesBackendRefsFiltersResponseHeaderModifierAdd>>,
    #[schemars(
        description = "Remove the given header(s) from the HTTP request before the action. The\nvalue of Remove is a list of HTTP header names. Note that the header\nnames are case-insensitive (see\nhttps://datatracker.ietf.org/doc/html/rfc2616#section-4.2).\n\nInput:\n  GET /foo HTTP/1.1\n  my-header1: foo\n  my-header2: bar\n  my-header3: baz\n\nConfig:\n  remove: [\"my-header1\", \"my-header3\"]\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header2: bar"
    )]
    #[rkb(max_items = 16, list_type = set)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove: Option<Vec<String>>,
    #[schemars(
        description = "Set overwrites the request with the given header (name, value)\nbefore the action.\n\nInput:\n  GET /foo HTTP/1.1\n  my-header: foo\n\nConfig:\n  set:\n  - name: \"my-header\"\n    value: \"bar\"\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header: bar"
    )]
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<Vec<HTTPRouteSpecRulesBackendRefsFiltersResponseHeaderModifierSet>>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersUrlRewritePath {
    /// ReplaceFullPath specifies the value with which to replace the full path
    /// of a request during a rewrite or redirect.
    #[rkb(max_length = 1024)]
    #[serde(
        rename = "replaceFullPath",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub replace_full_path: Option<String>,
    /// ReplacePrefixMatch specifies the value with which to replace the prefix
    /// match of a request during a rewrite or redirect. For example, a request
    /// to "/foo/bar" with a prefix match of "/foo" and a ReplacePrefixMatch
    /// of "/xyz" would be modified to "/xyz/bar".
    ///
    /// Note that this matches the behavior of the PathPrefix match type. This
    /// matches full path elements. A path element refers to the list of labels
    /// in the path split by the `/` separator. When specified, a trailing `/` is
    /// ignored. For example, the paths `/abc`, `/abc/`, and `/abc/def` would all
    /// match the prefix `/abc`, but the path `/abcd` would not.
    ///
    /// ReplacePrefixMatch is only compatible with a `PathPrefix` HTTPRouteMatch.
    /// Using any other HTTPRouteMatch type on the same HTTPRouteRule will result in
    /// the implementation setting the Accepted Condition for the Route to `status: False`.
    ///
    /// Request Path | Prefix Match | Replace Prefix | Modified Path
    #[rkb(max_length = 1024)]
    #[serde(
        rename = "replacePrefixMatch",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub replace_prefix_match: Option<String>,
    /// Type defines the type of path modifier. Additional types may be
    /// added in a future release of the API.
    ///
    /// Note that values may be added to this enum, implementations
    /// must ensure that unknown values will not cause a crash.
    ///
    /// Unknown values here must result in the implementation setting the
    /// Accepted Condition for the Route to `status: False`, with a
    /// Reason of `UnsupportedValue`.
    #[rkb(enum_values = ["ReplaceFullPath", "ReplacePrefixMatch"])]
    pub r#type: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesBackendRefsFiltersUrlRewrite {
    /// Hostname is the value to be used to replace the Host header value during
    /// forwarding.
    ///
    /// Support: Extended
    #[rkb(
        max_length = 253,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Path defines a path rewrite.
    ///
    /// Support: Extended
    #[rkb(
        validation(
            rule = "self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true",
            message = "replaceFullPath must be specified when type is set to 'ReplaceFullPath'"
        ),
        validation(
            rule = "has(self.replaceFullPath) ? self.type == 'ReplaceFullPath' : true",
            message = "type must be 'ReplaceFullPath' when replaceFullPath is set"
        ),
        validation(
            rule = "self.type == 'ReplacePrefixMatch' ? has(self.replacePrefixMatch) : true",
            message = "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'"
        ),
        validation(
            rule = "has(self.replacePrefixMatch) ? self.type == 'ReplacePrefixMatch' : true",
            message = "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set"
        )
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<HTTPRouteSpecRulesBackendRefsFiltersUrlRewritePath>,
}

/// HTTPRouteFilter defines processing steps that must be completed during the
/// request or response lifecycle. HTTPRouteFilters are meant as an extension
/// point to express processing that may be done in Gateway implementations. Some
/// examples include request or response modification, implementing
/// authentication strategies, rate-limiting, and traffic shaping. API
/// guarantee/conformance is defined based on the type of the filter.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[rkb(
    validation(
        rule = "!(has(self.cors) && self.type != 'CORS')",
        message = "filter.cors must be nil if the filter.type is not CORS"
    ),
    validation(
        rule = "!(!has(self.cors) && self.type == 'CORS')",
        message = "filter.cors must be specified for CORS filter.type"
    ),
    validation(
        rule = "!(has(self.requestHeaderModifier) && self.type != 'RequestHeaderModifier')",
        message = "filter.requestHeaderModifier must be nil if the filter.type is not RequestHeaderModifier"
    ),
    validation(
        rule = "!(!has(self.requestHeaderModifier) && self.type == 'RequestHeaderModifier')",
        message = "filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type"
    ),
    validation(
        rule = "!(has(self.responseHeaderModifier) && self.type != 'ResponseHeaderModifier')",
        message = "filter.responseHeaderModifier must be nil if the filter.type is not ResponseHeaderModifier"
    ),
    validation(
        rule = "!(!has(self.responseHeaderModifier) && self.type == 'ResponseHeaderModifier')",
        message = "filter.responseHeaderModifier must be specified for ResponseHeaderModifier filter.type"
    ),
    validation(
        rule = "!(has(self.requestMirror) && self.type != 'RequestMirror')",
        message = "filter.requestMirror must be nil if the filter.type is not RequestMirror"
    ),
    validation(
        rule = "!(!has(self.requestMirror) && self.type == 'RequestMirror')",
        message = "filter.requestMirror must be specified for RequestMirror filter.type"
    ),
    validation(
        rule = "!(has(self.requestRedirect) && self.type != 'RequestRedirect')",
        message = "filter.requestRedirect must be nil if the filter.type is not RequestRedirect"
    ),
    validation(
        rule = "!(!has(self.requestRedirect) && self.type == 'RequestRedirect')",
        message = "filter.requestRedirect must be specified for RequestRedirect filter.type"
    ),
    validation(
        rule = "!(has(self.urlRewrite) && self.type != 'URLRewrite')",
        message = "filter.urlRewrite must be nil if the filter.type is not URLRewrite"
    ),
    validation(
        rule = "!(!has(self.urlRewrite) && self.type == 'URLRewrite')",
        message = "filter.urlRewrite must be specified for URLRewrite filter.type"
    ),
    validation(
        rule = "!(has(self.extensionRef) && self.type != 'ExtensionRef')",
        message = "filter.extensionRef must be nil if the filter.type is not ExtensionRef"
    ),
    validation(
        rule = "!(!has(self.extensionRef) && self.type == 'ExtensionRef')",
        message = "filter.extensionRef must be specified for ExtensionRef filter.type"
    )
)]
pub struct HTTPRouteSpecRulesBackendRefsFilters {
    /// CORS defines a schema for a filter that responds to the
    /// cross-origin request based on HTTP response header.
    ///
    /// Support: Extended
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cors: Option<HTTPRouteSpecRulesBackendRefsFiltersCors>,
    /// ExtensionRef is an optional, implementation-specific extension to the
    /// "filter" behavior.  For example, resource "myroutefilter" in group
    /// "networking.example.net"). ExtensionRef MUST NOT be used for core and
    /// extended filters.
    ///
    /// This filter can be used multiple times within the same rule.
    ///
    /// Support: Implementation-specific
    #[serde(
        rename = "extensionRef",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub extension_ref: Option<HTTPRouteSpecRulesBackendRefsFiltersExtensionRef>,
    /// RequestHeaderModifier defines a schema for a filter that modifies request
    /// headers.
    ///
    /// Support: Core
    #[serde(
        rename = "requestHeaderModifier",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub request_header_modifier: Option<HTTPRouteSpecRulesBackendRefsFiltersRequestHeaderModifier>,
    /// RequestMirror defines a schema for a filter that mirrors requests.
    /// Requests are sent to the specified destination, but responses from
    /// that destination are ignored.
    ///
    /// This filter can be used multiple times within the same rule. Note that
    /// not all implementations will be able to support mirroring to multiple
    /// backends.
    ///
    /// Support: Extended
    #[rkb(validation(
        rule = "!(has(self.percent) && has(self.fraction))",
        message = "Only one of percent or fraction may be specified in HTTPRequestMirrorFilter"
    ))]
    #[serde(
        rename = "requestMirror",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub request_mirror: Option<HTTPRouteSpecRulesBackendRefsFiltersRequestMirror>,
    /// RequestRedirect defines a schema for a filter that responds to the
    /// request with an HTTP redirection.
    ///
    /// Support: Core
    #[serde(
        rename = "requestRedirect",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub request_redirect: Option<HTTPRouteSpecRulesBackendRefsFiltersRequestRedirect>,
    /// ResponseHeaderModifier defines a schema for a filter that modifies response
    /// headers.
    ///
    /// Support: Extended
    #[serde(
        rename = "responseHeaderModifier",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub response_header_modifier:
        Option<HTTPRouteSpecRulesBackendRefsFiltersResponseHeaderModifier>,
    #[schemars(
        description = "Type identifies the type of filter to apply. As with other API fields,\ntypes are classified into three conformance levels:\n\n- Core: Filter types and their corresponding configuration defined by\n  \"Support: Core\" in this package, e.g. \"RequestHeaderModifier\". All\n  implementations must support core filters.\n\n- Extended: Filter types and their corresponding configuration defined by\n  \"Support: Extended\" in this package, e.g. \"RequestMirror\". Implementers\n  are encouraged to support extended filters.\n\n- Implementation-specific: Filters that are defined and supported by\n  specific vendors.\n  In the future, filters showing convergence in behavior across multiple\n  implementations will be considered for inclusion in extended or core\n  conformance levels. Filter-specific configuration for such filters\n  is specified using the ExtensionRef field. `Type` should be set to\n  \"ExtensionRef\" for custom filters.\n\nImplementers are encouraged to define custom implementation types to\nextend the core API with implementation-specific behavior.\n\nIf a reference to a custom filter type cannot be resolved, the filter\nMUST NOT be skipped. Instead, requests that would have been processed by\nthat filter MUST receive a HTTP error response.\n\nNote that values may be added to this enum, implementations\nmust ensure that unknown values will not cause a crash.\n\nUnknown values here must result in the implementation setting the\nAccepted Condition for the Route to `status: False`, with a\nReason of `UnsupportedValue`."
    )]
    #[rkb(enum_values = ["RequestHeaderModifier", "ResponseHeaderModifier", "RequestMirror", "RequestRedirect", "URLRewrite", "ExtensionRef", "CORS"])]
    pub r#type: String,
    /// URLRewrite defines a schema for a filter that modifies a request during forwarding.
    ///
    /// Support: Extended
    #[serde(
        rename = "urlRewrite",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub url_rewrite: Option<HTTPRouteSpecRulesBackendRefsFiltersUrlRewrite>,
}

/// HTTPBackendRef defines how a HTTPRoute forwards a HTTP request.
///
/// Note that when a namespace different than the local namespace is specified, a
/// ReferenceGrant object is required in the referent namespace to allow that
/// namespace's owner to accept the reference. See the ReferenceGrant
/// documentation for details.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[rkb(validation(
    rule = "(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true",
    message = "Must have port for Service reference"
))]
pub struct HTTPRouteSpecRulesBackendRefs {
    /// Filters defined at this level should be executed if and only if the
    /// request is being forwarded to the backend defined here.
    ///
    /// Support: Implementation-specific (For broader support of filters, use the
    /// Filters field in HTTPRouteRule.)
    #[rkb(max_items = 16, list_type = atomic, validation(rule = "!(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))", message = "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both"), validation(rule = "self.filter(f, f.type == 'CORS').size() <= 1", message = "CORS filter cannot be repeated"), validation(rule = "self.filter(f, f.type == 'RequestHeaderModifier').size() <= 1", message = "RequestHeaderModifier filter cannot be repeated"), validation(rule = "self.filter(f, f.type == 'ResponseHeaderModifier').size() <= 1", message = "ResponseHeaderModifier filter cannot be repeated"), validation(rule = "self.filter(f, f.type == 'RequestRedirect').size() <= 1", message = "RequestRedirect filter cannot be repeated"), validation(rule = "self.filter(f, f.type == 'URLRewrite').size() <= 1", message = "URLRewrite filter cannot be repeated"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<HTTPRouteSpecRulesBackendRefsFilters>>,
    /// Group is the group of the referent. For example, "gateway.networking.k8s.io".
    /// When unspecified or empty string, core API group is inferred.
    #[rkb(
        default = "",
        max_length = 253,
        pattern = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind is the Kubernetes resource kind of the referent. For example
    /// "Service".
    ///
    /// Defaults to "Service" when not specified.
    ///
    /// ExternalName services can refer to CNAME DNS records that may live
    /// outside of the cluster and as such are difficult to reason about in
    /// terms of conformance. They also may not be safe to forward to (see
    /// CVE-2021-25740 for more information). Implementations SHOULD NOT
    /// support ExternalName Services.
    ///
    /// Support: Core (Services with a type other than ExternalName)
    ///
    /// Support: Implementation-specific (Services with type ExternalName)
    #[rkb(
        default = "Service",
        max_length = 63,
        min_length = 1,
        pattern = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name is the name of the referent.
    #[rkb(max_length = 253, min_length = 1)]
    pub name: String,
    /// Namespace is the namespace of the backend. When unspecified, the local
    /// namespace is inferred.
    ///
    /// Note that when a namespace different than the local namespace is specified,
    /// a ReferenceGrant object is required in the referent namespace to allow that
    /// namespace's owner to accept the reference. See the ReferenceGrant
    /// documentation for details.
    ///
    /// Support: Core
    #[rkb(
        max_length = 63,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Port specifies the destination port number to use for this resource.
    /// Port is required when the referent is a Kubernetes Service. In this
    /// case, the port number is the service port number, not the target port.
    /// For other resources, destination port might be derived from the referent
    /// resource or this field.
    #[rkb(maximum = 65535, minimum = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// Weight specifies the proportion of requests forwarded to the referenced
    /// backend. This is computed as weight/(sum of all weights in this
    /// BackendRefs list). For non-zero values, there may be some epsilon from
    /// the exact proportion defined here depending on the precision an
    /// implementation supports. Weight is not a percentage and the sum of
    /// weights does not need to equal 100.
    ///
    /// If only one backend is specified and it has a weight greater than 0, 100%
    /// of the traffic is forwarded to that backend. If weight is set to 0, no
    /// traffic should be forwarded for this entry. If unspecified, weight
    /// defaults to 1.
    ///
    /// Support for this field varies based on the context where used.
    #[rkb(default = 1, maximum = 1000000, minimum = 0)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersCors {
    /// AllowCredentials indicates whether the actual cross-origin request allows
    /// to include credentials.
    ///
    /// When set to true, the gateway will include the `Access-Control-Allow-Credentials`
    /// response header with value true (case-sensitive).
    ///
    /// When set to false or omitted the gateway will omit the header
    /// `Access-Control-Allow-Credentials` entirely (this is the standard CORS
    /// behavior).
    ///
    /// Support: Extended
    #[serde(
        rename = "allowCredentials",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub allow_credentials: Option<bool>,
    /// AllowHeaders indicates which HTTP request headers are supported for
    /// accessing the requested resource.
    ///
    /// Header names are not case-sensitive.
    ///
    /// Multiple header names in the value of the `Access-Control-Allow-Headers`
    /// response header are separated by a comma (",").
    ///
    /// When the `allowHeaders` field is configured with one or more headers, the
    /// gateway must return the `Access-Control-Allow-Headers` response header
    /// which value is present in the `allowHeaders` field.
    ///
    /// If any header name in the `Access-Control-Request-Headers` request header
    /// is not included in the list of header names specified by the response
    /// header `Access-Control-Allow-Headers`, it will present an error on the
    /// client side.
    ///
    /// If any header name in the `Access-Control-Allow-Headers` response header
    /// does not recognize by the client, it will also occur an error on the
    /// client side.
    ///
    /// A wildcard indicates that the requests with all HTTP headers are allowed.
    ///
    /// If the configuration contains the wildcard `*` in `allowHeaders` and
    /// `allowCredentials` is set to `false`, the `Access-Control-Allow-Headers`
    /// response header may either contain the wildcard `*` or echo the value
    /// of the `Access-Control-Request-Headers` request header.
    ///
    /// If the configuration contains the wildcard `*` in `allowHeaders` and
    /// `allowCredentials` is set to `true`, the gateway must not return `*`
    /// in the `Access-Control-Allow-Headers` response header. Instead, it must
    /// return one or more header names matching the value of the
    /// `Access-Control-Request-Headers` request header.
    /// If the `Access-Control-Request-Headers` header is not present in the
    /// request, the gateway must omit the `Access-Control-Allow-Headers`
    /// response header.
    ///
    /// Support: Extended
    #[rkb(items(max_length = 256, min_length = 1, pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"), max_items = 64, list_type = set, validation(rule = "!('*' in self && self.size() > 1)", message = "AllowHeaders cannot contain '*' alongside other methods"))]
    #[serde(
        rename = "allowHeaders",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub allow_headers: Option<Vec<String>>,
    /// AllowMethods indicates which HTTP methods are supported for accessing the
    /// requested resource.
    ///
    /// Valid values are any method defined by RFC9110, along with the special
    /// value `*`, which represents all HTTP methods are allowed.
    ///
    /// Method names are case-sensitive, so these values are also case-sensitive.
    /// (See https://www.rfc-editor.org/rfc/rfc2616#section-5.1.1)
    ///
    /// Multiple method names in the value of the `Access-Control-Allow-Methods`
    /// response header are separated by a comma (",").
    ///
    /// A CORS-safelisted method is a method that is `GET`, `HEAD`, or `POST`.
    /// (See https://fetch.spec.whatwg.org/#cors-safelisted-method) The
    /// CORS-safelisted methods are always allowed, regardless of whether they
    /// are specified in the `allowMethods` field.
    ///
    /// When the `allowMethods` field is configured with one or more methods, the
    /// gateway must return the `Access-Control-Allow-Methods` response header
    /// which value is present in the `allowMethods` field.
    ///
    /// If the HTTP method of the `Access-Control-Request-Method` request header
    /// is not included in the list of methods specified by the response header
    /// `Access-Control-Allow-Methods`, it will present an error on the client
    /// side.
    ///
    /// If the configuration contains the wildcard `*` in `allowMethods` and
    /// `allowCredentials` is set to `false`, the `Access-Control-Allow-Methods`
    /// response header may either contain the wildcard `*` or echo the value
    /// of the `Access-Control-Request-Method` request header.
    ///
    /// If the configuration contains the wildcard `*` in `allowMethods` and
    /// `allowCredentials` is set to `true`, the gateway must not return `*`
    /// in the `Access-Control-Allow-Methods` response header. Instead, it must
    /// return a single HTTP method matching the value of the
    /// `Access-Control-Request-Method` request header.
    /// If the `Access-Control-Request-Method` header is not present in the request,
    /// the gateway must omit the `Access-Control-Allow-Methods` response header.
    ///
    /// Support: Extended
    #[rkb(items(enum_values = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "*"]), max_items = 9, list_type = set, validation(rule = "!('*' in self && self.size() > 1)", message = "AllowMethods cannot contain '*' alongside other methods"))]
    #[serde(
        rename = "allowMethods",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub allow_methods: Option<Vec<String>>,
    #[schemars(
        description = "AllowOrigins indicates whether the response can be shared with requested\nresource from the given `Origin`.\n\nThe `Origin` consists of a scheme and a host, with an optional port, and\ntakes the form `<scheme>://<host>(:<port>)`.\n\nValid values for scheme are: `http` and `https`.\n\nValid values for port are any integer between 1 and 65535 (the list of\navailable TCP/UDP ports). Note that, if not included, port `80` is\nassumed for `http` scheme origins, and port `443` is assumed for `https`\norigins. This may affect origin matching.\n\nThe host part of the origin may contain the wildcard character `*`. These\nwildcard characters behave as follows:\n\n* `*` is a greedy match to the _left_, including any number of\n  DNS labels to the left of its position. This also means that\n  `*` will include any number of period `.` characters to the\n  left of its position.\n* A wildcard by itself matches all hosts.\n\nAn origin value that includes _only_ the `*` character indicates requests\nfrom all `Origin`s are allowed.\n\nWhen the `allowOrigins` field is configured with multiple origins, it\nmeans the server supports clients from multiple origins. If the request\n`Origin` matches the configured allowed origins, the gateway must return\nthe given `Origin` and sets value of the header\n`Access-Control-Allow-Origin` same as the `Origin` header provided by the\nclient.\n\nThe status code of a successful response to a \"preflight\" request is\nalways an OK status (i.e., 204 or 200).\n\nIf the request `Origin` does not match the configured allowed origins,\nthe gateway returns 204/200 response but doesn't set the relevant\ncross-origin response headers. Alternatively, the gateway responds with\n403 status to the \"preflight\" request is denied, coupled with omitting\nthe CORS headers. The cross-origin request fails on the client side.\nTherefore, the client doesn't attempt the actual cross-origin request.\n\nConversely, if the request `Origin` matches one of the configured\nallowed origins, the gateway sets the response header\n`Access-Control-Allow-Origin` to the same value as the `Origin`\nheader provided by the client.\n\nIf the configuration contains the wildcard `*` in `allowOrigins` and\n`allowCredentials` is set to `false`, the `Access-Control-Allow-Origin`\nresponse header may either contain the wildcard `*` or echo the value\nof the `Origin` request header.\n\nIf the configuration contains the wildcard `*` in `allowOrigins` and\n`allowCredentials` is set to `true`, the gateway must not return `*`\nin the `Access-Control-Allow-Origin` response header. Instead, it must\nreturn a single origin matching the value of the `Origin` request header.\n\nSupport: Extended"
    )]
    #[rkb(items(max_length = 253, min_length = 1, pattern = "(^\\*$)|(^(http(s)?):\\/\\/(((\\*\\.)?([a-zA-Z0-9\\-]+\\.)*[a-zA-Z0-9-]+|\\*)(:([0-9]{1,5}))?)$)"), max_items = 64, list_type = set, validation(rule = "!('*' in self && self.size() > 1)", message = "AllowOrigins cannot contain '*' alongside other origins"))]
    #[serde(
        rename = "allowOrigins",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub allow_origins: Option<Vec<String>>,
    /// ExposeHeaders indicates which HTTP response headers can be exposed
    /// to client-side scripts in response to a cross-origin request.
    ///
    /// A CORS-safelisted response header is an HTTP header in a CORS response
    /// that it is considered safe to expose to the client scripts.
    /// The CORS-safelisted response headers include the following headers:
    /// `Cache-Control`
    /// `Content-Language`
    /// `Content-Length`
    /// `Content-Type`
    /// `Expires`
    /// `Last-Modified`
    /// `Pragma`
    /// (See https://fetch.spec.whatwg.org/#cors-safelisted-response-header-name)
    /// The CORS-safelisted response headers are exposed to client by default.
    ///
    /// When an HTTP header name is specified using the `exposeHeaders` field,
    /// this additional header will be exposed as part of the response to the
    /// client.
    ///
    /// Header names are not case-sensitive.
    ///
    /// Multiple header names in the value of the `Access-Control-Expose-Headers`
    /// response header are separated by a comma (",").
    ///
    /// A wildcard indicates that the responses with all HTTP headers are exposed
    /// to clients.
    ///
    /// If the configuration contains the wildcard `*` in `exposeHeaders` and
    /// `allowCredentials` is set to `false`, the `Access-Control-Expose-Headers`
    /// response header can contain the wildcard `*`.
    ///
    /// If the configuration contains the wildcard `*` in `exposeHeaders` and
    /// `allowCredentials` is set to `true`, the gateway cannot use the `*`
    /// in the `Access-Control-Expose-Headers` response header.
    ///
    /// Support: Extended
    #[rkb(items(max_length = 256, min_length = 1, pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"), max_items = 64, list_type = set)]
    #[serde(
        rename = "exposeHeaders",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub expose_headers: Option<Vec<String>>,
    /// MaxAge indicates the duration (in seconds) for the client to cache the
    /// results of a "preflight" request.
    ///
    /// The information provided by the `Access-Control-Allow-Methods` and
    /// `Access-Control-Allow-Headers` response headers can be cached by the
    /// client until the time specified by `Access-Control-Max-Age` elapses.
    ///
    /// The default value of `Access-Control-Max-Age` response header is 5
    /// (seconds).
    ///
    /// When the `MaxAge` field is unspecified, the gateway sets the response
    /// header "Access-Control-Max-Age: 5" by default.
    #[rkb(default = 5, minimum = 1)]
    #[serde(rename = "maxAge", default, skip_serializing_if = "Option::is_none")]
    pub max_age: Option<i32>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersExtensionRef {
    /// Group is the group of the referent. For example, "gateway.networking.k8s.io".
    /// When unspecified or empty string, core API group is inferred.
    #[rkb(
        max_length = 253,
        pattern = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    pub group: String,
    /// Kind is kind of the referent. For example "HTTPRoute" or "Service".
    #[rkb(
        max_length = 63,
        min_length = 1,
        pattern = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
    )]
    pub kind: String,
    /// Name is the name of the referent.
    #[rkb(max_length = 253, min_length = 1)]
    pub name: String,
}

/// HTTPHeader represents an HTTP Header name and value as defined by RFC 7230.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersRequestHeaderModifierAdd {
    /// Name is the name of the HTTP Header to be matched. Name matching MUST be
    /// case-insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).
    ///
    /// If multiple entries specify equivalent header names, the first entry with
    /// an equivalent name MUST be considered for a match. Subsequent entries
    /// with an equivalent header name MUST be ignored. Due to the
    /// case-insensitivity of header names, "foo" and "Foo" are considered
    /// equivalent.
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Value is the value of HTTP Header to be matched.
    #[rkb(max_length = 4096, min_length = 1)]
    pub value: String,
}

/// HTTPHeader represents an HTTP Header name and value as defined by RFC 7230.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersRequestHeaderModifierSet {
    /// Name is the name of the HTTP Header to be matched. Name matching MUST be
    /// case-insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).
    ///
    /// If multiple entries specify equivalent header names, the first entry with
    /// an equivalent name MUST be considered for a match. Subsequent entries
    /// with an equivalent header name MUST be ignored. Due to the
    /// case-insensitivity of header names, "foo" and "Foo" are considered
    /// equivalent.
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Value is the value of HTTP Header to be matched.
    #[rkb(max_length = 4096, min_length = 1)]
    pub value: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersRequestHeaderModifier {
    #[schemars(
        description = "Add adds the given header(s) (name, value) to the request\nbefore the action. It appends to any existing values associated\nwith the header name.\n\nInput:\n  GET /foo HTTP/1.1\n  my-header: foo\n\nConfig:\n  add:\n  - name: \"my-header\"\n    value: \"bar,baz\"\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header: foo,bar,baz"
    )]
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add: Option<Vec<HTTPRouteSpecRulesFiltersRequestHeaderModifierAdd>>,
    #[schemars(
        description = "Remove the given header(s) from the HTTP request before the action. The\nvalue of Remove is a list of HTTP header names. Note that the header\nnames are case-insensitive (see\nhttps://datatracker.ietf.org/doc/html/rfc2616#section-4.2).\n\nInput:\n  GET /foo HTTP/1.1\n  my-header1: foo\n  my-header2: bar\n  my-header3: baz\n\nConfig:\n  remove: [\"my-header1\", \"my-header3\"]\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header2: bar"
    )]
    #[rkb(max_items = 16, list_type = set)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove: Option<Vec<String>>,
    #[schemars(
        description = "Set overwrites the request with the given header (name, value)\nbefore the action.\n\nInput:\n  GET /foo HTTP/1.1\n  my-header: foo\n\nConfig:\n  set:\n  - name: \"my-header\"\n    value: \"bar\"\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header: bar"
    )]
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<Vec<HTTPRouteSpecRulesFiltersRequestHeaderModifierSet>>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersRequestMirrorBackendRef {
    /// Group is the group of the referent. For example, "gateway.networking.k8s.io".
    /// When unspecified or empty string, core API group is inferred.
    #[rkb(
        default = "",
        max_length = 253,
        pattern = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind is the Kubernetes resource kind of the referent. For example
    /// "Service".
    ///
    /// Defaults to "Service" when not specified.
    ///
    /// ExternalName services can refer to CNAME DNS records that may live
    /// outside of the cluster and as such are difficult to reason about in
    /// terms of conformance. They also may not be safe to forward to (see
    /// CVE-2021-25740 for more information). Implementations SHOULD NOT
    /// support ExternalName Services.
    ///
    /// Support: Core (Services with a type other than ExternalName)
    ///
    /// Support: Implementation-specific (Services with type ExternalName)
    #[rkb(
        default = "Service",
        max_length = 63,
        min_length = 1,
        pattern = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name is the name of the referent.
    #[rkb(max_length = 253, min_length = 1)]
    pub name: String,
    /// Namespace is the namespace of the backend. When unspecified, the local
    /// namespace is inferred.
    ///
    /// Note that when a namespace different than the local namespace is specified,
    /// a ReferenceGrant object is required in the referent namespace to allow that
    /// namespace's owner to accept the reference. See the ReferenceGrant
    /// documentation for details.
    ///
    /// Support: Core
    #[rkb(
        max_length = 63,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Port specifies the destination port number to use for this resource.
    /// Port is required when the referent is a Kubernetes Service. In this
    /// case, the port number is the service port number, not the target port.
    /// For other resources, destination port might be derived from the referent
    /// resource or this field.
    #[rkb(maximum = 65535, minimum = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersRequestMirrorFraction {
    #[rkb(default = 100, minimum = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub denominator: Option<i32>,
    #[rkb(minimum = 0)]
    pub numerator: i32,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersRequestMirror {
    /// BackendRef references a resource where mirrored requests are sent.
    ///
    /// Mirrored requests must be sent only to a single destination endpoint
    /// within this BackendRef, irrespective of how many endpoints are present
    /// within this BackendRef.
    ///
    /// If the referent cannot be found, this BackendRef is invalid and must be
    /// dropped from the Gateway. The controller must ensure the "ResolvedRefs"
    /// condition on the Route status is set to `status: False` and not configure
    /// this backend in the underlying implementation.
    ///
    /// If there is a cross-namespace reference to an *existing* object
    /// that is not allowed by a ReferenceGrant, the controller must ensure the
    /// "ResolvedRefs"  condition on the Route is set to `status: False`,
    /// with the "RefNotPermitted" reason and not configure this backend in the
    /// underlying implementation.
    ///
    /// In either error case, the Message of the `ResolvedRefs` Condition
    /// should be used to provide more detail about the problem.
    ///
    /// Support: Extended for Kubernetes Service
    ///
    /// Support: Implementation-specific for any other resource
    ///
    /// If the backend service requires TLS, use BackendTLSPolicy to tell the
    /// implementation to supply the TLS details to be used to connect to that
    /// backend.
    #[rkb(validation(
        rule = "(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true",
        message = "Must have port for Service reference"
    ))]
    #[serde(rename = "backendRef")]
    pub backend_ref: HTTPRouteSpecRulesFiltersRequestMirrorBackendRef,
    /// Fraction represents the fraction of requests that should be
    /// mirrored to BackendRef.
    ///
    /// Only one of Fraction or Percent may be specified. If neither field
    /// is specified, 100% of requests will be mirrored.
    #[rkb(validation(
        rule = "self.numerator <= self.denominator",
        message = "numerator must be less than or equal to denominator"
    ))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fraction: Option<HTTPRouteSpecRulesFiltersRequestMirrorFraction>,
    /// Percent represents the percentage of requests that should be
    /// mirrored to BackendRef. Its minimum value is 0 (indicating 0% of
    /// requests) and its maximum value is 100 (indicating 100% of requests).
    ///
    /// Only one of Fraction or Percent may be specified. If neither field
    /// is specified, 100% of requests will be mirrored.
    #[rkb(maximum = 100, minimum = 0)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percent: Option<i32>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersRequestRedirectPath {
    /// ReplaceFullPath specifies the value with which to replace the full path
    /// of a request during a rewrite or redirect.
    #[rkb(max_length = 1024)]
    #[serde(
        rename = "replaceFullPath",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub replace_full_path: Option<String>,
    /// ReplacePrefixMatch specifies the value with which to replace the prefix
    /// match of a request during a rewrite or redirect. For example, a request
    /// to "/foo/bar" with a prefix match of "/foo" and a ReplacePrefixMatch
    /// of "/xyz" would be modified to "/xyz/bar".
    ///
    /// Note that this matches the behavior of the PathPrefix match type. This
    /// matches full path elements. A path element refers to the list of labels
    /// in the path split by the `/` separator. When specified, a trailing `/` is
    /// ignored. For example, the paths `/abc`, `/abc/`, and `/abc/def` would all
    /// match the prefix `/abc`, but the path `/abcd` would not.
    ///
    /// ReplacePrefixMatch is only compatible with a `PathPrefix` HTTPRouteMatch.
    /// Using any other HTTPRouteMatch type on the same HTTPRouteRule will result in
    /// the implementation setting the Accepted Condition for the Route to `status: False`.
    ///
    /// Request Path | Prefix Match | Replace Prefix | Modified Path
    #[rkb(max_length = 1024)]
    #[serde(
        rename = "replacePrefixMatch",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub replace_prefix_match: Option<String>,
    /// Type defines the type of path modifier. Additional types may be
    /// added in a future release of the API.
    ///
    /// Note that values may be added to this enum, implementations
    /// must ensure that unknown values will not cause a crash.
    ///
    /// Unknown values here must result in the implementation setting the
    /// Accepted Condition for the Route to `status: False`, with a
    /// Reason of `UnsupportedValue`.
    #[rkb(enum_values = ["ReplaceFullPath", "ReplacePrefixMatch"])]
    pub r#type: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersRequestRedirect {
    /// Hostname is the hostname to be used in the value of the `Location`
    /// header in the response.
    /// When empty, the hostname in the `Host` header of the request is used.
    ///
    /// Support: Core
    #[rkb(
        max_length = 253,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Path defines parameters used to modify the path of the incoming request.
    /// The modified path is then used to construct the `Location` header. When
    /// empty, the request path is used as-is.
    ///
    /// Support: Extended
    #[rkb(
        validation(
            rule = "self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true",
            message = "replaceFullPath must be specified when type is set to 'ReplaceFullPath'"
        ),
        validation(
            rule = "has(self.replaceFullPath) ? self.type == 'ReplaceFullPath' : true",
            message = "type must be 'ReplaceFullPath' when replaceFullPath is set"
        ),
        validation(
            rule = "self.type == 'ReplacePrefixMatch' ? has(self.replacePrefixMatch) : true",
            message = "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'"
        ),
        validation(
            rule = "has(self.replacePrefixMatch) ? self.type == 'ReplacePrefixMatch' : true",
            message = "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set"
        )
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<HTTPRouteSpecRulesFiltersRequestRedirectPath>,
    #[schemars(
        description = "Port is the port to be used in the value of the `Location`\nheader in the response.\n\nIf no port is specified, the redirect port MUST be derived using the\nfollowing rules:\n\n* If redirect scheme is not-empty, the redirect port MUST be the well-known\n  port associated with the redirect scheme. Specifically \"http\" to port 80\n  and \"https\" to port 443. If the redirect scheme does not have a\n  well-known port, the listener port of the Gateway SHOULD be used.\n* If redirect scheme is empty, the redirect port MUST be the Gateway\n  Listener port.\n\nImplementations SHOULD NOT add the port number in the 'Location'\nheader in the following cases:\n\n* A Location header that will use HTTP (whether that is determined via\n  the Listener protocol or the Scheme field) _and_ use port 80.\n* A Location header that will use HTTPS (whether that is determined via\n  the Listener protocol or the Scheme field) _and_ use port 443.\n\nSupport: Extended"
    )]
    #[rkb(maximum = 65535, minimum = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// Scheme is the scheme to be used in the value of the `Location` header in
    /// the response. When empty, the scheme of the request is used.
    ///
    /// Scheme redirects can affect the port of the redirect, for more information,
    /// refer to the documentation for the port field of this filter.
    ///
    /// Note that values may be added to this enum, implementations
    /// must ensure that unknown values will not cause a crash.
    ///
    /// Unknown values here must result in the implementation setting the
    /// Accepted Condition for the Route to `status: False`, with a
    /// Reason of `UnsupportedValue`.
    ///
    /// Support: Extended
    #[rkb(enum_values = ["http", "https"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheme: Option<String>,
    /// StatusCode is the HTTP status code to be used in response.
    ///
    /// Note that values may be added to this enum, implementations
    /// must ensure that unknown values will not cause a crash.
    ///
    /// Unknown values here must result in the implementation setting the
    /// Accepted Condition for the Route to `status: False`, with a
    /// Reason of `UnsupportedValue`.
    ///
    /// Support: statusCode 301 and 302 are Core; all others are Extended.
    #[rkb(default = 302, enum_values = [301, 302, 303, 307, 308])]
    #[schemars(schema_with = "integer")]
    #[serde(
        rename = "statusCode",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub status_code: Option<i64>,
}

/// HTTPHeader represents an HTTP Header name and value as defined by RFC 7230.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersResponseHeaderModifierAdd {
    /// Name is the name of the HTTP Header to be matched. Name matching MUST be
    /// case-insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).
    ///
    /// If multiple entries specify equivalent header names, the first entry with
    /// an equivalent name MUST be considered for a match. Subsequent entries
    /// with an equivalent header name MUST be ignored. Due to the
    /// case-insensitivity of header names, "foo" and "Foo" are considered
    /// equivalent.
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Value is the value of HTTP Header to be matched.
    #[rkb(max_length = 4096, min_length = 1)]
    pub value: String,
}

/// HTTPHeader represents an HTTP Header name and value as defined by RFC 7230.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersResponseHeaderModifierSet {
    /// Name is the name of the HTTP Header to be matched. Name matching MUST be
    /// case-insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).
    ///
    /// If multiple entries specify equivalent header names, the first entry with
    /// an equivalent name MUST be considered for a match. Subsequent entries
    /// with an equivalent header name MUST be ignored. Due to the
    /// case-insensitivity of header names, "foo" and "Foo" are considered
    /// equivalent.
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Value is the value of HTTP Header to be matched.
    #[rkb(max_length = 4096, min_length = 1)]
    pub value: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersResponseHeaderModifier {
    #[schemars(
        description = "Add adds the given header(s) (name, value) to the request\nbefore the action. It appends to any existing values associated\nwith the header name.\n\nInput:\n  GET /foo HTTP/1.1\n  my-header: foo\n\nConfig:\n  add:\n  - name: \"my-header\"\n    value: \"bar,baz\"\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header: foo,bar,baz"
    )]
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add: Option<Vec<HTTPRouteSpecRulesFiltersResponseHeaderModifierAdd>>,
    #[schemars(
        description = "Remove the given header(s) from the HTTP request before the action. The\nvalue of Remove is a list of HTTP header names. Note that the header\nnames are case-insensitive (see\nhttps://datatracker.ietf.org/doc/html/rfc2616#section-4.2).\n\nInput:\n  GET /foo HTTP/1.1\n  my-header1: foo\n  my-header2: bar\n  my-header3: baz\n\nConfig:\n  remove: [\"my-header1\", \"my-header3\"]\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header2: bar"
    )]
    #[rkb(max_items = 16, list_type = set)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove: Option<Vec<String>>,
    #[schemars(
        description = "Set overwrites the request with the given header (name, value)\nbefore the action.\n\nInput:\n  GET /foo HTTP/1.1\n  my-header: foo\n\nConfig:\n  set:\n  - name: \"my-header\"\n    value: \"bar\"\n\nOutput:\n  GET /foo HTTP/1.1\n  my-header: bar"
    )]
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<Vec<HTTPRouteSpecRulesFiltersResponseHeaderModifierSet>>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersUrlRewritePath {
    /// ReplaceFullPath specifies the value with which to replace the full path
    /// of a request during a rewrite or redirect.
    #[rkb(max_length = 1024)]
    #[serde(
        rename = "replaceFullPath",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub replace_full_path: Option<String>,
    /// ReplacePrefixMatch specifies the value with which to replace the prefix
    /// match of a request during a rewrite or redirect. For example, a request
    /// to "/foo/bar" with a prefix match of "/foo" and a ReplacePrefixMatch
    /// of "/xyz" would be modified to "/xyz/bar".
    ///
    /// Note that this matches the behavior of the PathPrefix match type. This
    /// matches full path elements. A path element refers to the list of labels
    /// in the path split by the `/` separator. When specified, a trailing `/` is
    /// ignored. For example, the paths `/abc`, `/abc/`, and `/abc/def` would all
    /// match the prefix `/abc`, but the path `/abcd` would not.
    ///
    /// ReplacePrefixMatch is only compatible with a `PathPrefix` HTTPRouteMatch.
    /// Using any other HTTPRouteMatch type on the same HTTPRouteRule will result in
    /// the implementation setting the Accepted Condition for the Route to `status: False`.
    ///
    /// Request Path | Prefix Match | Replace Prefix | Modified Path
    #[rkb(max_length = 1024)]
    #[serde(
        rename = "replacePrefixMatch",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub replace_prefix_match: Option<String>,
    /// Type defines the type of path modifier. Additional types may be
    /// added in a future release of the API.
    ///
    /// Note that values may be added to this enum, implementations
    /// must ensure that unknown values will not cause a crash.
    ///
    /// Unknown values here must result in the implementation setting the
    /// Accepted Condition for the Route to `status: False`, with a
    /// Reason of `UnsupportedValue`.
    #[rkb(enum_values = ["ReplaceFullPath", "ReplacePrefixMatch"])]
    pub r#type: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesFiltersUrlRewrite {
    /// Hostname is the value to be used to replace the Host header value during
    /// forwarding.
    ///
    /// Support: Extended
    #[rkb(
        max_length = 253,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// Path defines a path rewrite.
    ///
    /// Support: Extended
    #[rkb(
        validation(
            rule = "self.type == 'ReplaceFullPath' ? has(self.replaceFullPath) : true",
            message = "replaceFullPath must be specified when type is set to 'ReplaceFullPath'"
        ),
        validation(
            rule = "has(self.replaceFullPath) ? self.type == 'ReplaceFullPath' : true",
            message = "type must be 'ReplaceFullPath' when replaceFullPath is set"
        ),
        validation(
            rule = "self.type == 'ReplacePrefixMatch' ? has(self.replacePrefixMatch) : true",
            message = "replacePrefixMatch must be specified when type is set to 'ReplacePrefixMatch'"
        ),
        validation(
            rule = "has(self.replacePrefixMatch) ? self.type == 'ReplacePrefixMatch' : true",
            message = "type must be 'ReplacePrefixMatch' when replacePrefixMatch is set"
        )
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<HTTPRouteSpecRulesFiltersUrlRewritePath>,
}

/// HTTPRouteFilter defines processing steps that must be completed during the
/// request or response lifecycle. HTTPRouteFilters are meant as an extension
/// point to express processing that may be done in Gateway implementations. Some
/// examples include request or response modification, implementing
/// authentication strategies, rate-limiting, and traffic shaping. API
/// guarantee/conformance is defined based on the type of the filter.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[rkb(
    validation(
        rule = "!(has(self.cors) && self.type != 'CORS')",
        message = "filter.cors must be nil if the filter.type is not CORS"
    ),
    validation(
        rule = "!(!has(self.cors) && self.type == 'CORS')",
        message = "filter.cors must be specified for CORS filter.type"
    ),
    validation(
        rule = "!(has(self.requestHeaderModifier) && self.type != 'RequestHeaderModifier')",
        message = "filter.requestHeaderModifier must be nil if the filter.type is not RequestHeaderModifier"
    ),
    validation(
        rule = "!(!has(self.requestHeaderModifier) && self.type == 'RequestHeaderModifier')",
        message = "filter.requestHeaderModifier must be specified for RequestHeaderModifier filter.type"
    ),
    validation(
        rule = "!(has(self.responseHeaderModifier) && self.type != 'ResponseHeaderModifier')",
        message = "filter.responseHeaderModifier must be nil if the filter.type is not ResponseHeaderModifier"
    ),
    validation(
        rule = "!(!has(self.responseHeaderModifier) && self.type == 'ResponseHeaderModifier')",
        message = "filter.responseHeaderModifier must be specified for ResponseHeaderModifier filter.type"
    ),
    validation(
        rule = "!(has(self.requestMirror) && self.type != 'RequestMirror')",
        message = "filter.requestMirror must be nil if the filter.type is not RequestMirror"
    ),
    validation(
        rule = "!(!has(self.requestMirror) && self.type == 'RequestMirror')",
        message = "filter.requestMirror must be specified for RequestMirror filter.type"
    ),
    validation(
        rule = "!(has(self.requestRedirect) && self.type != 'RequestRedirect')",
        message = "filter.requestRedirect must be nil if the filter.type is not RequestRedirect"
    ),
    validation(
        rule = "!(!has(self.requestRedirect) && self.type == 'RequestRedirect')",
        message = "filter.requestRedirect must be specified for RequestRedirect filter.type"
    ),
    validation(
        rule = "!(has(self.urlRewrite) && self.type != 'URLRewrite')",
        message = "filter.urlRewrite must be nil if the filter.type is not URLRewrite"
    ),
    validation(
        rule = "!(!has(self.urlRewrite) && self.type == 'URLRewrite')",
        message = "filter.urlRewrite must be specified for URLRewrite filter.type"
    ),
    validation(
        rule = "!(has(self.extensionRef) && self.type != 'ExtensionRef')",
        message = "filter.extensionRef must be nil if the filter.type is not ExtensionRef"
    ),
    validation(
        rule = "!(!has(self.extensionRef) && self.type == 'ExtensionRef')",
        message = "filter.extensionRef must be specified for ExtensionRef filter.type"
    )
)]
pub struct HTTPRouteSpecRulesFilters {
    /// CORS defines a schema for a filter that responds to the
    /// cross-origin request based on HTTP response header.
    ///
    /// Support: Extended
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cors: Option<HTTPRouteSpecRulesFiltersCors>,
    /// ExtensionRef is an optional, implementation-specific extension to the
    /// "filter" behavior.  For example, resource "myroutefilter" in group
    /// "networking.example.net"). ExtensionRef MUST NOT be used for core and
    /// extended filters.
    ///
    /// This filter can be used multiple times within the same rule.
    ///
    /// Support: Implementation-specific
    #[serde(
        rename = "extensionRef",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub extension_ref: Option<HTTPRouteSpecRulesFiltersExtensionRef>,
    /// RequestHeaderModifier defines a schema for a filter that modifies request
    /// headers.
    ///
    /// Support: Core
    #[serde(
        rename = "requestHeaderModifier",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub request_header_modifier: Option<HTTPRouteSpecRulesFiltersRequestHeaderModifier>,
    /// RequestMirror defines a schema for a filter that mirrors requests.
    /// Requests are sent to the specified destination, but responses from
    /// that destination are ignored.
    ///
    /// This filter can be used multiple times within the same rule. Note that
    /// not all implementations will be able to support mirroring to multiple
    /// backends.
    ///
    /// Support: Extended
    #[rkb(validation(
        rule = "!(has(self.percent) && has(self.fraction))",
        message = "Only one of percent or fraction may be specified in HTTPRequestMirrorFilter"
    ))]
    #[serde(
        rename = "requestMirror",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub request_mirror: Option<HTTPRouteSpecRulesFiltersRequestMirror>,
    /// RequestRedirect defines a schema for a filter that responds to the
    /// request with an HTTP redirection.
    ///
    /// Support: Core
    #[serde(
        rename = "requestRedirect",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub request_redirect: Option<HTTPRouteSpecRulesFiltersRequestRedirect>,
    /// ResponseHeaderModifier defines a schema for a filter that modifies response
    /// headers.
    ///
    /// Support: Extended
    #[serde(
        rename = "responseHeaderModifier",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub response_header_modifier: Option<HTTPRouteSpecRulesFiltersResponseHeaderModifier>,
    #[schemars(
        description = "Type identifies the type of filter to apply. As with other API fields,\ntypes are classified into three conformance levels:\n\n- Core: Filter types and their corresponding configuration defined by\n  \"Support: Core\" in this package, e.g. \"RequestHeaderModifier\". All\n  implementations must support core filters.\n\n- Extended: Filter types and their corresponding configuration defined by\n  \"Support: Extended\" in this package, e.g. \"RequestMirror\". Implementers\n  are encouraged to support extended filters.\n\n- Implementation-specific: Filters that are defined and supported by\n  specific vendors.\n  In the future, filters showing convergence in behavior across multiple\n  implementations will be considered for inclusion in extended or core\n  conformance levels. Filter-specific configuration for such filters\n  is specified using the ExtensionRef field. `Type` should be set to\n  \"ExtensionRef\" for custom filters.\n\nImplementers are encouraged to define custom implementation types to\nextend the core API with implementation-specific behavior.\n\nIf a reference to a custom filter type cannot be resolved, the filter\nMUST NOT be skipped. Instead, requests that would have been processed by\nthat filter MUST receive a HTTP error response.\n\nNote that values may be added to this enum, implementations\nmust ensure that unknown values will not cause a crash.\n\nUnknown values here must result in the implementation setting the\nAccepted Condition for the Route to `status: False`, with a\nReason of `UnsupportedValue`."
    )]
    #[rkb(enum_values = ["RequestHeaderModifier", "ResponseHeaderModifier", "RequestMirror", "RequestRedirect", "URLRewrite", "ExtensionRef", "CORS"])]
    pub r#type: String,
    /// URLRewrite defines a schema for a filter that modifies a request during forwarding.
    ///
    /// Support: Extended
    #[serde(
        rename = "urlRewrite",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub url_rewrite: Option<HTTPRouteSpecRulesFiltersUrlRewrite>,
}

/// HTTPHeaderMatch describes how to select a HTTP route by matching HTTP request
/// headers.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesMatchesHeaders {
    /// Name is the name of the HTTP Header to be matched. Name matching MUST be
    /// case-insensitive. (See https://tools.ietf.org/html/rfc7230#section-3.2).
    ///
    /// If multiple entries specify equivalent header names, only the first
    /// entry with an equivalent name MUST be considered for a match. Subsequent
    /// entries with an equivalent header name MUST be ignored. Due to the
    /// case-insensitivity of header names, "foo" and "Foo" are considered
    /// equivalent.
    ///
    /// When a header is repeated in an HTTP request, it is
    /// implementation-specific behavior as to how this is represented.
    /// Generally, proxies should follow the guidance from the RFC:
    /// https://www.rfc-editor.org/rfc/rfc7230.html#section-3.2.2 regarding
    /// processing a repeated header, with special handling for "Set-Cookie".
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Type specifies how to match against the value of the header.
    ///
    /// Support: Core (Exact)
    ///
    /// Support: Implementation-specific (RegularExpression)
    ///
    /// Since RegularExpression HeaderMatchType has implementation-specific
    /// conformance, implementations can support POSIX, PCRE or any other dialects
    /// of regular expressions. Please read the implementation's documentation to
    /// determine the supported dialect.
    #[rkb(default = "Exact", enum_values = ["Exact", "RegularExpression"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// Value is the value of HTTP Header to be matched.
    #[rkb(max_length = 4096, min_length = 1)]
    pub value: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesMatchesPath {
    /// Type specifies how to match against the path Value.
    ///
    /// Support: Core (Exact, PathPrefix)
    ///
    /// Support: Implementation-specific (RegularExpression)
    #[rkb(default = "PathPrefix", enum_values = ["Exact", "PathPrefix", "RegularExpression"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// Value of the HTTP path to match against.
    #[rkb(default = "/", max_length = 1024)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// HTTPQueryParamMatch describes how to select a HTTP route by matching HTTP
/// query parameters.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesMatchesQueryParams {
    /// Name is the name of the HTTP query param to be matched. This must be an
    /// exact string match. (See
    /// https://tools.ietf.org/html/rfc7230#section-2.7.3).
    ///
    /// If multiple entries specify equivalent query param names, only the first
    /// entry with an equivalent name MUST be considered for a match. Subsequent
    /// entries with an equivalent query param name MUST be ignored.
    ///
    /// If a query param is repeated in an HTTP request, the behavior is
    /// purposely left undefined, since different data planes have different
    /// capabilities. However, it is *recommended* that implementations should
    /// match against the first value of the param if the data plane supports it,
    /// as this behavior is expected in other load balancing contexts outside of
    /// the Gateway API.
    ///
    /// Users SHOULD NOT route traffic based on repeated query params to guard
    /// themselves against potential differences in the implementations.
    #[rkb(
        max_length = 256,
        min_length = 1,
        pattern = "^[A-Za-z0-9!#$%&'*+\\-.^_\\x60|~]+$"
    )]
    pub name: String,
    /// Type specifies how to match against the value of the query parameter.
    ///
    /// Support: Extended (Exact)
    ///
    /// Support: Implementation-specific (RegularExpression)
    ///
    /// Since RegularExpression QueryParamMatchType has Implementation-specific
    /// conformance, implementations can support POSIX, PCRE or any other
    /// dialects of regular expressions. Please read the implementation's
    /// documentation to determine the supported dialect.
    #[rkb(default = "Exact", enum_values = ["Exact", "RegularExpression"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub r#type: Option<String>,
    /// Value is the value of HTTP query param to be matched.
    #[rkb(max_length = 1024, min_length = 1)]
    pub value: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[schemars(
    description = "HTTPRouteMatch defines the predicate used to match requests to a given\naction. Multiple match types are ANDed together, i.e. the match will\nevaluate to true only if all conditions are satisfied.\n\nFor example, the match below will match a HTTP request only if its path\nstarts with `/foo` AND it contains the `version: v1` header:\n\n```\nmatch:\n\n\tpath:\n\t  value: \"/foo\"\n\theaders:\n\t- name: \"version\"\n\t  value \"v1\"\n\n```"
)]
pub struct HTTPRouteSpecRulesMatches {
    /// Headers specifies HTTP request header matchers. Multiple match values are
    /// ANDed together, meaning, a request must match all the specified headers
    /// to select the route.
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<Vec<HTTPRouteSpecRulesMatchesHeaders>>,
    /// Method specifies HTTP method matcher.
    /// When specified, this route will be matched only if the request has the
    /// specified method.
    ///
    /// Support: Extended
    #[rkb(enum_values = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"])]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    /// Path specifies a HTTP request path matcher. If this field is not
    /// specified, a default prefix match on the "/" path is provided.
    #[rkb(default = {"type":"PathPrefix","value":"/"}, validation(rule = "(self.type in ['Exact','PathPrefix']) ? self.value.startsWith('/') : true", message = "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"), validation(rule = "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('//') : true", message = "must not contain '//' when type one of ['Exact', 'PathPrefix']"), validation(rule = "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('/./') : true", message = "must not contain '/./' when type one of ['Exact', 'PathPrefix']"), validation(rule = "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('/../') : true", message = "must not contain '/../' when type one of ['Exact', 'PathPrefix']"), validation(rule = "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('%2f') : true", message = "must not contain '%2f' when type one of ['Exact', 'PathPrefix']"), validation(rule = "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('%2F') : true", message = "must not contain '%2F' when type one of ['Exact', 'PathPrefix']"), validation(rule = "(self.type in ['Exact','PathPrefix']) ? !self.value.contains('#') : true", message = "must not contain '#' when type one of ['Exact', 'PathPrefix']"), validation(rule = "(self.type in ['Exact','PathPrefix']) ? !self.value.endsWith('/..') : true", message = "must not end with '/..' when type one of ['Exact', 'PathPrefix']"), validation(rule = "(self.type in ['Exact','PathPrefix']) ? !self.value.endsWith('/.') : true", message = "must not end with '/.' when type one of ['Exact', 'PathPrefix']"), validation(rule = "self.type in ['Exact','PathPrefix'] || self.type == 'RegularExpression'", message = "type must be one of ['Exact', 'PathPrefix', 'RegularExpression']"), validation(rule = "(self.type in ['Exact','PathPrefix']) ? self.value.matches(r\"\"\"^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$\"\"\") : true", message = "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<HTTPRouteSpecRulesMatchesPath>,
    /// QueryParams specifies HTTP query parameter matchers. Multiple match
    /// values are ANDed together, meaning, a request must match all the
    /// specified query parameters to select the route.
    ///
    /// Support: Extended
    #[rkb(max_items = 16, list_map_keys = ["name"], list_type = map)]
    #[serde(
        rename = "queryParams",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub query_params: Option<Vec<HTTPRouteSpecRulesMatchesQueryParams>>,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteSpecRulesTimeouts {
    /// BackendRequest specifies a timeout for an individual request from the gateway
    /// to a backend. This covers the time from when the request first starts being
    /// sent from the gateway to when the full response has been received from the backend.
    ///
    /// Setting a timeout to the zero duration (e.g. "0s") SHOULD disable the timeout
    /// completely. Implementations that cannot completely disable the timeout MUST
    /// instead interpret the zero duration as the longest possible value to which
    /// the timeout can be set.
    ///
    /// An entire client HTTP transaction with a gateway, covered by the Request timeout,
    /// may result in more than one call from the gateway to the destination backend,
    /// for example, if automatic retries are supported.
    ///
    /// The value of BackendRequest must be a Gateway API Duration string as defined by
    /// GEP-2257.  When this field is unspecified, its behavior is implementation-specific;
    /// when specified, the value of BackendRequest must be no more than the value of the
    /// Request timeout (since the Request timeout encompasses the BackendRequest timeout).
    ///
    /// Support: Extended
    #[rkb(pattern = "^([0-9]{1,5}(h|m|s|ms)){1,4}$")]
    #[serde(
        rename = "backendRequest",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub backend_request: Option<String>,
    /// Request specifies the maximum duration for a gateway to respond to an HTTP request.
    /// If the gateway has not been able to respond before this deadline is met, the gateway
    /// MUST return a timeout error.
    ///
    /// For example, setting the `rules.timeouts.request` field to the value `10s` in an
    /// `HTTPRoute` will cause a timeout if a client request is taking longer than 10 seconds
    /// to complete.
    ///
    /// Setting a timeout to the zero duration (e.g. "0s") SHOULD disable the timeout
    /// completely. Implementations that cannot completely disable the timeout MUST
    /// instead interpret the zero duration as the longest possible value to which
    /// the timeout can be set.
    ///
    /// This timeout is intended to cover as close to the whole request-response transaction
    /// as possible although an implementation MAY choose to start the timeout after the entire
    /// request stream has been received instead of immediately after the transaction is
    /// initiated by the client.
    ///
    /// The value of Request is a Gateway API Duration string as defined by GEP-2257. When this
    /// field is unspecified, request timeout behavior is implementation-specific.
    ///
    /// Support: Extended
    #[rkb(pattern = "^([0-9]{1,5}(h|m|s|ms)){1,4}$")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

/// HTTPRouteRule defines semantics for matching an HTTP request based on
/// conditions (matches), processing it (filters), and forwarding the request to
/// an API object (backendRefs).
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[rkb(
    validation(
        rule = "(has(self.backendRefs) && size(self.backendRefs) > 0) ? (!has(self.filters) || self.filters.all(f, !has(f.requestRedirect))): true",
        message = "RequestRedirect filter must not be used together with backendRefs"
    ),
    validation(
        rule = "(has(self.filters) && self.filters.exists_one(f, has(f.requestRedirect) && has(f.requestRedirect.path) && f.requestRedirect.path.type == 'ReplacePrefixMatch' && has(f.requestRedirect.path.replacePrefixMatch))) ? ((size(self.matches) != 1 || !has(self.matches[0].path) || self.matches[0].path.type != 'PathPrefix') ? false : true) : true",
        message = "When using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"
    ),
    validation(
        rule = "(has(self.filters) && self.filters.exists_one(f, has(f.urlRewrite) && has(f.urlRewrite.path) && f.urlRewrite.path.type == 'ReplacePrefixMatch' && has(f.urlRewrite.path.replacePrefixMatch))) ? ((size(self.matches) != 1 || !has(self.matches[0].path) || self.matches[0].path.type != 'PathPrefix') ? false : true) : true",
        message = "When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"
    ),
    validation(
        rule = "(has(self.backendRefs) && self.backendRefs.exists_one(b, (has(b.filters) && b.filters.exists_one(f, has(f.requestRedirect) && has(f.requestRedirect.path) && f.requestRedirect.path.type == 'ReplacePrefixMatch' && has(f.requestRedirect.path.replacePrefixMatch))) )) ? ((size(self.matches) != 1 || !has(self.matches[0].path) || self.matches[0].path.type != 'PathPrefix') ? false : true) : true",
        message = "Within backendRefs, when using RequestRedirect filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"
    ),
    validation(
        rule = "(has(self.backendRefs) && self.backendRefs.exists_one(b, (has(b.filters) && b.filters.exists_one(f, has(f.urlRewrite) && has(f.urlRewrite.path) && f.urlRewrite.path.type == 'ReplacePrefixMatch' && has(f.urlRewrite.path.replacePrefixMatch))) )) ? ((size(self.matches) != 1 || !has(self.matches[0].path) || self.matches[0].path.type != 'PathPrefix') ? false : true) : true",
        message = "Within backendRefs, When using URLRewrite filter with path.replacePrefixMatch, exactly one PathPrefix match must be specified"
    )
)]
pub struct HTTPRouteSpecRules {
    /// BackendRefs defines the backend(s) where matching requests should be
    /// sent.
    ///
    /// Failure behavior here depends on how many BackendRefs are specified and
    /// how many are invalid.
    ///
    /// If *all* entries in BackendRefs are invalid, and there are also no filters
    /// specified in this route rule, *all* traffic which matches this rule MUST
    /// receive a 500 status code.
    ///
    /// See the HTTPBackendRef definition for the rules about what makes a single
    /// HTTPBackendRef invalid.
    ///
    /// When a HTTPBackendRef is invalid, 500 status codes MUST be returned for
    /// requests that would have otherwise been routed to an invalid backend. If
    /// multiple backends are specified, and some are invalid, the proportion of
    /// requests that would otherwise have been routed to an invalid backend
    /// MUST receive a 500 status code.
    ///
    /// For example, if two backends are specified with equal weights, and one is
    /// invalid, 50 percent of traffic must receive a 500. Implementations may
    /// choose how that 50 percent is determined.
    ///
    /// When a HTTPBackendRef refers to a Service that has no ready endpoints,
    /// implementations SHOULD return a 503 for requests to that backend instead.
    /// If an implementation chooses to do this, all of the above rules for 500 responses
    /// MUST also apply for responses that return a 503.
    ///
    /// Support: Core for Kubernetes Service
    ///
    /// Support: Extended for Kubernetes ServiceImport
    ///
    /// Support: Implementation-specific for any other resource
    ///
    /// Support for weight: Core
    #[rkb(max_items = 16, list_type = atomic)]
    #[serde(
        rename = "backendRefs",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub backend_refs: Option<Vec<HTTPRouteSpecRulesBackendRefs>>,
    #[schemars(
        description = "Filters define the filters that are applied to requests that match\nthis rule.\n\nWherever possible, implementations SHOULD implement filters in the order\nthey are specified.\n\nImplementations MAY choose to implement this ordering strictly, rejecting\nany combination or order of filters that cannot be supported. If implementations\nchoose a strict interpretation of filter ordering, they MUST clearly document\nthat behavior.\n\nTo reject an invalid combination or order of filters, implementations SHOULD\nconsider the Route Rules with this configuration invalid. If all Route Rules\nin a Route are invalid, the entire Route would be considered invalid. If only\na portion of Route Rules are invalid, implementations MUST set the\n\"PartiallyInvalid\" condition for the Route.\n\nConformance-levels at this level are defined based on the type of filter:\n\n- ALL core filters MUST be supported by all implementations.\n- Implementers are encouraged to support extended filters.\n- Implementation-specific custom filters have no API guarantees across\n  implementations.\n\nSpecifying the same filter multiple times is not supported unless explicitly\nindicated in the filter.\n\nAll filters are expected to be compatible with each other except for the\nURLRewrite and RequestRedirect filters, which may not be combined. If an\nimplementation cannot support other combinations of filters, they must clearly\ndocument that limitation. In cases where incompatible or unsupported\nfilters are specified and cause the `Accepted` condition to be set to status\n`False`, implementations may use the `IncompatibleFilters` reason to specify\nthis configuration error.\n\nSupport: Core"
    )]
    #[rkb(max_items = 16, list_type = atomic, validation(rule = "!(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))", message = "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both"), validation(rule = "self.filter(f, f.type == 'CORS').size() <= 1", message = "CORS filter cannot be repeated"), validation(rule = "self.filter(f, f.type == 'RequestHeaderModifier').size() <= 1", message = "RequestHeaderModifier filter cannot be repeated"), validation(rule = "self.filter(f, f.type == 'ResponseHeaderModifier').size() <= 1", message = "ResponseHeaderModifier filter cannot be repeated"), validation(rule = "self.filter(f, f.type == 'RequestRedirect').size() <= 1", message = "RequestRedirect filter cannot be repeated"), validation(rule = "self.filter(f, f.type == 'URLRewrite').size() <= 1", message = "URLRewrite filter cannot be repeated"))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filters: Option<Vec<HTTPRouteSpecRulesFilters>>,
    #[schemars(
        description = "Matches define conditions used for matching the rule against incoming\nHTTP requests. Each match is independent, i.e. this rule will be matched\nif **any** one of the matches is satisfied.\n\nFor example, take the following matches configuration:\n\n```\nmatches:\n- path:\n    value: \"/foo\"\n  headers:\n  - name: \"version\"\n    value: \"v2\"\n- path:\n    value: \"/v2/foo\"\n```\n\nFor a request to match against this rule, a request must satisfy\nEITHER of the two conditions:\n\n- path prefixed with `/foo` AND contains the header `version: v2`\n- path prefix of `/v2/foo`\n\nSee the documentation for HTTPRouteMatch on how to specify multiple\nmatch conditions that should be ANDed together.\n\nIf no matches are specified, the default is a prefix\npath match on \"/\", which has the effect of matching every\nHTTP request.\n\nProxy or Load Balancer routing configuration generated from HTTPRoutes\nMUST prioritize matches based on the following criteria, continuing on\nties. Across all rules specified on applicable Routes, precedence must be\ngiven to the match having:\n\n* \"Exact\" path match.\n* \"Prefix\" path match with largest number of characters.\n* Method match.\n* Largest number of header matches.\n* Largest number of query param matches.\n\nNote: The precedence of RegularExpression path matches are implementation-specific.\n\nIf ties still exist across multiple Routes, matching precedence MUST be\ndetermined in order of the following criteria, continuing on ties:\n\n* The oldest Route based on creation timestamp.\n* The Route appearing first in alphabetical order by\n  \"{namespace}/{name}\".\n\nIf ties still exist within an HTTPRoute, matching precedence MUST be granted\nto the FIRST matching rule (in list order) with a match meeting the above\ncriteria.\n\nWhen no rules matching a request have been successfully attached to the\nparent a request is coming from, a HTTP 404 status code MUST be returned."
    )]
    #[rkb(default = [{"path":{"type":"PathPrefix","value":"/"}}], max_items = 64, list_type = atomic)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matches: Option<Vec<HTTPRouteSpecRulesMatches>>,
    /// Name is the name of the route rule. This name MUST be unique within a Route if it is set.
    ///
    /// Support: Extended
    #[rkb(
        max_length = 253,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Timeouts defines the timeouts that can be configured for an HTTP request.
    ///
    /// Support: Extended
    #[rkb(validation(
        rule = "!(has(self.request) && has(self.backendRequest) && duration(self.request) != duration('0s') && duration(self.backendRequest) > duration(self.request))",
        message = "backendRequest timeout cannot be longer than request timeout"
    ))]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<HTTPRouteSpecRulesTimeouts>,
}

/// Condition contains details for one aspect of the current state of this API Resource.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteStatusParentsConditions {
    /// lastTransitionTime is the last time the condition transitioned from one status to another.
    /// This should be when the underlying condition changed.  If that is not known, then using the time when the API field changed is acceptable.
    #[rkb(format = "date-time")]
    #[serde(rename = "lastTransitionTime")]
    pub last_transition_time: String,
    /// message is a human readable message indicating details about the transition.
    /// This may be an empty string.
    #[rkb(max_length = 32768)]
    pub message: String,
    /// observedGeneration represents the .metadata.generation that the condition was set based upon.
    /// For instance, if .metadata.generation is currently 12, but the .status.conditions[x].observedGeneration is 9, the condition is out of date
    /// with respect to the current state of the instance.
    #[rkb(minimum = 0)]
    #[serde(
        rename = "observedGeneration",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub observed_generation: Option<i64>,
    /// reason contains a programmatic identifier indicating the reason for the condition's last transition.
    /// Producers of specific condition types may define expected values and meanings for this field,
    /// and whether the values are considered a guaranteed API.
    /// The value should be a CamelCase string.
    /// This field may not be empty.
    #[rkb(
        max_length = 1024,
        min_length = 1,
        pattern = "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
    )]
    pub reason: String,
    /// status of the condition, one of True, False, Unknown.
    #[rkb(enum_values = ["True", "False", "Unknown"])]
    pub status: String,
    /// type of condition in CamelCase or in foo.example.com/CamelCase.
    #[rkb(
        max_length = 316,
        pattern = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
    )]
    pub r#type: String,
}

#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteStatusParentsParentRef {
    /// Group is the group of the referent.
    /// When unspecified, "gateway.networking.k8s.io" is inferred.
    /// To set the core API group (such as for a "Service" kind referent),
    /// Group must be explicitly set to "" (empty string).
    ///
    /// Support: Core
    #[rkb(
        default = "gateway.networking.k8s.io",
        max_length = 253,
        pattern = "^$|^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Kind is kind of the referent.
    ///
    /// There are two kinds of parent resources with "Core" support:
    ///
    /// * Gateway (Gateway conformance profile)
    /// * Service (Mesh conformance profile, ClusterIP Services only)
    ///
    /// Support for other resources is Implementation-Specific.
    #[rkb(
        default = "Gateway",
        max_length = 63,
        min_length = 1,
        pattern = "^[a-zA-Z]([-a-zA-Z0-9]*[a-zA-Z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Name is the name of the referent.
    ///
    /// Support: Core
    #[rkb(max_length = 253, min_length = 1)]
    pub name: String,
    /// Namespace is the namespace of the referent. When unspecified, this refers
    /// to the local namespace of the Route.
    ///
    /// Note that there are specific rules for ParentRefs which cross namespace
    /// boundaries. Cross-namespace references are only valid if they are explicitly
    /// allowed by something in the namespace they are referring to. For example:
    /// Gateway has the AllowedRoutes field, and ReferenceGrant provides a
    /// generic way to enable any other kind of cross-namespace reference.
    ///
    /// Support: Core
    #[rkb(
        max_length = 63,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
    )]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Port is the network port this Route targets. It can be interpreted
    /// differently based on the type of parent resource.
    ///
    /// When the parent resource is a Gateway, this targets all listeners
    /// listening on the specified port that also support this kind of Route(and
    /// select this Route). It's not recommended to set `Port` unless the
    /// networking behaviors specified in a Route must apply to a specific port
    /// as opposed to a listener(s) whose port(s) may be changed. When both Port
    /// and SectionName are specified, the name and port of the selected listener
    /// must match both specified values.
    ///
    /// Implementations MAY choose to support other parent resources.
    /// Implementations supporting other types of parent resources MUST clearly
    /// document how/if Port is interpreted.
    ///
    /// For the purpose of status, an attachment is considered successful as
    /// long as the parent resource accepts it partially. For example, Gateway
    /// listeners can restrict which Routes can attach to them by Route kind,
    /// namespace, or hostname. If 1 of 2 Gateway listeners accept attachment
    /// from the referencing Route, the Route MUST be considered successfully
    /// attached. If no Gateway listeners accept attachment from this Route,
    /// the Route MUST be considered detached from the Gateway.
    ///
    /// Support: Extended
    #[rkb(maximum = 65535, minimum = 1)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    /// SectionName is the name of a section within the target resource. In the
    /// following resources, SectionName is interpreted as the following:
    ///
    /// * Gateway: Listener name. When both Port (experimental) and SectionName
    /// are specified, the name and port of the selected listener must match
    /// both specified values.
    /// * Service: Port name. When both Port (experimental) and SectionName
    /// are specified, the name and port of the selected listener must match
    /// both specified values.
    ///
    /// Implementations MAY choose to support attaching Routes to other resources.
    /// If that is the case, they MUST clearly document how SectionName is
    /// interpreted.
    ///
    /// When unspecified (empty string), this will reference the entire resource.
    /// For the purpose of status, an attachment is considered successful if at
    /// least one section in the parent resource accepts it. For example, Gateway
    /// listeners can restrict which Routes can attach to them by Route kind,
    /// namespace, or hostname. If 1 of 2 Gateway listeners accept attachment from
    /// the referencing Route, the Route MUST be considered successfully
    /// attached. If no Gateway listeners accept attachment from this Route, the
    /// Route MUST be considered detached from the Gateway.
    ///
    /// Support: Core
    #[rkb(
        max_length = 253,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
    )]
    #[serde(
        rename = "sectionName",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub section_name: Option<String>,
}

/// RouteParentStatus describes the status of a route with respect to an
/// associated Parent.
#[rkb_runtime::schema]
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct HTTPRouteStatusParents {
    /// Conditions describes the status of the route with respect to the Gateway.
    /// Note that the route's availability is also subject to the Gateway's own
    /// status conditions and listener status.
    ///
    /// If the Route's ParentRef specifies an existing Gateway that supports
    /// Routes of this kind AND that Gateway's controller has sufficient access,
    /// then that Gateway's controller MUST set the "Accepted" condition on the
    /// Route, to indicate whether the route has been accepted or rejected by the
    /// Gateway, and why.
    ///
    /// A Route MUST be considered "Accepted" if at least one of the Route's
    /// rules is implemented by the Gateway.
    ///
    /// There are a number of cases where the "Accepted" condition may not be set
    /// due to lack of controller visibility, that includes when:
    ///
    /// * The Route refers to a nonexistent parent.
    /// * The Route is of a type that the controller does not support.
    /// * The Route is in a namespace to which the controller does not have access.
    #[rkb(max_items = 8, min_items = 1, list_map_keys = ["type"], list_type = map)]
    pub conditions: Vec<HTTPRouteStatusParentsConditions>,
    /// ControllerName is a domain/path string that indicates the name of the
    /// controller that wrote this status. This corresponds with the
    /// controllerName field on GatewayClass.
    ///
    /// Example: "example.net/gateway-controller".
    ///
    /// The format of this field is DOMAIN "/" PATH, where DOMAIN and PATH are
    /// valid Kubernetes names
    /// (https://kubernetes.io/docs/concepts/overview/working-with-objects/names/#names).
    ///
    /// Controllers MUST populate this field when writing status. Controllers should ensure that
    /// entries to status populated with their ControllerName are cleaned up when they are no
    /// longer necessary.
    #[rkb(
        max_length = 253,
        min_length = 1,
        pattern = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\/[A-Za-z0-9\\/\\-._~%!$&'()*+,;=:]+$"
    )]
    #[serde(rename = "controllerName")]
    pub controller_name: String,
    /// ParentRef corresponds with a ParentRef in the spec that this
    /// RouteParentStatus struct describes the status of.
    #[serde(rename = "parentRef")]
    pub parent_ref: HTTPRouteStatusParentsParentRef,
}

/// An integer without a format, as the CRD has it (Rust's integers have one).
fn integer(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "integer" })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The schema rkb derives from these types is the external CRD's; the differences
    /// listed are what `#[rkb(...)]` cannot express, which the command reported.
    #[test]
    fn types_derive_the_external_crd() {
        let derived = rkb_runtime::crd::<HTTPRoute>().unwrap_or_else(|error| panic!("{error}"));
        let external = include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../config/external-crds/gateway.networking.k8s.io_httproutes.yaml"
        ));
        let left_out: &[(&str, &str)] = &[
            (
                ".spec.hostnames[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
            (
                ".spec.rules[].backendRefs[].filters[].cors.allowHeaders[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
            (
                ".spec.rules[].backendRefs[].filters[].cors.allowOrigins[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
            (
                ".spec.rules[].backendRefs[].filters[].cors.exposeHeaders[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
            (
                ".spec.rules[].filters[].cors.allowHeaders[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
            (
                ".spec.rules[].filters[].cors.allowOrigins[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
            (
                ".spec.rules[].filters[].cors.exposeHeaders[]",
                "`description` of list items that are no struct (objects without properties are maps here): only a struct carries one (its doc comment)",
            ),
        ];
        rkb_runtime::testing::external::assert_same_schema(&derived, external, "v1", left_out);
    }
}
