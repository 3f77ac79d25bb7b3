//! JSON read and digested exactly as it was written: what a consent is bound to must not stand
//! for two different requests.
//!
//! Two gaps lie between the text a host or server writes and the [`serde_json::Value`] mcp-consent
//! reads. First, a number the value cannot hold as written: an integer beyond `i64`/`u64`, or
//! a decimal whose nearest double prints as another number (`9007199254740993.0` reads as
//! `9007199254740992.0`). Second, a member given twice (the value keeps one copy, a server may
//! read the other; `super::twins`). A text free of both is [`shown_exactly`]: the person sees
//! what the server gets.
//!
//! RFC 8785 (JCS) writes numbers as doubles, so two integers past 2^53 that round to the same
//! double (`1234567890123456789` and `…790`) canonicalise alike. [`canonical`] is JCS with one
//! change: an integer is written with all its digits. For any value without such an integer it
//! is byte for byte what `serde_jcs` writes, so digests stored before stay valid.

use serde_json::Value;

/// The magnitude up to which every integer is exactly a double (2^53).
const EXACT_IN_DOUBLE: u64 = 1 << 53;

/// Whether `text` is JSON that reads exactly as written: no number the reading would change,
/// and no member given twice at any depth.
pub fn shown_exactly(text: &[u8]) -> bool {
    serde_json::from_slice::<serde::de::IgnoredAny>(text).is_ok()
        && !has_inexact_number(text)
        && !super::twins::has_twins_at_any_depth(text)
}

/// Whether the JSON text `text` holds a number (outside strings) that a [`Value`] does not
/// hold as written. An integer literal must fit `i64` or `u64`. Any other number must be
/// exactly, as a decimal, the shortest form of the double it reads as: `0.1`, `1.50` and `1e2`
/// pass, while `9007199254740993.0`, `0.10000000000000000001` and `1e400` do not.
pub fn has_inexact_number(text: &[u8]) -> bool {
    let (mut in_string, mut escaped) = (false, false);
    let mut token: Vec<u8> = Vec::new();
    for &b in text {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        // A number starts with a digit or `-` (the `e` of `true` starts none).
        let continues = !token.is_empty() && matches!(b, b'+' | b'.' | b'e' | b'E');
        if b.is_ascii_digit() || b == b'-' || continues {
            token.push(b);
            continue;
        }
        if !token.is_empty() && !number_is_exact(&token) {
            return true;
        }
        token.clear();
        in_string = b == b'"';
    }
    !token.is_empty() && !number_is_exact(&token)
}

/// Whether one number literal reads as written (see [`has_inexact_number`]).
fn number_is_exact(literal: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(literal) else {
        return false;
    };
    if !literal.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        return text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok();
    }
    let Ok(double) = text.parse::<f64>() else {
        return false;
    };
    if !double.is_finite() {
        return false;
    }
    // `{}` of an f64 is its shortest round-trip form, as serde_json writes it.
    decimal(text) == decimal(&format!("{double:e}"))
}

/// A decimal literal as (negative, significant digits, exponent): `-1.50e2` is
/// `(true, "15", 1)`. Zero is `(false, "", 0)` whatever its sign or spelling.
fn decimal(text: &str) -> Option<(bool, String, i64)> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], unsigned[at + 1..].parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut exponent = exponent.checked_sub(i64::try_from(fraction.len()).ok()?)?;
    let trimmed = digits.trim_start_matches('0');
    let significant = trimmed.trim_end_matches('0');
    if significant.is_empty() {
        return Some((false, String::new(), 0));
    }
    exponent = exponent.checked_add(i64::try_from(trimmed.len() - significant.len()).ok()?)?;
    Some((negative, significant.to_owned(), exponent))
}

