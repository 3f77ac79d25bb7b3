//! Why a review step (a decision, an edit, a rule) was refused while its question stays open:
//! typed, so the pages say it in their language; `Display` is the English the API's 422 body
//! has always carried.

use crate::domain::DecisionKind;

/// A refused review step. The question stays open for a decision on what it shows now.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StepRefusal {
    /// The decision or edit names a revision or run that is no longer current.
    #[error("{0} is outdated: the question moved on; reload and decide again")]
    Outdated(Stale),
    /// The approval id was already used for another decision.
    #[error("approval {approval} was already decided as {decision}")]
    AlreadyDecidedAs {
        /// The approval id posted.
        approval: String,
        /// The decision recorded for it.
        decision: DecisionKind,
    },
    /// No configured model may serve the request and none was picked.
    #[error("no permitted route: {why}; edit the request, answer it yourself, or reject it")]
    NoRoute {
        /// The route receipt's reason, in English (the page shows its own).
        why: String,
    },
    /// The picked model is not configured.
    #[error("there is no configured model {model:?}")]
    UnknownModel {
        /// The model id posted.
        model: String,
    },
    /// The picked model was excluded by the route.
    #[error(
        "{model} may not run this request: {reasons}; pick another model, edit the request, or reject it"
    )]
    ModelExcluded {
        /// The model id posted.
        model: String,
        /// The route's reasons, in English (the page lists them beside the model).
        reasons: String,
    },
    /// The approval id names another question.
    #[error("the approval id does not belong to this question")]
    ApprovalOfAnotherQuestion,
    /// The decision does not fit the step the approval id names.
    #[error("this decision does not fit the approval id")]
    DecisionDoesNotFit,
    /// A response approval decided with "approve".
    #[error("a response is sent, regenerated or rejected")]
    ResponseDecision,
    /// An edit posted with another decision than "approve".
    #[error("an edit can come only with \"approve\", not \"{decision}\"")]
    EditWithDecision {
        /// The decision posted.
        decision: DecisionKind,
    },
    /// An edit posted with a response approval id.
    #[error("an edit can come only with a request approval id")]
    EditNeedsRequestApproval,
    /// An edit whose base revision is not the approval id's.
    #[error("the edit's baseRevision {base} is not the approval id's revision {revision}")]
    EditBaseRevision {
        /// The edit's `baseRevision`.
        base: i32,
        /// The approval id's revision.
        revision: i32,
    },
    /// An edit of a message the request does not have (0-based index).
    #[error("there is no message {message}")]
    NoMessage {
        /// The message's index.
        message: usize,
    },
    /// An edit of a content block a message does not have (0-based indexes).
    #[error("message {message} has no block {block}")]
    NoBlock {
        /// The message's index.
        message: usize,
        /// The block's index.
        block: usize,
    },
    /// An edit of a block that is not text (0-based indexes).
    #[error("block {block} of message {message} is not text")]
    BlockNotText {
        /// The message's index.
        message: usize,
        /// The block's index.
        block: usize,
    },
    /// The edited request breaks a rule of the protocol (the validator's English detail).
    #[error("the edited request is not valid: {detail}")]
    EditInvalid {
        /// What the request validator said.
        detail: String,
    },
    /// A rule's scope that is neither `request` nor `both`.
    #[error("scope must be request or both")]
    RuleScope,
    /// A rule without a server or a reason.
    #[error("a rule needs a server and a reason")]
    RuleNeedsReason,
}

/// What an outdated decision or edit named.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Stale {
    /// A request approval id.
    #[error("this request approval")]
    RequestApproval,
    /// A response approval id.
    #[error("this response approval")]
    ResponseApproval,
    /// An approval id of either step.
    #[error("this approval")]
    Approval,
    /// An edit's base revision.
    #[error("this edit's revision")]
    EditRevision,
}
