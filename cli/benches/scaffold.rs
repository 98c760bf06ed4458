//! CLI latency: `rkb init` followed by `rkb create api` into a fresh directory,
//! in-process (rustfmt of the new sources included). Goal: under 50 ms together.
//!
//! Run with `cargo bench -p rkb --bench scaffold`.

use std::path::Path;

use clap::Parser;
use criterion::{Criterion, criterion_group, criterion_main};

fn rkb(args: &[&str]) {
    let cli =
        rkb::cli::Cli::try_parse_from(std::iter::once("rkb").chain(args.iter().copied())).unwrap();
    rkb::commands::run(cli, &mut std::io::sink()).unwrap();
}

fn init_and_create_api(c: &mut Criterion) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let scratch = tempfile::tempdir().unwrap();
    let mut run = 0u32;
    c.bench_function("rkb init + create api (Memcached)", |b| {
        b.iter(|| {
            run += 1;
            let dir = scratch.path().join(run.to_string());
            let dir = dir.to_str().unwrap();
            rkb(&[
                "init",
                "--domain",
                "example.com",
                "--project-name",
                "bench",
                "--dir",
                dir,
                "--rkb-path",
                &repo,
            ]);
            rkb(&[
                "create",
                "api",
                "--group",
                "cache",
                "--version",
                "v1alpha1",
                "--kind",
                "Memcached",
                "--dir",
                dir,
            ]);
        })
    });
}

criterion_group!(benches, init_and_create_api);
criterion_main!(benches);
