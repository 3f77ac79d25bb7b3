//! What reaches the session's owner ([`Input`]), and the [`Handle`] the tasks that wait for the
//! person use to reach it: each step of theirs that reads or changes the session is one
//! [`Command`], applied by the owner with `&mut` access, in the order sent.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{Notify, mpsc, oneshot};

use super::request::{MAX_HELD, MAX_HELD_BYTES};
use super::{AskHandle, Binding, Held, Phase, RequestRef, Session};
use crate::protocol::mrtr::Members;
use crate::protocol::request_key::RequestKey;
use crate::proxy::output::{Batch, Burst};
use crate::tools::ToolInfo;

/// What the owner receives.
#[derive(Debug)]
pub(in crate::proxy) enum Input {
    /// Lines from the host, to be judged; the reply is what goes to the server.
    Host(Burst, oneshot::Sender<Batch>),
    /// Lines from the server, to be judged; the reply is what goes to the host.
    Server(Burst, oneshot::Sender<Batch>),
    /// A step of a task that waits for the person.
    Command(Command),
    /// The proxy has finished: the owner stops.
    Stop,
}

/// What a question for a host request is asked with.
#[derive(Debug)]
pub(in crate::proxy) struct Asking {
    /// The tool that asked, when known.
    pub(in crate::proxy) tool: Option<String>,
    /// The revision it is judged by.
    pub(in crate::proxy) protocol_version: String,
    /// Capabilities as forwarded with the request.
    pub(in crate::proxy) capabilities: Value,
    /// The host's progress token and the request's progress counter.
    pub(in crate::proxy) progress: Option<(Value, Arc<AtomicU64>)>,
    /// What the server claimed about the tool.
    pub(in crate::proxy) tool_info: Option<ToolInfo>,
}

/// What became of answers to hold, for a host that still waits (under the host's id).
#[derive(Debug)]
pub(in crate::proxy) enum Holding {
    /// Held: the host is handed its entries.
    Held(Box<RawValue>),
    /// The request cannot be bound (it holds a value that does not read exactly, such as a
    /// lone surrogate escape or a number out of range), so no retry could ever be recognised
    /// as it: the host gets an error instead of a round it could never finish.
    Unbindable(Box<RawValue>),
}

/// The person's answers to hold for the host's retry of a request.
#[derive(Debug)]
pub(in crate::proxy) struct ToHold {
    /// The `requestState` token the host is handed.
    pub(in crate::proxy) token: String,
    /// The server's own `requestState`.
    pub(in crate::proxy) server_state: Option<Box<RawValue>>,
    /// The keys of the entries handed to the host.
    pub(in crate::proxy) foreign: Vec<String>,
    /// The person's `inputResponses` entries.
    pub(in crate::proxy) answers: Members,
}

/// One step of a task that waits for the person, on the host request `host` (or on the
/// session).
#[derive(Debug)]
pub(in crate::proxy) enum Command {
    /// Registers questions for the request; replies what they are asked with, or `None` when
    /// no question may be opened (the request is gone or withdrawn, or the proxy is closing).
    Ask {
        host: RequestRef,
        asks: Vec<Arc<AskHandle>>,
        reply: oneshot::Sender<Option<Asking>>,
    },
    /// Those questions are over.
    AsksDone {
        host: RequestRef,
        asks: Vec<Arc<AskHandle>>,
    },
    /// Ends the request; replies its id when the host still waits for an answer.
    Finish {
        host: RequestRef,
        reply: oneshot::Sender<Option<Box<RawValue>>>,
    },
    /// Ends the request; holds the person's answers for its retry, bound to it; replies its id
    /// when the host still waits for an answer (`None`: it does not).
    Hold {
        host: RequestRef,
        hold: ToHold,
        reply: oneshot::Sender<Option<Holding>>,
    },
    /// Replies the request's line as forwarded.
    Line {
        host: RequestRef,
        reply: oneshot::Sender<Option<Arc<Vec<u8>>>>,
    },
    /// The proxy's retry `retry` of the request is about to go out; `waiter` gets the
    /// server's response. Replies `false` (and forgets the request) when it is withdrawn.
    Retrying {
        host: RequestRef,
        retry: RequestKey,
        waiter: oneshot::Sender<Vec<u8>>,
        reply: oneshot::Sender<bool>,
    },
    /// The retry was answered. Replies `false` (and forgets the request) when it is withdrawn.
    Retried {
        host: RequestRef,
        reply: oneshot::Sender<bool>,
    },
    /// The person accepted the held call: it goes to the server as `line`, once. Replies
    /// `false` (and forgets the request) when it is no longer held.
    Forward {
        host: RequestRef,
        line: Arc<Vec<u8>>,
        reply: oneshot::Sender<bool>,
    },
    /// Watches for the server's completion of these URL elicitations.
    WatchUrls {
        ids: Vec<String>,
        reply: oneshot::Sender<Vec<Arc<Notify>>>,
    },
    /// Stops watching them.
    UnwatchUrls { ids: Vec<String> },
    /// The question for the server's request `key` is over.
    ServerAskDone { key: RequestKey },
    /// The proxy is closing: open no more questions; replies every open one.
    Close {
        reply: oneshot::Sender<Vec<Arc<AskHandle>>>,
    },
}

