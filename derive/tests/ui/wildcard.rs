use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(groups = ["*"], resources = ["deployments"], verbs = [get])]
#[rbac(groups = ["apps"], resources = ["*"], verbs = [get])]
#[rbac(groups = ["apps"], resources = ["deployments/*"], verbs = [get])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [*])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = ["*"])]
struct Reconciler;

fn main() {}
