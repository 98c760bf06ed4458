//! No code: this crate's Cargo.toml is what matters (see there).
