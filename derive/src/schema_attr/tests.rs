//! Every key of rkb-core's table as the derive reads it: its example is accepted where
//! the table says it applies, and a key that sets a keyword writes the schema the table
//! gives for the example (key -> keyword; `create api --external-crd`'s test checks
//! keyword -> key).

use rkb_core::attributes::rkb::{KEYS, Key};
use rkb_core::schema::{NULLABLE_ASKED, VALIDATIONS};
use serde_json::{Map, Value};

use super::{Place, Spec, entries, spec};
use crate::ctxt::Ctxt;

/// The first place the key may be written.
fn place(key: &Key) -> Place {
    let places = key.places;
    if places.field {
        Place::Field
    } else if places.ty {
        Place::Type
    } else {
        Place::Spec
    }
}

fn parsed(key: &Key) -> Spec {
    let attr: syn::Attribute = syn::parse_quote!(#[rkb(dummy)]);
    let attr = syn::Attribute {
        meta: syn::parse_str(&format!("rkb({})", key.example)).unwrap(),
        ..attr
    };
    let mut cx = Ctxt::default();
    let entries = entries(&mut cx, &[attr]);
    let spec = spec(&mut cx, &entries, place(key));
    if let Err(error) = cx.check() {
        panic!("{}: `{}` is refused: {error}", key.name, key.example);
    }
    spec
}

/// The JSON of what a spec writes into the schema from the keys' values.
fn schema(spec: &Spec) -> Value {
    let json = |tokens: &proc_macro2::TokenStream| -> Value {
        serde_json::from_str(&tokens.to_string())
            .unwrap_or_else(|e| panic!("{tokens} is no JSON: {e}"))
    };
    let mut out = Map::new();
    for (keyword, tokens) in &spec.keywords {
        let keyword = if *keyword == NULLABLE_ASKED {
            "nullable"
        } else {
            keyword
        };
        out.insert(keyword.to_string(), json(tokens));
    }
    if !spec.validations.is_empty() {
        let rules = spec.validations.iter().map(json).collect();
        out.insert(VALIDATIONS.to_string(), Value::Array(rules));
    }
    Value::Object(out)
}

#[test]
fn every_example_is_accepted_where_its_key_applies() {
    for key in KEYS {
        let spec = parsed(key);
        // A key the table has and the parser ignores would leave nothing behind.
        assert!(
            !spec.is_empty() || !spec.kube.is_empty(),
            "{}: `{}` writes nothing",
            key.name,
            key.example
        );
    }
}

#[test]
fn every_keyword_key_writes_the_schema_the_table_gives() {
    for key in KEYS {
        if key.keyword().is_none() {
            continue;
        }
        let expected: Value = serde_json::from_str(key.schema)
            .unwrap_or_else(|e| panic!("{}: schema {:?}: {e}", key.name, key.schema));
        assert_eq!(schema(&parsed(key)), expected, "{}", key.example);
    }
}