/// RFC 8785 canonical JSON of `value`, except that an integer is written with all its digits
/// (see the module's note). Object members are ordered by their names' UTF-16 code units.
pub fn canonical(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Object(members) => {
            let mut sorted: Vec<(&String, &Value)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push(b'{');
            for (i, (name, member)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                leaf(&Value::String(name.clone()), out);
                out.push(b':');
                write(member, out);
            }
            out.push(b'}');
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write(item, out);
            }
            out.push(b']');
        }
        Value::Number(n) if is_big_integer(n) => out.extend_from_slice(n.to_string().as_bytes()),
        other => leaf(other, out),
    }
}

/// An integer a double does not hold exactly.
fn is_big_integer(n: &serde_json::Number) -> bool {
    n.as_u64().is_some_and(|u| u > EXACT_IN_DOUBLE)
        || n.as_i64()
            .is_some_and(|i| i.unsigned_abs() > EXACT_IN_DOUBLE)
}

/// A string, a double, a boolean or null, as RFC 8785 writes it.
fn leaf(value: &Value, out: &mut Vec<u8>) {
    match serde_jcs::to_vec(value) {
        Ok(text) => out.extend_from_slice(&text),
        // Only a non-finite double fails, which a `Value` cannot hold.
        Err(_) => out.extend_from_slice(value.to_string().as_bytes()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_exact_when_the_value_holds_them_as_written() {
        for exact in [
            "1",
            "-0",
            "0.1",
            "1.50",
            "1e2",
            "-2.5E-3",
            "18446744073709551615",
            "-9223372036854775808",
            "1.7976931348623157e308",
            "0.0",
        ] {
            assert!(number_is_exact(exact.as_bytes()), "{exact}");
        }
        for inexact in [
            "18446744073709551616",
            "9007199254740993.0",
            "0.10000000000000000001",
            "1e400",
            "123456789012345678901234567890e-10",
        ] {
            assert!(!number_is_exact(inexact.as_bytes()), "{inexact}");
        }
    }

    #[test]
    fn numbers_are_found_outside_strings_only() {
        for exact in [
            r#"{"n":18446744073709551615,"m":-9223372036854775808,"ok":true,"f":1.5e300}"#,
            r#"{"s":"123456789012345678901234567890","e":"\"99999999999999999999\""}"#,
        ] {
            assert!(!has_inexact_number(exact.as_bytes()), "{exact}");
        }
        for inexact in [
            r#"{"n":18446744073709551616}"#,
            r#"{"a":[1,-9223372036854775809]}"#,
            "123456789012345678901234567890",
            r#"{"f":9007199254740993.0}"#,
        ] {
            assert!(has_inexact_number(inexact.as_bytes()), "{inexact}");
        }
    }

    #[test]
    fn a_text_is_shown_exactly_only_without_inexact_numbers_or_twins() {
        assert!(shown_exactly(
            br#"{"a":[1,2.5,"9007199254740993.0"],"b":{"c":null}}"#
        ));
        assert!(!shown_exactly(br#"{"a":{"n":9007199254740993.0}}"#));
        assert!(!shown_exactly(br#"{"a":{"to":"x","to":"y"}}"#));
        assert!(!shown_exactly(b"{\"a\":"));
        assert!(shown_exactly(br#"{"t":true,"f":false,"e":1e0}"#));
    }

    #[test]
    fn canonical_is_jcs_but_keeps_every_digit_of_an_integer() {
        let ordinary = json!({"b": [1, 2.5, 1e21, -0.0, "é\u{1}\"", true, null],
            "a": {"\u{e9}": 1, "z": 9007199254740992_u64, "\u{10000}": 2, "\u{ffff}": 3}});
        assert_eq!(canonical(&ordinary), serde_jcs::to_vec(&ordinary).unwrap());
        let (a, b) = (
            json!({"account": 1234567890123456789_u64}),
            json!({"account": 1234567890123456790_u64}),
        );
        assert_eq!(
            serde_jcs::to_vec(&a).unwrap(),
            serde_jcs::to_vec(&b).unwrap()
        );
        assert_ne!(canonical(&a), canonical(&b));
        assert_eq!(canonical(&a), br#"{"account":1234567890123456789}"#);
        assert_eq!(
            canonical(&json!(-9007199254740993_i64)),
            b"-9007199254740993"
        );
    }
}
