//! Prometheus metrics on a private registry per service instance (so parallel tests never
//! collide). Names and labels as docs/design.md §Metrics; labels never carry request content, and
//! `server` is not a label (unbounded).

use prometheus::core::Collector;
use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge,
    IntGaugeVec, Opts, Registry, TextEncoder,
};

use crate::domain::{Audience, Kind};

/// Time-to-decision buckets, in seconds: a person answers in seconds to minutes; the default
/// deadline is 15 minutes, so the top buckets show questions answered near it.
const DECISION_BUCKETS: &[f64] = &[
    1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0,
];

/// Why a request or answer was refused (the `reason` label of `mcp_consent_rejections_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RejectReason {
    /// The person declined.
    UserDeclined,
    /// The person cancelled.
    UserCancelled,
    /// A request broke a protocol rule (-32602/-32600/-32601).
    InvalidRequest,
    /// An answer failed validation (the question stayed open).
    InvalidAnswer,
    /// A request needed a capability the client did not declare.
    Capability,
    /// A request body over `max_request_bytes`.
    TooLarge,
    /// A URL with a scheme other than https/http.
    SchemeNotAllowed,
    /// A budget or limit stopped it.
    Budget,
    /// A rule refused a request no configured model may serve.
    NoRoute,
    /// The person paused or blocked the asking server.
    ServerPaused,
}

impl RejectReason {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            RejectReason::UserDeclined => "user_declined",
            RejectReason::UserCancelled => "user_cancelled",
            RejectReason::InvalidRequest => "invalid_request",
            RejectReason::InvalidAnswer => "invalid_answer",
            RejectReason::Capability => "capability",
            RejectReason::TooLarge => "too_large",
            RejectReason::SchemeNotAllowed => "scheme_not_allowed",
            RejectReason::Budget => "budget",
            RejectReason::NoRoute => "no_route",
            RejectReason::ServerPaused => "server_paused",
        }
    }
}

/// What happened to a host's tool call (the `decision` label of
/// `mcp_consent_tool_calls_total`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolCallDecision {
    /// Passed by a rule or a grant (reported by the proxies).
    Allowed,
    /// Put to the person as a `tool_call` question.
    Asked,
    /// Refused by a rule (reported by the proxies).
    Denied,
}

impl ToolCallDecision {
    /// Every value, for the label sets created at zero.
    pub const ALL: [ToolCallDecision; 3] = [
        ToolCallDecision::Allowed,
        ToolCallDecision::Asked,
        ToolCallDecision::Denied,
    ];

    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            ToolCallDecision::Allowed => "allowed",
            ToolCallDecision::Asked => "asked",
            ToolCallDecision::Denied => "denied",
        }
    }
}

/// Every metric of one service instance.
#[derive(Clone)]
pub struct Metrics {
    registry: Registry,
    /// `mcp_consent_questions_pending{kind,audience}`: set from the store at scrape time.
    pub pending: IntGaugeVec,
    /// `mcp_consent_questions_opened_total{kind}`.
    pub opened: IntCounterVec,
    /// `mcp_consent_questions_closed_total{kind,outcome}`.
    pub closed: IntCounterVec,
    /// `mcp_consent_rejections_total{kind,reason}`.
    pub rejections: IntCounterVec,
    /// `mcp_consent_decision_duration_seconds{kind}`: opened → decided by a person or agent.
    pub decision_duration: HistogramVec,
    /// `mcp_consent_retention_runs_total`.
    pub retention_runs: IntCounter,
    /// `mcp_consent_retention_pruned_total`.
    pub retention_pruned: IntCounter,
    /// `mcp_consent_event_subscribers`.
    pub event_subscribers: IntGauge,
    /// `mcp_consent_proxy_dropped_lines_total{reason}`: server lines proxies dropped because
    /// they could not be judged (fail closed).
    pub proxy_dropped: IntCounterVec,
    /// `mcp_consent_tool_calls_total{decision}`: host tool calls allowed, asked about or
    /// denied (no server or tool label).
    pub tool_calls: IntCounterVec,
    /// `mcp_consent_tool_decisions_unaudited_total`: tool calls a proxy decided alone whose
    /// decision the audit does not hold one by one (over a report's or a door's limit); they
    /// are still counted in `tool_calls`.
    pub tool_decisions_unaudited: IntCounter,
    /// `mcp_consent_notifications_failed_total{channel}`: notices a channel did not take (the
    /// label is the channel's kind).
    pub notifications_failed: IntCounterVec,
}

