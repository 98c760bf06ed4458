use rkb_runtime::Rbac;

#[derive(Rbac)]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [get, lsit, wacth])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [deleteCollection, "Patch"])]
#[rbac(groups = ["apps"], resources = ["deployments"], verbs = [approve, "Frob Nicate"])]
struct Reconciler;

fn main() {}
