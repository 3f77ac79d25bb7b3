// Progressive enhancement only: every page works without this file (reload to see changes).
// Server-sent events (/api/v1/events) carry summaries only; the pages fetch the details.

// Focus and the Escape key (WCAG 2.4.3, 3.3.1). Without JS nothing changes: the error summary
// and the reject/decline buttons are plain HTML.
(function () {
  "use strict";

  // On load the focus goes to the error summary when the answer was refused, else to the
  // page's heading, unless something (the login field) took it already.
  // A page that comes back to a step (after "Approve and run", or when the answer arrives)
  // starts at that step's status, scrolled into view, not at the top of a long request.
  // Without JS the redirect's #decision fragment scrolls there; with JS the fragment is dropped
  // (scrolling to it would take the focus away again) and the focus does the scrolling.
  var atStep = location.hash === "#decision";
  if (atStep && history.replaceState) history.replaceState(null, "", location.pathname + location.search);
  function focusStart() {
    if (document.activeElement && document.activeElement !== document.body) return;
    var target = document.querySelector(".error-summary") ||
      (atStep || document.querySelector("[data-live=question][data-stepped]")
        ? document.querySelector("[data-focus-start]") : null) ||
      document.querySelector("main h1");
    if (!target) return;
    if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    target.focus();
  }
  focusStart();
  window.mcpConsentFocusStart = focusStart;

  // A link of the error summary puts the focus into its field (following the fragment alone
  // only scrolls); for a group of choices, into its first choice.
  document.addEventListener("click", function (e) {
    var link = e.target instanceof Element ? e.target.closest(".error-summary a[href^='#']") : null;
    if (!link) return;
    var field = document.getElementById(decodeURIComponent(link.getAttribute("href").slice(1)));
    if (!field) return;
    var target = field.matches("fieldset") ? field.querySelector("input, select, textarea") : field;
    if (!target) return;
    e.preventDefault();
    target.focus();
    if (target.scrollIntoView) target.scrollIntoView({ block: "center" });
  });

  // Escape = reject (sampling) / decline (forms, URL), after a confirmation: the in-page
  // <dialog> asks, and only its confirm button submits the page's own [data-escape] button.
  document.addEventListener("keydown", function (e) {
    if (e.key !== "Escape" || e.defaultPrevented || e.isComposing) return;
    var dialog = document.querySelector("dialog.escape-confirm");
    var button = document.querySelector("button[data-escape]");
    if (!dialog || !button || dialog.open || typeof dialog.showModal !== "function") return;
    e.preventDefault();
    dialog.showModal();
    // The safe button has the focus: Escape then Enter keeps the question and what was typed.
    var keep = dialog.querySelector("[data-escape-cancel]");
    if (keep) keep.focus();
  });
  document.addEventListener("click", function (e) {
    var t = e.target;
    if (!(t instanceof Element)) return;
    var dialog = t.closest("dialog.escape-confirm");
    if (!dialog) return;
    if (t.closest("[data-escape-cancel]")) {
      dialog.close();
    } else if (t.closest("[data-escape-confirm]")) {
      var button = document.querySelector("button[data-escape]");
      dialog.close();
      if (button && button.form) button.form.requestSubmit(button);
    }
  });
})();

