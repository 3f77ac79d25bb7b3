//! MCP authorization through `mcp-consent proxy --url`, against a scripted server that is both
//! the MCP server and its authorization server on loopback: the sign-in is a person-only URL
//! question and nothing is exchanged before the person opens it; the token is stored
//! owner-only and refreshed without asking again; metadata naming another origin, a token
//! endpoint over plain http off loopback and an authorization server without PKCE S256 are
//! clear errors with no question and no token request.

use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::helpers::*;
use crate::host::INIT;
use crate::remote::{Host, Reply, Seen, init_reply, json_reply, rpc, serve, status, wait_for};

/// A token marker that must appear nowhere but the owner-only token file.
const FIRST_TOKEN: &str = "at-first-7f3a9c";
const SECOND_TOKEN: &str = "at-second-2b81d4";
const REFRESH_TOKEN: &str = "rt-5e0c11";

/// What the scripted authorization server's metadata says.
#[derive(Clone, Copy)]
pub(crate) enum Metadata {
    Honest,
    /// `issuer` names another origin than the one the metadata came from.
    OtherIssuer,
    /// The token endpoint is plain http on a host that is not loopback.
    PlainHttpToken,
    /// No `code_challenge_methods_supported`: PKCE support unknown.
    NoPkce,
    /// The protected resource metadata names `/mc`, a prefix of the server's `/mcp`.
    PrefixResource,
    /// The registration endpoint answers with a body that never ends.
    EndlessRegistration,
    /// The token endpoint gives no refresh token: a refused token means signing in again,
    /// and every code after the first is exchanged for the second token.
    NoRefresh,
    /// The access token holds a line break, which no HTTP header can carry.
    UnsendableToken,
}

/// The access token of [`Metadata::UnsendableToken`].
pub(crate) const UNSENDABLE_TOKEN: &str = "at-bad\ntoken";

fn base(seen: &Seen) -> String {
    format!("http://{}", seen.header("host").unwrap())
}

pub(crate) fn query(target: &str) -> Vec<(String, String)> {
    let url = url::Url::parse(&format!("http://x{target}")).unwrap();
    url.query_pairs().into_owned().collect()
}

