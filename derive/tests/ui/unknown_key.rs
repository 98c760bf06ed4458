use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(group = ["apps"], resources = ["deployments"], verbs = [get])]
#[rbac(apiGroups = ["apps"], resources = ["deployments"], verbs = [get])]
#[rbac(groups = ["apps"], resources = ["deployments"], resourceNames = ["x"], verbs = [get])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get], scope = "cluster")]
struct Reconciler;

fn main() {}