impl Session {
    /// Applies one command.
    pub(in crate::proxy) fn apply(&mut self, command: Command) {
        match command {
            Command::Ask { host, asks, reply } => {
                let _ = reply.send(self.register(&host, asks));
            }
            Command::AsksDone { host, asks } => {
                if let Some(open) = self.request_mut(&host).and_then(|r| r.phase.asks_mut()) {
                    open.retain(|a| !asks.iter().any(|h| Arc::ptr_eq(a, h)));
                }
            }
            Command::Finish { host, reply } => {
                let id = self
                    .take_request(&host)
                    .filter(|r| !matches!(r.phase, Phase::Withdrawn | Phase::CancelledAtServer))
                    .map(|r| r.id);
                let _ = reply.send(id);
            }
            Command::Hold { host, hold, reply } => {
                let _ = reply.send(self.hold(&host, hold));
            }
            Command::Line { host, reply } => {
                let _ = reply.send(self.request(&host).and_then(|r| r.line.clone()));
            }
            Command::Retrying {
                host,
                retry,
                waiter,
                reply,
            } => {
                let sent = self.resolving(&host, |slot| *slot = Some(retry.clone()));
                if sent {
                    self.retries.insert(retry, waiter);
                }
                let _ = reply.send(sent);
            }
            Command::Retried { host, reply } => {
                let _ = reply.send(self.resolving(&host, |slot| *slot = None));
            }
            Command::Forward { host, line, reply } => {
                let forwarded = match self.request_mut(&host) {
                    Some(request) if matches!(request.phase, Phase::AwaitingPerson { .. }) => {
                        request.phase = Phase::AtServer;
                        request.person_accepted = true;
                        if request.line.as_deref() != Some(&*line) {
                            request.as_host_sent = request.line.take();
                        }
                        request.line = Some(line);
                        true
                    }
                    Some(_) => {
                        self.take_request(&host);
                        false
                    }
                    None => false,
                };
                let _ = reply.send(forwarded);
            }
            Command::WatchUrls { ids, reply } => {
                let waiters = ids
                    .into_iter()
                    .map(|id| self.url_elicitations.watch(id))
                    .collect();
                let _ = reply.send(waiters);
            }
            Command::UnwatchUrls { ids } => {
                for id in &ids {
                    self.url_elicitations.remove(id);
                }
            }
            Command::ServerAskDone { key } => {
                self.server_asks.remove(&key);
            }
            Command::Close { reply } => {
                self.closing = true;
                let _ = reply.send(self.all_asks());
            }
        }
    }

    /// Sets the retry in flight of a request a resolution owns; `false` (and the request is
    /// forgotten) when it is no longer owned by one (withdrawn).
    fn resolving(&mut self, host: &RequestRef, set: impl FnOnce(&mut Option<RequestKey>)) -> bool {
        match self.request_mut(host).map(|r| &mut r.phase) {
            Some(Phase::Resolving { retry, .. }) => {
                set(retry);
                true
            }
            Some(_) => {
                self.take_request(host);
                false
            }
            None => false,
        }
    }

