use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [get], namespace = "My_Namespace")]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [get], namespace = "")]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [get], namespace = "-system")]
#[rbac(groups = ["core"], resources = ["pods"], verbs = [get], namespace = ["a", "b"])]
struct Reconciler;

fn main() {}
