//! Where one API's controller and roles live, by the project's layout: kubebuilder's
//! single-group layout (`src/controller/<kind>.rs`) or its multigroup layout
//! (`src/controller/<group>/<kind>.rs`), where one kind may have a controller per group.

use serde::Serialize;

use crate::names;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(super) struct Layout {
    /// The controller module below `crate::controller`: `memcached` or `cache::memcached`.
    pub controller_module: String,
    /// `src/controller/memcached.rs` or `src/controller/cache/memcached.rs`.
    pub controller_file: String,
    /// The group's module file in the multigroup layout: `src/controller/cache/mod.rs`.
    pub group_mod_file: Option<String>,
    /// The controller's name (its metrics label, readiness check and
    /// `--controller-concurrency` key). Group-qualified in the multigroup layout, where
    /// two groups may hold the same kind.
    pub controller_name: String,
    /// Role files are `config/rbac/<prefix>_<role>_role.yaml`, the roles `<prefix>-<role>-role`.
    pub role_prefix: String,
}

impl Layout {
    pub fn single_group(kind: &str) -> Self {
        let kind_snake = names::snake(kind);
        Layout {
            controller_module: kind_snake.clone(),
            controller_file: format!("src/controller/{kind_snake}.rs"),
            group_mod_file: None,
            controller_name: kind.to_lowercase(),
            role_prefix: kind_snake,
        }
    }

    pub fn multigroup(group: &str, kind: &str) -> Self {
        let (group_module, kind_snake) = (names::module_name(group), names::snake(kind));
        Layout {
            controller_module: format!("{group_module}::{kind_snake}"),
            controller_file: format!("src/controller/{group_module}/{kind_snake}.rs"),
            group_mod_file: Some(format!("src/controller/{group_module}/mod.rs")),
            controller_name: format!("{group}-{}", kind.to_lowercase()),
            role_prefix: format!("{group_module}_{kind_snake}"),
        }
    }
}
