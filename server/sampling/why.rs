//! Why the route chose what it chose, decided once: [`Why::of`] reads a receipt's structured
//! fields and names the one explanation that applies, with its numbers. The receipt keeps it as
//! an English sentence ([`Why::english`]); the pages say the same [`Why`] in their language
//! (one catalogue message per variant, `route-why-*` in `i18n/`), so which sentence applies is
//! never decided twice.

use super::money::Usd;
use super::receipt::{HintMatch, Receipt, Selection, TieBreak};

/// How the deciding hint matched the chosen model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HintWhy<'a> {
    /// The hint is part of the model id (`route-why-hint-id`).
    Id {
        /// The hint as sent.
        name: &'a str,
        /// Its position in `modelPreferences.hints`, from 1.
        number: usize,
    },
    /// The hint matches a configured alias (`route-why-hint-alias`).
    Alias {
        /// The hint as sent.
        name: &'a str,
        /// Its position in `modelPreferences.hints`, from 1.
        number: usize,
        /// The alias it matched.
        alias: &'a str,
    },
}

/// What broke a tie on the priorities score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Then {
    /// The cheapest won (`route-tie-cheaper`), at this estimated cost (none when no model was
    /// chosen).
    Cheaper {
        /// The chosen model's estimated cost, USD.
        cost: Option<f64>,
    },
    /// They cost the same; the first by id won (`route-tie-id`).
    Id,
}

/// The one explanation of a route, with the numbers it names.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Why<'a> {
    /// A hint decided alone.
    Hint(HintWhy<'a>),
    /// A hint matched `count` eligible models and the score chose (`route-why-hint-tie`).
    HintScored {
        /// How the hint matched.
        hint: HintWhy<'a>,
        /// Eligible models it matched.
        count: usize,
    },
    /// A hint matched `count` eligible models, `tied` of them on the top score
    /// (`route-why-hint-shared`).
    HintShared {
        /// How the hint matched.
        hint: HintWhy<'a>,
        /// Eligible models it matched.
        count: usize,
        /// Models on the top score.
        tied: usize,
        /// What broke the tie.
        then: Then,
    },
    /// No hint decided and one model was eligible (`route-why-only-one`).
    OnlyOne,
    /// The priorities do not tell the `count` eligible models apart (`route-why-all-tied`).
    AllTied {
        /// Eligible models.
        count: usize,
        /// What broke the tie.
        then: Then,
    },
    /// `tied` of `count` eligible models share the top `score` (`route-why-some-tied`).
    SomeTied {
        /// Models on the top score.
        tied: usize,
        /// Eligible models.
        count: usize,
        /// The top score.
        score: f64,
        /// What broke the tie.
        then: Then,
    },
    /// The top priorities `score` of `count` eligible models won (`route-why-priorities`).
    Priorities {
        /// The chosen model's score.
        score: f64,
        /// Eligible models.
        count: usize,
    },
    /// No model is configured (`route-why-no-models`).
    NoModels,
    /// All `count` configured models were excluded (`route-why-all-excluded`).
    AllExcluded {
        /// Configured models.
        count: usize,
    },
}

impl<'a> Why<'a> {
    /// The explanation `receipt`'s fields call for; `None` for a hint selection without its
    /// hint (a receipt the route never writes), whose stored sentence is all there is.
    pub fn of(receipt: &'a Receipt) -> Option<Why<'a>> {
        let candidates = &receipt.candidates;
        let eligible = candidates.iter().filter(|c| c.eligible).count();
        let chosen = receipt
            .chosen
            .as_ref()
            .and_then(|c| candidates.iter().find(|x| x.id == c.id));
        let score = chosen.and_then(|c| c.score).unwrap_or(0.0);
        let tie = receipt.tie.as_ref().map(|tie| {
            let then = match tie.by {
                TieBreak::Cheaper => Then::Cheaper {
                    cost: chosen.map(|c| c.estimated_cost_usd),
                },
                TieBreak::Id => Then::Id,
            };
            (tie.models.len(), then)
        });
        Some(match receipt.selection {
            Selection::Hint => {
                let h = receipt.matched_hint.as_ref()?;
                let (name, number) = (h.name.as_str(), h.index + 1);
                let hint = match &h.via {
                    HintMatch::Id => HintWhy::Id { name, number },
                    HintMatch::Alias(alias) => HintWhy::Alias {
                        name,
                        number,
                        alias,
                    },
                };
                let count = h.matched.len();
                match tie {
                    Some((tied, then)) => Why::HintShared {
                        hint,
                        count,
                        tied,
                        then,
                    },
                    None if count > 1 => Why::HintScored { hint, count },
                    None => Why::Hint(hint),
                }
            }
            Selection::Priorities if eligible == 1 => Why::OnlyOne,
            Selection::Priorities => match tie {
                Some((tied, then)) if tied == eligible => Why::AllTied {
                    count: eligible,
                    then,
                },
                Some((tied, then)) => Why::SomeTied {
                    tied,
                    count: eligible,
                    score,
                    then,
                },
                None => Why::Priorities {
                    score,
                    count: eligible,
                },
            },
            Selection::NoPermittedRoute if candidates.is_empty() => Why::NoModels,
            Selection::NoPermittedRoute => Why::AllExcluded {
                count: candidates.len(),
            },
        })
    }

    /// The receipt's English sentence (the `en` catalogue says the same words).
    pub fn english(&self) -> String {
        let hint_text = |hint: &HintWhy<'_>| match hint {
            HintWhy::Id { name, number } => {
                format!("hint {name:?} (#{number}) is part of the model id")
            }
            HintWhy::Alias {
                name,
                number,
                alias,
            } => format!("hint {name:?} (#{number}) matches the configured alias {alias:?}"),
        };
        let then_text = |then: &Then| match then {
            Then::Cheaper { cost } => format!(
                "the cheapest was chosen (estimated at most {})",
                cost.map_or_else(String::new, |c| Usd(c).to_string())
            ),
            Then::Id => "they cost the same, so the first by id was chosen".to_owned(),
        };
        match self {
            Why::Hint(hint) => hint_text(hint),
            Why::HintScored { hint, count } => format!(
                "{}; it matched {count} eligible models and this one scored highest on the priorities",
                hint_text(hint)
            ),
            Why::HintShared {
                hint,
                count,
                tied,
                then,
            } => format!(
                "{}; it matched {count} eligible models and {tied} of them share the highest priorities score: {}",
                hint_text(hint),
                then_text(then)
            ),
            Why::OnlyOne => {
                "no hint matched an eligible model; it is the only eligible model".to_owned()
            }
            Why::AllTied { count, then } => format!(
                "no hint matched an eligible model and the priorities do not tell the {count} eligible models apart: {}",
                then_text(then)
            ),
            Why::SomeTied {
                tied,
                count,
                score,
                then,
            } => format!(
                "no hint matched an eligible model; {tied} of the {count} eligible models share the highest priorities score ({score:.2}): {}",
                then_text(then)
            ),
            Why::Priorities { score, count } => format!(
                "no hint matched an eligible model; highest priorities score {score:.2} of {count} eligible models"
            ),
            Why::NoModels => "no permitted route: no model is configured".to_owned(),
            Why::AllExcluded { count } => {
                format!("no permitted route: all {count} configured models were excluded")
            }
        }
    }
}
