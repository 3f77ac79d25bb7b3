//! Route policy (`sampling::route`): hint order, priorities, aliases across providers, the
//! four gates, "no permitted route" and receipt contents. Determinism over many seeded routes
//! lives in `routing_replay`.

use mcp_consent::sampling::receipt::{HintMatch, Modality, Selection, TieBreak};
use mcp_consent::sampling::{
    Catalog, ExclusionReason, ModelConfig, POLICY_VERSION, ProviderKind, RoutingConfig, route,
};
use serde_json::{Value, json};

/// One model of the given provider, price (input, output USD per million tokens), speed and
/// intelligence, supporting tools, images and audio.
pub(crate) fn model(
    id: &str,
    provider: ProviderKind,
    price: (f64, f64),
    speed: f64,
    intel: f64,
) -> ModelConfig {
    ModelConfig {
        id: id.to_owned(),
        provider,
        base_url: "http://127.0.0.1:9/v1/".to_owned(),
        api_key_env: None,
        api_key_file: None,
        input_usd_per_mtok: price.0,
        output_usd_per_mtok: price.1,
        speed,
        intelligence: intel,
        tools: true,
        images: true,
        audio: true,
        aliases: vec![],
        servers: None,
        timeout_secs: 300,
    }
}

/// A small mixed catalog: two Anthropic models, two OpenAI models, one local model.
pub(crate) fn models() -> Vec<ModelConfig> {
    let mut haiku = model(
        "claude-3-haiku-20240307",
        ProviderKind::Anthropic,
        (0.25, 1.25),
        0.9,
        0.4,
    );
    haiku.aliases = vec!["gemini-1.5-flash".into()];
    vec![
        model(
            "claude-3-5-sonnet-20241022",
            ProviderKind::Anthropic,
            (3.0, 15.0),
            0.6,
            0.8,
        ),
        haiku,
        model("gpt-4o", ProviderKind::Openai, (2.5, 10.0), 0.7, 0.85),
        model("gpt-4o-mini", ProviderKind::Openai, (0.15, 0.6), 0.95, 0.5),
        model("llama3.2", ProviderKind::Openai, (0.0, 0.0), 0.5, 0.3),
    ]
}

/// The catalog of these models (valid by construction).
pub(crate) fn catalog(models: Vec<ModelConfig>) -> Catalog {
    Catalog::new(models).unwrap()
}

fn params(prefs: Value) -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
        "maxTokens": 100,
        "modelPreferences": prefs,
    })
}

fn chosen(p: &Value, c: &Catalog) -> Option<String> {
    route(p, "everything", c, &RoutingConfig::default())
        .chosen
        .map(|m| m.id)
}

#[test]
fn first_matching_hint_wins_even_over_a_better_later_hint() {
    let c = catalog(models());
    // The second hint names a smarter model, and the priorities favour intelligence: the first
    // hint still decides (SA8).
    let p = params(
        json!({"hints": [{"name": "llama"}, {"name": "gpt-4o"}], "intelligencePriority": 1.0}),
    );
    let outcome = route(&p, "everything", &c, &RoutingConfig::default());
    assert_eq!(outcome.chosen.as_ref().unwrap().id, "llama3.2");
    assert_eq!(outcome.receipt.selection, Selection::Hint);
    let hint = outcome.receipt.matched_hint.unwrap();
    assert_eq!(
        (hint.index, hint.name.as_str(), hint.via),
        (0, "llama", HintMatch::Id)
    );
}

#[test]
fn a_hint_matching_nothing_is_skipped_not_a_failure() {
    let c = catalog(models());
    let p = params(json!({"hints": [{"name": "mistral"}, {}, {"name": "sonnet"}]}));
    let outcome = route(&p, "everything", &c, &RoutingConfig::default());
    assert_eq!(outcome.chosen.unwrap().id, "claude-3-5-sonnet-20241022");
    let skipped: Vec<(usize, &str)> = outcome
        .receipt
        .skipped_hints
        .iter()
        .map(|s| (s.index, s.reason.as_str()))
        .collect();
    assert_eq!(skipped, vec![(0, "matched no model"), (1, "no name")]);
    assert_eq!(outcome.receipt.matched_hint.unwrap().index, 2);
}

