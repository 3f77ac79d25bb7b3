//! What the proxy keeps of a server's `tools/list` results, by tool name, bounded: a result to
//! a request without `cursor` (a first page) replaces everything kept, a later page adds to it,
//! and when what is kept goes over [`MAX_TOOLS`] tools or [`MAX_BYTES`] bytes the oldest pages
//! are dropped (the newest is always kept whole: it came in one line, so it is under the line
//! limit). A server that lists new tools forever therefore holds no more of the proxy's memory
//! than the bound plus one page; a tool that is still listed keeps what the server claimed.
//!
//! Each tool is held once, whatever the pages repeat: its name is the key of its entry and of
//! its place in the order tools were listed, and a name listed again (by a later page or the
//! same one) moves to its newest place. So the bound counts everything held, and a page costs
//! work in proportion to its own tools (and to the tools it pushes out, each dropped once).

use std::collections::{BTreeMap, HashMap};

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;

/// The most tools kept (beyond the newest page).
pub(super) const MAX_TOOLS: usize = 10_000;
/// The most bytes of listed entries kept (beyond the newest page).
pub(super) const MAX_BYTES: usize = 16 * 1024 * 1024;

/// Which page of a listing a `tools/list` result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Page {
    /// The answer to a request without `cursor`: the listing starts again.
    First,
    /// The answer to a request with `cursor`: more of the same listing.
    Next,
}

impl Page {
    /// The page a `tools/list` request with these `params` (raw text) asks for.
    pub(super) fn of_params_text(params: Option<&str>) -> Page {
        #[derive(Deserialize)]
        struct Params {
            cursor: Option<IgnoredAny>,
        }
        let cursor = params
            .and_then(|p| serde_json::from_str::<Params>(p).ok())
            .and_then(|p| p.cursor);
        if cursor.is_some() {
            Page::Next
        } else {
            Page::First
        }
    }

    /// The page a `tools/list` request with these `params` asks for.
    pub(super) fn of_params(params: Option<&Value>) -> Page {
        match params.and_then(|p| p.get("cursor")) {
            None | Some(Value::Null) => Page::First,
            Some(_) => Page::Next,
        }
    }
}

/// One tool kept: what is kept of it, the page that listed it last, its place in the order
/// tools were listed and the bytes it counts for.
#[derive(Debug)]
struct Entry<T> {
    value: T,
    page: u64,
    place: u64,
    weight: usize,
}

/// The tools kept from a server's listings.
#[derive(Debug)]
pub(super) struct ToolTable<T> {
    entries: HashMap<String, Entry<T>>,
    /// Every kept tool's name by its place: the oldest listed first, so the oldest pages are
    /// dropped from the front.
    order: BTreeMap<u64, String>,
    next_page: u64,
    next_place: u64,
    bytes: usize,
}

impl<T> Default for ToolTable<T> {
    fn default() -> Self {
        ToolTable {
            entries: HashMap::new(),
            order: BTreeMap::new(),
            next_page: 0,
            next_place: 0,
            bytes: 0,
        }
    }
}

impl<T> ToolTable<T> {
    /// Records one `tools/list` result's tools: `(name, what is kept, its size in bytes)`.
    pub(super) fn record(
        &mut self,
        page: Page,
        tools: impl IntoIterator<Item = (String, T, usize)>,
    ) {
        if page == Page::First {
            self.entries = HashMap::new();
            self.order.clear();
            self.bytes = 0;
        }
        let number = self.next_page;
        self.next_page += 1;
        for (name, value, size) in tools {
            // The name is held twice: as the key and in the order.
            let weight = size.saturating_add(2 * name.len());
            let place = self.next_place;
            self.next_place += 1;
            let entry = Entry {
                value,
                page: number,
                place,
                weight,
            };
            if let Some(old) = self.entries.insert(name.clone(), entry) {
                self.bytes -= old.weight;
                self.order.remove(&old.place);
            }
            self.bytes += weight;
            self.order.insert(place, name);
        }
        self.drop_oldest_pages(number);
    }

    /// While what is kept is over the bound, drops the oldest page whole, never `newest`.
    fn drop_oldest_pages(&mut self, newest: u64) {
        let mut dropping = None;
        while let Some(oldest) = self.order.first_entry() {
            let page = self.entries.get(oldest.get()).map(|e| e.page);
            let over = self.bytes > MAX_BYTES || self.entries.len() > MAX_TOOLS;
            // A page being dropped goes whole, even once the rest is under the bound.
            if page == Some(newest) || !(over || page == dropping) {
                break;
            }
            dropping = page;
            if let Some(gone) = self.entries.remove(&oldest.remove()) {
                self.bytes -= gone.weight;
            }
        }
        // The room a huge page took in the table is given back once the page is dropped.
        if self.entries.capacity() > 4 * self.entries.len() + 64 {
            self.entries.shrink_to_fit();
        }
    }

    /// What is kept of the tool `name`, when it is.
    pub(super) fn get(&self, name: &str) -> Option<&T> {
        self.entries.get(name).map(|e| &e.value)
    }

