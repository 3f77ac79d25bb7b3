//! Reading the named members of one JSON object in a single pass.
//!
//! The proxy judges every line by a handful of top-level members (the JSON-RPC envelope; the
//! head of a `result` or an `error`). A strict reader of our own answers first
//! ([`super::scan`]); what it does not decide is read with serde_json. Each value stays
//! borrowed raw text (valid JSON, as `RawValue::get` would give it), so nothing is copied
//! and nesting of any depth is fine (serde_json skips raw values without recursion), and the
//! same pass notices what would make exact names misleading: a known member given twice
//! (hosts disagree on which copy wins) and a member whose name is not one of the known ones
//! but folds to one the way Go's `encoding/json` matches names (docs/protocol.md G17, "fail
//! closed" in docs/design.md §proxy). One pass matters: a server's `tools/list` result can be
//! tens of megabytes, and every extra pass over it is time the host waits.

use std::borrow::Cow;

use serde::Deserializer;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde_json::value::RawValue;

/// The known members of one object, by the index of their name in the list given to
/// [`Members::read`]. A member whose value is JSON `null` is absent, as serde reads an
/// `Option`.
#[derive(Debug, Clone)]
pub struct Members<'a, const N: usize> {
    /// Each known member's value as raw JSON text.
    values: [Option<&'a str>; N],
    /// Known members that were present with the value `null`.
    nulls: [bool; N],
}

impl<'a, const N: usize> From<super::scan::Found<'a, N>> for Members<'a, N> {
    fn from(found: super::scan::Found<'a, N>) -> Self {
        Members {
            values: found.values,
            nulls: found.nulls,
        }
    }
}

/// Why an object's members cannot be read by their exact names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MembersError {
    /// Not JSON that serde_json accepts, or not an object.
    #[error("not a JSON object")]
    NotAnObject,
    /// A known member appears twice.
    #[error("a member appears twice")]
    Duplicated,
    /// A member's name folds to a known one without being it (e.g. `METHOD`, `re\u{17f}ult`).
    #[error("a member's name folds to a known member's name")]
    FoldedTwin,
}

impl<'a, const N: usize> Members<'a, N> {
    /// Reads the members of the object `text` named in `known`, in one pass over it.
    ///
    /// # Errors
    /// [`MembersError`] when `text` is not an object (or has trailing data), a known member
    /// is duplicated, or another member's name folds to a known one.
    pub fn read(text: &'a str, known: &[&str; N]) -> Result<Self, MembersError> {
        match super::scan::members(text, known) {
            Some(found) => Ok(found.into()),
            None => Self::by_serde(text, known),
        }
    }

    /// [`Members::read`], and the members named in `names` of the object that the member
    /// `known[member]` holds, read in the same pass where the fast reader decides. The second
    /// is `None` when that member is absent or not an object, or when it was not read here: the
    /// caller then reads that value by itself.
    ///
    /// # Errors
    /// As [`Members::read`] for `text`.
    pub fn read_with_head<const M: usize>(
        text: &'a str,
        known: &[&str; N],
        member: usize,
        names: &[&str; M],
    ) -> Result<(Self, Option<Members<'a, M>>), MembersError> {
        let head = super::scan::Head { member, names };
        match super::scan::members_and_head(text, known, Some(head)) {
            Some((found, inner)) => Ok((found.into(), inner.map(Members::from))),
            None => Ok((Self::by_serde(text, known)?, None)),
        }
    }

    /// [`Members::read`] by serde_json alone: what decides whenever the fast reader defers.
    fn by_serde(text: &'a str, known: &[&str; N]) -> Result<Self, MembersError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let members = (&mut de)
            .deserialize_map(Reader { known })
            .map_err(|_| MembersError::NotAnObject)??;
        de.end().map_err(|_| MembersError::NotAnObject)?;
        Ok(members)
    }