pub(crate) fn param<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// The scripted server: MCP at `/mcp` (401 without an accepted token; `tools/call` refuses the
/// first token, as if it expired), its protected resource metadata, and an authorization
/// server that approves at once.
pub(crate) fn handler(metadata: Metadata) -> Arc<crate::remote::Handler> {
    let codes = AtomicUsize::new(0);
    Arc::new(move |seen: &Seen| {
        let base = base(seen);
        let path = seen.target.split('?').next().unwrap_or("");
        match (seen.method.as_str(), path) {
            ("POST", "/mcp") => {
                let msg = rpc(seen);
                let bearer = seen.header("authorization").unwrap_or("");
                let accepted = bearer == format!("Bearer {SECOND_TOKEN}")
                    || (bearer == format!("Bearer {FIRST_TOKEN}") && msg["method"] != "tools/call");
                if !accepted {
                    return Reply::Raw(format!(
                        "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    ));
                }
                match msg["method"].as_str() {
                    Some("initialize") => init_reply(seen),
                    Some("tools/call") => json_reply(
                        &json!({"jsonrpc": "2.0", "id": msg["id"], "result": {"content": []}}),
                        "",
                    ),
                    Some("ping") => json_reply(
                        &json!({"jsonrpc": "2.0", "id": msg["id"], "result": {}}),
                        "",
                    ),
                    _ => status("202 Accepted"),
                }
            }
            ("GET", "/.well-known/oauth-protected-resource/mcp") => {
                let resource = match metadata {
                    Metadata::PrefixResource => format!("{base}/mc"),
                    _ => format!("{base}/mcp"),
                };
                json_reply(
                    &json!({"resource": resource, "authorization_servers": [base]}),
                    "",
                )
            }
            ("GET", "/.well-known/oauth-authorization-server") => {
                let issuer = match metadata {
                    Metadata::OtherIssuer => "http://127.0.0.1:9".to_owned(),
                    _ => base.clone(),
                };
                let token = match metadata {
                    Metadata::PlainHttpToken => "http://auth.example/token".to_owned(),
                    _ => format!("{base}/token"),
                };
                let mut meta = json!({
                    "issuer": issuer,
                    "authorization_endpoint": format!("{base}/authorize"),
                    "token_endpoint": token,
                    "registration_endpoint": format!("{base}/register"),
                    "code_challenge_methods_supported": ["S256"],
                });
                if matches!(metadata, Metadata::NoPkce) {
                    meta.as_object_mut()
                        .unwrap()
                        .remove("code_challenge_methods_supported");
                }
                json_reply(&meta, "")
            }
            ("POST", "/register") if matches!(metadata, Metadata::EndlessRegistration) => {
                Reply::EndlessBody
            }
            ("POST", "/register") => json_reply(&json!({"client_id": "client-1"}), ""),
            ("GET", "/authorize") => {
                let q = query(&seen.target);
                let redirect = param(&q, "redirect_uri").unwrap();
                let state = param(&q, "state").unwrap();
                Reply::Raw(format!(
                    "HTTP/1.1 302 Found\r\nlocation: {redirect}?code=code-1&state={state}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                ))
            }
            ("POST", "/token") => {
                let form: Vec<(String, String)> = url::form_urlencoded::parse(seen.body.as_bytes())
                    .into_owned()
                    .collect();
                let refresh = param(&form, "grant_type") == Some("refresh_token");
                let later_code = !refresh && codes.fetch_add(1, Ordering::SeqCst) > 0;
                let access = match metadata {
                    Metadata::UnsendableToken => UNSENDABLE_TOKEN,
                    Metadata::NoRefresh if later_code => SECOND_TOKEN,
                    _ if refresh => SECOND_TOKEN,
                    _ => FIRST_TOKEN,
                };
                let mut reply = json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600, "refresh_token": REFRESH_TOKEN});
                if matches!(metadata, Metadata::NoRefresh) {
                    reply.as_object_mut().unwrap().remove("refresh_token");
                }
                json_reply(&reply, "")
            }
            ("GET", _) => status("405 Method Not Allowed"),
            _ => status("404 Not Found"),
        }
    })
}

/// Every regular file under `dir` except those under `skip` (the database, its WAL, …).
fn files_outside(dir: &std::path::Path, skip: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && path != skip {
            files.extend(files_outside(&path, skip));
        } else if path.is_file() {
            files.push(path);
        }
    }
    files
}

/// The pending questions a person sees (the API hides them from the token).
pub(crate) async fn human_questions(app: &TestApp, browser: &reqwest::Client) -> Vec<Value> {
    person_list(app, browser, "state=pending&audience=human").await
}

/// The questions the person lists with `query` (`state=…&audience=…`).
pub(crate) async fn person_list(
    app: &TestApp,
    browser: &reqwest::Client,
    query: &str,
) -> Vec<Value> {
    let list: Value = browser
        .get(format!("{}/api/v1/questions?{query}", app.base))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    list["questions"].as_array().unwrap().clone()
}

/// The token (a script) lists no pending question.
pub(crate) async fn assert_hidden_from_the_token(app: &TestApp) {
    let listed: Value = app
        .get("/api/v1/questions?state=pending")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(listed["questions"], json!([]), "hidden from the token");
}

/// The first pending question of `kind` the person sees, once there is one.
pub(crate) async fn first_for_the_person(
    app: &TestApp,
    browser: &reqwest::Client,
    kind: &str,
) -> Value {
    eventually(Duration::from_secs(20), || async {
        human_questions(app, browser)
            .await
            .into_iter()
            .find(|q| q["kind"] == kind)
    })
    .await
    .unwrap_or_else(|| panic!("no {kind} question for the person"))
}

/// Answers the question `id` as the person (their session and the page's CSRF token).
pub(crate) async fn answer_as_person(
    app: &TestApp,
    browser: &reqwest::Client,
    id: &str,
    answer: &Value,
) {
    let csrf = csrf_of(&app.html(browser, &format!("/questions/{id}")).await);
    let res = browser
        .post(format!("{}/api/v1/questions/{id}/answer", app.base))
        .header("X-CSRF-Token", csrf)
        .json(answer)
        .send()
        .await
        .unwrap();
    assert!(res.status().is_success(), "{}", res.status());
}

/// A proxy for the honest scripted server whose host sent `initialize`, up to the sign-in
/// question the 401 opened (the person accepted the registration's consent question first):
/// the service, what the server saw, the host, a logged-in browser, the server URL and the
/// question's summary.
pub(crate) struct SigningIn {
    pub app: TestApp,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    pub host: Host,
    pub browser: reqwest::Client,
    pub url: String,
    pub question: Value,
}

async fn signing_in() -> SigningIn {
    signing_in_with(Metadata::Honest).await
}

/// [`SigningIn`] for a scripted server whose metadata and tokens are `metadata`.
pub(crate) async fn signing_in_with(metadata: Metadata) -> SigningIn {
    let app = spawn_app().await;
    let (url, seen) = serve(handler(metadata)).await;
    let mut host = Host::start(&app.state, &url, &[]);
    host.send(INIT).await;
    let browser = app.login().await;
    accept_the_consent(&app, &browser).await;
    let question = first_for_the_person(&app, &browser, "url").await;
    SigningIn {
        app,
        seen,
        host,
        browser,
        url,
        question,
    }
}

/// The person accepts the consent question before dynamic registration.
pub(crate) async fn accept_the_consent(app: &TestApp, browser: &reqwest::Client) {
    let consent = first_for_the_person(app, browser, "form").await;
    let id = consent["id"].as_str().unwrap();
    answer_as_person(
        app,
        browser,
        id,
        &json!({"action": "accept", "content": {}}),
    )
    .await;
}

/// The person opens the sign-in question `id`: the authorization server is on loopback here,
/// so the service asks again (a local-network URL); confirmed, it redirects to the returned
/// authorization URL.
pub(crate) async fn open_the_sign_in(app: &TestApp, browser: &reqwest::Client, id: &str) -> String {
    let confirm = browser
        .get(format!("{}/questions/{id}/open", app.base))
        .send()
        .await
        .unwrap();
    assert_eq!(confirm.status(), StatusCode::OK);
    let csrf = csrf_of(&confirm.text().await.unwrap());
    let open = crate::url::post_open(app, browser, id, &csrf, Some("local-network")).await;
    assert_eq!(open.status(), StatusCode::SEE_OTHER);
    open.headers()["location"].to_str().unwrap().to_owned()
}

/// The browser follows `authorize` through the authorization server's redirect to the
/// proxy's loopback callback; the callback page's status.
pub(crate) async fn follow(authorize: &str) -> StatusCode {
    let plain = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::limited(3))
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    plain.get(authorize).send().await.unwrap().status()
}