    /// How many tools are kept.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The bytes the tools kept count for.
    #[cfg(test)]
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many names the order holds, and their bytes.
    #[cfg(test)]
    fn held_names(&self) -> (usize, usize) {
        (self.order.len(), self.order.values().map(String::len).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(prefix: &str, n: usize, size: usize) -> Vec<(String, usize, usize)> {
        (0..n).map(|i| (format!("{prefix}{i}"), i, size)).collect()
    }

    /// A server that answers every page with the same tools (and a new cursor) holds no more
    /// than those tools, however many pages the host follows.
    #[test]
    fn pages_that_list_the_same_tools_again_hold_nothing_more() {
        let mut t = ToolTable::default();
        t.record(Page::First, page("a", 100, 10));
        for _ in 0..1_000 {
            t.record(Page::Next, page("a", 100, 10));
        }
        assert_eq!(t.len(), 100);
        let (names, _) = t.held_names();
        assert!(names <= 100, "{names} names held for 100 tools");
    }

    /// A page that lists one new name many times holds that name once: the record neither
    /// grows by the page's length nor walks the copies of earlier pages again.
    #[test]
    fn a_name_a_page_lists_many_times_is_held_once() {
        let mut t = ToolTable::default();
        t.record(Page::First, page("a", 10, 10));
        for p in 0..200 {
            let name = format!("new{p}");
            t.record(Page::Next, (0..1_000).map(|i| (name.clone(), i, 10)));
        }
        assert_eq!(t.len(), 210);
        assert_eq!(t.get("new199"), Some(&999), "the last copy listed is kept");
        let (names, _) = t.held_names();
        assert!(names <= t.len(), "{names} names held for {} tools", t.len());
    }

    /// Pages that list a tool with a long name again hold no older copies of that name beyond
    /// what the bound counts.
    #[test]
    fn a_long_name_listed_again_is_not_held_once_per_page() {
        let mut t = ToolTable::default();
        let long = "h".repeat(1024 * 1024);
        t.record(Page::First, page("a", 100, 10));
        t.record(Page::Next, vec![(long.clone(), 0, 10)]);
        for i in 1..50 {
            t.record(Page::Next, vec![(long.clone(), i, 10)]);
        }
        assert_eq!(t.get(&long), Some(&49));
        let (_, name_bytes) = t.held_names();
        assert!(
            name_bytes <= t.bytes(),
            "{name_bytes} bytes of names held, {} counted",
            t.bytes()
        );
    }

    #[test]
    fn a_first_page_replaces_what_was_kept_and_later_pages_add() {
        let mut t = ToolTable::default();
        t.record(Page::First, page("a", 3, 10));
        t.record(Page::Next, page("b", 2, 10));
        assert_eq!(t.len(), 5);
        assert_eq!(t.get("a2"), Some(&2));
        t.record(Page::First, page("c", 2, 10));
        assert_eq!(t.len(), 2);
        assert_eq!(t.get("a0"), None, "a tool no longer listed is forgotten");
        assert_eq!(t.get("c1"), Some(&1));
        assert_eq!(t.bytes(), 2 * (10 + 2 * 2));
    }

    #[test]
    fn pages_past_the_bound_drop_the_oldest_and_the_newest_is_kept_whole() {
        let mut t = ToolTable::default();
        let per_page = 1000;
        for p in 0..30 {
            t.record(Page::Next, page(&format!("p{p}_"), per_page, 1024));
            assert!(
                t.len() <= MAX_TOOLS + per_page && t.bytes() <= MAX_BYTES + per_page * 1100,
                "page {p}: {} tools, {} bytes",
                t.len(),
                t.bytes()
            );
        }
        assert!(t.get("p29_999").is_some());
        assert!(t.get("p0_0").is_none());
        // One page over the bound on its own is still kept whole.
        t.record(Page::Next, page("huge", 2, MAX_BYTES));
        assert_eq!(t.len(), 2);
        assert!(t.get("huge1").is_some());
    }

    #[test]
    fn a_tool_listed_again_counts_once_and_stays_with_its_newer_page() {
        let mut t = ToolTable::default();
        t.record(Page::First, vec![("x".to_owned(), 1, 100)]);
        t.record(Page::Next, vec![("x".to_owned(), 2, 100)]);
        assert_eq!((t.len(), t.bytes(), t.get("x")), (1, 102, Some(&2)));
        let big = MAX_BYTES / 2 + 1;
        t.record(Page::Next, vec![("y".to_owned(), 3, big)]);
        t.record(Page::Next, vec![("z".to_owned(), 4, big)]);
        assert_eq!(t.get("y"), None, "the oldest page went");
        assert_eq!(t.get("z"), Some(&4));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn the_page_is_read_from_the_requests_cursor() {
        assert_eq!(Page::of_params_text(None), Page::First);
        assert_eq!(Page::of_params_text(Some("{}")), Page::First);
        assert_eq!(
            Page::of_params_text(Some(r#"{"cursor":null}"#)),
            Page::First
        );
        assert_eq!(Page::of_params_text(Some(r#"{"cursor":"2"}"#)), Page::Next);
        assert_eq!(
            Page::of_params(Some(&serde_json::json!({"cursor": "2"}))),
            Page::Next
        );
        assert_eq!(Page::of_params(None), Page::First);
    }
}
