// Progressive enhancement only: every page works without this file (reload to see changes).
// Server-sent events (/api/v1/events) carry summaries only; the pages fetch the details.
(function () {
  "use strict";
  if (typeof EventSource === "undefined") return;

  // The queue reloads itself when any question changes.
  var queue = document.querySelector("[data-live=queue]");
  if (queue) {
    var source = new EventSource("/api/v1/events");
    var pending = null;
    source.addEventListener("question", function () {
      if (pending) return;
      pending = setTimeout(function () { window.location.reload(); }, 300);
    });
    return;
  }

  // An open question page follows its own question: while the person has typed nothing the
  // page content is swapped for the fresh one (running -> response, withdrawn, expired); once
  // they have typed, a notice says what happened and their input stays where it is.
  var box = document.querySelector("[data-live=question]");
  if (!box) return;
  var id = box.getAttribute("data-question-id");
  var typed = false;
  box.addEventListener("input", function () { typed = true; });
  box.addEventListener("change", function () { typed = true; });

  // The notices' words come from the page (data-* of .live-notice), in the page's language.
  function words(name, fallback) {
    var p = document.querySelector(".live-notice");
    return (p && p.getAttribute("data-" + name)) || fallback;
  }

  function notice(text) {
    var p = document.querySelector(".live-notice");
    if (!p) return;
    p.textContent = text;
    p.hidden = false;
  }

  function refresh() {
    fetch(window.location.pathname, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("[data-live=question]");
        var current = document.querySelector("[data-live=question]");
        if (!fresh || !current || fresh.getAttribute("data-question-id") !== id) return;
        current.innerHTML = fresh.innerHTML;
        current.setAttribute("data-state", fresh.getAttribute("data-state") || "");
        document.title = doc.title;
      })
      .catch(function () { notice(words("changed", "This question changed; reload the page to see it.")); });
  }

  var events = new EventSource("/api/v1/events");
  events.addEventListener("question", function (e) {
    var ev;
    try { ev = JSON.parse(e.data); } catch (_) { return; }
    if (!ev || ev.id !== id) return;
    if (!typed) { refresh(); return; }
    if (ev.state !== "pending") {
      notice(words("now-state", "This question is now %s.").replace("%s", words("state-" + ev.state, ev.state)));
    } else {
      notice(words("changed-typed", "This question changed while you were answering; reload the page to see it (copy what you typed first)."));
    }
  });
})();