#[tokio::test]
async fn signing_in_is_the_persons_url_question_and_the_token_stays_owner_only() {
    // The 401 leads to the sign-in question, for the person only.
    let SigningIn {
        app,
        seen,
        mut host,
        browser,
        url,
        question,
    } = signing_in().await;
    assert_eq!(question["kind"], "url");
    assert_eq!(question["server"], "remote");
    let id = question["id"].as_str().unwrap();
    let detail = app.question_as(&browser, id).await;
    let message = detail["request"]["message"].as_str().unwrap();
    assert!(
        message.contains("remote asks you to sign in at 127.0.0.1"),
        "{message}"
    );
    assert_hidden_from_the_token(&app).await;
    // Nothing is exchanged before the person acts.
    assert!(
        !seen
            .lock()
            .unwrap()
            .iter()
            .any(|s| s.target.starts_with("/authorize") || s.target == "/token"),
        "the proxy went ahead without the person"
    );

    // The person opens it: the authorization server is on loopback here, so the service asks
    // again (a local-network URL); confirmed, it redirects to the authorization server, which
    // redirects to the proxy's loopback callback.
    let authorize = open_the_sign_in(&app, &browser, id).await;
    let pairs = query(&authorize[authorize.find("/authorize").unwrap()..]);
    assert_eq!(param(&pairs, "code_challenge_method"), Some("S256"));
    assert_eq!(param(&pairs, "resource"), Some(url.as_str()));
    assert_eq!(param(&pairs, "client_id"), Some("client-1"));
    // Registered as what it is: a local program with a loopback redirect (SEP-837).
    let registration = wait_for(&seen, |s| s.target == "/register").await;
    let registered: Value = serde_json::from_str(&registration.body).unwrap();
    assert_eq!(registered["application_type"], "native", "{registered}");
    assert_eq!(follow(&authorize).await, StatusCode::OK);

    // The host's initialize goes through with the token.
    let reply = host.recv().await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
    let token_request = wait_for(&seen, |s| s.target == "/token").await;
    assert!(token_request.body.contains("grant_type=authorization_code"));
    assert!(token_request.body.contains("code_verifier="));
    assert!(token_request.body.contains("resource="));

    // Owner-only on disk.
    let store = app.state.join("oauth").join("remote.json");
    let mode = std::fs::metadata(&store).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(
        std::fs::read_to_string(&store)
            .unwrap()
            .contains(FIRST_TOKEN)
    );

    // A refused token is refreshed without asking the person again.
    host.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","arguments":{}}}"#,
    )
    .await;
    let reply = host.recv().await;
    assert_eq!(reply["id"], 2, "{reply}");
    assert!(reply.get("result").is_some(), "{reply}");
    let refresh = wait_for(&seen, |s| {
        s.target == "/token" && s.body.contains("grant_type=refresh_token")
    })
    .await;
    assert!(refresh.body.contains(REFRESH_TOKEN));
    assert!(
        std::fs::read_to_string(&store)
            .unwrap()
            .contains(SECOND_TOKEN)
    );
    assert_eq!(human_questions(&app, &browser).await, Vec::<Value>::new());

    // Nowhere else: not in the service's files, its metrics or the question.
    let metrics = app
        .client
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("mcp_consent_"), "a real scrape");
    let shown = app.question_as(&browser, id).await.to_string();
    for token in [FIRST_TOKEN, SECOND_TOKEN, REFRESH_TOKEN] {
        assert!(!metrics.contains(token));
        assert!(!shown.contains(token));
        for path in files_outside(&app.state, &app.state.join("oauth")) {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(token.len()).any(|w| w == token.as_bytes()),
                "{token} in {}",
                path.display()
            );
        }
    }
}

