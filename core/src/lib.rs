//! Kubernetes rules shared by rkb crates.
