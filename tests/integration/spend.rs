//! Money: every run's cost in the audit (also a run regenerated away or rejected), the spend per
//! server and UTC day against the daily budgets with totals on the audit page, and amounts
//! rounded for people.

use mcp_consent::config::Config;
use serde_json::Value;

use crate::helpers::*;
use crate::model_review::{FakeModel, approve_request, decide, hinted, model, phase_becomes};

/// The fake reports 20 input and 5 output tokens per call; at $1000 / $4000 per million
/// tokens each run costs 0.02 + 0.02 = $0.04.
const RUN_COST: f64 = 0.04;

fn entries(audit: &Value, action: &str) -> Vec<Value> {
    audit["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["action"] == action)
        .cloned()
        .collect()
}

#[tokio::test]
async fn every_run_costs_in_the_audit_and_the_day_adds_up_against_the_budget() {
    let fake = FakeModel::start().await;
    let mut config = Config {
        models: vec![model("pricey", &fake.base, false, 1000.0)],
        ..Config::default()
    };
    config.budgets.max_cost_usd_per_server_per_day = Some(0.1);
    config.budgets.max_tokens_per_server_per_day = Some(1000);
    let app = spawn_with(config).await;

    // Question 1: a run, regenerated away, then the second run delivered.
    let first = app.open_ok(hinted(1, &[])).await;
    approve_request(&app, &first).await;
    let q = phase_becomes(&app, &first, "response_review").await;
    let approval = q["review"]["responseApprovalId"].as_str().unwrap();
    let (status, _) = decide(&app, &first, approval, "regenerate", None).await;
    assert!(status.is_success());
    let q = eventually(std::time::Duration::from_secs(10), || async {
        let q = app.question(&first).await;
        (q["phase"] == "response_review" && q["review"]["runs"].as_array().unwrap().len() == 2)
            .then_some(q)
    })
    .await
    .expect("the regenerated run finishes");
    let approval = q["review"]["responseApprovalId"].as_str().unwrap();
    let (status, _) = decide(&app, &first, approval, "send", None).await;
    assert!(status.is_success());

    // Question 2: a run, rejected at response review.
    let second = app.open_ok(hinted(2, &[])).await;
    approve_request(&app, &second).await;
    let q = phase_becomes(&app, &second, "response_review").await;
    let approval = q["review"]["responseApprovalId"].as_str().unwrap();
    let (status, _) = decide(&app, &second, approval, "reject", None).await;
    assert!(status.is_success());

    // The audit: each of the three runs costs on the entry that started it.
    let audit: Value = app.get("/api/v1/audit").await.json().await.unwrap();
    let started: Vec<Value> = ["approved", "regenerated"]
        .iter()
        .flat_map(|a| entries(&audit, a))
        .collect();
    assert_eq!(started.len(), 3, "{audit}");
    for e in &started {
        assert_eq!(
            (e["inputTokens"].as_i64(), e["outputTokens"].as_i64()),
            (Some(20), Some(5)),
            "{e}"
        );
        assert!(
            (e["costUsd"].as_f64().unwrap() - RUN_COST).abs() < 1e-12,
            "{e}"
        );
    }
    let regenerated = &entries(&audit, "regenerated")[0];
    assert_eq!(
        regenerated["questionId"],
        first.as_str(),
        "the run regenerated away is there"
    );
    let delivered = entries(&audit, "delivered");
    assert_eq!(delivered.len(), 1);
    assert!((delivered[0]["costUsd"].as_f64().unwrap() - RUN_COST).abs() < 1e-12);

    // The audit page: the server's day, its three runs (one delivered), the totals, against
    // the budgets; the $0.10 cap is passed, so the next request is refused, and it says so.
    let browser = app.login().await;
    let page = app.html(&browser, "/audit").await;
    let spend = page
        .split("class=\"spend\"")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("the audit page has a spend section");
    let today = chrono::Utc::now().format("%Y-%m-%d").to_string();
    assert!(spend.contains(&today), "{spend}");
    assert!(spend.contains("test-server"), "{spend}");
    assert!(spend.contains("3 (1 delivered)"), "{spend}");
    assert!(spend.contains("$0.12 of $0.10 (120%)"), "{spend}");
    assert!(spend.contains("75 of 1,000 tokens (7.5%)"), "{spend}");
    assert!(spend.contains("Reached: this server"), "{spend}");
    assert!(spend.contains("<tfoot><tr><th scope=\"row\" colspan=\"2\">Total</th><td>3</td><td>75</td><td>$0.12</td>"), "{spend}");
    let (_, refused) = app.open(hinted(3, &[]), full_caps(), "2025-11-25").await;
    assert_eq!(
        refused["response"]["error"]["data"]["limit"], "max_cost_usd_per_server_per_day",
        "{refused}"
    );
    assert!(
        refused["response"]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is $0.10 and $0.12 is already used"),
        "money in the refusal is rounded for people: {refused}"
    );
}

#[tokio::test]
async fn the_spend_section_speaks_each_language_and_says_when_nothing_ran() {
    let fake = FakeModel::start().await;
    let app = spawn_with(Config {
        models: vec![model("pricey", &fake.base, false, 1000.0)],
        ..Config::default()
    })
    .await;
    let browser = app.login().await;
    let page = app.html(&browser, "/audit").await;
    assert!(page.contains("No model ran in these days."), "{page}");
    let id = app.open_ok(hinted(1, &[])).await;
    approve_request(&app, &id).await;
    phase_becomes(&app, &id, "response_review").await;
    let pt = app.html(&browser, "/audit?lang=pt-BR").await;
    assert!(pt.contains("Gasto com modelos por servidor e dia"), "{pt}");
    assert!(pt.contains("US$ 0,04"), "{pt}");
    assert!(pt.contains("sem limite diário"), "{pt}");
    let zh = app.html(&browser, "/audit?lang=zh-CN").await;
    assert!(zh.contains("按服务器和日期的模型花费"), "{zh}");
    assert!(zh.contains("US$0.04"), "{zh}");
}
