// Templates are embedded with include_dir!, which cannot tell cargo about them on stable:
// rebuild rkb whenever a template changes, so `cargo run` never scaffolds stale output.
fn main() {
    println!("cargo:rerun-if-changed=../templates");
}
