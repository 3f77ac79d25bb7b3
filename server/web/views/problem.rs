//! How a page says what is wrong with an answer or a refused review step: every
//! [`Problem`] and [`StepRefusal`] from the catalogues (`problem-*`, `step-*`), with its
//! parameters as arguments. The API says the same in English (their `Display`).

use crate::broker::{BrokerError, Stale, StepRefusal};
use crate::i18n::{Arg, I18n};
use crate::protocol::elicitation::TextFormat;
use crate::protocol::{FieldError, Problem};

/// A problem as a page shows it: the field it concerns (empty: the whole answer) and the
/// sentence in the page's language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The answer field (`requestedSchema` property, `result`, `model`, …); empty for the
    /// whole answer.
    pub field: String,
    /// What is wrong, translated.
    pub message: String,
}

/// Every problem of `errors`, translated.
pub fn shown_fields(i18n: &I18n, errors: &[FieldError]) -> Vec<Shown> {
    errors
        .iter()
        .map(|e| Shown {
            field: e.field.clone(),
            message: problem(i18n, &e.problem),
        })
        .collect()
}

/// The problems to show next to a question that stays open after `e` (an invalid answer, a
/// refused review step); `None` for every other error.
pub fn shown_broker(i18n: &I18n, e: &BrokerError) -> Option<Vec<Shown>> {
    match e {
        BrokerError::InvalidAnswer(errors) => Some(shown_fields(i18n, errors)),
        BrokerError::Refused(r) => Some(vec![Shown {
            field: String::new(),
            message: refusal(i18n, r),
        }]),
        _ => None,
    }
}

/// One field problem in the page's language (numbers in its notation).
pub fn problem(i18n: &I18n, p: &Problem) -> String {
    match p {
        Problem::Required => i18n.t("problem-required"),
        Problem::NotAString => i18n.t("problem-not-a-string"),
        Problem::TooShort { min } => i18n.msg("problem-too-short").arg("min", *min).to_string(),
        Problem::TooLong { max } => i18n.msg("problem-too-long").arg("max", *max).to_string(),
        Problem::NotANumber => i18n.t("problem-not-a-number"),
        Problem::NotWhole => i18n.t("problem-not-whole"),
        Problem::BelowMinimum { min } => i18n
            .msg("problem-below-minimum")
            .arg("min", *min)
            .to_string(),
        Problem::AboveMaximum { max } => i18n
            .msg("problem-above-maximum")
            .arg("max", *max)
            .to_string(),
        Problem::NotBoolean => i18n.t("problem-not-boolean"),
        Problem::NotYesNo => i18n.t("problem-not-yes-no"),
        Problem::NotAnOption { value } => i18n
            .msg("problem-not-an-option")
            .arg("value", Arg::server(value))
            .to_string(),
        Problem::NotAList => i18n.t("problem-not-a-list"),
        Problem::NotAListOfStrings => i18n.t("problem-not-a-list-of-strings"),
        Problem::ChosenTwice => i18n.t("problem-chosen-twice"),
        Problem::TooFewChosen { min } => i18n
            .msg("problem-too-few-chosen")
            .arg("min", *min)
            .to_string(),
        Problem::TooManyChosen { max } => i18n
            .msg("problem-too-many-chosen")
            .arg("max", *max)
            .to_string(),
        Problem::Format(f) => i18n
            .msg("problem-format")
            .arg(
                "format",
                match f {
                    TextFormat::Email => "email",
                    TextFormat::Uri => "uri",
                    TextFormat::Date => "date",
                    TextFormat::DateTime => "date-time",
                },
            )
            .to_string(),
        Problem::NotAnObject => i18n.t("problem-not-an-object"),
        Problem::UnknownField => i18n.t("problem-unknown-field"),
        Problem::InvalidJson { detail } => i18n
            .msg("problem-invalid-json")
            .arg("detail", detail)
            .to_string(),
        Problem::Schema { detail } => i18n.msg("problem-schema").arg("detail", detail).to_string(),
        Problem::Rule { detail } => i18n.msg("problem-rule").arg("detail", detail).to_string(),
    }
}

