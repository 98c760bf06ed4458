use super::*;

const DAY: Duration = Duration::from_secs(24 * 3600);

fn policy(hosts: &[&str]) -> Policy {
    Policy {
        hosts: hosts.iter().map(|h| (*h).to_owned()).collect(),
        owner: "test-operator".into(),
        ca_validity: 300 * DAY,
        serving_validity: 30 * DAY,
    }
}

fn first(pem: &str) -> Parsed {
    certificates(pem).into_iter().next().expect("a certificate")
}

fn bundle(material: &Material) -> Vec<Parsed> {
    certificates(&material.ca_bundle)
}

/// What `next` makes of `stored` at `now`, checked to be something the webhook server can
/// serve and the API server trusts.
fn next_at(stored: &Material, policy: &Policy, now: SystemTime, settled: bool) -> Next {
    let next = next(stored, policy, now, settled).unwrap();
    let serving = first(&next.material.tls_cert);
    let key = KeyPair::from_pem(&next.material.tls_key).unwrap();
    assert_eq!(serving.public_key, key.subject_public_key_info());
    assert!(
        bundle(&next.material)
            .iter()
            .any(|ca| serving.signed_by(ca)),
        "a CA of the bundle signed the serving certificate"
    );
    assert!(has_usable_ca(&next.material, now));
    next
}

#[test]
fn a_first_start_makes_a_ca_and_a_serving_certificate_for_the_names() {
    let now = SystemTime::now();
    let policy = policy(&["webhook.system.svc", "127.0.0.1"]);
    let made = next_at(&Material::default(), &policy, now, false);
    assert_eq!(made.changes, [Change::NewCa, Change::NewServing]);
    assert!(!made.waiting_for_trust);
    let serving = first(&made.material.tls_cert);
    assert_eq!(serving.hosts, ["webhook.system.svc", "127.0.0.1"]);
    assert!(!serving.is_ca);
    let ca = first(&made.material.ca_bundle);
    assert!(ca.is_ca);
    assert!(serving.not_after <= ca.not_after);

    let again = next_at(&made.material, &policy, now, false);
    assert!(again.changes.is_empty(), "{:?}", again.changes);
    assert_eq!(again.material, made.material, "nothing to write");
}

#[test]
fn the_serving_certificate_is_renewed_by_the_same_ca_when_a_third_of_its_life_is_left() {
    let now = SystemTime::now();
    let policy = policy(&["webhook.system.svc"]);
    let made = next_at(&Material::default(), &policy, now, false).material;
    let early = next_at(&made, &policy, now + 19 * DAY, false);
    assert!(early.changes.is_empty());
    let renewed = next_at(&made, &policy, now + 21 * DAY, false);
    assert_eq!(renewed.changes, [Change::RenewedServing]);
    assert_eq!(renewed.material.ca_bundle, made.ca_bundle);
    assert_eq!(renewed.material.ca_key, made.ca_key);
    assert_ne!(renewed.material.tls_cert, made.tls_cert);
}

#[test]
fn other_names_get_a_new_serving_certificate() {
    let now = SystemTime::now();
    let made = next_at(&Material::default(), &policy(&["a.system.svc"]), now, false).material;
    let renamed = next_at(&made, &policy(&["b.system.svc"]), now, false);
    assert_eq!(renamed.changes, [Change::RenewedServing]);
    assert_eq!(first(&renamed.material.tls_cert).hosts, ["b.system.svc"]);
}

