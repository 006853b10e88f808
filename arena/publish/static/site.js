// arena site: the variant switcher, sortable tables and the games filter. Plain JavaScript, no dependencies.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // --- variant switcher: shows one scope at a time, remembered in the URL hash (#variant=...) ---
  function currentScope() {
    var m = /(?:^#|&)variant=([^&]*)/.exec(window.location.hash);
    return m ? decodeURIComponent(m[1]) : null;
  }

  function showScope(scope, remember) {
    var tabs = document.querySelectorAll("[data-switcher] .tab");
    var sections = document.querySelectorAll(".scope[data-scope]");
    if (!tabs.length) return;
    var known = false;
    tabs.forEach(function (t) { if (t.dataset.scope === scope) known = true; });
    if (!known) scope = tabs[0].dataset.scope;
    tabs.forEach(function (t) {
      var on = t.dataset.scope === scope;
      t.setAttribute("aria-selected", on ? "true" : "false");
      t.tabIndex = on ? 0 : -1;
    });
    sections.forEach(function (s) { s.hidden = s.dataset.scope !== scope; });
    if (remember && window.history && window.history.replaceState) {
      try { window.history.replaceState(null, "", "#variant=" + encodeURIComponent(scope)); } catch (e) { /* file:// in some browsers */ }
    }
  }

  document.querySelectorAll("[data-switcher]").forEach(function (bar) {
    bar.addEventListener("click", function (ev) {
      var tab = ev.target.closest(".tab");
      if (tab) showScope(tab.dataset.scope, true);
    });
    bar.addEventListener("keydown", function (ev) {
      if (ev.key !== "ArrowRight" && ev.key !== "ArrowLeft") return;
      var tabs = Array.prototype.slice.call(bar.querySelectorAll(".tab"));
      var i = tabs.indexOf(document.activeElement);
      if (i < 0) return;
      var next = tabs[(i + (ev.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length];
      showScope(next.dataset.scope, true);
      next.focus();
      ev.preventDefault();
    });
  });
  showScope(currentScope(), false);
  window.addEventListener("hashchange", function () { showScope(currentScope(), false); });

  // --- sortable tables: click a column head (its button); numbers sort as numbers ---
  // A cell's data-sort holds its raw value (Elo, score, time) when the text is formatted.
  function sortKey(cell) {
    var raw = cell ? (cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent) : "";
    raw = raw.trim();
    var number = Number(raw.replace(/\u2212/g, "-").replace(/%$/, ""));
    return raw !== "" && !isNaN(number) ? { n: number } : { s: raw.toLowerCase() };
  }

  function compareKeys(a, b) {
    if (a.n !== undefined && b.n !== undefined) return a.n - b.n;
    if (a.n !== undefined) return -1;  // numbers before text (and before "-" for missing)
    if (b.n !== undefined) return 1;
    return a.s < b.s ? -1 : a.s > b.s ? 1 : 0;
  }

  function sortTable(table, th) {
    var heads = Array.prototype.slice.call(th.parentNode.children);
    var column = heads.indexOf(th);
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    if (th.getAttribute("aria-sort") === null && th.classList.contains("num")) ascending = false;
    heads.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows).map(function (row, i) {
      return { row: row, key: sortKey(row.cells[column]), i: i };
    });
    rows.sort(function (x, y) {
      var c = compareKeys(x.key, y.key);
      return (ascending ? c : -c) || x.i - y.i;
    });
    rows.forEach(function (r) { body.appendChild(r.row); });
  }

  document.querySelectorAll("table[data-sortable]").forEach(function (table) {
    if (!table.tHead || !table.tBodies.length) return;
    var heads = table.tHead.rows[table.tHead.rows.length - 1].cells;
    Array.prototype.forEach.call(heads, function (th) {
      th.classList.add("sortable");
      th.title = th.title ? th.title + " (click to sort)" : "Click to sort";
      // a real button in the head (the APG sortable table): announced as a control, and
      // Enter/Space reach it in a screen reader's browse mode; aria-sort stays on the th
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      th.addEventListener("click", function () { sortTable(table, th); });  // the whole head
    });
  });

  // --- games list filter ---
  var form = document.querySelector("[data-game-filters]");
  var table = document.querySelector("[data-games]");
  if (form && table) {
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    var count = form.querySelector("[data-count]");
    var empty = document.querySelector("[data-empty]");
    var FIELDS = ["variant", "bot", "vs", "result", "reason", "q"];
    var apply = function () {
      var variant = form.elements.variant.value;
      var bot = form.elements.bot.value;
      // the opponent: a crosstable cell's link sets it, and it shows (it was a hidden filter)
      var vs = form.elements.vs ? form.elements.vs.value : "";
      var result = form.elements.result.value;
      var reason = form.elements.reason.value;
      var q = form.elements.q.value.trim().toLowerCase();
      var shown = 0;
      rows.forEach(function (r) {
        var d = r.dataset;
        var ok = (!variant || d.variant === variant) &&
          (!bot || d.first === bot || d.second === bot) &&
          (!vs || d.first === vs || d.second === vs) &&
          (!result || (result === "forfeit" ? d.forfeit === "yes" : d.result === result)) &&
          (!reason || d.reason === reason) &&
          (!q || d.text.toLowerCase().indexOf(q) >= 0 || d.first.toLowerCase().indexOf(q) >= 0 ||
            d.second.toLowerCase().indexOf(q) >= 0);
        r.hidden = !ok;
        if (ok) shown += 1;
      });
      var pair = bot && vs ? " (" + bot + " vs " + vs + ")" : vs ? " (against " + vs + ")" : "";
      if (count) count.textContent = shown + (shown === rows.length ? "" : " of " + rows.length) + " games" + pair;
      if (empty) empty.hidden = shown !== 0;
    };
    // the filters are kept in the URL (games.html#bot=greedy&result=1-0), so a copied link
    // shows the same list
    var remember = function () {
      var parts = [];
      FIELDS.forEach(function (k) {
        var value = form.elements[k] ? form.elements[k].value.trim() : "";
        if (value) parts.push(k + "=" + encodeURIComponent(value));
      });
      if (!window.history || !window.history.replaceState) return;
      try {
        window.history.replaceState(null, "", parts.length ? "#" + parts.join("&") : window.location.pathname + window.location.search);
      } catch (e) { /* file:// in some browsers */ }
    };
    var edited = function () { apply(); remember(); };
    form.addEventListener("input", edited);
    form.addEventListener("change", edited);
    // filters can come from the URL: games.html#bot=greedy&variant=popout
    var params = {};
    window.location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var p = kv.split("=");
      if (p[0]) params[p[0]] = decodeURIComponent(p[1] || "");
    });
    FIELDS.forEach(function (k) {
      if (params[k] !== undefined && form.elements[k]) form.elements[k].value = params[k];
    });
    apply();
  }
})();
