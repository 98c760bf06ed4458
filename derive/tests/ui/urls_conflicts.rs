use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(urls = ["/metrics"], groups = ["apps"], resources = ["deployments"], verbs = [get])]
#[rbac(urls = ["/metrics"], resource_names = ["x"], verbs = [get])]
#[rbac(urls = ["/metrics"], verbs = [get], namespace = "system")]
#[rbac(urls = ["metrics"], verbs = [get])]
struct Reconciler;

fn main() {}
