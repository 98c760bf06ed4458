//! `rkb create api --image`: the options of kubebuilder's deploy-image plugin, checked
//! before anything is planned. The controller it scaffolds runs the image in a Deployment.

use serde::Serialize;

use crate::names::{InvalidInput, invalid};

const IMAGE_RULE: &str = "a container image reference: [registry-host[:port]/]path[:tag][@digest] (an IPv6 \
                          host in brackets: [fd00::1]:5000), where path \
                          components are lowercase letters and digits joined by '.', '_', '__' or '-', the tag \
                          is at most 128 of [A-Za-z0-9_.-] not starting with '.' or '-', and the digest is \
                          <algorithm>:<at least 32 hex digits>";
const PORT_RULE: &str = "a port number from 1 to 65535";
const UID_RULE: &str = "a numeric user ID from 1 to 2147483647 (not 0: the pods run as non-root)";
const COMMAND_RULE: &str = "comma-separated words, none of them empty";
const IMAGE_EXAMPLE: &str = "--image memcached:1.6.26-alpine3.19";

/// What `--image` and its companion flags asked for, as given (PROJECT records them in
/// `project::DeployImageResource`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageOptions {
    pub image: String,
    pub container_command: Option<String>,
    pub container_port: Option<String>,
    pub run_as_user: Option<String>,
}

/// The same options, checked and parsed for the templates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeployImage {
    pub image: String,
    /// The image as a YAML scalar (config/manager): quoted when it starts with the '[' of
    /// an IPv6 registry, which YAML would read as a list.
    pub image_yaml: String,
    /// The container's command, word by word (none: the image's entrypoint).
    pub command: Vec<String>,
    pub container_port: Option<u16>,
    /// The UID the containers run as; 1001 when not given.
    pub run_as_user: i64,
}

/// The UID the containers run as when `--run-as-user` is not given: a non-root user
/// that no image is likely to give a special meaning.
pub const DEFAULT_UID: i64 = 1001;

impl ImageOptions {
    /// Checks every flag; the first bad one is the error.
    pub fn check(&self) -> Result<DeployImage, InvalidInput> {
        check_image(&self.image)?;
        let command = match &self.container_command {
            None => Vec::new(),
            Some(text) => check_command(text)?,
        };
        let container_port = self.container_port.as_deref().map(check_port).transpose()?;
        let run_as_user = match &self.run_as_user {
            None => DEFAULT_UID,
            Some(uid) => check_uid(uid)?,
        };
        Ok(DeployImage {
            image: self.image.clone(),
            image_yaml: if self.image.starts_with('[') {
                format!("'{}'", self.image)
            } else {
                self.image.clone()
            },
            command,
            container_port,
            run_as_user,
        })
    }
}

pub fn check_image(image: &str) -> Result<(), InvalidInput> {
    image_problem(image).map_or(Ok(()), |problem| {
        Err(invalid(
            "--image",
            image,
            problem,
            IMAGE_RULE,
            IMAGE_EXAMPLE,
        ))
    })
}

fn check_port(port: &str) -> Result<u16, InvalidInput> {
    match port.parse::<u16>() {
        Ok(port) if port >= 1 => Ok(port),
        Ok(_) => Err(invalid(
            "--image-container-port",
            port,
            "port 0 cannot be listened on",
            PORT_RULE,
            "--image-container-port 11211",
        )),
        Err(_) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => Err(invalid(
            "--image-container-port",
            port,
            "it is larger than 65535, the largest port number",
            PORT_RULE,
            "--image-container-port 11211",
        )),
        Err(_) => Err(invalid(
            "--image-container-port",
            port,
            "it is not a number from 1 to 65535",
            PORT_RULE,
            "--image-container-port 11211",
        )),
    }
}

fn check_uid(uid: &str) -> Result<i64, InvalidInput> {
    let example = "--run-as-user 1001";
    match uid.parse::<i32>() {
        Ok(0) => Err(invalid(
            "--run-as-user",
            uid,
            "UID 0 is root; the Deployment sets runAsNonRoot, so the kubelet would refuse to start the pods",
            UID_RULE,
            example,
        )),
        Ok(n) if n > 0 => Ok(i64::from(n)),
        // A number, just too large for the Linux UIDs Kubernetes takes.
        Err(_) if !uid.is_empty() && uid.bytes().all(|b| b.is_ascii_digit()) => Err(invalid(
            "--run-as-user",
            uid,
            "it is larger than 2147483647, the largest UID a pod's runAsUser takes",
            UID_RULE,
            example,
        )),
        _ => Err(invalid(
            "--run-as-user",
            uid,
            "it is not a positive number",
            UID_RULE,
            example,
        )),
    }
}

