//! A short, non-secret label for a browser session, from its `User-Agent`: the browser family
//! and the system family ("Firefox / Linux"), so the sessions page tells sessions apart. The
//! full header is not stored (it identifies a browser more than the person needs to see).

/// Browser families by the token that identifies them, most specific first (Edge and Opera
/// also say "Chrome", Chrome also says "Safari").
const BROWSERS: &[(&str, &str)] = &[
    ("Edg/", "Edge"),
    ("OPR/", "Opera"),
    ("Firefox/", "Firefox"),
    ("Chromium/", "Chromium"),
    ("Chrome/", "Chrome"),
    ("Safari/", "Safari"),
    ("curl/", "curl"),
];

/// System families by token, most specific first (Android also says "Linux", iOS "Mac OS X").
const SYSTEMS: &[(&str, &str)] = &[
    ("Android", "Android"),
    ("iPhone", "iOS"),
    ("iPad", "iOS"),
    ("Windows", "Windows"),
    ("Mac OS X", "macOS"),
    ("Macintosh", "macOS"),
    ("CrOS", "ChromeOS"),
    ("Linux", "Linux"),
];

/// "Browser / System" for `user_agent`; a family not recognised is left out, and "?" is the
/// label when neither is.
pub fn of_user_agent(user_agent: Option<&str>) -> String {
    let ua = user_agent.unwrap_or_default();
    let find = |table: &[(&str, &'static str)]| {
        table
            .iter()
            .find(|(token, _)| ua.contains(token))
            .map(|(_, name)| *name)
    };
    match (find(BROWSERS), find(SYSTEMS)) {
        (Some(b), Some(s)) => format!("{b} / {s}"),
        (Some(one), None) | (None, Some(one)) => one.to_owned(),
        (None, None) => "?".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::of_user_agent;

    #[test]
    fn families_not_the_whole_header() {
        let chrome = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36";
        assert_eq!(of_user_agent(Some(chrome)), "Chrome / Linux");
        let edge = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/142.0.0.0 Safari/537.36 Edg/142.0.0.0";
        assert_eq!(of_user_agent(Some(edge)), "Edge / Windows");
        let safari = "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1";
        assert_eq!(of_user_agent(Some(safari)), "Safari / iOS");
        assert_eq!(of_user_agent(None), "?");
        assert_eq!(of_user_agent(Some("reqwest")), "?");
    }
}