#[test]
fn several_models_matching_the_hint_are_ranked_by_priorities_then_cost() {
    let c = catalog(models());
    // "gpt" matches gpt-4o and gpt-4o-mini.
    let smart = params(json!({"hints": [{"name": "gpt"}], "intelligencePriority": 1.0}));
    assert_eq!(chosen(&smart, &c).unwrap(), "gpt-4o");
    let cheap = params(json!({"hints": [{"name": "gpt"}], "costPriority": 1.0}));
    assert_eq!(chosen(&cheap, &c).unwrap(), "gpt-4o-mini");
    // No priorities: every score is 0, the cheaper of the two wins (not the smaller id).
    let none = params(json!({"hints": [{"name": "GPT"}]}));
    let outcome = route(&none, "everything", &c, &RoutingConfig::default());
    assert_eq!(outcome.chosen.unwrap().id, "gpt-4o-mini");
    let tie = outcome.receipt.tie.expect("a tie is recorded");
    assert_eq!(
        (tie.models, tie.by),
        (
            vec!["gpt-4o".to_owned(), "gpt-4o-mini".to_owned()],
            TieBreak::Cheaper
        )
    );
    assert!(
        outcome.receipt.why.contains("it matched 2 eligible models and 2 of them share the highest priorities score: the cheapest was chosen (estimated at most $"),
        "{}",
        outcome.receipt.why
    );
}

#[test]
fn without_a_matching_hint_the_priorities_decide() {
    let c = catalog(models());
    let cases = [
        (json!({"costPriority": 1.0}), "llama3.2"),
        (json!({"speedPriority": 1.0}), "gpt-4o-mini"),
        (json!({"intelligencePriority": 1.0}), "gpt-4o"),
        (
            json!({"hints": [{"name": "gemini-2.5-pro"}], "intelligencePriority": 1.0}),
            "gpt-4o",
        ),
        // haiku 0.65, sonnet 0.7, gpt-4o-mini 0.725, gpt-4o 0.775.
        (
            json!({"speedPriority": 0.5, "intelligencePriority": 0.5}),
            "gpt-4o",
        ),
        // No preferences at all: all scores 0, the tie goes to the cheapest.
        (json!({}), "llama3.2"),
    ];
    for (prefs, want) in cases {
        let outcome = route(
            &params(prefs.clone()),
            "everything",
            &c,
            &RoutingConfig::default(),
        );
        assert_eq!(outcome.chosen.unwrap().id, want, "{prefs}");
        assert_eq!(outcome.receipt.selection, Selection::Priorities);
    }
}

