//! The fast path of [`super::members::Members::read`]: the named top-level members of one JSON
//! object in one pass, without serde. The proxy reads every line's envelope this way in both
//! directions, and for a small line serde_json's reading costs about twice this one (its
//! fixed costs per value; `benches/envelope.rs`: 321 ns against 673 ns for ~190 B).
//!
//! It answers only for what it can decide alone: JSON whose top-level keys are ASCII without
//! escapes, whose strings escape no surrogate, nested at most [`MAX_DEPTH`] deep. For anything
//! else, valid or not, it gives `None` and the caller reads the text with serde_json, which
//! decides. So it may defer more than serde_json refuses but never accepts more, and where it
//! answers it answers as serde_json would, the same members with the same raw text: the tests
//! in `members.rs` compare the two on valid lines and on 100,000 mutations of
//! them (docs/protocol.md G17, "fail closed" in docs/design.md §proxy).

/// The deepest nesting read here (deeper text goes to serde_json, which has no limit for
/// values it skips).
pub(super) const MAX_DEPTH: usize = 128;

/// The members named in `known` of one object, by index in `known`: each one's raw text (a
/// `null` value is absent and marked in `nulls`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Found<'a, const N: usize> {
    pub(super) values: [Option<&'a str>; N],
    pub(super) nulls: [bool; N],
}

/// One member whose value's own members are read in the same pass (the head of a `result`).
pub(super) struct Head<'h, const M: usize> {
    /// Its index in the outer names.
    pub(super) member: usize,
    /// The names read inside it.
    pub(super) names: &'h [&'h str; M],
}

/// The members named in `known` of the object `text`, or `None` when this reader does not
/// decide (see the module's doc), among others for a known member given twice or a member
/// whose name differs from a known one only in ASCII case.
pub(super) fn members<'a, const N: usize>(
    text: &'a str,
    known: &[&str; N],
) -> Option<Found<'a, N>> {
    members_and_head::<N, 0>(text, known, None).map(|(found, _)| found)
}

/// [`members`], and with `head` also the members named in `head.names` of the value of
/// `known[head.member]` when that is an object (`None` in the second place when it is absent or
/// not an object), in the same pass. The whole is `None` when either object cannot be decided
/// here.
pub(super) fn members_and_head<'a, const N: usize, const M: usize>(
    text: &'a str,
    known: &[&str; N],
    head: Option<Head<'_, M>>,
) -> Option<(Found<'a, N>, Option<Found<'a, M>>)> {
    let mut c = Cursor {
        text,
        b: text.as_bytes(),
        i: 0,
    };
    let mut inner = None;
    c.ws();
    let found = c.object(known, head.map(|h| (h, &mut inner)))?;
    c.ws();
    (c.i == c.b.len()).then_some((found, inner))
}

