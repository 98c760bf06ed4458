use rkb_runtime::Rbac;

#[derive(Rbac)]
struct Reconciler;

#[derive(Rbac)]
enum Other {
    A,
}

fn main() {}
