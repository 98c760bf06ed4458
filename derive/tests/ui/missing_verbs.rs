use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(groups = ["apps"], resources = ["deployments"])]
#[rbac(urls = ["/metrics"])]
struct Reconciler;

fn main() {}