#[tokio::test]
async fn metadata_for_another_origin_a_plain_http_token_endpoint_or_no_pkce_is_refused() {
    let app = spawn_app().await;
    for (metadata, expect) in [
        (Metadata::OtherIssuer, "names another issuer"),
        (Metadata::PlainHttpToken, "the token endpoint is not https"),
        (Metadata::NoPkce, "does not support PKCE S256"),
        (Metadata::PrefixResource, "names another resource"),
    ] {
        let (url, seen) = serve(handler(metadata)).await;
        let mut host = Host::start(&app.state, &url, &[]);
        host.send(INIT).await;
        let reply = host.recv().await;
        assert_eq!(reply["error"]["code"], -32603, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(message.contains("authorization refused"), "{message}");
        assert!(message.contains(expect), "{message}");
        // Refused before anything else: no registration, no question, no token request.
        let targets: Vec<String> = seen
            .lock()
            .unwrap()
            .iter()
            .map(|s| s.target.clone())
            .collect();
        assert!(
            !targets
                .iter()
                .any(|t| t == "/register" || t == "/token" || t.starts_with("/authorize")),
            "{targets:?}"
        );
        let browser = app.login().await;
        assert_eq!(human_questions(&app, &browser).await, Vec::<Value>::new());
    }
}

#[tokio::test]
async fn a_declined_sign_in_is_an_error_for_the_host_at_once() {
    let SigningIn {
        app,
        seen,
        mut host,
        browser,
        question,
        ..
    } = signing_in().await;
    let id = question["id"].as_str().unwrap();
    answer_as_person(&app, &browser, id, &json!({"action": "decline"})).await;
    let reply = host.recv().await;
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("declined the sign-in"), "{message}");
    assert!(
        !seen.lock().unwrap().iter().any(|s| s.target == "/token"),
        "no token without the person"
    );
}

#[tokio::test]
async fn a_host_leaving_during_the_sign_in_withdraws_the_question() {
    let SigningIn {
        app,
        host,
        browser,
        question,
        ..
    } = signing_in().await;
    let id = question["id"].as_str().unwrap();
    let Host {
        mut child, stdin, ..
    } = host;
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    assert!(status.is_ok(), "the proxy exits when the host leaves");
    let state = app.question_as(&browser, id).await["state"].clone();
    assert_eq!(state, "withdrawn", "withdrawn before the proxy exited");
}

#[tokio::test]
async fn a_registration_reply_that_never_ends_is_a_clear_error_for_the_host() {
    let app = spawn_app().await;
    let (url, _seen) = serve(handler(Metadata::EndlessRegistration)).await;
    let mut host = Host::start(&app.state, &url, &[]);
    host.send(INIT).await;
    accept_the_consent(&app, &app.login().await).await;
    let reply = host.recv().await;
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    let message = reply["error"]["message"].as_str().unwrap();
    assert!(message.contains("cannot register"), "{message}");
    assert!(message.contains("over 262144 bytes"), "{message}");
    let rss = std::fs::read_to_string(format!("/proc/{}/status", host.child.id().unwrap()))
        .unwrap_or_default();
    let kib: u64 = rss
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    assert!(kib < 200 * 1024, "the proxy grew to {kib} KiB");
}

#[tokio::test]
async fn an_idle_connection_to_the_callback_does_not_hold_up_the_sign_in() {
    let SigningIn {
        app,
        mut host,
        browser,
        question,
        ..
    } = signing_in().await;
    let id = question["id"].as_str().unwrap();
    let detail = app.question_as(&browser, id).await;
    let authorize = detail["request"]["url"].as_str().unwrap();
    let pairs = query(&authorize[authorize.find("/authorize").unwrap()..]);
    let redirect = url::Url::parse(param(&pairs, "redirect_uri").unwrap()).unwrap();
    // Another user connects to the callback first and sends nothing.
    let _idle =
        tokio::net::TcpStream::connect((redirect.host_str().unwrap(), redirect.port().unwrap()))
            .await
            .unwrap();

    let location = open_the_sign_in(&app, &browser, id).await;
    assert_eq!(
        follow(&location).await,
        StatusCode::OK,
        "the callback answered"
    );
    let reply = host.recv().await;
    assert_eq!(reply["result"]["protocolVersion"], "2025-11-25", "{reply}");
}
