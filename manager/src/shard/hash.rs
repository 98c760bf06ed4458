//! The hash the API server shards by, and the slices of its space.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// The 64-bit FNV-1a hash of `bytes`: what KEP-5866's `shardRange()` compares, computed by
/// the API server over `metadata.uid` (or `metadata.namespace`).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes.iter().fold(OFFSET_BASIS, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(PRIME)
    })
}

/// What decides an object's slice: its UID, which the API server's `shardRange()` hashes
/// too. `None` for an object not yet created (no UID). Objects a controller owns need no
/// key of their own: a change of one reconciles its owner, in the owner's slice.
pub fn shard_key(meta: &ObjectMeta) -> Option<&str> {
    meta.uid.as_deref()
}

/// The hash space `[0, 2^64)` cut into `count` equal slices; slice `i` is
/// `[ceil(i * 2^64 / count), ceil((i + 1) * 2^64 / count))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slices {
    count: u32,
}

impl Slices {
    /// At most this many slices: more would only make the ownership table longer.
    pub const MAX: u32 = 1024;

    /// `count` slices, refused outside `1..=1024` with the reason.
    pub fn new(count: u32) -> anyhow::Result<Self> {
        if count == 0 || count > Self::MAX {
            anyhow::bail!(
                "--sharding-slices={count}: must be between 1 and {} (e.g. 32, the default); \
                 every replica of an operator must use the same value",
                Self::MAX
            );
        }
        Ok(Self { count })
    }

    pub fn count(self) -> u32 {
        self.count
    }

    /// Every slice, in order.
    pub fn all(self) -> impl Iterator<Item = u32> {
        0..self.count
    }

    /// The slice `hash` falls in.
    pub fn of_hash(self, hash: u64) -> u32 {
        // floor(hash * count / 2^64) < count, as hash < 2^64.
        ((u128::from(hash) * u128::from(self.count)) >> 64) as u32
    }

    /// The slice of an object with this shard key (see [`shard_key`]).
    pub fn of_key(self, key: &str) -> u32 {
        self.of_hash(fnv1a64(key.as_bytes()))
    }

    /// The bounds of `slice`: inclusive start, exclusive end (`2^64` for the last).
    pub fn range(self, slice: u32) -> (u128, u128) {
        (self.start(slice), self.start(slice + 1))
    }

    fn start(self, slice: u32) -> u128 {
        (u128::from(slice) << 64).div_ceil(u128::from(self.count))
    }

    /// The API server's `shardSelector` for these slices over `object.metadata.uid`,
    /// adjacent slices merged: `shardRange(object.metadata.uid, '0x…', '0x…') || …`.
    /// `None` for no slice at all (the server refuses an empty selector).
    pub fn selector(self, slices: impl IntoIterator<Item = u32>) -> Option<String> {
        let mut ranges: Vec<(u128, u128)> = Vec::new();
        let mut sorted: Vec<u32> = slices.into_iter().filter(|s| *s < self.count).collect();
        sorted.sort_unstable();
        sorted.dedup();
        for slice in sorted {
            let (start, end) = self.range(slice);
            match ranges.last_mut() {
                Some(last) if last.1 == start => last.1 = end,
                _ => ranges.push((start, end)),
            }
        }
        if ranges.is_empty() {
            return None;
        }
        Some(
            ranges
                .iter()
                // 16 hex digits, and 17 for 2^64, as the API server requires.
                .map(|(start, end)| {
                    format!("shardRange(object.metadata.uid, '0x{start:016x}', '0x{end:016x}')")
                })
                .collect::<Vec<_>>()
                .join(" || "),
        )
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

    use super::*;

    /// Computed with Go's `hash/fnv` `New64a`, which the API server's `HashField` uses.
    #[test]
    fn the_hash_is_the_api_servers() {
        for (input, hash) in [
            ("", 0xcbf29ce484222325),
            ("a", 0xaf63dc4c8601ec8c),
            ("foobar", 0x85944171f73967e8),
            ("kube-system", 0xdf65c7bc1d82b35e),
            ("0b1e8f0e-6c3a-4a8f-9d2e-3f1c2b4a5d6e", 0x23d5c23147c9822a),
        ] {
            assert_eq!(fnv1a64(input.as_bytes()), hash, "{input:?}");
        }
    }

    #[test]
    fn slices_tile_the_hash_space_and_agree_with_their_ranges() {
        for count in [1, 2, 3, 7, 32, 1000, 1024] {
            let slices = Slices::new(count).unwrap();
            assert_eq!(slices.range(0).0, 0);
            assert_eq!(slices.range(count - 1).1, 1 << 64);
            for slice in slices.all() {
                let (start, end) = slices.range(slice);
                assert!(start < end);
                if slice + 1 < count {
                    assert_eq!(end, slices.range(slice + 1).0);
                }
                // The first and last hash of each range fall in it, and no further.
                assert_eq!(slices.of_hash(start as u64), slice, "{count}: {slice}");
                assert_eq!(slices.of_hash((end - 1) as u64), slice, "{count}: {slice}");
                if start > 0 {
                    assert_eq!(slices.of_hash((start - 1) as u64), slice - 1);
                }
            }
        }
    }

    #[test]
    fn slice_counts_outside_the_bounds_are_refused() {
        for count in [0, 1025] {
            let error = Slices::new(count).unwrap_err().to_string();
            assert!(error.contains("between 1 and 1024"), "{error}");
        }
    }

    #[test]
    fn the_selector_merges_adjacent_slices_in_the_servers_syntax() {
        let four = Slices::new(4).unwrap();
        assert_eq!(
            four.selector([3, 0, 1]).unwrap(),
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') \
             || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')"
        );
        assert_eq!(
            Slices::new(1).unwrap().selector([0]).unwrap(),
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"
        );
        assert_eq!(four.selector([]), None);
    }

    #[test]
    fn an_object_is_keyed_by_its_own_uid_as_the_api_server_hashes_it() {
        let mut meta = ObjectMeta {
            uid: Some("own".into()),
            ..Default::default()
        };
        assert_eq!(shard_key(&meta), Some("own"));
        // A controller owner does not move it: the server's selector sees only its UID.
        meta.owner_references = Some(vec![OwnerReference {
            uid: "memcached".into(),
            controller: Some(true),
            ..Default::default()
        }]);
        assert_eq!(shard_key(&meta), Some("own"));
        assert_eq!(shard_key(&ObjectMeta::default()), None);
    }
}