/// A reading position in one text (`b` is `text`'s bytes; `i` a byte index into both).
struct Cursor<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    #[inline]
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    #[inline]
    fn eat(&mut self, want: u8) -> Option<()> {
        (self.next()? == want).then_some(())
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.i += 1;
        }
    }

    /// The object at the cursor, read by the names in `known` (see [`members_and_head`]).
    fn object<const N: usize, const M: usize>(
        &mut self,
        known: &[&str; N],
        mut head: Option<(Head<'_, M>, &mut Option<Found<'a, M>>)>,
    ) -> Option<Found<'a, N>> {
        let mut found = Found {
            values: [None; N],
            nulls: [false; N],
        };
        let mut seen = [false; N];
        self.eat(b'{')?;
        self.ws();
        if self.peek() == Some(b'}') {
            self.i += 1;
            return Some(found);
        }
        loop {
            let key = self.plain_key()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            let start = self.i;
            let k = known.iter().position(|k| k.as_bytes() == key);
            match &mut head {
                Some((h, inner)) if k == Some(h.member) && self.peek() == Some(b'{') => {
                    **inner = Some(self.object::<M, 0>(h.names, None)?);
                }
                _ => self.value()?,
            }
            let raw = &self.text[start..self.i];
            match k {
                Some(k) => {
                    if std::mem::replace(&mut seen[k], true) {
                        return None;
                    }
                    if raw == "null" {
                        found.nulls[k] = true;
                    } else {
                        found.values[k] = Some(raw);
                    }
                }
                // A name that folds to a known one (Go's decoder would take it for it).
                None if known.iter().any(|k| k.as_bytes().eq_ignore_ascii_case(key)) => {
                    return None;
                }
                None => {}
            }
            self.ws();
            match self.next()? {
                b',' => self.ws(),
                b'}' => return Some(found),
                _ => return None,
            }
        }
    }

    /// A key that is a plain ASCII string without escapes; its bytes.
    fn plain_key(&mut self) -> Option<&'a [u8]> {
        let start = self.i + 1;
        if self.string()? {
            return None;
        }
        let b: &'a [u8] = self.b;
        let key = &b[start..self.i - 1];
        key.is_ascii().then_some(key)
    }

    /// A string from its opening quote; whether it had escapes.
    fn string(&mut self) -> Option<bool> {
        self.eat(b'"')?;
        let mut escaped = false;
        loop {
            self.skip_plain();
            match self.next()? {
                b'"' => return Some(escaped),
                b'\\' => {
                    escaped = true;
                    match self.next()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            let hex = self.b.get(self.i..self.i + 4)?;
                            let mut code = 0u32;
                            for &h in hex {
                                code = code * 16 + char::from(h).to_digit(16)?;
                            }
                            // Surrogates (paired or not) are left to serde_json.
                            if (0xD800..=0xDFFF).contains(&code) {
                                return None;
                            }
                            self.i += 4;
                        }
                        _ => return None,
                    }
                }
                // A control character.
                _ => return None,
            }
        }
    }

    /// Moves to the next `"`, `\` or control character (eight bytes at a time).
    #[inline]
    fn skip_plain(&mut self) {
        const ONES: u64 = u64::MAX / 255;
        const HIGH: u64 = ONES << 7;
        while let Some(chunk) = self.b.get(self.i..self.i + 8) {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            let w = u64::from_le_bytes(word);
            let quote = w ^ (ONES * u64::from(b'"'));
            let backslash = w ^ (ONES * u64::from(b'\\'));
            let found = ((w.wrapping_sub(ONES * 0x20) & !w)
                | (quote.wrapping_sub(ONES) & !quote)
                | (backslash.wrapping_sub(ONES) & !backslash))
                & HIGH;
            if found != 0 {
                self.i += (found.trailing_zeros() / 8) as usize;
                return;
            }
            self.i += 8;
        }
        while let Some(c) = self.peek() {
            if c == b'"' || c == b'\\' || c < 0x20 {
                return;
            }
            self.i += 1;
        }
    }

    fn digits(&mut self) -> Option<()> {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.peek() {
            self.i += 1;
        }
        (self.i > start).then_some(())
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`
    fn number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => {
                while let Some(b'0'..=b'9') = self.peek() {
                    self.i += 1;
                }
            }
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.digits()?;
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.i += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.i += 1;
            }
            self.digits()?;
        }
        Some(())
    }

    fn literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| self.i = end)
    }

    /// A nested object's member name and its colon, up to the value.
    fn name(&mut self) -> Option<()> {
        self.string()?;
        self.ws();
        self.eat(b':')?;
        self.ws();
        Some(())
    }

    /// One value of any kind, nested up to [`MAX_DEPTH`].
    fn value(&mut self) -> Option<()> {
        // Open containers, a bit each, innermost highest: set for an object.
        let mut open = 0u128;
        let mut depth = 0usize;
        loop {
            // A value starts here.
            match self.peek()? {
                b'{' | b'[' => {
                    let object = self.next()? == b'{';
                    self.ws();
                    let close = if object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.i += 1;
                    } else {
                        if depth == MAX_DEPTH {
                            return None;
                        }
                        open = open & !(1 << depth) | (u128::from(object) << depth);
                        depth += 1;
                        if object {
                            self.name()?;
                        }
                        continue;
                    }
                }
                b'"' => {
                    self.string()?;
                }
                b'-' | b'0'..=b'9' => self.number()?,
                b't' => self.literal(b"true")?,
                b'f' => self.literal(b"false")?,
                b'n' => self.literal(b"null")?,
                _ => return None,
            }
            // A value ended: close what it ends, or go on to the next one.
            loop {
                let Some(top) = depth.checked_sub(1) else {
                    return Some(());
                };
                let object = open & (1 << top) != 0;
                self.ws();
                match self.next()? {
                    b',' => {
                        self.ws();
                        if object {
                            self.name()?;
                        }
                        break;
                    }
                    b'}' if object => depth = top,
                    b']' if !object => depth = top,
                    _ => return None,
                }
            }
        }
    }
}
