use rkb_runtime::Rbac;

// Every mistake across every attribute is reported in one build.
#[derive(Rbac)]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get, lsit])]
#[rbac(group = ["apps"], resources = ["*"], verbs = [get])]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [get], namespace = "Bad")]
struct Reconciler;

fn main() {}
