//! Compile errors of `#[derive(Rbac)]`; the expected messages are in tests/ui/*.stderr
//! (regenerate with `TRYBUILD=overwrite cargo test -p rkb-derive --test derive compile_fail::`).

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
