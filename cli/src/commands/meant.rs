//! The PROJECT entry a command's `--group/--version/--kind` most likely meant when no
//! entry has them: the kind spelled in another case (kinds are case-sensitive), or the
//! same kind in another group or version. A refusal's example then names that entry, so
//! that running it does what the user meant.

use crate::cli::Gvk;
use crate::project::{Project, Resource};

/// An entry the user most likely meant, and how it differs from what they gave.
pub(super) struct Meant<'p> {
    pub entry: &'p Resource,
    /// `kinds are case-sensitive: PROJECT has Memcached (cache/v1alpha1)`.
    pub note: String,
}

impl Meant<'_> {
    /// `--group cache --version v1alpha1 --kind Memcached`.
    pub fn flags(&self) -> String {
        let Resource {
            group,
            version,
            kind,
            ..
        } = self.entry;
        format!("--group {group} --version {version} --kind {kind}")
    }
}

/// Among the entries `fits` accepts, the one `gvk` most likely meant: first the kind in
/// another case in the same group and version, then the same kind elsewhere, then the
/// kind in another case elsewhere.
pub(super) fn meant<'p>(
    project: &'p Project,
    gvk: &Gvk,
    fits: impl Fn(&Resource) -> bool,
) -> Option<Meant<'p>> {
    let candidates = || project.resources.iter().filter(|r| fits(r));
    let same_place = |r: &&Resource| r.group == gvk.group && r.version == gvk.version;
    let other_case = |r: &&Resource| r.kind != gvk.kind && r.kind.eq_ignore_ascii_case(&gvk.kind);
    let entry = candidates()
        .filter(same_place)
        .find(other_case)
        .or_else(|| candidates().find(|r| r.kind == gvk.kind))
        .or_else(|| candidates().find(other_case))?;
    let place = format!("{}/{}", entry.group, entry.version);
    let note = if entry.kind == gvk.kind {
        format!("PROJECT has {} in {place}", entry.kind)
    } else {
        format!(
            "kinds are case-sensitive, and PROJECT has {} ({place}), not {}",
            entry.kind, gvk.kind
        )
    };
    Some(Meant { entry, note })
}
