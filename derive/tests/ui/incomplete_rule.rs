use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(resources = ["pods"], verbs = [get])]
#[rbac(groups = ["apps"], verbs = [get])]
#[rbac(resource_names = ["my-config"], verbs = [get])]
#[rbac(verbs = [get])]
#[rbac()]
struct Reconciler;

fn main() {}
