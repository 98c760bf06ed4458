//! rkb-runtime's integration tests, one module per concern, in one test binary (linked
//! once rather than once per module). Each module that needs a control plane gets its own
//! (`rkb_envtest::shared_by(module_path!())`): several install webhook configurations and
//! CRDs that another module's tests must not meet.

mod cronjob;
mod fixture;
mod running;

mod api_server;
mod core_webhooks;
mod crds;
mod manifests;
mod metrics_certificates;
mod webhook_certificates;
mod webhook_settings;
mod webhooks;