#[test]
fn with_no_hints_a_tie_goes_to_the_cheaper_model_and_the_receipt_says_so() {
    // The dearer model comes first by id: v1 would have picked it.
    let pricey = model("a-hosted-big", ProviderKind::Openai, (10.0, 30.0), 0.5, 0.5);
    let cheap = model("z-local-small", ProviderKind::Openai, (1.0, 2.0), 0.5, 0.5);
    let c = catalog(vec![pricey.clone(), cheap.clone()]);
    let outcome = route(
        &params(json!({})),
        "everything",
        &c,
        &RoutingConfig::default(),
    );
    assert_eq!(outcome.chosen.unwrap().id, "z-local-small");
    let r = outcome.receipt;
    assert_eq!(r.selection, Selection::Priorities);
    let tie = r.tie.clone().expect("the tie is in the receipt");
    assert_eq!(tie.models, vec!["a-hosted-big", "z-local-small"]);
    assert_eq!(tie.by, TieBreak::Cheaper);
    let estimate = r.estimated_cost_usd.unwrap();
    assert!(estimate < r.candidates[0].estimated_cost_usd);
    assert!(
        r.why.starts_with(
            "no hint matched an eligible model and the priorities do not tell the 2 eligible models apart: the cheapest was chosen (estimated at most $0.000"
        ),
        "{}",
        r.why
    );
    assert!(
        !r.why.contains("score 0.0000") && !r.why.contains("0.000000"),
        "{}",
        r.why
    );
    let wire = serde_json::to_value(&r).unwrap();
    assert_eq!(
        wire["tie"],
        json!({"models": ["a-hosted-big", "z-local-small"], "by": "cheaper"})
    );

    // Equally cheap: the first by id, and the receipt says that instead.
    let twin = model("b-twin", ProviderKind::Openai, (1.0, 2.0), 0.5, 0.5);
    let c = catalog(vec![cheap.clone(), twin]);
    let r = route(
        &params(json!({})),
        "everything",
        &c,
        &RoutingConfig::default(),
    )
    .receipt;
    assert_eq!(r.chosen.unwrap().id, "b-twin");
    assert_eq!(r.tie.unwrap().by, TieBreak::Id);
    assert!(
        r.why
            .ends_with("they cost the same, so the first by id was chosen"),
        "{}",
        r.why
    );

    // Priorities that separate the models leave no tie; only the tied best go to the price.
    let fast = model(
        "m-fast-pricey",
        ProviderKind::Openai,
        (10.0, 30.0),
        0.9,
        0.5,
    );
    let fast_cheap = model("n-fast-cheap", ProviderKind::Openai, (2.0, 4.0), 0.9, 0.5);
    let c = catalog(vec![fast.clone(), fast_cheap, cheap.clone()]);
    let r = route(
        &params(json!({"speedPriority": 1.0})),
        "everything",
        &c,
        &RoutingConfig::default(),
    )
    .receipt;
    assert_eq!(r.chosen.clone().unwrap().id, "n-fast-cheap");
    assert_eq!(
        r.tie.clone().unwrap().models,
        vec!["m-fast-pricey", "n-fast-cheap"]
    );
    assert!(
        r.why
            .contains("2 of the 3 eligible models share the highest priorities score (0.90)"),
        "{}",
        r.why
    );
    let c = catalog(vec![fast, cheap]);
    let r = route(
        &params(json!({"speedPriority": 1.0})),
        "everything",
        &c,
        &RoutingConfig::default(),
    )
    .receipt;
    assert_eq!(
        r.chosen.unwrap().id,
        "m-fast-pricey",
        "a better score beats a lower price"
    );
    assert!(r.tie.is_none());
    assert!(
        r.why
            .ends_with("highest priorities score 0.90 of 2 eligible models"),
        "{}",
        r.why
    );
}

#[test]
fn an_alias_maps_a_hint_across_providers() {
    let c = catalog(models());
    // SA11's own example: gemini-1.5-flash → claude-3-haiku.
    let p = params(json!({"hints": [{"name": "gemini-1.5-flash"}]}));
    let outcome = route(&p, "everything", &c, &RoutingConfig::default());
    let m = outcome.chosen.unwrap();
    assert_eq!(
        (m.id.as_str(), m.provider),
        ("claude-3-haiku-20240307", ProviderKind::Anthropic)
    );
    assert_eq!(
        outcome.receipt.matched_hint.unwrap().via,
        HintMatch::Alias("gemini-1.5-flash".into())
    );
    // A family hint containing the alias also maps ("gemini-1.5-flash-8b").
    let p = params(json!({"hints": [{"name": "gemini-1.5-flash-8b"}]}));
    assert_eq!(chosen(&p, &c).unwrap(), "claude-3-haiku-20240307");
}

#[test]
fn the_tools_gate_excludes_models_without_tool_support() {
    let mut ms = models();
    for m in &mut ms {
        if m.id != "gpt-4o-mini" {
            m.tools = false;
        }
    }
    let c = catalog(ms);
    let mut p = params(json!({"hints": [{"name": "sonnet"}]}));
    p["tools"] = json!([{"name": "get_weather", "inputSchema": {"type": "object"}}]);
    let outcome = route(&p, "everything", &c, &RoutingConfig::default());
    assert_eq!(outcome.chosen.unwrap().id, "gpt-4o-mini");
    let r = &outcome.receipt;
    assert_eq!(r.exclusions.len(), 4);
    assert!(
        r.exclusions
            .iter()
            .all(|e| e.reasons == vec![ExclusionReason::NoToolSupport])
    );
    // The hinted model was excluded: recorded as a downgrade.
    assert_eq!(r.downgrades.len(), 1);
    assert_eq!(
        r.downgrades[0].matched_excluded,
        vec!["claude-3-5-sonnet-20241022"]
    );
    assert_eq!(r.skipped_hints[0].reason, "matched only excluded models");
}

