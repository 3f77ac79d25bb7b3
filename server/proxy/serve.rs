//! The session's owner: one task holds the [`Session`] and applies, in order, every burst of
//! lines either side sent (judged by [`super::host`] and [`super::judge`] with `&mut` access)
//! and every [`super::session::command::Command`] of the tasks that wait for the person. It
//! never waits on anything but its input, so a slow side or a slow service cannot stall it.

use std::borrow::Cow;
use std::ops::Range;

use bytes::Bytes;

use tokio::sync::mpsc;

use super::context::Context;
use super::lines::Seen;
use super::output::{Batch, Burst};
use super::session::Session;
use super::session::command::Input;
use super::tool_table::Page;
use super::{host, judge, retry_gate};
use crate::protocol::request_key::RequestKey;
use crate::wire::DroppedLine;

/// Runs the owner until it is told to stop.
pub(super) async fn serve(ctx: Context, mut inputs: mpsc::Receiver<Input>) {
    let mut session = Session::default();
    while let Some(input) = inputs.recv().await {
        match input {
            Input::Host(burst, reply) => {
                let _ = reply.send(from_host(&ctx, &mut session, burst));
            }
            Input::Server(burst, reply) => {
                let (batch, listings) = from_server(&ctx, &mut session, burst);
                let _ = reply.send(batch);
                if !listings.is_empty() {
                    // The reader, woken by the reply, sends the lists on first: it waits in
                    // this worker's next slot, which no other worker may take while the owner
                    // runs. What they claim is recorded before the owner judges anything else
                    // (so before any call the host sends after reading them).
                    tokio::task::yield_now().await;
                    for (line, result, page) in listings {
                        judge::record_tools(&mut session, &line[result], page);
                    }
                }
            }
            Input::Command(command) => {
                if let Some(command) = retry_gate::own_retry(&ctx, &mut session, command) {
                    session.apply(command);
                }
            }
            Input::Stop => return,
        }
    }
}

/// Judges the host's lines; what passes goes to the server.
fn from_host(ctx: &Context, session: &mut Session, burst: Burst) -> Batch {
    let mut batch = Batch::default();
    burst.each(|seen| {
        let Seen::Line(line) = seen else { return };
        // `Some(None)`: passes as it is; `Some(Some(..))`: rewritten.
        let out = host::from_host(ctx, session, &line).map(|out| match out {
            Cow::Borrowed(_) => None,
            Cow::Owned(rewritten) => Some(rewritten),
        });
        match out {
            Some(None) => batch.pass(line),
            Some(Some(rewritten)) => batch.push(rewritten),
            None => {}
        }
    });
    batch
}

/// Judges the server's lines; what passes goes to the host. Also the `tools/list` results
/// among them, shared with the batch, each with where its result lies, to be recorded once
/// the batch is on its way.
fn from_server(ctx: &Context, session: &mut Session, burst: Burst) -> (Batch, Vec<Listing>) {
    let mut batch = Batch::default();
    let mut listings = Vec::new();
    burst.each(|seen| match seen {
        Seen::Line(line) => match judge::from_server(ctx, session, &line) {
            judge::Verdict::Forward => batch.pass(line),
            judge::Verdict::ForwardListing(result, page) => {
                let line = shared_line(line);
                batch.push_shared(line.clone());
                listings.push((line, result, page));
            }
            judge::Verdict::ForwardLines(lines) => {
                for line in lines {
                    batch.push(line);
                }
            }
            judge::Verdict::Handled | judge::Verdict::Dropped => {}
        },
        Seen::Overlong { id, .. } => judge::dropped(
            ctx,
            session,
            DroppedLine::TooLong,
            id.map(RequestKey::canonical),
        ),
    });
    (batch, listings)
}

/// A `tools/list` result passed to the host, where its `result` lies in it, and its page.
type Listing = (Bytes, Range<usize>, Page);

/// A line as a shared buffer ending in `\n` (moved, not copied, when it was gathered; only a
/// line read whole in one read, so no longer than a read, is copied).
fn shared_line(line: Cow<'_, [u8]>) -> Bytes {
    let mut line = line.into_owned();
    if line.last() != Some(&b'\n') {
        line.push(b'\n');
    }
    Bytes::from(line)
}