fn check_command(text: &str) -> Result<Vec<String>, InvalidInput> {
    let words: Vec<String> = text.split(',').map(str::to_owned).collect();
    if words.iter().any(|w| w.trim().is_empty()) {
        return Err(invalid(
            "--image-container-command",
            text,
            "it has an empty word (two commas in a row, or a comma at an end)",
            COMMAND_RULE,
            "--image-container-command memcached,--memory-limit=64,-o,modern,-v",
        ));
    }
    Ok(words)
}

/// Why `image` is not a reference by the distribution grammar (docker/distribution's
/// `reference` package), if it is not.
fn image_problem(image: &str) -> Option<String> {
    if image.is_empty() {
        return Some("it is empty".into());
    }
    if image.chars().any(char::is_whitespace) {
        return Some("it contains whitespace".into());
    }
    let (name_and_tag, digest) = match image.split_once('@') {
        Some((rest, digest)) => (rest, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest
        && let Some(problem) = digest_problem(digest)
    {
        return Some(format!("the digest {digest:?} {problem}"));
    }
    // A tag follows the last ':' after the last '/' (a ':' before it is a registry's port).
    let last_slash = name_and_tag.rfind('/').map_or(0, |i| i + 1);
    let (name, tag) = match name_and_tag[last_slash..].rfind(':') {
        Some(i) => (
            &name_and_tag[..last_slash + i],
            Some(&name_and_tag[last_slash + i + 1..]),
        ),
        None => (name_and_tag, None),
    };
    if let Some(tag) = tag
        && let Some(problem) = tag_problem(tag)
    {
        return Some(format!("the tag {tag:?} {problem}"));
    }
    if name.len() > 255 {
        return Some(format!(
            "the name is {} characters long; at most 255 are allowed",
            name.len()
        ));
    }
    let mut components: Vec<&str> = name.split('/').collect();
    // The first component is a registry when it looks like a host: it has a '.' or a
    // port, or is localhost (as Docker decides).
    if components.len() > 1 {
        let first = components[0];
        if first.contains('.') || first.contains(':') || first == "localhost" {
            if let Some(problem) = registry_problem(first) {
                return Some(format!("the registry {first:?} {problem}"));
            }
            components.remove(0);
        }
    }
    for component in components {
        if let Some(problem) = path_component_problem(component) {
            return Some(format!("the path component {component:?} {problem}"));
        }
    }
    None
}

fn registry_problem(registry: &str) -> Option<String> {
    // An IPv6 address is bracketed, as in a URL: `[fd00::1]:5000`.
    if let Some(bracketed) = registry.strip_prefix('[') {
        let Some((address, rest)) = bracketed.split_once(']') else {
            return Some("opens a '[' for an IPv6 address and does not close it".into());
        };
        let hex_or_colon = |c: char| c.is_ascii_hexdigit() || c == ':';
        if address.is_empty() || !address.chars().all(hex_or_colon) || !address.contains(':') {
            return Some(format!(
                "has [{address}] where an IPv6 address goes: hex digits and ':', e.g. [fd00::1]"
            ));
        }
        return match rest.strip_prefix(':') {
            None if rest.is_empty() => None,
            Some(port) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => None,
            Some(port) => Some(format!("has the port {port:?}, which is not a number")),
            None => Some(format!(
                "has {rest:?} after its IPv6 address, where only a :port may follow"
            )),
        };
    }
    let (host, port) = match registry.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (registry, None),
    };
    if let Some(port) = port
        && (port.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()))
    {
        return Some(format!("has the port {port:?}, which is not a number"));
    }
    let label_ok = |label: &str| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if !host.split('.').all(label_ok) {
        return Some(
            "is not a host name: labels of letters, digits and '-' (not at either end), separated by '.'"
                .into(),
        );
    }
    None
}

fn path_component_problem(component: &str) -> Option<String> {
    if component.is_empty() {
        return Some("is empty (two '/' in a row, or one at an end)".into());
    }
    if component.bytes().any(|b| b.is_ascii_uppercase()) {
        return Some("has uppercase letters; repository names are lowercase".into());
    }
    let alnum = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let bytes = component.as_bytes();
    if !alnum(bytes[0]) || !alnum(bytes[bytes.len() - 1]) {
        return Some("must start and end with a lowercase letter or digit".into());
    }
    // Separators between alphanumeric runs: one '.', one or two '_', or any number of '-'.
    for run in component.split(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        let ok = run.is_empty()
            || run == "."
            || run == "_"
            || run == "__"
            || run.bytes().all(|b| b == b'-');
        if !ok {
            return Some(format!(
                "has the separator {run:?}; allowed are '.', '_', '__' or dashes, between letters and digits"
            ));
        }
    }
    None
}

