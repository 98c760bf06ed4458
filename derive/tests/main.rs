//! rkb-derive's tests, one binary: a module per file. `cargo test -p rkb-derive --test
//! derive rbac::` runs one of them.

mod api;
mod compile_fail;
mod rbac;
mod reference;
mod sources;
