//! The MCP methods the proxy reads, by name, in one place: every other module matches on
//! [`Method`] rather than on method-name text.

use super::mrtr::{ASKED_METHODS, INPUT_REQUIRED_METHODS};

/// A JSON-RPC `method` the proxy acts on; any other is [`Method::Other`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `initialize`.
    Initialize,
    /// `tools/call`.
    ToolsCall,
    /// `tools/list`.
    ToolsList,
    /// `prompts/get`.
    PromptsGet,
    /// `resources/read`.
    ResourcesRead,
    /// `sampling/createMessage`.
    CreateMessage,
    /// `elicitation/create`.
    Elicit,
    /// `tasks/get` (the tasks extension, SEP-2663).
    TasksGet,
    /// `tasks/result` (the tasks extension).
    TasksResult,
    /// `notifications/initialized`.
    Initialized,
    /// `notifications/cancelled`.
    Cancelled,
    /// `notifications/elicitation/complete`.
    ElicitationComplete,
    /// `notifications/tasks`: the tasks extension's status notification.
    TaskStatus,
    /// `notifications/progress`.
    Progress,
    /// Any other method: passed on as it is.
    Other,
}

/// Every named method, with its wire name.
const NAMES: [(Method, &str); 14] = [
    (Method::Initialize, "initialize"),
    (Method::ToolsCall, "tools/call"),
    (Method::ToolsList, "tools/list"),
    (Method::PromptsGet, "prompts/get"),
    (Method::ResourcesRead, "resources/read"),
    (Method::CreateMessage, "sampling/createMessage"),
    (Method::Elicit, "elicitation/create"),
    (Method::TasksGet, "tasks/get"),
    (Method::TasksResult, "tasks/result"),
    (Method::Initialized, "notifications/initialized"),
    (Method::Cancelled, "notifications/cancelled"),
    (
        Method::ElicitationComplete,
        "notifications/elicitation/complete",
    ),
    (Method::TaskStatus, "notifications/tasks"),
    (Method::Progress, "notifications/progress"),
];

impl Method {
    /// The method named `name` (exact, case-sensitive, as JSON-RPC compares them).
    pub fn named(name: &str) -> Method {
        NAMES
            .iter()
            .find(|(_, n)| *n == name)
            .map_or(Method::Other, |(m, _)| *m)
    }

    /// The wire name (`None` for [`Method::Other`]).
    pub fn name(self) -> Option<&'static str> {
        NAMES.iter().find(|(m, _)| *m == self).map(|(_, n)| *n)
    }

    /// A request the person is asked about (sampling or elicitation, [`ASKED_METHODS`]).
    pub fn is_asked(self) -> bool {
        self.name().is_some_and(|n| ASKED_METHODS.contains(&n))
    }

    /// A request whose result may be an `InputRequiredResult` ([`INPUT_REQUIRED_METHODS`]).
    pub fn may_require_input(self) -> bool {
        self.name()
            .is_some_and(|n| INPUT_REQUIRED_METHODS.contains(&n))
    }

    /// A tasks-extension request whose result can carry `inputRequests`.
    pub fn is_task_query(self) -> bool {
        matches!(self, Method::TasksGet | Method::TasksResult)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_the_lists_agree() {
        for (method, name) in NAMES {
            assert_eq!(Method::named(name), method);
            assert_eq!(method.name(), Some(name));
        }
        assert_eq!(Method::named("Tools/Call"), Method::Other);
        for name in ASKED_METHODS {
            assert!(Method::named(name).is_asked(), "{name}");
        }
        for name in INPUT_REQUIRED_METHODS {
            assert!(Method::named(name).may_require_input(), "{name}");
        }
    }
}
