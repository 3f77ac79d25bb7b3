// Progressive enhancement of a question page (question.html), on top of app.js; the page works
// without it. The deadline counts down live and warns in the last minute; once the question is
// gone (withdrawn, answered elsewhere, expired) its controls go dead while what was typed stays;
// the model picker's estimate line follows the chosen model.
(function () {
  "use strict";
  var lang = document.documentElement.lang || "en";
  var rtf = typeof Intl !== "undefined" && Intl.RelativeTimeFormat
    ? new Intl.RelativeTimeFormat(lang, { numeric: "auto" }) : null;

  // "in 14 minutes", "in 42 seconds", "3 minutes ago", in the page's language.
  function relative(seconds) {
    if (!rtf) return null;
    var abs = Math.abs(seconds);
    if (abs < 60) return rtf.format(Math.round(seconds), "second");
    if (abs < 3600) return rtf.format(Math.round(seconds / 60), "minute");
    if (abs < 86400) return rtf.format(Math.round(seconds / 3600), "hour");
    return rtf.format(Math.round(seconds / 86400), "day");
  }

  // Every control that would send something: buttons and the Open link.
  function deaden(root) {
    var controls = root.querySelectorAll(".decision button, .decision a.button, details.manual button, .answer button");
    for (var i = 0; i < controls.length; i++) {
      var c = controls[i];
      if (c.tagName === "A") {
        c.removeAttribute("href");
        c.setAttribute("aria-disabled", "true");
        c.classList.add("dead");
      } else {
        c.disabled = true;
      }
    }
  }

  function gone(stateWord, state, text) {
    var page = document.querySelector("[data-live=question]");
    if (!page) return;
    page.setAttribute("data-gone", state);
    deaden(page);
    var chip = page.querySelector("[data-state-chip]");
    if (chip) {
      chip.textContent = stateWord;
      chip.className = "state state-" + state;
    }
    var deadline = page.querySelector(".deadline");
    if (deadline) deadline.hidden = true;
    var alert = page.querySelector(".deadline-alert");
    if (alert && text) {
      alert.textContent = text;
      alert.hidden = false;
    }
  }

  document.addEventListener("mcp-consent:gone", function (e) {
    gone(e.detail.word, e.detail.state, null);
  });

  var warned = false;
  function tick() {
    var page = document.querySelector("[data-live=question]");
    if (!page || page.hasAttribute("data-gone")) return;
    var now = Date.now();
    var times = page.querySelectorAll(".lead time[datetime]");
    for (var i = 0; i < times.length; i++) {
      var t = Date.parse(times[i].getAttribute("datetime"));
      var words = isNaN(t) ? null : relative((t - now) / 1000);
      if (words) times[i].textContent = words;
    }
    var deadline = page.querySelector(".deadline[data-expires]");
    if (!deadline) return;
    var left = (Date.parse(deadline.getAttribute("data-expires")) - now) / 1000;
    if (isNaN(left)) return;
    var alert = page.querySelector(".deadline-alert");
    if (left <= 0) {
      var notice = document.querySelector(".live-notice");
      gone((notice && notice.getAttribute("data-state-expired")) || "expired", "expired",
        deadline.getAttribute("data-expired"));
      return;
    }
    if (left <= 60 && !warned && alert) {
      warned = true;
      alert.textContent = deadline.getAttribute("data-last-minute");
      alert.hidden = false;
      deadline.classList.add("last-minute");
    }
  }
  tick();
  setInterval(tick, 1000);
  document.addEventListener("mcp-consent:swapped", function () { warned = false; tick(); });

  // The estimate line under the request review follows the chosen model: its own estimate,
  // and, for a model over the cost cap, that it is over the cap.
  document.addEventListener("change", function (e) {
    var select = e.target;
    if (!(select instanceof HTMLSelectElement) || select.name !== "model") return;
    var line = document.querySelector("[data-estimate-line]");
    var option = select.options[select.selectedIndex];
    if (!line || !option) return;
    line.textContent = option.textContent;
    line.classList.toggle("over-cap", option.hasAttribute("data-over-cap"));
  });
})();
