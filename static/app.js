// Progressive enhancement only: every page works without this file.
// The queue reloads itself when a question changes state (server-sent events carry summaries
// only; the page fetches the details itself).
(function () {
  "use strict";
  var live = document.querySelector("[data-live=queue]");
  if (!live || typeof EventSource === "undefined") return;
  var source = new EventSource("/api/v1/events");
  var pending = null;
  source.addEventListener("question", function () {
    if (pending) return;
    pending = setTimeout(function () { window.location.reload(); }, 300);
  });
})();