(function () {
  "use strict";
  if (typeof EventSource === "undefined") return;

  // The queue follows the questions in place: on an event it fetches itself (with the same
  // filters) and swaps the list, keeping the ticked boxes and the focus (on the same control
  // of the same row, or of the row that took its place), and says politely what changed.
  var queue = document.querySelector("[data-live=queue]");
  if (queue) {
    var notify = browserNotifications(queue);
    var source = new EventSource("/api/v1/events");
    var timer = null;
    var busy = false;
    var again = false;
    source.addEventListener("question", function (e) {
      notify(e);
      clearTimeout(timer);
      timer = setTimeout(refreshQueue, 150);
    });
    // A change between the page's rendering and its subscription, or during a reconnect,
    // sends this page no event: look once each time the stream opens. A look that finds the
    // same list swaps nothing, so the rows (and whatever points at them) stay in place.
    source.addEventListener("open", function () { refreshQueue(true); });

    function rowIds(root) {
      return Array.prototype.map.call(root.querySelectorAll("tr[data-question-id]"), function (r) {
        return r.getAttribute("data-question-id");
      });
    }
    function focusables(root) {
      return Array.prototype.slice.call(root.querySelectorAll("a[href], button, input, select"));
    }
    // Where the focus is, as something that survives the swap: its row (or server) and its
    // place among that row's controls.
    function focusPlace(current) {
      var active = document.activeElement;
      if (!active || active === document.body || !current.contains(active)) return null;
      var row = active.closest("[data-question-id]");
      var server = active.closest("[data-server]");
      var holder = row || server;
      if (!holder) return { id: active.id || null };
      return {
        row: row ? row.getAttribute("data-question-id") : null,
        server: server ? server.getAttribute("data-server") : null,
        at: focusables(holder).indexOf(active),
        index: rowIds(current).indexOf(row ? row.getAttribute("data-question-id") : "")
      };
    }
    function restoreFocus(current, place) {
      if (!place) return;
      var holder = null;
      if (place.row) {
        holder = current.querySelector("tr[data-question-id='" + CSS.escape(place.row) + "']");
        if (!holder) {
          // The row left: the one now in its place, else the last one.
          var rows = current.querySelectorAll("tr[data-question-id]");
          holder = rows[Math.min(place.index, rows.length - 1)] || null;
        }
      } else if (place.server) {
        holder = current.querySelector("[data-server='" + CSS.escape(place.server) + "']");
      } else if (place.id) {
        var same = document.getElementById(place.id);
        if (same) { same.focus(); return; }
      }
      var target = holder ? focusables(holder)[Math.max(place.at || 0, 0)] : null;
      if (!target) {
        target = current.querySelector(".count, .empty");
        if (target && !target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
      }
      if (target) target.focus({ preventScroll: true });
    }
    function say(before, after) {
      var box = document.querySelector("[data-queue-status]");
      if (!box) return;
      var added = after.filter(function (id) { return before.indexOf(id) < 0; }).length;
      var gone = before.filter(function (id) { return after.indexOf(id) < 0; }).length;
      function words(kind, n) {
        if (n === 1) return box.getAttribute("data-" + kind + "-one") || "";
        // The "other" form is rendered for 2; the count is put in its place.
        return (box.getAttribute("data-" + kind + "-other") || "").replace("2", String(n));
      }
      var parts = [];
      if (added) parts.push(words("added", added));
      if (gone) parts.push(words("gone", gone));
      if (parts.length) box.textContent = parts.join(" ");
    }
    function refreshQueue(onlyIfChanged) {
      if (busy) { again = true; return; }
      busy = true;
      fetch(window.location.pathname + window.location.search, { credentials: "same-origin", headers: { Accept: "text/html" } })
        .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
        .then(function (html) {
          var doc = new DOMParser().parseFromString(html, "text/html");
          var fresh = doc.querySelector("[data-live=queue]");
          var current = document.querySelector("[data-live=queue]");
          if (!fresh || !current) return;
          if (onlyIfChanged === true && fresh.innerHTML === current.innerHTML && doc.title === document.title &&
              fresh.getAttribute("data-muted") === current.getAttribute("data-muted")) return;
          var ticked = {};
          current.querySelectorAll("input[name=id]:checked").forEach(function (b) { ticked[b.value] = true; });
          var before = rowIds(current);
          var place = focusPlace(current);
          current.innerHTML = fresh.innerHTML;
          current.querySelectorAll("input[name=id]").forEach(function (b) { if (ticked[b.value]) b.checked = true; });
          current.setAttribute("data-muted", fresh.getAttribute("data-muted") || "[]");
          document.title = doc.title;
          restoreFocus(current, place);
          say(before, rowIds(current));
        })
        .catch(function () {})
        .then(function () {
          busy = false;
          if (again) { again = false; refreshQueue(); }
        });
    }
    return;
  }

  // "Notify me in this browser": after the person allows it, a question that opens while the
  // queue is open shows a browser notification naming the server and the kind only.
  function browserNotifications(queue) {
    var box = document.querySelector(".browser-notify");
    if (!box || typeof Notification === "undefined") return function () {};
    var ask = box.querySelector("[data-notify-ask]");
    var on = box.querySelector("[data-notify-on]");
    function show() {
      var granted = Notification.permission === "granted";
      ask.hidden = granted || Notification.permission === "denied";
      on.hidden = !granted;
      box.hidden = ask.hidden && on.hidden;
    }
    show();
    ask.addEventListener("click", function () {
      Promise.resolve(Notification.requestPermission()).then(show, show);
    });
    return function (e) {
      if (Notification.permission !== "granted") return;
      var ev;
      try { ev = JSON.parse(e.data); } catch (_) { return; }
      if (!ev || ev.state !== "pending") return;
      // A server whose notices the person muted shows none here either.
      var muted = [];
      try { muted = JSON.parse(queue.getAttribute("data-muted") || "[]"); } catch (_) { muted = []; }
      if (muted.indexOf(ev.server) >= 0) return;
      var known = queue.querySelectorAll("[data-question-id]");
      for (var i = 0; i < known.length; i++) {
        if (known[i].getAttribute("data-question-id") === ev.id) return;
      }
      var what = box.getAttribute("data-kind-" + ev.kind);
      if (!what) return;
      // A tool call names its tool (the event never carries arguments).
      if (ev.kind === "tool_call" && ev.tool) what = what + " " + ev.tool;
      new Notification("mcp-consent", { body: ev.server + " " + what, tag: ev.id });
    };
  }

  // An open question page follows its own question: while the person has typed nothing the
  // page content is swapped for the fresh one (running -> response, withdrawn, expired); once
  // they have typed, a notice says what happened and their input stays where it is.
  var box = document.querySelector("[data-live=question]");
  if (!box) return;
  var id = box.getAttribute("data-question-id");
  // A page shown again after a refused answer holds what the person entered.
  var typed = !!document.querySelector(".error-summary");
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

  // Fetches the page and swaps in its question; with onlyIfChanged, only when the fresh page
  // shows another decision (data-version), so a check that finds nothing new leaves the focus.
  function refresh(onlyIfChanged) {
    // The question's own page: after a refused answer the address is its /answer (POST only).
    fetch("/questions/" + encodeURIComponent(id), { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) {
        var doc = new DOMParser().parseFromString(html, "text/html");
        var fresh = doc.querySelector("[data-live=question]");
        var current = document.querySelector("[data-live=question]");
        if (!fresh || !current || fresh.getAttribute("data-question-id") !== id) return;
        if (onlyIfChanged && fresh.getAttribute("data-version") === current.getAttribute("data-version")) return;
        current.innerHTML = fresh.innerHTML;
        current.setAttribute("data-state", fresh.getAttribute("data-state") || "");
        current.setAttribute("data-version", fresh.getAttribute("data-version") || "");
        // The page moved on to another step: its status takes the focus (focusStart).
        current.setAttribute("data-stepped", "");
        document.title = doc.title;
        document.dispatchEvent(new CustomEvent("mcp-consent:swapped"));
        // The focused element went with the old content: start again at the heading.
        if (window.mcpConsentFocusStart) window.mcpConsentFocusStart();
      })
      .catch(function () {
        // A look on (re)connecting that fails says nothing: no change is known.
        if (!onlyIfChanged) notice(words("changed", "This question changed; reload the page to see it."));
      });
  }

  var events = new EventSource("/api/v1/events");
  // A change between this page's rendering and the subscription (or during a reconnect) sends
  // no event to this page: look once each time the stream opens.
  events.addEventListener("open", function () { if (!typed) refresh(true); });
  events.addEventListener("question", function (e) {
    var ev;
    try { ev = JSON.parse(e.data); } catch (_) { return; }
    if (!ev || ev.id !== id) return;
    if (!typed) { refresh(); return; }
    if (ev.state !== "pending") {
      notice(words("now-state", "This question is now %s.").replace("%s", words("state-" + ev.state, ev.state)));
      // Nothing can be sent any more: the controls go dead, what was typed stays (question.js).
      document.dispatchEvent(new CustomEvent("mcp-consent:gone", { detail: { state: ev.state, word: words("state-" + ev.state, ev.state) } }));
    } else {
      notice(words("changed-typed", "This question changed while you were answering; reload the page to see it (copy what you typed first)."));
    }
  });
})();