/// One refused review step in the page's language.
pub fn refusal(i18n: &I18n, r: &StepRefusal) -> String {
    match r {
        StepRefusal::Outdated(what) => i18n
            .msg("step-outdated")
            .arg(
                "what",
                match what {
                    Stale::RequestApproval => "request-approval",
                    Stale::ResponseApproval => "response-approval",
                    Stale::Approval => "approval",
                    Stale::EditRevision => "edit-revision",
                },
            )
            .to_string(),
        StepRefusal::AlreadyDecidedAs { .. } => i18n.t("step-already-decided"),
        StepRefusal::NoRoute { .. } => i18n.t("step-no-route"),
        StepRefusal::UnknownModel { model } => i18n
            .msg("step-unknown-model")
            .arg("model", model)
            .to_string(),
        StepRefusal::ModelExcluded { model, .. } => i18n
            .msg("step-model-excluded")
            .arg("model", model)
            .to_string(),
        StepRefusal::ApprovalOfAnotherQuestion => i18n.t("step-approval-of-another-question"),
        StepRefusal::DecisionDoesNotFit => i18n.t("step-decision-does-not-fit"),
        StepRefusal::ResponseDecision => i18n.t("step-response-decision"),
        StepRefusal::EditWithDecision { .. } => i18n.t("step-edit-with-decision"),
        StepRefusal::EditNeedsRequestApproval => i18n.t("step-edit-needs-request-approval"),
        StepRefusal::EditBaseRevision { base, revision } => i18n
            .msg("step-edit-base-revision")
            .arg("base", i64::from(*base))
            .arg("revision", i64::from(*revision))
            .to_string(),
        StepRefusal::NoMessage { message } => i18n
            .msg("step-no-message")
            .arg("message", *message)
            .to_string(),
        StepRefusal::NoBlock { message, block } => i18n
            .msg("step-no-block")
            .arg("message", *message)
            .arg("block", *block)
            .to_string(),
        StepRefusal::BlockNotText { message, block } => i18n
            .msg("step-block-not-text")
            .arg("message", *message)
            .arg("block", *block)
            .to_string(),
        StepRefusal::EditInvalid { detail } => i18n
            .msg("step-edit-invalid")
            .arg("detail", detail)
            .to_string(),
        StepRefusal::RuleScope => i18n.t("step-rule-scope"),
        StepRefusal::RuleNeedsReason => i18n.t("step-rule-needs-reason"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::i18n::Lang;

    /// Every variant, so a selector variant missing in one language would show.
    #[test]
    fn every_problem_and_refusal_has_its_words_in_every_language() {
        let detail = || "DETAIL".to_owned();
        let mut problems = vec![
            Problem::Required,
            Problem::NotAString,
            Problem::TooShort { min: 2 },
            Problem::TooLong { max: 1 },
            Problem::NotANumber,
            Problem::NotWhole,
            Problem::BelowMinimum { min: 0.5 },
            Problem::AboveMaximum { max: 9.0 },
            Problem::NotBoolean,
            Problem::NotYesNo,
            Problem::NotAnOption { value: detail() },
            Problem::NotAList,
            Problem::NotAListOfStrings,
            Problem::ChosenTwice,
            Problem::TooFewChosen { min: 1 },
            Problem::TooManyChosen { max: 3 },
            Problem::NotAnObject,
            Problem::UnknownField,
            Problem::InvalidJson { detail: detail() },
            Problem::Schema { detail: detail() },
            Problem::Rule { detail: detail() },
        ];
        problems.extend(
            [
                TextFormat::Email,
                TextFormat::Uri,
                TextFormat::Date,
                TextFormat::DateTime,
            ]
            .map(Problem::Format),
        );
        let refusals = [
            StepRefusal::Outdated(Stale::RequestApproval),
            StepRefusal::Outdated(Stale::ResponseApproval),
            StepRefusal::Outdated(Stale::Approval),
            StepRefusal::Outdated(Stale::EditRevision),
            StepRefusal::AlreadyDecidedAs {
                approval: detail(),
                decision: crate::domain::DecisionKind::Approve,
            },
            StepRefusal::NoRoute { why: detail() },
            StepRefusal::UnknownModel { model: detail() },
            StepRefusal::ModelExcluded {
                model: detail(),
                reasons: detail(),
            },
            StepRefusal::ApprovalOfAnotherQuestion,
            StepRefusal::DecisionDoesNotFit,
            StepRefusal::ResponseDecision,
            StepRefusal::EditWithDecision {
                decision: crate::domain::DecisionKind::Reject,
            },
            StepRefusal::EditNeedsRequestApproval,
            StepRefusal::EditBaseRevision {
                base: 1,
                revision: 2,
            },
            StepRefusal::NoMessage { message: 3 },
            StepRefusal::NoBlock {
                message: 3,
                block: 4,
            },
            StepRefusal::BlockNotText {
                message: 3,
                block: 4,
            },
            StepRefusal::EditInvalid { detail: detail() },
            StepRefusal::RuleScope,
            StepRefusal::RuleNeedsReason,
        ];
        for lang in Lang::ALL {
            let i18n = I18n::new(lang);
            let mut seen = std::collections::HashSet::new();
            let texts = problems
                .iter()
                .map(|p| problem(&i18n, p))
                .chain(refusals.iter().map(|r| refusal(&i18n, r)));
            for text in texts {
                assert!(
                    !text.starts_with("problem-") && !text.starts_with("step-"),
                    "{lang}: {text}"
                );
                assert!(seen.insert(text.clone()), "{lang}: said twice: {text}");
            }
        }
    }

    #[test]
    fn problems_read_in_each_language_with_its_numbers() {
        let en = I18n::new(Lang::En);
        let zh = I18n::new(Lang::ZhCn);
        let pt = I18n::new(Lang::PtBr);
        let short = Problem::TooShort { min: 3 };
        assert_eq!(problem(&en, &short), "Must be at least 3 characters long.");
        assert_eq!(problem(&zh, &short), "至少需要 3 个字符。");
        assert_eq!(problem(&pt, &short), "Deve ter pelo menos 3 caracteres.");
        assert_eq!(
            problem(&pt, &Problem::TooShort { min: 1 }),
            "Deve ter pelo menos 1 caractere."
        );
        let big = Problem::AboveMaximum { max: 1234.5 };
        assert_eq!(problem(&en, &big), "Must be at most 1,234.5.");
        assert_eq!(problem(&pt, &big), "Deve ser no máximo 1.234,5.");
        assert_eq!(
            problem(&zh, &Problem::Format(TextFormat::Email)),
            "必须是电子邮件地址。"
        );
        // The API keeps its English sentence.
        assert_eq!(short.to_string(), "must be at least 3 characters");
        assert_eq!(
            refusal(&pt, &StepRefusal::Outdated(Stale::RequestApproval)),
            "Esta aprovação da solicitação está desatualizada: a pergunta mudou. Recarregue a \
             página e decida de novo."
        );
    }
}