#[test]
fn a_ca_rotation_trusts_both_cas_and_serves_the_new_one_only_once_that_settled() {
    let now = SystemTime::now();
    let policy = policy(&["webhook.system.svc"]);
    let made = next_at(&Material::default(), &policy, now, false).material;
    let old_ca = first(&made.ca_bundle);
    // Keep the serving certificate fresh up to the CA's rotation, as the leader would.
    let at = now + 201 * DAY;
    let before = next_at(&made, &policy, at - 2 * DAY, false).material;

    // Whether the stored bundle had settled or not: the new CA is new to the API servers.
    let rotated = next_at(&before, &policy, at, true);
    assert_eq!(
        next_at(&before, &policy, at, false).changes,
        [Change::RotatedCa]
    );
    assert_eq!(rotated.changes, [Change::RotatedCa]);
    assert!(rotated.waiting_for_trust);
    let cas = bundle(&rotated.material);
    assert_eq!(cas.len(), 2, "the new CA and the old one");
    assert_eq!(cas[1].der, old_ca.der, "the old CA stays trusted");
    assert_eq!(
        rotated.material.tls_cert, before.tls_cert,
        "the old CA's certificate is served until the bundle settled"
    );

    let unsettled = next_at(&rotated.material, &policy, at, false);
    assert!(unsettled.changes.is_empty() && unsettled.waiting_for_trust);

    let settled = next_at(&rotated.material, &policy, at, true);
    assert_eq!(settled.changes, [Change::RenewedServing]);
    assert!(!settled.waiting_for_trust);
    assert!(first(&settled.material.tls_cert).signed_by(&cas[0]));
    assert_eq!(bundle(&settled.material).len(), 2);

    let after_expiry = next_at(&settled.material, &policy, now + 301 * DAY, false);
    assert!(after_expiry.changes.contains(&Change::DroppedExpiredCas));
    assert_eq!(bundle(&after_expiry.material).len(), 1);
    assert_eq!(bundle(&after_expiry.material)[0].der, cas[0].der);
}

#[test]
fn a_broken_serving_certificate_is_reissued_by_the_same_ca() {
    let now = SystemTime::now();
    let policy = policy(&["webhook.system.svc"]);
    let made = next_at(&Material::default(), &policy, now, false).material;
    for broken in [
        Material {
            tls_cert: "garbage".into(),
            ..made.clone()
        },
        Material {
            tls_key: String::new(),
            ..made.clone()
        },
        Material {
            // Another pair's key: the certificate and key no longer match.
            tls_key: KeyPair::generate().unwrap().serialize_pem(),
            ..made.clone()
        },
    ] {
        let repaired = next_at(&broken, &policy, now, false);
        assert_eq!(repaired.changes, [Change::NewServing]);
        assert_eq!(repaired.material.ca_bundle, made.ca_bundle);
    }
}

#[test]
fn a_certificate_signed_by_no_ca_of_the_bundle_is_replaced() {
    let now = SystemTime::now();
    let policy = policy(&["webhook.system.svc"]);
    let made = next_at(&Material::default(), &policy, now, false).material;
    let other = next_at(&Material::default(), &policy, now, false).material;
    let foreign = Material {
        tls_cert: other.tls_cert,
        tls_key: other.tls_key,
        ..made.clone()
    };
    let repaired = next_at(&foreign, &policy, now, false);
    assert_eq!(repaired.changes, [Change::NewServing]);
}

#[test]
fn a_lost_ca_key_makes_a_new_ca_that_keeps_trusting_the_old_one() {
    let now = SystemTime::now();
    let policy = policy(&["webhook.system.svc"]);
    let made = next_at(&Material::default(), &policy, now, false).material;
    let keyless = Material {
        ca_key: String::new(),
        ..made.clone()
    };
    assert!(!has_usable_ca(&keyless, now));
    let next = next_at(&keyless, &policy, now, false);
    assert_eq!(next.changes, [Change::NewCa]);
    assert_eq!(bundle(&next.material).len(), 2);
    assert!(next.waiting_for_trust, "the old serving certificate stays");
}

#[test]
fn the_contents_are_not_in_the_debug_output() {
    let made = next_at(
        &Material::default(),
        &policy(&["webhook.system.svc"]),
        SystemTime::now(),
        false,
    )
    .material;
    let shown = format!("{made:?}");
    assert!(!shown.contains("BEGIN"), "{shown}");
    assert!(shown.contains("set"), "{shown}");
}

#[test]
fn pem_round_trips() {
    let made = next_at(
        &Material::default(),
        &policy(&["webhook.system.svc"]),
        SystemTime::now(),
        false,
    )
    .material;
    let ca = first(&made.ca_bundle);
    assert_eq!(first(&ca.pem()).der, ca.der);
}