    /// The raw JSON text of the `i`-th known member's value, `None` when absent or `null`.
    pub fn get(&self, i: usize) -> Option<&'a str> {
        self.values.get(i).copied().flatten()
    }

    /// Whether the `i`-th known member was given as `null`.
    pub fn is_null(&self, i: usize) -> bool {
        self.nulls.get(i).copied().unwrap_or(false)
    }
}

/// Whether a JSON object (raw text) has a member whose name folds to one of `known` without
/// being it (see [`MembersError::FoldedTwin`]). `false` for text that is not an object.
pub fn has_folded_member(object: &str, known: &[&str]) -> bool {
    struct Keys<'k>(&'k [&'k str]);
    impl<'de> Visitor<'de> for Keys<'_> {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut clash = false;
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                map.next_value::<IgnoredAny>()?;
                clash |= folds_to_known(&key, self.0);
            }
            Ok(clash)
        }
    }
    let mut de = serde_json::Deserializer::from_str(object);
    de.deserialize_map(Keys(known)).unwrap_or(false)
}

/// Whether two members of a JSON object (raw text) have the same name, or, with `folded`, names
/// that are the same once folded as Go's decoder folds them (see [`MembersError::FoldedTwin`]):
/// decoders disagree on which copy wins, so such an object cannot be passed on as meaning one
/// thing. `false` for text that is not an object.
pub fn has_twin_names(object: &str, folded: bool) -> bool {
    struct Names(bool);
    impl<'de> Visitor<'de> for Names {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut seen = std::collections::HashSet::new();
            let mut twin = false;
            while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                map.next_value::<IgnoredAny>()?;
                let name: String = if self.0 {
                    fold(&key).collect()
                } else {
                    key.into_owned()
                };
                twin |= !seen.insert(name);
            }
            Ok(twin)
        }
    }
    let mut de = serde_json::Deserializer::from_str(object);
    de.deserialize_map(Names(folded)).unwrap_or(false)
}

/// A name's characters as Go's decoder compares them: ASCII case ignored, and `ſ` (U+017F) and
/// the Kelvin sign (U+212A) taken as `s`, `k`.
fn fold(name: &str) -> impl Iterator<Item = char> + '_ {
    name.chars().map(|c| match c {
        '\u{17f}' => 's',
        '\u{212a}' => 'k',
        c => c.to_ascii_lowercase(),
    })
}

/// Whether `key` is not in `known` but folds to a name in it the way Go's decoder compares
/// names: ASCII case ignored, and `ſ` (U+017F) and the Kelvin sign (U+212A) taken as `s`, `k`.
pub fn folds_to_known(key: &str, known: &[&str]) -> bool {
    if known.contains(&key) {
        return false;
    }
    known.iter().any(|k| {
        let mut folded = fold(key);
        k.chars()
            .map(|c| c.to_ascii_lowercase())
            .all(|c| folded.next() == Some(c))
            && folded.next().is_none()
    })
}

struct Reader<'k, const N: usize> {
    known: &'k [&'k str; N],
}

impl<'de, const N: usize> Visitor<'de> for Reader<'_, N> {
    type Value = Result<Members<'de, N>, MembersError>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Members {
            values: [None; N],
            nulls: [false; N],
        };
        let mut seen = [false; N];
        // serde_json checks the object's end after this returns, so a problem is noted and the
        // rest of the object still read (only lines that are refused pay for that).
        let mut problem = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match self.known.iter().position(|k| *k == key) {
                Some(i) if problem.is_none() => {
                    if seen[i] {
                        problem = Some(MembersError::Duplicated);
                        map.next_value::<IgnoredAny>()?;
                        continue;
                    }
                    seen[i] = true;
                    let raw = map.next_value_seed(Borrowed)?.get();
                    if raw == "null" {
                        members.nulls[i] = true;
                    } else {
                        members.values[i] = Some(raw);
                    }
                }
                _ => {
                    if problem.is_none() && folds_to_known(&key, self.known) {
                        problem = Some(MembersError::FoldedTwin);
                    }
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        if let Some(problem) = problem {
            return Ok(Err(problem));
        }
        Ok(Ok(members))
    }
}