    fn register(&mut self, host: &RequestRef, asks: Vec<Arc<AskHandle>>) -> Option<Asking> {
        if self.closing {
            return None;
        }
        let tool_info = self
            .request(host)
            .and_then(|r| r.tool.as_ref())
            .and_then(|tool| self.tools.get(tool))
            .and_then(|known| ToolInfo::from_listed(&known.listed));
        let version = self.session_version();
        let request = self.request_mut(host)?;
        request.phase.asks_mut()?.extend(asks);
        Some(Asking {
            tool: request.tool.clone(),
            protocol_version: request.meta_version.clone().unwrap_or(version),
            capabilities: request.capabilities.clone(),
            progress: request
                .progress_token
                .clone()
                .map(|token| (token, request.progress.clone())),
            tool_info,
        })
    }

    fn hold(&mut self, host: &RequestRef, hold: ToHold) -> Option<Holding> {
        let request = self.take_request(host)?;
        if !matches!(request.phase, Phase::Resolving { .. }) {
            return None;
        }
        let binding = request
            .as_host_sent
            .as_deref()
            .or(request.line.as_deref())
            .and_then(|sent| Binding::of(request.method, sent));
        let Some(binding) = binding else {
            return Some(Holding::Unbindable(request.id));
        };
        let edited = request
            .as_host_sent
            .is_some()
            .then(|| request.line.clone())
            .flatten();
        let held = Held {
            binding,
            edited,
            server_state: hold.server_state,
            foreign: hold.foreign,
            answers: hold.answers,
            since: Instant::now(),
            person_accepted: request.person_accepted,
        };
        self.held.retain(|_, h| h.fresh());
        self.make_room(held.bytes());
        self.held.insert(hold.token, held);
        Some(Holding::Held(request.id))
    }

    /// Drops the oldest held rounds until one more of `bytes` fits [`MAX_HELD`] and
    /// [`MAX_HELD_BYTES`].
    fn make_room(&mut self, bytes: usize) {
        let mut total: usize = self.held.values().map(Held::bytes).sum::<usize>() + bytes;
        while !self.held.is_empty() && (self.held.len() >= MAX_HELD || total > MAX_HELD_BYTES) {
            let Some(oldest) = self
                .held
                .iter()
                .min_by_key(|(_, h)| h.since)
                .map(|(token, _)| token.clone())
            else {
                return;
            };
            if let Some(dropped) = self.held.remove(&oldest) {
                tracing::warn!("dropped the oldest round held for the host's retry: too many held");
                total -= dropped.bytes();
            }
        }
    }
}

/// How the tasks that wait for the person reach the session's owner.
#[derive(Debug, Clone)]
pub(in crate::proxy) struct Handle {
    inputs: mpsc::Sender<Input>,
}

impl Handle {
    /// A handle on the owner that receives `inputs`.
    pub(in crate::proxy) fn new(inputs: mpsc::Sender<Input>) -> Handle {
        Handle { inputs }
    }

    /// Sends a command; `false` when the owner has stopped.
    pub(in crate::proxy) async fn send(&self, command: Command) -> bool {
        self.inputs.send(Input::Command(command)).await.is_ok()
    }

    /// Sends the command `make` builds around a reply channel and waits for the reply; `None`
    /// when the owner has stopped.
    pub(in crate::proxy) async fn ask<T>(
        &self,
        make: impl FnOnce(oneshot::Sender<T>) -> Command,
    ) -> Option<T> {
        let (tx, rx) = oneshot::channel();
        if !self.send(make(tx)).await {
            return None;
        }
        rx.await.ok()
    }

    /// Registers questions for the host request `host` ([`Command::Ask`]).
    pub(in crate::proxy) async fn asking(
        &self,
        host: &RequestRef,
        asks: Vec<Arc<AskHandle>>,
    ) -> Option<Asking> {
        let host = host.clone();
        self.ask(|reply| Command::Ask { host, asks, reply })
            .await
            .flatten()
    }

    /// Ends the host request `host` ([`Command::Finish`]): its id when the host still waits.
    pub(in crate::proxy) async fn finish(&self, host: &RequestRef) -> Option<Box<RawValue>> {
        let host = host.clone();
        self.ask(|reply| Command::Finish { host, reply })
            .await
            .flatten()
    }

