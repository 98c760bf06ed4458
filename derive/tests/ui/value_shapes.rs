use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(groups = "apps", resources = ["deployments"], verbs = get)]
#[rbac(groups = [apps], resources = ["Deployments"], verbs = [get, 42])]
#[rbac(groups = ["Apps"], resources = ["deployments"], verbs = [get], namespace = system)]
struct Reconciler;

fn main() {}
