//! Route policy determinism: 10,000 seeded random requests, each routed twice and against a
//! shuffled catalog, give one answer each.

use super::routing::{catalog, model, models};
use mcp_consent::sampling::{Catalog, ProviderKind, RoutingConfig, route};
use serde_json::json;

/// SplitMix64: a seeded generator so the replay is the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        // Quarter steps make exact score ties common, which is what the id tie-break is for.
        self.below(5) as f64 / 4.0
    }
    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

#[test]
fn ten_thousand_replayed_routes_give_one_answer_each() {
    let mut rng = Rng(0x6d63_702d_636f_6e73);
    let mut base = models();
    base[0].tools = false;
    base[1].images = false;
    base[3].servers = Some(vec!["a".into()]);
    base[4].tools = false;
    base.push(model(
        "mistral-small",
        ProviderKind::Openai,
        (0.2, 0.6),
        0.8,
        0.5,
    ));
    let mut qwen = model("qwen2.5", ProviderKind::Openai, (0.0, 0.0), 0.5, 0.5);
    qwen.images = false;
    base.push(qwen);
    let ordered = catalog(base.clone());
    // Sixteen shuffled orders of the same models (built once: the catalog digest is not what
    // is under test here).
    let shuffles: Vec<Catalog> = (0..16)
        .map(|_| {
            let mut ms = base.clone();
            rng.shuffle(&mut ms);
            catalog(ms)
        })
        .collect();
    assert!(shuffles.iter().all(|c| c.version() == ordered.version()));
    let hint_pool = [
        "gpt",
        "sonnet",
        "claude",
        "gemini-1.5-flash",
        "llama",
        "mini",
        "qwen",
        "nothing",
        "o",
    ];
    let mut distinct = std::collections::BTreeSet::new();
    for n in 0..10_000 {
        let mut hints = Vec::new();
        for _ in 0..rng.below(4) {
            hints.push(json!({"name": hint_pool[rng.below(hint_pool.len())]}));
        }
        let mut prefs = json!({"hints": hints});
        for key in ["costPriority", "speedPriority", "intelligencePriority"] {
            if rng.below(3) > 0 {
                prefs[key] = json!(rng.unit());
            }
        }
        let mut p = json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": format!("request {n}")}}],
            "maxTokens": 1 + rng.below(20_000),
            "modelPreferences": prefs,
        });
        if rng.below(4) == 0 {
            p["tools"] = json!([{"name": "t", "inputSchema": {"type": "object"}}]);
        }
        if rng.below(5) == 0 {
            p["messages"][0]["content"] =
                json!({"type": "image", "data": "AA==", "mimeType": "image/png"});
        }
        let server = ["a", "b"][rng.below(2)];
        let settings = RoutingConfig {
            max_request_cost_usd: [None, Some(0.01), Some(0.2)][rng.below(3)],
        };
        let shuffled = &shuffles[rng.below(shuffles.len())];

        let first = route(&p, server, &ordered, &settings);
        let again = route(&p, server, &ordered, &settings);
        let reordered = route(&p, server, shuffled, &settings);
        assert_eq!(first, again, "request {n}: replay differs");
        assert_eq!(
            first, reordered,
            "request {n}: catalog order changed the route"
        );
        distinct.insert(first.chosen.map(|m| m.id).unwrap_or_default());
    }
    // The generator exercises the whole catalog and the no-route outcome.
    assert!(distinct.len() >= 6, "{distinct:?}");
    assert!(
        distinct.contains(""),
        "some requests have no permitted route"
    );
}
