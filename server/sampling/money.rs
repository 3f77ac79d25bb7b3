//! Amounts of US dollars as people read them. Model prices are per million tokens, so one
//! request often costs a fraction of a cent: six fixed decimals (`$0.000127`) are hard to read
//! and `$10.460000` is noise. Amounts of ten cents or more show cents (`$10.46`, `$0.50`);
//! smaller ones two significant digits (`$0.013`, `$0.00013`), never more than six decimals;
//! anything above zero but under a millionth of a dollar reads "less than $0.000001"; zero is
//! `$0.00`. The pages use the same digits in each language's notation
//! ([`crate::i18n::I18n::usd`]); receipts and budget errors use [`Usd`]'s English text.

use std::fmt;

/// The smallest amount shown with digits; anything above zero and below it reads "less than".
pub const SMALLEST_SHOWN: f64 = 0.000_001;

/// Most fraction digits any amount shows.
const MAX_DIGITS: usize = 6;

/// An amount in US dollars, shown rounded for people (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct Usd(pub f64);

impl Usd {
    /// Fraction digits to show, at least and at most: `(2, 2)` from ten cents up (and for
    /// zero), else as many as two significant digits need (trailing zeros beyond two dropped).
    pub fn fraction_digits(self) -> (usize, usize) {
        let v = self.0.abs();
        if v == 0.0 || v >= 0.1 || !v.is_finite() {
            return (2, 2);
        }
        // floor(-log10 v) zeros after the separator, then two significant digits.
        let zeros = (-v.log10()).floor();
        let digits = if zeros.is_finite() && zeros >= 0.0 {
            (zeros as usize).saturating_add(2)
        } else {
            MAX_DIGITS
        };
        (2, digits.clamp(2, MAX_DIGITS))
    }

    /// True for an amount above zero that rounds below [`SMALLEST_SHOWN`] (shown as "less than").
    pub fn is_below_shown(self) -> bool {
        self.0 > 0.0 && self.0 < SMALLEST_SHOWN / 2.0
    }

    /// The digits without the currency sign, in English notation: `10.46`, `0.00013`.
    pub fn digits(self) -> String {
        let (min, max) = self.fraction_digits();
        let mut text = format!("{:.*}", max, self.0);
        let keep = text.find('.').map_or(text.len(), |dot| dot + 1 + min);
        while text.len() > keep && text.ends_with('0') {
            text.pop();
        }
        text
    }
}

impl fmt::Display for Usd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_below_shown() {
            write!(f, "less than ${}", Usd(SMALLEST_SHOWN).digits())
        } else {
            write!(f, "${}", self.digits())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_as_people_write_them() {
        let cases = [
            (0.0, "$0.00"),
            (10.46, "$10.46"),
            (0.5, "$0.50"),
            (0.1, "$0.10"),
            (0.05, "$0.05"),
            (0.0127, "$0.013"),
            (0.01, "$0.01"),
            (0.000127, "$0.00013"),
            (0.0007, "$0.0007"),
            (0.0000012, "$0.000001"),
            (0.0000001, "less than $0.000001"),
            (1234.5, "$1234.50"),
        ];
        for (amount, want) in cases {
            assert_eq!(Usd(amount).to_string(), want, "{amount}");
        }
    }
}
