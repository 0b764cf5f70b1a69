//! Pins derived names to serde's tags: serde's own list of an enum's variants (as
//! its "unknown variant" error spells them, in declaration order) must equal the
//! names `#[derive(Names)]` gives, so a name the journal records is the tag serde
//! writes.

use serde::de::DeserializeOwned;

/// A tag no enum uses.
const PROBE: &str = "\u{1}cairn-probe";

/// serde's list of `T`'s variant names: `T` read from a value whose tag (the field
/// `tag` of an internally or adjacently tagged enum; the value itself for an
/// externally tagged one) is no variant.
pub fn serde_variants<T: DeserializeOwned>(tag: Option<&str>) -> Result<Vec<String>, String> {
    let probe = match tag {
        Some(tag) => {
            let mut object = serde_json::Map::new();
            object.insert(tag.to_owned(), PROBE.into());
            object.insert("content".into(), serde_json::Value::Null);
            serde_json::Value::Object(object)
        }
        None => serde_json::json!(PROBE),
    };
    let message = match serde_json::from_value::<T>(probe) {
        Ok(_) => return Err("the probe tag was read as a variant".into()),
        Err(e) => e.to_string(),
    };
    if !message.starts_with("unknown variant") {
        return Err(format!("serde did not list the variants: {message}"));
    }
    if message.contains("there are no variants") {
        return Ok(vec![]);
    }
    let listed = message
        .split_once("expected ")
        .map(|(_, rest)| rest)
        .ok_or_else(|| format!("serde did not list the variants: {message}"))?;
    Ok(listed
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect())
}

/// Asserts that `derived` (an enum's `VARIANT_NAMES`) is serde's list of its
/// variants, in order.
///
/// # Panics
///
/// When the lists differ, naming both.
#[track_caller]
pub fn assert_serde_names<T: DeserializeOwned>(tag: Option<&str>, derived: &[&str]) {
    let serde = serde_variants::<T>(tag).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        serde,
        derived,
        "the derived names of `{}` differ from its serde tags",
        std::any::type_name::<T>()
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Deserialize, crate::Names)]
    #[serde(tag = "type", rename_all = "kebab-case")]
    #[allow(dead_code)]
    enum Tagged {
        PhaseOneReported {
            x: u32,
        },
        #[serde(rename = "phase-1d-failed")]
        Phase1dFailed,
        QAPassed {
            n: u32,
        },
    }

    #[derive(Deserialize, crate::Names)]
    #[allow(dead_code)]
    enum Plain {
        A,
        B(u8),
    }

    #[test]
    fn derived_names_are_serdes_tags() {
        assert_eq!(
            Tagged::VARIANT_NAMES,
            ["phase-one-reported", "phase-1d-failed", "q-a-passed"]
        );
        assert_serde_names::<Tagged>(Some("type"), Tagged::VARIANT_NAMES);
        assert_eq!(Tagged::Phase1dFailed.variant_name(), "phase-1d-failed");
        assert_serde_names::<Plain>(None, Plain::VARIANT_NAMES);
        assert_eq!(Plain::B(1).variant_name(), "B");
    }

    #[test]
    fn a_name_serde_does_not_write_is_caught() {
        let caught = std::panic::catch_unwind(|| {
            assert_serde_names::<Tagged>(
                Some("type"),
                &["phase-one-reported", "phase-1-d-failed", "q-a-passed"],
            )
        });
        assert!(caught.is_err());
    }
}
