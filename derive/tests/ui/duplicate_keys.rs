use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get], verbs = [list])]
#[rbac(groups = ["apps"], groups = ["batch"], resources = ["jobs"], verbs = [get])]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [get], namespace = "a", namespace = "b")]
struct Reconciler;

fn main() {}
