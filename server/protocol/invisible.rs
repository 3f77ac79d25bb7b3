//! Which characters a person cannot see, and text with them made visible: the one rule the
//! pages (code points `U+…`) and the CLI (escapes `\u{…}`) apply to every string a server or a
//! host chose and a person decides on.
//!
//! The set is Unicode's own, read from ICU4X's property data ([`icu_properties`], compiled
//! data of the Unicode version that crate ships) rather than a hand list that misses blocks:
//!
//! - every `Default_Ignorable_Code_Point` (DerivedCoreProperties: the characters a renderer
//!   shows as nothing when it does not support them; this holds the variation selectors
//!   U+FE00–U+FE0F and U+E0100–U+E01EF, the tag characters U+E0000–U+E007F, the Hangul fillers,
//!   U+206A–U+206F, U+1D173–U+1D17A, U+17B4/U+17B5, the shorthand format controls, …);
//! - every control (general category `Cc`: C0, DEL, C1), including the line feed and the tab,
//!   which [`is_layout`] names so that a page can show them as a mark *and* a break;
//! - every format character (`Cf`: the bidi embeddings, overrides, isolates and marks, the
//!   zero-width characters, the interlinear annotation characters, …);
//! - the line and paragraph separators (`Zl`, `Zp`: U+2028, U+2029), which break a line
//!   without being a line feed.

use std::borrow::Cow;
use std::fmt::Write as _;

use icu_properties::props::{DefaultIgnorableCodePoint, GeneralCategory};
use icu_properties::{CodePointMapData, CodePointSetData};

/// Whether `c` is a character a person cannot see as itself (see the module's list).
pub fn is_invisible(c: char) -> bool {
    matches!(
        CodePointMapData::<GeneralCategory>::new().get(c),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    ) || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
}

/// Whether `c` is a line feed or a tab: invisible as a character but shown as layout, so a
/// page may render it as a visible mark followed by the break itself instead of warning.
pub fn is_layout(c: char) -> bool {
    matches!(c, '\n' | '\t')
}

/// `c`'s code point as the pages name it: `U+202E`, `U+E0100`.
pub fn code_point(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

/// `text` for a terminal: every invisible character ([`is_invisible`]) written as a Rust-style
/// escape (`\u{1b}`), so no escape sequence a server or a host chose reaches the terminal and a
/// table cell stays one line of plain characters. `keep_layout` leaves line feeds and tabs as
/// they are ([`is_layout`]: they move the cursor, they drive nothing), for multi-line output
/// (an error report, a diff of a host's file).
pub fn escaped(text: &str, keep_layout: bool) -> Cow<'_, str> {
    let hides = |c: char| is_invisible(c) && !(keep_layout && is_layout(c));
    if !text.chars().any(hides) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hides(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// JSON text (as `serde_json` writes it) with every invisible character left inside its strings
/// written as a JSON escape (`\u009b`, a surrogate pair beyond the BMP): the same value, and no
/// character that can drive a terminal or hide. `serde_json` escapes C0 itself, not DEL, C1 or
/// format characters. The line feeds of pretty output are outside strings and stay.
pub fn escaped_json(json: &str) -> Cow<'_, str> {
    let hides = |c: char| is_invisible(c) && c != '\n';
    if !json.chars().any(hides) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 8);
    for c in json.chars() {
        if hides(c) {
            for unit in c.encode_utf16(&mut [0; 2]) {
                let _ = write!(out, "\\u{unit:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_of_invisible_character_is_found() {
        for c in [
            '\u{E0100}', // variation selector supplement ("emoji smuggling")
            '\u{E01EF}',
            '\u{FE00}',
            '\u{FE0F}',
            '\u{E0001}', // tag characters
            '\u{E0041}',
            '\u{E007F}',
            '\u{206A}', // deprecated format characters
            '\u{206F}',
            '\u{1D173}', // musical symbol format controls
            '\u{1D17A}',
            '\u{17B4}',  // Khmer inherent vowels
            '\u{1BCA0}', // shorthand format controls
            '\u{FFF9}',  // interlinear annotation
            '\u{FFFB}',
            '\u{202E}', // bidi
            '\u{2066}',
            '\u{061C}',
            '\u{200B}', // zero width
            '\u{2060}',
            '\u{FEFF}',
            '\u{00AD}',
            '\u{3164}', // Hangul filler
            '\u{180E}',
            '\u{0000}', // C0, DEL, C1
            '\u{0008}',
            '\u{001B}',
            '\r',
            '\n',
            '\t',
            '\u{007F}',
            '\u{0085}',
            '\u{009B}',
            '\u{2028}', // line and paragraph separators
            '\u{2029}',
        ] {
            assert!(is_invisible(c), "{}", code_point(c));
        }
    }

    #[test]
    fn visible_text_is_not_flagged() {
        for c in "aZ09 -_./:@~ éßΩжשعअ中😀⠀\u{00A0}\u{3000}\u{0301}".chars() {
            assert!(!is_invisible(c), "{}", code_point(c));
        }
        assert!(is_layout('\n') && is_layout('\t') && !is_layout('\r'));
    }

    #[test]
    fn a_terminal_gets_escapes_not_controls() {
        let tool = "read_x\u{1b}[2J\u{1b}]52;c;cm0=\u{7}\u{9b}1m\u{202E}";
        let shown = escaped(tool, false);
        assert_eq!(
            shown,
            "read_x\\u{1b}[2J\\u{1b}]52;c;cm0=\\u{7}\\u{9b}1m\\u{202e}"
        );
        assert!(!shown.chars().any(is_invisible));
        assert_eq!(escaped("a\nb\tc\r", true), "a\nb\tc\\u{d}");
        assert_eq!(escaped("a\nb", false), "a\\u{a}b");
        assert!(matches!(escaped("plain", false), Cow::Borrowed(_)));
    }

    #[test]
    fn json_keeps_its_value_and_loses_its_controls() {
        let value = serde_json::json!({"t": "x\u{9b}\u{7f}\u{E0100}\u{202E}\ny"});
        let text = serde_json::to_string_pretty(&value).unwrap();
        let shown = escaped_json(&text);
        assert!(
            !shown.chars().any(|c| is_invisible(c) && c != '\n'),
            "{shown}"
        );
        assert!(shown.contains("\\udb40\\udd00"), "{shown}");
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap();
        assert_eq!(back, value);
    }
}