/// A member's value as borrowed raw text.
struct Borrowed;

impl<'de> DeserializeSeed<'de> for Borrowed {
    type Value = &'de RawValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        serde::Deserialize::deserialize(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: [&str; 2] = ["id", "result"];

    #[test]
    fn reads_known_members_raw_and_skips_the_rest() {
        let m = Members::read(r#"{"x":[1,{"y":2}],"id":7,"result":{"a":"b"}}"#, &KNOWN).unwrap();
        assert_eq!(m.get(0), Some("7"));
        assert_eq!(m.get(1), Some(r#"{"a":"b"}"#));
    }

    #[test]
    fn null_members_are_absent_but_visible() {
        let m = Members::read(r#"{"id":null}"#, &KNOWN).unwrap();
        assert!(m.get(0).is_none());
        assert!(m.is_null(0));
        assert!(!m.is_null(1));
    }

    #[test]
    fn refuses_what_exact_names_would_misread() {
        for (text, why) in [
            (r#"{"id":1,"id":2}"#, MembersError::Duplicated),
            (r#"{"id":1,"ID":2}"#, MembersError::FoldedTwin),
            ("{\"re\u{17f}ult\":{}}", MembersError::FoldedTwin),
            (r#"{"id":1} x"#, MembersError::NotAnObject),
            (r#"[1]"#, MembersError::NotAnObject),
            (r#"{"id":1,"x":NaN}"#, MembersError::NotAnObject),
        ] {
            assert_eq!(Members::read(text, &KNOWN).unwrap_err(), why, "{text}");
        }
    }

    #[test]
    fn twin_names_are_found_exactly_or_folded() {
        assert!(has_twin_names(r#"{"a":1,"a":2}"#, false));
        assert!(!has_twin_names(r#"{"a":1,"A":2}"#, false));
        assert!(has_twin_names(r#"{"method":1,"Method":2}"#, true));
        assert!(has_twin_names("{\"mode\":1,\"mode\":2}", true));
        assert!(!has_twin_names(r#"{"method":1,"params":2}"#, true));
        assert!(!has_twin_names("[1]", true));
    }

    #[test]
    fn folding_is_exact_about_length_and_letters() {
        assert!(folds_to_known("Result", &KNOWN));
        assert!(!folds_to_known("results", &KNOWN));
        assert!(!folds_to_known("resul", &KNOWN));
        assert!(!folds_to_known("result", &KNOWN));
        assert!(has_folded_member(r#"{"iD":1}"#, &KNOWN));
        assert!(!has_folded_member(r#"{"other":1}"#, &KNOWN));
    }

    /// The envelope's names, as the proxy reads every line.
    const ENVELOPE: [&str; 6] = ["jsonrpc", "id", "method", "params", "result", "error"];

    /// Lines of the shapes the proxy sees, valid JSON all (the last few defer to serde_json).
    const SEEDS: [&str; 9] = [
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x y"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"hi\n\"there\" \u00e9 \/"}}],"maxTokens":100}}"#,
        " { \"id\" : \"abc\" , \"result\" : { \"tools\" : [ 1 , -2.5e+3 , true , false , null , [ ] , { } ] } } \n",
        "{\"id\":null,\"error\":{\"code\":-32042,\"message\":\"m\",\"data\":{\"elicitations\":[]}}}\n",
        r#"{"jsonrpc":"2.0","id":0,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}}},"requestState":"s"}}"#,
        r#"{"method":"x","params":[[[[[[1]]]]],{"a":{"b":{"c":[0.5,1E9,-0,0.0e-0]}}}]}"#,
        r#"{}"#,
        r#"{"id":2,"result":{"text":"\ud83d\ude00"}}"#,
        "{\"m\u{e9}thod\":1,\"id\":3}",
    ];

    /// The names of an `InputRequiredResult`'s head, read inside `result` (index 4).
    const HEAD: [&str; 3] = ["resultType", "inputRequests", "requestState"];

    /// The fast reader and serde_json on one text: where the fast one answers, serde_json
    /// accepts it and finds the same members with the same raw text, and the same head inside
    /// an object `result`. Counts the answers.
    fn agree(text: &str, answered: &mut usize) {
        use crate::protocol::scan::{Found, Head, members_and_head};
        let head = Head {
            member: 4,
            names: &HEAD,
        };
        let Some((Found { values, nulls }, inner)) = members_and_head(text, &ENVELOPE, Some(head))
        else {
            return;
        };
        let slow = Members::by_serde(text, &ENVELOPE).unwrap_or_else(|e| {
            panic!("the fast reader accepted what serde_json refuses ({e}): {text:?}")
        });
        for i in 0..ENVELOPE.len() {
            assert_eq!(values[i], slow.get(i), "{text:?}, {}", ENVELOPE[i]);
            assert_eq!(nulls[i], slow.is_null(i), "{text:?}, null {}", ENVELOPE[i]);
        }
        let result = slow.get(4).filter(|r| r.starts_with('{'));
        match (inner, result) {
            (Some(inner), Some(result)) => {
                let slow = Members::by_serde(result, &HEAD).unwrap_or_else(|e| {
                    panic!(
                        "the fast reader accepted a result head serde_json refuses ({e}): {text:?}"
                    )
                });
                for (i, name) in HEAD.iter().enumerate() {
                    assert_eq!(inner.values[i], slow.get(i), "{text:?}, result.{name}");
                    assert_eq!(
                        inner.nulls[i],
                        slow.is_null(i),
                        "{text:?}, null result.{name}"
                    );
                }
            }
            (None, None) => {}
            (inner, result) => panic!("head {inner:?} for the result {result:?}: {text:?}"),
        }
        // Without the head, the same answer.
        assert!(
            crate::protocol::scan::members(text, &ENVELOPE).is_some(),
            "{text:?}"
        );
        *answered += 1;
    }

    #[test]
    fn the_fast_reader_answers_common_lines_as_serde_json_does() {
        let mut answered = 0;
        for seed in SEEDS {
            agree(seed, &mut answered);
        }
        // Everything but the escaped surrogate pair and the non-ASCII key.
        assert_eq!(answered, SEEDS.len() - 2);
    }

    #[test]
    fn the_fast_reader_never_accepts_a_mutation_serde_json_refuses() {
        // Insertions, deletions and replacements of what JSON and its readers trip on.
        const PIECES: [&str; 40] = [
            "\"",
            "\\",
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            " ",
            "\n",
            "\t",
            "0",
            "1",
            "-",
            "+",
            ".",
            "e",
            "n",
            "u",
            "l",
            "t",
            "\u{0}",
            "\u{1f}",
            "\u{7f}",
            "\u{e9}",
            "\u{17f}",
            "\u{212a}",
            "\\u",
            "\\ud800",
            "\\udc00",
            "\\u0041",
            "ID",
            "\"id\":1,",
            "\"method\":\"m\",",
            "null",
            "true",
            "1e",
            "01",
            "-0",
            ".5",
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut below = |n: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % n as u64) as usize
        };
        let mut answered = 0;
        for _ in 0..100_000 {
            let mut text = SEEDS[below(SEEDS.len())].to_owned();
            for _ in 0..=below(3) {
                let at = text
                    .char_indices()
                    .map(|(i, _)| i)
                    .nth(below(text.chars().count().max(1)))
                    .unwrap_or(0);
                let end = text[at..].chars().next().map_or(at, |c| at + c.len_utf8());
                match below(3) {
                    0 => text.insert_str(at, PIECES[below(PIECES.len())]),
                    1 => text.replace_range(at..end, ""),
                    _ => text.replace_range(at..end, PIECES[below(PIECES.len())]),
                }
            }
            agree(&text, &mut answered);
        }
        // The mutations must also reach the fast reader's answers, not only its deferrals.
        assert!(answered > 10_000, "{answered}");
    }
}
