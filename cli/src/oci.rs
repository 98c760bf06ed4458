//! An OCI image archive of one static binary on an empty base, written without a container
//! engine, the way ko builds Go images: one layer holding the binary, a config that runs it
//! as a numeric non-root user, and an image layout (`oci-layout`, `index.json`, `blobs/`)
//! packed into a tar file, which podman, skopeo, containerd and kind load as
//! `oci-archive:`. Every timestamp is zero, so the same binary always gives the same digest.

use std::io::Write;

use serde_json::json;
use sha2::{Digest as _, Sha256};

/// What goes into the image.
#[derive(Debug, Clone)]
pub struct Image<'a> {
    /// The binary's bytes, written to `/manager`.
    pub binary: &'a [u8],
    /// The image reference recorded in the archive, e.g. `example.com/op:v0.0.1`.
    pub tag: &'a str,
    /// Go's names: `linux`, `amd64`.
    pub os: &'a str,
    pub architecture: &'a str,
    /// `uid:gid`, numeric so that `runAsNonRoot` can verify it.
    pub user: &'a str,
}

/// Where the binary sits in the image, and what the image runs.
pub const ENTRYPOINT: &str = "/manager";

/// A content-addressed blob of the layout.
struct Blob {
    digest: String,
    bytes: Vec<u8>,
}

impl Blob {
    fn new(bytes: Vec<u8>) -> Self {
        Blob {
            digest: sha256(&bytes),
            bytes,
        }
    }

    fn descriptor(&self, media_type: &str) -> serde_json::Value {
        json!({ "mediaType": media_type, "digest": self.digest, "size": self.bytes.len() })
    }
}

fn sha256(bytes: &[u8]) -> String {
    format!("sha256:{:x}", Sha256::digest(bytes))
}

/// The archive's bytes, and the manifest digest (the image's identity).
pub fn archive(image: &Image) -> std::io::Result<(Vec<u8>, String)> {
    let layer_tar = tar_of(&[(ENTRYPOINT.trim_start_matches('/'), image.binary, 0o755)])?;
    let diff_id = sha256(&layer_tar);
    let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gzip.write_all(&layer_tar)?;
    let layer = Blob::new(gzip.finish()?);

    let config = Blob::new(to_vec(&json!({
        "architecture": image.architecture,
        "os": image.os,
        "config": {
            "User": image.user,
            "Entrypoint": [ENTRYPOINT],
            "WorkingDir": "/",
            // TLS roots come from the ServiceAccount mount (the API server's CA), so the
            // image needs no CA bundle.
            "Env": ["PATH=/"],
        },
        "rootfs": { "type": "layers", "diff_ids": [diff_id] },
        "history": [{ "created_by": "rkb build-image" }],
    })));
    let manifest = Blob::new(to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": config.descriptor("application/vnd.oci.image.config.v1+json"),
        "layers": [layer.descriptor("application/vnd.oci.image.layer.v1.tar+gzip")],
    })));
    let mut entry = manifest.descriptor("application/vnd.oci.image.manifest.v1+json");
    entry["annotations"] = json!({
        "org.opencontainers.image.ref.name": image.tag,
        // containerd (and so `kind load image-archive`) names the image by this one.
        "io.containerd.image.name": image.tag,
    });
    entry["platform"] = json!({ "architecture": image.architecture, "os": image.os });
    let index = to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": [entry],
    }));

    let blob_path = |blob: &Blob| format!("blobs/sha256/{}", &blob.digest["sha256:".len()..]);
    let (config_path, layer_path, manifest_path) =
        (blob_path(&config), blob_path(&layer), blob_path(&manifest));
    let archive = tar_of(&[
        ("oci-layout", br#"{"imageLayoutVersion":"1.0.0"}"#, 0o644),
        ("index.json", &index, 0o644),
        (&config_path, &config.bytes, 0o644),
        (&layer_path, &layer.bytes, 0o644),
        (&manifest_path, &manifest.bytes, 0o644),
    ])?;
    Ok((archive, manifest.digest))
}

fn to_vec(value: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(value).expect("JSON values always serialize")
}

/// A tar of regular files owned by root with zero timestamps (directories are implied).
fn tar_of(files: &[(&str, &[u8], u32)]) -> std::io::Result<Vec<u8>> {
    let mut builder = tar::Builder::new(Vec::new());
    for (path, bytes, mode) in files {
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(*mode);
        header.set_mtime(0);
        header.set_uid(0);
        header.set_gid(0);
        header.set_entry_type(tar::EntryType::Regular);
        builder.append_data(&mut header, path, *bytes)?;
    }
    builder.into_inner()
}

