//! Duplicate member names anywhere in a JSON text. Decoders disagree on which copy of a
//! duplicated member wins (serde_json, Python and JavaScript take the last, RapidJSON's
//! `FindMember` and simdjson's on-demand API the first), so a value holding one cannot be shown
//! to a person as meaning one thing and then passed on as it was written.

use std::collections::HashSet;

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

/// Whether some object anywhere in `text` (valid JSON, or `false` is returned for what does
/// not parse) has two members of the same name, compared after JSON unescaping (`"a"` and
/// `"\u0061"` are the same name).
pub fn has_twins_at_any_depth(text: &[u8]) -> bool {
    let mut de = serde_json::Deserializer::from_slice(text);
    match NoTwins.deserialize(&mut de) {
        Ok(()) => false,
        Err(e) => e.to_string().starts_with(TWIN),
    }
}

/// The start of the error a duplicate raises (any other error means the text did not parse).
const TWIN: &str = "duplicate member";

/// Walks a value, failing at the first object with a duplicated member.
#[derive(Clone, Copy)]
struct NoTwins;

impl<'de> DeserializeSeed<'de> for NoTwins {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoTwins {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut seen = HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !seen.insert(key) {
                return Err(A::Error::custom(TWIN));
            }
            map.next_value_seed(NoTwins)?;
        }
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NoTwins)?.is_some() {}
        Ok(())
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::has_twins_at_any_depth;

    #[test]
    fn a_duplicate_at_any_depth_is_found_however_it_is_spelt() {
        for twins in [
            r#"{"a":1,"a":2}"#,
            r#"{"x":{"to":"attacker@evil","to":"boss@corp"}}"#,
            r#"{"x":[1,{"k":1,"\u006b":2}]}"#,
        ] {
            assert!(has_twins_at_any_depth(twins.as_bytes()), "{twins}");
        }
        for single in [r#"{"a":1,"b":{"a":2}}"#, r#"[{"a":1},{"a":2}]"#, "not json"] {
            assert!(!has_twins_at_any_depth(single.as_bytes()), "{single}");
        }
    }
}
