//! A call that continues a round already begun meets the person's rules again before it
//! reaches the server: the host's retry bound to a round the proxy handed it, and the proxy's
//! own retry of a round the person answered alone. With 2026-07-28 the retry is the request
//! that runs the tool, and a round may wait an hour for the person, so the rules of the moment
//! it goes out decide, not those of the moment the round began:
//!
//! - a `deny` rule refuses it, whatever was decided before;
//! - an `ask` rule lets it go on only when the person accepted this very call (on its
//!   `tool_call` question); a call that went out without asking (an `allow` rule, a grant that
//!   has since expired) is refused with a reason, and the host may send it again to be asked;
//! - `allow` lets it go on.

use serde_json::value::RawValue;

use super::context::Context;
use super::session::Session;
use super::session::command::Command;
use super::tool_gate::{self, Gate};
use crate::protocol::members::Members;
use crate::protocol::method::Method;
use crate::protocol::mrtr;
use crate::tools::Refusal;

/// Judges a continuing `tools/call` of tool `tool` (`arguments`: the raw text of its
/// arguments; `person_accepted`: the person accepted this call on its question). `Err` is the
/// line for the host (under `id`) when it is held back.
pub(super) fn judge(
    ctx: &Context,
    s: &Session,
    id: &RawValue,
    tool: Option<&str>,
    arguments: Option<&str>,
    complete: bool,
    person_accepted: bool,
) -> Result<(), Vec<u8>> {
    match tool_gate::judge(ctx, s, id, tool, arguments, complete) {
        Gate::Pass => Ok(()),
        Gate::Refused(line) => Err(line),
        Gate::Ask if person_accepted => Ok(()),
        Gate::Ask => {
            let refusal = Refusal::Failed(
                "the person's rules now ask about this tool, and this retry continues a call that went out without asking; send the call again, without requestState, to be asked".into(),
            );
            let result = refusal.result(&ctx.server, tool.unwrap_or_default(), complete);
            Err(tool_gate::result_line(id, &result))
        }
    }
}

/// The proxy's own retry of a host `tools/call` ([`Command::Retrying`]), judged before the
/// owner lets it out: a retry the rules hold back is answered to the host under its own id,
/// the request is forgotten, and the command is answered `false` (nothing is sent). Any other
/// command comes back to be applied.
pub(super) fn own_retry(ctx: &Context, s: &mut Session, command: Command) -> Option<Command> {
    let Command::Retrying { host, .. } = &command else {
        return Some(command);
    };
    let Some(request) = s.request(host).filter(|r| r.method == Method::ToolsCall) else {
        return Some(command);
    };
    let params = request
        .line
        .as_deref()
        .and_then(|line| mrtr::params_of(line));
    let arguments = params
        .as_deref()
        .and_then(|p| Members::read(p, &["arguments"]).ok())
        .and_then(|m| m.get(0).map(str::to_owned));
    let complete = request.meta_version.is_some() || s.speaks_mrtr();
    let verdict = judge(
        ctx,
        s,
        &request.id,
        request.tool.as_deref(),
        arguments.as_deref(),
        complete,
        request.person_accepted,
    );
    let Err(refusal) = verdict else {
        return Some(command);
    };
    let Command::Retrying { host, reply, .. } = command else {
        return None;
    };
    tracing::warn!("refused the proxy's retry of a tool call the person's rules now hold back");
    s.take_request(&host);
    ctx.answer_host(refusal);
    let _ = reply.send(false);
    None
}