fn tag_problem(tag: &str) -> Option<String> {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    match tag.as_bytes() {
        [] => Some("is empty".into()),
        _ if tag.len() > 128 => Some(format!(
            "is {} characters long; at most 128 are allowed",
            tag.len()
        )),
        [first, ..] if !word(*first) => Some("must start with a letter, digit or '_'".into()),
        bytes if !bytes.iter().all(|b| word(*b) || *b == b'.' || *b == b'-') => {
            Some("may only hold letters, digits, '_', '.' and '-'".into())
        }
        _ => None,
    }
}

fn digest_problem(digest: &str) -> Option<String> {
    let Some((algorithm, hex)) = digest.split_once(':') else {
        return Some(
            "has no ':' between algorithm and hex digits (e.g. sha256:<64 hex digits>)".into(),
        );
    };
    let component_ok = |c: &str| {
        c.chars().next().is_some_and(|f| f.is_ascii_alphabetic())
            && c.chars().all(|ch| ch.is_ascii_alphanumeric())
    };
    if !algorithm.split(['+', '.', '-', '_']).all(component_ok) {
        return Some(format!(
            "has the algorithm {algorithm:?}, which is not of the form sha256"
        ));
    }
    if hex.len() < 32 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Some("needs at least 32 hex digits after the algorithm".into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_references_follow_the_distribution_grammar() {
        let digest = format!("sha256:{}", "a".repeat(64));
        for good in [
            "memcached",
            "memcached:1.6.26-alpine3.19",
            "library/memcached:latest",
            "docker.io/library/memcached:1.6",
            "localhost:5000/team/app",
            "registry.example.com:443/a/b-c/d__e/f.g:v1_2.3-rc",
            "ghcr.io/org/app:_tag",
            &format!("memcached@{digest}"),
            &format!("quay.io/org/app:v1@{digest}"),
            "localhost/app",
            "[fd00::1]:5000/memcached:1.6",
            "[::1]/app",
        ] {
            assert_eq!(image_problem(good), None, "{good}");
        }
        for (bad, why) in [
            ("", "empty"),
            ("Memcached:1", "uppercase"),
            ("memcached:", "tag \"\" is empty"),
            ("memcached:-rc", "must start"),
            ("memcached:1.6 ", "whitespace"),
            ("a//b", "is empty"),
            ("a/b/", "is empty"),
            ("app-:1", "start and end"),
            ("a...b", "separator \"...\""),
            ("a___b", "separator \"___\""),
            ("bad_host.com:x/app", "not a number"),
            ("-bad.com/app", "not a host name"),
            ("[fd00::1/app", "does not close it"),
            ("[fd00::1]x/app", "only a :port"),
            ("[fd00::g]/app", "IPv6 address"),
            ("memcached@sha256:abc", "at least 32 hex digits"),
            ("memcached@sha256", "no ':'"),
            (
                "memcached@1sha:0123456789abcdef0123456789abcdef",
                "algorithm",
            ),
        ] {
            let problem = image_problem(bad).unwrap_or_else(|| panic!("{bad:?} was accepted"));
            assert!(problem.contains(why), "{bad:?}: {problem}");
        }
        assert!(image_problem(&format!("app:{}", "t".repeat(129))).is_some());
        assert!(image_problem(&format!("{}:1", "a".repeat(256))).is_some());
    }

    #[test]
    fn ports_uids_and_commands_are_checked() {
        assert_eq!(check_port("11211"), Ok(11211));
        assert_eq!(check_port("65535"), Ok(65535));
        for bad in ["0", "65536", "-1", "http", ""] {
            assert!(check_port(bad).is_err(), "{bad}");
        }
        assert_eq!(check_uid("1001"), Ok(1001));
        let root = check_uid("0").unwrap_err().to_string();
        assert!(root.contains("UID 0 is root"), "{root}");
        for bad in ["-5", "nobody", "2147483648", ""] {
            assert!(check_uid(bad).is_err(), "{bad}");
        }
        assert_eq!(
            check_command("memcached,-m=64,-o,modern").unwrap(),
            ["memcached", "-m=64", "-o", "modern"]
        );
        assert!(check_command("a,,b").is_err());
        assert!(check_command("a,").is_err());
    }
}
