use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac]
#[rbac = "apps"]
#[rbac(groups)]
#[rbac(groups = ["apps"] resources = ["deployments"], verbs = [get])]
struct Reconciler;

fn main() {}
