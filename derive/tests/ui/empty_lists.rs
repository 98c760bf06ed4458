use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(groups = [], resources = [], verbs = [])]
#[rbac(urls = [], verbs = [get])]
#[rbac(groups = ["core"], resources = ["configmaps"], resource_names = [], verbs = [get])]
struct Reconciler;

fn main() {}