    /// Has a burst of lines judged; `None` when the owner has stopped.
    pub(in crate::proxy) async fn judge(&self, burst: Burst, from_host: bool) -> Option<Batch> {
        let (tx, rx) = oneshot::channel();
        let input = if from_host {
            Input::Host(burst, tx)
        } else {
            Input::Server(burst, tx)
        };
        self.inputs.send(input).await.ok()?;
        rx.await.ok()
    }

    /// Tells the owner to stop.
    pub(in crate::proxy) async fn stop(&self) {
        let _ = self.inputs.send(Input::Stop).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::method::Method;

    fn held(state_bytes: usize) -> Held {
        let line = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
        let state = format!("\"{}\"", "s".repeat(state_bytes));
        Held {
            binding: Binding::of(Method::ToolsCall, line).unwrap(),
            edited: None,
            server_state: Some(RawValue::from_string(state).unwrap()),
            foreign: vec!["roots".into()],
            answers: Members::new(),
            since: Instant::now(),
            person_accepted: false,
        }
    }

    /// The rounds held for the host stay within [`MAX_HELD_BYTES`] however large each state
    /// is: the oldest go first, the newest is kept.
    #[test]
    fn held_rounds_stay_within_their_bytes() {
        let mut s = Session::default();
        let each = 20 << 20;
        for n in 0..10 {
            let h = held(each);
            s.make_room(h.bytes());
            s.held.insert(format!("t{n}"), h);
            let total: usize = s.held.values().map(Held::bytes).sum();
            assert!(total <= MAX_HELD_BYTES, "{total}");
        }
        assert!(s.held.contains_key("t9"));
        assert!(!s.held.contains_key("t0"));
    }

    /// A host request entry under `key`, resolving a round, with the serial the session gives.
    fn resolving_entry(s: &mut Session, key: &RequestKey, to: &str) -> RequestRef {
        let serial = s.next_serial();
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"transfer","arguments":{{"to":"{to}"}}}}}}"#
        );
        s.requests.insert(
            key.clone(),
            super::super::HostRequest {
                serial,
                id: RawValue::from_string("1".into()).unwrap(),
                method: Method::ToolsCall,
                tool: Some("transfer".into()),
                page: crate::proxy::tool_table::Page::First,
                line: Some(Arc::new(line.into_bytes())),
                as_host_sent: None,
                progress_token: None,
                meta_version: None,
                capabilities: Value::Null,
                progress: Arc::default(),
                phase: Phase::Resolving {
                    asks: Vec::new(),
                    retry: None,
                },
                person_accepted: false,
            },
        );
        RequestRef {
            key: key.clone(),
            serial,
        }
    }

    /// A task's steps reach only the entry it started with: once that request is over and the
    /// host sent another under the same id, the old task's commands find nothing (no line to
    /// retry, no retry to send, nothing to end) and leave the new request as it is.
    #[test]
    fn a_tasks_commands_never_reach_a_later_request_under_the_same_id() {
        let mut s = Session::default();
        let key = RequestKey::of_raw("1").unwrap();
        let old = resolving_entry(&mut s, &key, "alice");
        s.requests.remove(&key);
        let new = resolving_entry(&mut s, &key, "mallory");
        assert_ne!(old, new);

        let (reply, mut line) = oneshot::channel();
        s.apply(Command::Line {
            host: old.clone(),
            reply,
        });
        assert_eq!(line.try_recv().unwrap(), None);
        let (waiter, _response) = oneshot::channel();
        let (reply, mut sent) = oneshot::channel();
        s.apply(Command::Retrying {
            host: old.clone(),
            retry: RequestKey::proxy_own(),
            waiter,
            reply,
        });
        assert!(!sent.try_recv().unwrap());
        assert!(s.retries.is_empty());
        let (reply, mut id) = oneshot::channel();
        s.apply(Command::Finish { host: old, reply });
        assert!(id.try_recv().unwrap().is_none());

        let (reply, mut line) = oneshot::channel();
        s.apply(Command::Line { host: new, reply });
        let line = line
            .try_recv()
            .unwrap()
            .expect("the new request is still there");
        assert!(String::from_utf8_lossy(&line).contains("mallory"));
    }
}