/// The metrics could not be registered (a programming error: duplicate names).
#[derive(Debug, thiserror::Error)]
#[error("cannot register metrics")]
pub struct MetricsError(#[from] prometheus::Error);

/// Creates metrics under the `mcp_consent` namespace and registers each on one registry.
struct Registrar(Registry);

impl Registrar {
    fn opts(name: &str, help: &str) -> Opts {
        Opts::new(name, help).namespace("mcp_consent")
    }

    fn register<M: Collector + Clone + 'static>(&self, metric: M) -> Result<M, MetricsError> {
        self.0.register(Box::new(metric.clone()))?;
        Ok(metric)
    }

    fn counter(&self, name: &str, help: &str) -> Result<IntCounter, MetricsError> {
        self.register(IntCounter::with_opts(Self::opts(name, help))?)
    }

    fn counters(
        &self,
        name: &str,
        help: &str,
        labels: &[&str],
    ) -> Result<IntCounterVec, MetricsError> {
        self.register(IntCounterVec::new(Self::opts(name, help), labels)?)
    }

    fn gauge(&self, name: &str, help: &str) -> Result<IntGauge, MetricsError> {
        self.register(IntGauge::with_opts(Self::opts(name, help))?)
    }

    fn gauges(&self, name: &str, help: &str, labels: &[&str]) -> Result<IntGaugeVec, MetricsError> {
        self.register(IntGaugeVec::new(Self::opts(name, help), labels)?)
    }

    fn histograms(
        &self,
        name: &str,
        help: &str,
        buckets: &[f64],
        labels: &[&str],
    ) -> Result<HistogramVec, MetricsError> {
        let opts = HistogramOpts::new(name, help)
            .namespace("mcp_consent")
            .buckets(buckets.to_vec());
        self.register(HistogramVec::new(opts, labels)?)
    }
}

impl Metrics {
    /// Registers every metric on a new registry, with `build_info{version}` = 1 and the
    /// process collector (CPU, memory, file descriptors) where the platform has one.
    ///
    /// # Errors
    /// [`MetricsError`] on a duplicate registration.
    pub fn new() -> Result<Metrics, MetricsError> {
        let r = Registrar(Registry::new());
        let metrics = Metrics {
            registry: r.0.clone(),
            pending: r.gauges(
                "questions_pending",
                "Questions waiting for an answer",
                &["kind", "audience"],
            )?,
            opened: r.counters("questions_opened_total", "Questions opened", &["kind"])?,
            closed: r.counters(
                "questions_closed_total",
                "Questions closed, by outcome",
                &["kind", "outcome"],
            )?,
            rejections: r.counters(
                "rejections_total",
                "Requests or answers refused, by reason",
                &["kind", "reason"],
            )?,
            decision_duration: r.histograms(
                "decision_duration_seconds",
                "Seconds from opening a question to its answer",
                DECISION_BUCKETS,
                &["kind"],
            )?,
            retention_runs: r.counter("retention_runs_total", "Retention runs")?,
            retention_pruned: r
                .counter("retention_pruned_total", "Questions deleted by retention")?,
            event_subscribers: r.gauge("event_subscribers", "Open event streams")?,
            proxy_dropped: r.counters(
                "proxy_dropped_lines_total",
                "Server lines a proxy dropped because it could not judge them",
                &["reason"],
            )?,
            tool_calls: r.counters(
                "tool_calls_total",
                "Host tool calls, by decision: allowed, asked, denied",
                &["decision"],
            )?,
            tool_decisions_unaudited: r.counter(
                "tool_decisions_unaudited_total",
                "Tool calls decided by a proxy alone that the audit does not hold one by one",
            )?,
            notifications_failed: r.counters(
                "notifications_failed_total",
                "Notices a channel failed to deliver, by channel kind",
                &["channel"],
            )?,
        };
        r.gauges("build_info", "Build information", &["version"])?
            .with_label_values(&[env!("CARGO_PKG_VERSION")])
            .set(1);
        #[cfg(target_os = "linux")]
        r.0.register(Box::new(
            prometheus::process_collector::ProcessCollector::for_self(),
        ))?;
        metrics.create_zero_label_sets();
        Ok(metrics)
    }

    /// Pre-creates the label sets a dashboard expects to see at zero.
    fn create_zero_label_sets(&self) {
        for kind in Kind::ALL {
            self.opened.with_label_values(&[kind.as_str()]);
            for audience in Audience::ALL {
                self.pending
                    .with_label_values(&[kind.as_str(), audience.as_str()]);
            }
        }
        for decision in ToolCallDecision::ALL {
            self.tool_calls.with_label_values(&[decision.as_str()]);
        }
    }

    /// Counts `n` tool calls with this decision.
    pub fn tool_calls(&self, decision: ToolCallDecision, n: u64) {
        self.tool_calls
            .with_label_values(&[decision.as_str()])
            .inc_by(n);
    }

    /// Counts one tool call with this decision.
    pub fn tool_call(&self, decision: ToolCallDecision) {
        self.tool_calls(decision, 1);
    }

    /// Counts a rejection.
    pub fn reject(&self, kind: &str, reason: RejectReason) {
        self.rejections
            .with_label_values(&[kind, reason.as_str()])
            .inc();
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut out = Vec::new();
        // Encoding into a Vec cannot fail for the text format except on invalid metric data,
        // which the registrations above rule out; an empty scrape is the fallback.
        if TextEncoder::new()
            .encode(&self.registry.gather(), &mut out)
            .is_err()
        {
            out.clear();
        }
        String::from_utf8(out).unwrap_or_default()
    }

    /// The decision-duration histogram of one kind.
    pub fn decision(&self, kind: &str) -> Histogram {
        self.decision_duration.with_label_values(&[kind])
    }
}
