//! The vocabulary's spellings: each word round-trips, and the migration's CHECKs list the same
//! words.

use super::*;

#[test]
fn every_word_round_trips_through_its_spelling() {
    for k in Kind::ALL {
        assert_eq!(k.as_str().parse::<Kind>(), Ok(*k));
    }
    for s in State::ALL {
        assert_eq!(s.to_string().parse::<State>(), Ok(*s));
    }
    for p in Phase::ALL {
        assert_eq!(serde_json::to_value(p).ok(), Some(p.as_str().into()));
    }
    assert!("Pending".parse::<State>().is_err());
}

#[test]
fn actors_and_approval_ids_parse_what_they_print() {
    for a in [
        Actor::Server,
        Actor::Human,
        Actor::Agent,
        Actor::Rule("r1".into()),
    ] {
        assert_eq!(a.to_string().parse::<Actor>(), Ok(a));
    }
    assert!("rule:".parse::<Actor>().is_err());
    assert!("robot".parse::<Actor>().is_err());
    let id: ApprovalId = "q1:request:2".parse().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        id,
        ApprovalId::Request {
            question: "q1".into(),
            revision: 2,
            after_run: None,
        }
    );
    assert_eq!(id.to_string(), "q1:request:2");
    let id: ApprovalId = "q1:request:2:r-9".parse().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        id,
        ApprovalId::Request {
            question: "q1".into(),
            revision: 2,
            after_run: Some("r-9".into()),
        }
    );
    assert_eq!(id.to_string(), "q1:request:2:r-9");
    let id: ApprovalId = "q1:response:r-9".parse().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((id.step(), id.run()), (Step::Response, Some("r-9")));
    for bad in [
        "q1",
        "q1:request",
        "q1:request:x",
        "q1:request:2:",
        "q1:other:1",
        ":request:1",
    ] {
        assert!(bad.parse::<ApprovalId>().is_err(), "{bad}");
    }
}

/// The migration's CHECK constraints list exactly the words of each type.
#[test]
fn the_migration_checks_the_same_words() {
    // The kinds' CHECK was last widened by the tool-calls migration, the audit actions' by
    // the audit-doors migration, which also added the doors.
    let sql = concat!(
        include_str!("../../migrations/2026-12-01-000000_vocabulary_checks/up.sql"),
        include_str!("../../migrations/2026-12-02-000000_tool_calls/up.sql"),
        include_str!("../../migrations/2026-12-02-050000_audit_doors_and_controls/up.sql")
    );
    let check = |column: &str, words: Vec<&str>| {
        let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
        let expected = format!("{column} IN ({})", quoted.join(", "));
        assert!(sql.contains(&expected), "missing: CHECK ({expected})");
    };
    check("kind", Kind::ALL.iter().map(|k| k.as_str()).collect());
    check("state", State::ALL.iter().map(|k| k.as_str()).collect());
    check("phase", Phase::ALL.iter().map(|k| k.as_str()).collect());
    check("state", RunState::ALL.iter().map(|k| k.as_str()).collect());
    check("phase", Step::ALL.iter().map(|k| k.as_str()).collect());
    check(
        "audience",
        Audience::ALL.iter().map(|k| k.as_str()).collect(),
    );
    check("scope", RuleScope::ALL.iter().map(|k| k.as_str()).collect());
    check(
        "decision",
        DecisionKind::ALL.iter().map(|k| k.as_str()).collect(),
    );
    check(
        "action",
        AuditAction::ALL.iter().map(|k| k.as_str()).collect(),
    );
    check("via", Via::ALL.iter().map(|k| k.as_str()).collect());
}
