//! The manager's Deployment as a template whose image, replicas, resources, scheduling
//! and leader election come from values.yaml (`manager.*`, `leaderElection.enable`, and
//! with the [SHARDING] section `sharding.replicas`).

use anyhow::{Context as _, bail};
use serde_yaml_ng::{Mapping, Value};

use super::sections::{Cond, Section};
use super::template::{Piece, Template};

/// What the manager's Deployment takes from values.yaml.
pub(super) struct ManagerValues {
    /// `manager.*`
    pub manager: Mapping,
    /// Whether it elects a leader (`leaderElection.enable`).
    pub leader_election: bool,
    /// With the [SHARDING] section, its replicas (`sharding.replicas`).
    pub sharded_replicas: Option<Value>,
}

/// The manager's Deployment takes its image, replicas, resources, leader election and
/// scheduling from values; returns those values.
pub(super) fn manager_template(template: &mut Template) -> anyhow::Result<ManagerValues> {
    let pieces = &mut template.pieces;
    let mut values = Mapping::new();
    let (image, indent) = image(pieces)?;
    values.insert("image".into(), image);
    let (replicas, sharded_replicas) = replicas(pieces)?;
    values.insert("replicas".into(), replicas);
    values.insert("resources".into(), resources(pieces, indent)?);
    scheduling(pieces, &mut values)?;
    // Leader election: the flag, and (in [`super::chart`]) its Role and RoleBinding.
    let leader = position(pieces, |p| p.text.trim() == "- --leader-elect");
    if let Some(at) = leader {
        pieces[at]
            .conds
            .push(Cond::Value(".Values.leaderElection.enable".into()));
    }
    Ok(ManagerValues {
        manager: values,
        leader_election: leader.is_some(),
        sharded_replicas,
    })
}

fn position(pieces: &[Piece], pred: impl Fn(&Piece) -> bool) -> Option<usize> {
    pieces.iter().position(pred)
}

/// The image and its pull policy from values; returns their values and the container's
/// indent.
fn image(pieces: &mut Vec<Piece>) -> anyhow::Result<(Value, usize)> {
    let image_at = position(pieces, |p| {
        p.text.trim_start().starts_with("image: ") && p.conds.is_empty()
    })
    .context("the manager's Deployment has no image")?;
    let indent = pieces[image_at].indent();
    let image = pieces[image_at].text.trim_start()["image: ".len()..]
        .trim()
        .trim_matches('"')
        .to_owned();
    let (repository, tag) = match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') && !image.contains('@') => {
            (repo.to_owned(), tag.to_owned())
        }
        _ => (image.clone(), String::new()),
    };
    pieces[image_at].text = format!(
        "{:indent$}image: \"{{{{ .Values.manager.image.repository }}}}{{{{ with .Values.manager.image.tag }}}}:{{{{ . }}}}{{{{ end }}}}\"",
        ""
    );
    let policy_at = position(pieces, |p| {
        p.indent() == indent && p.text.trim_start().starts_with("imagePullPolicy:")
    });
    let policy = match policy_at {
        Some(at) => {
            let policy = pieces[at].text.trim_start()["imagePullPolicy:".len()..]
                .trim()
                .to_owned();
            pieces[at].text = format!(
                "{:indent$}imagePullPolicy: {{{{ .Values.manager.image.pullPolicy }}}}",
                ""
            );
            policy
        }
        None => {
            pieces.splice(
                image_at + 1..image_at + 1,
                [
                    Piece::added("{{- with .Values.manager.image.pullPolicy }}".into()),
                    Piece::added(format!("{:indent$}imagePullPolicy: {{{{ . }}}}", "")),
                    Piece::added("{{- end }}".into()),
                ],
            );
            String::new()
        }
    };
    let mut image_values = Mapping::new();
    image_values.insert("repository".into(), repository.into());
    image_values.insert("tag".into(), tag.into());
    image_values.insert("pullPolicy".into(), policy.into());
    Ok((Value::Mapping(image_values), indent))
}

