//! Model spend per server and UTC day against the daily budgets, as the audit page shows it.

use crate::i18n::Arg;
use crate::i18n::I18n;
use crate::review::{ServerDay, Spend};

/// Days of spend the audit page shows (today and the six before).
pub const SPEND_DAYS: i64 = 7;

/// One server's day as the page shows it.
pub struct SpendRow {
    /// `YYYY-MM-DD` (UTC).
    pub day: String,
    pub server: String,
    /// "3 (1 delivered)".
    pub runs: String,
    pub tokens: String,
    pub cost: String,
    /// The daily limits and how much of each is used, or "no daily limit".
    pub budget: Vec<String>,
    /// A limit is reached: this server's next request today is refused.
    pub exhausted: bool,
    /// "2 without reported usage", or empty.
    pub unpriced: String,
}

/// The spend section of the audit page.
pub struct SpendView {
    /// How many days it covers.
    pub days: i64,
    pub rows: Vec<SpendRow>,
    pub runs: String,
    pub tokens: String,
    pub cost: String,
}

fn percent(used: f64, max: f64) -> Arg<'static> {
    Arg::Number {
        value: if max > 0.0 { used / max * 100.0 } else { 100.0 },
        fraction: Some((0, 1)),
    }
}

fn budget_text(i18n: &I18n, d: &ServerDay) -> Vec<String> {
    let mut limits = Vec::new();
    if let Some(max) = d.max_tokens {
        limits.push(
            i18n.msg("spend-limit-tokens")
                .arg("used", i18n.number(d.spent.tokens))
                .arg("max", i18n.number(max))
                .arg("percent", percent(d.spent.tokens as f64, max as f64))
                .to_string(),
        );
    }
    if let Some(max) = d.max_cost_usd {
        limits.push(
            i18n.msg("spend-limit-cost")
                .arg("used", i18n.usd(Some(d.spent.cost)))
                .arg("max", i18n.usd(Some(max)))
                .arg("percent", percent(d.spent.cost, max))
                .to_string(),
        );
    }
    if limits.is_empty() {
        limits.push(i18n.t("spend-no-limit"));
    }
    limits
}

/// The spend section in `i18n`'s language.
pub fn spend_view(i18n: &I18n, spend: &Spend, days: i64) -> SpendView {
    SpendView {
        days,
        rows: spend
            .days
            .iter()
            .map(|d| SpendRow {
                day: d.spent.day.clone(),
                server: d.spent.server.clone(),
                runs: i18n
                    .msg("spend-runs-value")
                    .arg("runs", d.spent.runs)
                    .arg("delivered", d.spent.delivered)
                    .to_string(),
                tokens: i18n.number(d.spent.tokens),
                cost: i18n.usd(Some(d.spent.cost)),
                budget: budget_text(i18n, d),
                exhausted: d.exhausted(),
                unpriced: if d.spent.unpriced > 0 {
                    i18n.msg("spend-unpriced")
                        .arg("count", d.spent.unpriced)
                        .to_string()
                } else {
                    String::new()
                },
            })
            .collect(),
        runs: i18n.number(spend.runs),
        tokens: i18n.number(spend.tokens),
        cost: i18n.usd(Some(spend.cost)),
    }
}