#[test]
fn the_modality_gate_looks_inside_tool_results() {
    let mut ms = models();
    for m in &mut ms {
        m.images = m.id == "claude-3-5-sonnet-20241022";
        m.audio = false;
    }
    let c = catalog(ms);
    let p = json!({
        "maxTokens": 50,
        "tools": [{"name": "screenshot", "inputSchema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "look"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "screenshot", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "toolUseId": "t1",
                "content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}]}
        ]
    });
    let outcome = route(&p, "everything", &c, &RoutingConfig::default());
    assert_eq!(outcome.chosen.unwrap().id, "claude-3-5-sonnet-20241022");
    for e in &outcome.receipt.exclusions {
        assert_eq!(
            e.reasons,
            vec![ExclusionReason::MissingModality {
                modality: Modality::Image
            }]
        );
    }
    // Audio anywhere excludes everyone here.
    let mut audio = p.clone();
    audio["messages"][0]["content"][0] =
        json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"});
    assert!(route(&audio, "everything", &c, &RoutingConfig::default()).is_no_permitted_route());
}

#[test]
fn the_budget_gate_uses_the_estimated_cost() {
    let c = catalog(models());
    let mut p = params(json!({"intelligencePriority": 1.0}));
    p["maxTokens"] = json!(10_000);
    // gpt-4o: 10,000 × $10/Mtok = $0.10 output alone; sonnet $0.15; mini $0.006.
    let settings = RoutingConfig {
        max_request_cost_usd: Some(0.05),
    };
    let outcome = route(&p, "everything", &c, &settings);
    assert_eq!(outcome.chosen.as_ref().unwrap().id, "gpt-4o-mini");
    let r = &outcome.receipt;
    assert_eq!(r.budget_cap_usd, Some(0.05));
    let over: Vec<&str> = r.exclusions.iter().map(|e| e.model.as_str()).collect();
    assert_eq!(over, vec!["claude-3-5-sonnet-20241022", "gpt-4o"]);
    match &r.exclusions[1].reasons[0] {
        ExclusionReason::OverBudget {
            estimated_cost_usd,
            cap_usd,
        } => {
            assert!(*estimated_cost_usd > 0.1 && *estimated_cost_usd < 0.1001);
            assert_eq!(*cap_usd, 0.05);
        }
        other => panic!("unexpected {other:?}"),
    }
    assert!(r.estimated_cost_usd.unwrap() <= 0.05);
}

#[test]
fn the_server_allow_list_is_respected() {
    let mut ms = models();
    for m in &mut ms {
        m.servers = Some(vec!["trusted".into()]);
    }
    ms[4].servers = None; // llama3.2 serves everyone
    let c = catalog(ms);
    let p = params(json!({"intelligencePriority": 1.0}));
    assert_eq!(chosen(&p, &c).unwrap(), "llama3.2");
    let outcome = route(&p, "trusted", &c, &RoutingConfig::default());
    assert_eq!(outcome.chosen.unwrap().id, "gpt-4o");
    let other = route(&p, "everything", &c, &RoutingConfig::default());
    assert_eq!(
        other.receipt.exclusions[0].reasons,
        vec![ExclusionReason::ServerNotAllowed {
            server: "everything".into()
        }]
    );
}

#[test]
fn no_permitted_route_carries_every_reason() {
    let mut ms = models();
    ms[0].tools = false; // sonnet: tools
    ms[1].images = false; // haiku: image
    ms[2].servers = Some(vec!["other".into()]); // gpt-4o: server
    ms[3].tools = false; // mini: tools + image
    ms[3].images = false;
    ms[4].output_usd_per_mtok = 1_000.0; // llama: budget
    let c = catalog(ms);
    let p = json!({
        "maxTokens": 1000,
        "tools": [{"name": "t", "inputSchema": {"type": "object"}}],
        "messages": [{"role": "user", "content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]}],
        "modelPreferences": {"hints": [{"name": "gpt"}]}
    });
    let settings = RoutingConfig {
        max_request_cost_usd: Some(0.5),
    };
    let outcome = route(&p, "everything", &c, &settings);
    assert!(outcome.is_no_permitted_route());
    let r = &outcome.receipt;
    assert_eq!(r.selection, Selection::NoPermittedRoute);
    assert!(r.why.starts_with("no permitted route"));
    assert_eq!(r.exclusions.len(), 5);
    let codes: Vec<Vec<String>> = r
        .exclusions
        .iter()
        .map(|e| {
            e.reasons
                .iter()
                .map(|x| {
                    serde_json::to_value(x).unwrap()["code"]
                        .as_str()
                        .unwrap()
                        .to_owned()
                })
                .collect()
        })
        .collect();
    assert_eq!(
        codes,
        vec![
            vec!["noToolSupport"],
            vec!["missingModality"],
            vec!["serverNotAllowed"],
            vec!["noToolSupport", "missingModality"],
            vec!["overBudget"],
        ]
    );
    assert!(r.estimated_cost_usd.is_none() && r.chosen.is_none());
    // An empty catalog is also no route, with nothing to exclude.
    let empty = route(&p, "everything", &Catalog::default(), &settings);
    assert!(empty.is_no_permitted_route());
    assert!(empty.receipt.exclusions.is_empty());
}

#[test]
fn the_receipt_names_request_catalog_candidates_and_estimates() {
    let c = catalog(models());
    let p = params(json!({"hints": [{"name": "gpt-4o-mini"}]}));
    let outcome = route(
        &p,
        "everything",
        &c,
        &RoutingConfig {
            max_request_cost_usd: Some(1.0),
        },
    );
    let r = outcome.receipt;
    assert_eq!(r.policy_version, POLICY_VERSION);
    assert_eq!(r.policy_version, "route-policy/v2");
    assert_eq!(r.server, "everything");
    assert_eq!(r.catalog_version, c.version());
    assert_eq!(r.request_digest.len(), 64);
    let ids: Vec<&str> = r.candidates.iter().map(|c| c.id.as_str()).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    assert_eq!(ids, sorted, "candidates are listed by id");
    let mini = r.candidates.iter().find(|c| c.id == "gpt-4o-mini").unwrap();
    assert_eq!(mini.provider, ProviderKind::Openai);
    assert_eq!((mini.input_usd_per_mtok, mini.speed), (0.15, 0.95));
    // OpenAI ids are counted with the real tokenizer; others are labelled estimates.
    assert_eq!(mini.token_method.label(), "tiktoken o200k_base");
    let llama = r.candidates.iter().find(|c| c.id == "llama3.2").unwrap();
    assert_eq!(llama.token_method.label(), "estimate: characters / 4");
    assert_eq!(r.estimated_input_tokens, Some(mini.estimated_input_tokens));
    assert_eq!(r.estimated_output_tokens, 100);
    let expected = mini.estimated_input_tokens as f64 * 0.15 / 1e6 + 100.0 * 0.6 / 1e6;
    assert!((r.estimated_cost_usd.unwrap() - expected).abs() < 1e-12);
    assert_eq!(r.budget_cap_usd, Some(1.0));
    // camelCase on the wire.
    let wire = serde_json::to_value(&r).unwrap();
    for key in [
        "policyVersion",
        "requestDigest",
        "catalogVersion",
        "estimatedCostUsd",
        "budgetCapUsd",
    ] {
        assert!(wire.get(key).is_some(), "{key}");
    }
}

#[test]
fn the_request_digest_ignores_key_order_and_number_spelling() {
    let c = catalog(models());
    let a: Value = serde_json::from_str(
        r#"{"maxTokens":100,"messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"temperature":1.0}"#,
    )
    .unwrap();
    let b: Value = serde_json::from_str(
        r#"{"temperature":1,"messages":[{"content":{"text":"hi","type":"text"},"role":"user"}],"maxTokens":1e2}"#,
    )
    .unwrap();
    let ra = route(&a, "s", &c, &RoutingConfig::default()).receipt;
    let rb = route(&b, "s", &c, &RoutingConfig::default()).receipt;
    assert_eq!(ra.request_digest, rb.request_digest);
    let mut changed = a.clone();
    changed["messages"][0]["content"]["text"] = json!("hi!");
    let rc = route(&changed, "s", &c, &RoutingConfig::default()).receipt;
    assert_ne!(ra.request_digest, rc.request_digest);
}