/// This machine's Rust target triple (`rustc -vV`'s `host:`), what `rkb build-image` builds
/// for unless told otherwise.
pub fn host_target() -> String {
    let output = std::process::Command::new("rustc").arg("-vV").output();
    output
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .find_map(|l| l.strip_prefix("host: ").map(str::to_owned))
        })
        .unwrap_or_else(|| "x86_64-unknown-linux-gnu".to_owned())
}

/// Whether an ELF executable asks for a dynamic loader (a `PT_INTERP` program header),
/// which an image with no base does not have. `None` when the bytes are not a 64-bit
/// little-endian ELF file.
pub fn needs_dynamic_loader(elf: &[u8]) -> Option<bool> {
    const PT_INTERP: u32 = 3;
    if elf.get(..6)? != b"\x7fELF\x02\x01" {
        return None;
    }
    let u16_at = |at: usize| Some(u16::from_le_bytes(elf.get(at..at + 2)?.try_into().ok()?));
    let u64_at = |at: usize| Some(u64::from_le_bytes(elf.get(at..at + 8)?.try_into().ok()?));
    let phoff = usize::try_from(u64_at(0x20)?).ok()?;
    let (entry_size, count) = (usize::from(u16_at(0x36)?), usize::from(u16_at(0x38)?));
    let types = (0..count).map(|i| {
        let at = phoff + i * entry_size;
        Some(u32::from_le_bytes(elf.get(at..at + 4)?.try_into().ok()?))
    });
    let types: Option<Vec<u32>> = types.collect();
    Some(types?.contains(&PT_INTERP))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(binary: &[u8]) -> Image<'_> {
        Image {
            binary,
            tag: "example.com/op:v0.0.1",
            os: "linux",
            architecture: "amd64",
            user: "65532:65532",
        }
    }

    fn entries(archive: &[u8]) -> Vec<(String, Vec<u8>)> {
        use std::io::Read as _;
        let mut tar = tar::Archive::new(archive);
        tar.entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let mut bytes = Vec::new();
                e.read_to_end(&mut bytes).unwrap();
                (e.path().unwrap().to_string_lossy().into_owned(), bytes)
            })
            .collect()
    }

    #[test]
    fn every_blob_is_named_by_its_digest_and_the_index_leads_to_the_binary() {
        let (archive, digest) = archive(&image(b"\x7fELF binary")).unwrap();
        let files: std::collections::BTreeMap<_, _> = entries(&archive).into_iter().collect();
        for (path, bytes) in &files {
            if let Some(hex) = path.strip_prefix("blobs/sha256/") {
                assert_eq!(sha256(bytes), format!("sha256:{hex}"), "{path}");
            }
        }
        let index: serde_json::Value = serde_json::from_slice(&files["index.json"]).unwrap();
        assert_eq!(index["manifests"][0]["digest"], digest.as_str());
        let blob =
            |d: &serde_json::Value| &files[&format!("blobs/sha256/{}", &d.as_str().unwrap()[7..])];
        let manifest: serde_json::Value =
            serde_json::from_slice(blob(&index["manifests"][0]["digest"])).unwrap();
        let config: serde_json::Value =
            serde_json::from_slice(blob(&manifest["config"]["digest"])).unwrap();
        assert_eq!(config["config"]["User"], "65532:65532");
        assert_eq!(config["config"]["Entrypoint"][0], ENTRYPOINT);
        let gz = blob(&manifest["layers"][0]["digest"]);
        let mut layer = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut layer).unwrap();
        assert_eq!(config["rootfs"]["diff_ids"][0], sha256(&layer).as_str());
        assert_eq!(
            entries(&layer),
            [("manager".to_owned(), b"\x7fELF binary".to_vec())]
        );
    }

    #[test]
    fn the_same_binary_gives_the_same_image() {
        assert_eq!(
            archive(&image(b"x")).unwrap(),
            archive(&image(b"x")).unwrap()
        );
        assert_ne!(
            archive(&image(b"x")).unwrap().1,
            archive(&image(b"y")).unwrap().1
        );
    }

    #[test]
    fn a_dynamically_linked_binary_is_told_apart() {
        let this_test = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        // Test binaries link glibc dynamically.
        assert_eq!(needs_dynamic_loader(&this_test), Some(true));
        assert_eq!(needs_dynamic_loader(b"#!/bin/sh\n"), None);
    }
}