/// The replicas from values; returns their value, and with the [SHARDING] section (whose
/// render has a replicas line of its own) the sharded replicas' value.
fn replicas(pieces: &mut [Piece]) -> anyhow::Result<(Value, Option<Value>)> {
    let sharded = Section::Sharding.cond();
    let unsharded = Cond::Not(Box::new(sharded.clone()));
    let replicas_under = |pieces: &mut [Piece], conds: &[Cond], value: &str| {
        let Some(at) = position(pieces, |p| {
            p.text.starts_with("  replicas: ") && p.conds == conds
        }) else {
            return Ok(None);
        };
        let replicas: Value =
            serde_yaml_ng::from_str(pieces[at].text.trim()["replicas:".len()..].trim())
                .context("the manager's replicas are no number")?;
        pieces[at].text = format!("  replicas: {{{{ .Values.{value} }}}}");
        anyhow::Ok(Some(replicas))
    };
    let sharded_replicas = replicas_under(pieces, &[sharded], "sharding.replicas")?;
    let replicas = match sharded_replicas {
        Some(_) => replicas_under(pieces, &[unsharded], "manager.replicas")?,
        None => replicas_under(pieces, &[], "manager.replicas")?,
    }
    .context("the manager's Deployment has no replicas")?;
    Ok((replicas, sharded_replicas))
}

/// The resources from values: the block below `resources:` at the container's `indent`;
/// returns their value.
fn resources(pieces: &mut Vec<Piece>, indent: usize) -> anyhow::Result<Value> {
    let Some(at) = position(pieces, |p| {
        p.indent() == indent && p.text.trim_start().starts_with("resources:")
    }) else {
        return Ok(Value::Mapping(Mapping::new()));
    };
    let head = pieces[at].text.trim_start()["resources:".len()..]
        .trim()
        .to_owned();
    let end = (at + 1..pieces.len())
        .find(|&i| pieces[i].indent() <= indent)
        .unwrap_or(pieces.len());
    if pieces[at..end].iter().any(|p| !p.conds.is_empty()) {
        bail!("the manager's resources change with a section of config/default");
    }
    let block: Vec<String> = pieces[at + 1..end].iter().map(|p| p.text.clone()).collect();
    let yaml = if head.is_empty() {
        block
            .iter()
            .map(|l| format!("{}\n", &l[indent..]))
            .collect::<String>()
    } else {
        head.clone()
    };
    let resources: Value = serde_yaml_ng::from_str(&yaml).context("the manager's resources")?;
    let plain: Vec<String> = pieces[at..end]
        .iter()
        .flat_map(|p| p.plain.clone())
        .collect();
    let mut head_piece = Piece::added(format!("{:indent$}resources:", ""));
    head_piece.plain = plain;
    let body = Piece::added(format!(
        "{{{{- toYaml .Values.manager.resources | nindent {} }}}}",
        indent + 2
    ));
    pieces.splice(at..end, [head_piece, body]);
    Ok(resources)
}

/// Scheduling and pull secrets from values, at the pod's level (beside
/// serviceAccountName), for those the Deployment does not set; adds their values.
fn scheduling(pieces: &mut Vec<Piece>, values: &mut Mapping) -> anyhow::Result<()> {
    let pod_at = position(pieces, |p| {
        p.text.trim_start().starts_with("serviceAccountName:")
    })
    .context("the manager's Deployment has no serviceAccountName")?;
    let pod_indent = pieces[pod_at].indent();
    let mut added = Vec::new();
    for (key, default) in [
        ("nodeSelector", Value::Mapping(Mapping::new())),
        ("tolerations", Value::Sequence(Vec::new())),
        ("affinity", Value::Mapping(Mapping::new())),
        ("imagePullSecrets", Value::Sequence(Vec::new())),
    ] {
        let there = pieces.iter().any(|p| {
            p.indent() == pod_indent && p.text.trim_start().starts_with(&format!("{key}:"))
        });
        if there {
            continue;
        }
        added.push(Piece::added(format!(
            "{{{{- with .Values.manager.{key} }}}}"
        )));
        added.push(Piece::added(format!(
            "{:pod_indent$}{key}: {{{{- toYaml . | nindent {} }}}}",
            "",
            pod_indent + 2
        )));
        added.push(Piece::added("{{- end }}".into()));
        values.insert(key.into(), default);
    }
    pieces.splice(pod_at..pod_at, added);
    Ok(())
}
