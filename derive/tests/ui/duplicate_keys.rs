use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get], verbs = [list])]
#[rbac(groups = ["apps"], groups = ["batch"], resources = ["jobs"], verbs = [get])]
struct Reconciler;

fn main() {}
