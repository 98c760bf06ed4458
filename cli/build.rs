// Templates and the envtest Go module are embedded with include_dir!, which cannot tell
// cargo about them on stable: rebuild rkb whenever one changes, so `cargo run` never
// scaffolds stale output. (`templates` and `envtest-assets` are links in a checkout, plain
// directories in the published package.)
fn main() {
    println!("cargo:rerun-if-changed=templates");
    println!("cargo:rerun-if-changed=envtest-assets");
}
