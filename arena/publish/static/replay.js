// arena replay viewer: draws frames that the Python engine computed (no rules here).
(function () {
  "use strict";
  var dataEl = document.getElementById("replay-data");
  var root = document.querySelector("[data-replay]");
  if (!dataEl || !root) return;
  var data = JSON.parse(dataEl.textContent);
  var frames = data.frames;
  var v = data.variant;
  var game = data.game || {};
  var cols = v.columns, rows = v.rows;
  var fixed = {};
  (v.fixed_columns || []).forEach(function (c) { fixed[c] = true; });
  var winning = {};
  (data.winning_cells || []).forEach(function (cr) { winning[cr[0] + "," + cr[1]] = true; });

  var NS = "http://www.w3.org/2000/svg";
  var CELL = 10, PAD = 2, TOP = 9;
  var BOTTOM = v.pops || (v.fixed_columns || []).length ? 15 : 6;
  var W = cols * CELL + 2 * PAD, H = TOP + rows * CELL + 2 * PAD + BOTTOM;
  var svg = root.querySelector("[data-board]");
  var slider = root.querySelector("[data-slider]");
  var status = root.querySelector("[data-status]");
  var theory = root.querySelector("[data-theory]");  // only in games that arena analyze judged
  var movesTable = root.querySelector("[data-moves]");
  var movesWrap = root.querySelector(".moves-wrap");
  var playBtn = root.querySelector('[data-action="play"]');
  // the page holds the final position drawn in Python (for a page without JavaScript): redrawn here
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  svg.setAttribute("data-columns", cols);
  svg.setAttribute("data-rows", rows);

  function el(name, attrs, parent) {
    var node = document.createElementNS(NS, name);
    for (var k in attrs) node.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(node);
    return node;
  }
  function cx(c) { return PAD + (c - 0.5) * CELL; }            // column 1-based
  function cy(r) { return TOP + PAD + (rows - r + 0.5) * CELL; } // row 1-based from the bottom
  function name(seat) { return seat === 1 ? game.first : seat === 2 ? game.second : "draw"; }

  // static layer: frame, fixed columns, holes, column numbers
  var bg = el("g", { "class": "static" }, svg);
  el("rect", { "class": "frame", x: 0.3, y: TOP + 0.3, width: W - 0.6, height: rows * CELL + 2 * PAD - 0.6, rx: 2.5 }, bg);
  for (var c = 1; c <= cols; c++) {
    if (fixed[c]) {
      el("rect", { "class": "fixed-col", x: PAD + (c - 1) * CELL + 0.4, y: TOP + PAD - 0.8, width: CELL - 0.8, height: rows * CELL + 1.6, rx: 1.5 }, bg);
      var lab = el("text", { "class": "label fixed", x: cx(c), y: TOP + rows * CELL + 2 * PAD + 8.6 }, bg);
      lab.textContent = "fixed";
    }
    var num = el("text", { "class": "label", x: cx(c), y: TOP + rows * CELL + 2 * PAD + 4 }, bg);
    num.textContent = c;
    for (var r = 1; r <= rows; r++) {
      el("circle", { "class": "hole", cx: cx(c), cy: cy(r), r: 3.9 }, bg);
    }
  }
  var layer = el("g", { "class": "discs" }, svg);
  var overlay = el("g", { "class": "overlay" }, svg);

  var moveRows = movesTable ? Array.prototype.slice.call(movesTable.tBodies[0].rows) : [];
  var current = -1, timer = null;
  var ICON = '<svg class="icon" viewBox="0 0 24 24" aria-hidden="true"><path d="';
  var PLAY_HTML = ICON + 'M8 5l10 7-10 7z"/></svg> Play';
  var PAUSE_HTML = ICON + 'M7 5h3v14H7zM14 5h3v14h-3z"/></svg> Pause';

  function reasonText(reason) {
    // the phrases come with the page (arena.reasons.REASON_PHRASES): one list, in Python
    var text = (data.reason_texts || {})[reason];
    return text ? text.replace("{connect}", v.connect) : (reason || "");
  }

  function describeResult() {
    // a games file may hold no reason: then the engine's ending, if the moves reached one
    var reason = game.reason || (data.outcome ? data.outcome.reason : "");
    var forfeit = game.forfeit_by === 1 || game.forfeit_by === 2;
    if (forfeit) {
      return name(game.forfeit_by) + " forfeits by " + reasonText(reason) + " — " + name(3 - game.forfeit_by) + " wins";
    }
    if (game.result === 0.5) return reason ? "Draw: " + reasonText(reason) : "Draw";
    var winner = game.result === 1 ? 1 : 2;
    return name(winner) + (reason ? " wins with " + reasonText(reason) : " wins");
  }

  function describeEnd() {
    if (data.error) {
      return "The replay stops: the recorded move of ply " + data.error_ply +
        " breaks the rules. Recorded result: " + describeResult();
    }
    return describeResult();
  }

  function draw(i) {
    i = Math.max(0, Math.min(frames.length - 1, i));
    current = i;
    var f = frames[i];
    var last = i === frames.length - 1;
    var showWin = last && data.winning_cells && data.winning_cells.length > 0;
    while (layer.firstChild) layer.removeChild(layer.firstChild);
    while (overlay.firstChild) overlay.removeChild(overlay.firstChild);
    // discs: board rows come top row first
    var topOf = {};
    for (var ri = 0; ri < rows; ri++) {
      var line = f.board[ri];
      var r = rows - ri;
      for (var c = 1; c <= cols; c++) {
        var ch = line.charAt(c - 1);
        if (ch !== "1" && ch !== "2") continue;
        if (!topOf[c]) topOf[c] = r;
        var cls = "disc p" + ch;
        if (showWin && winning[c + "," + r]) cls += " win";
        el("circle", { "class": cls, cx: cx(c), cy: cy(r), r: 3.9, "data-col": c, "data-row": r, "data-owner": ch }, layer);
        // the seats differ by more than colour: the second seat's discs carry an inner ring
        if (ch === "2") el("circle", { "class": "mark", cx: cx(c), cy: cy(r), r: 1.7 }, layer);
      }
    }
    if (f.kind === "drop") {
      var tr = topOf[f.column];
      if (tr) {
        var disc = layer.querySelector('[data-col="' + f.column + '"][data-row="' + tr + '"]');
        if (disc) disc.classList.add("last");
      }
      el("path", { "class": "marker", d: "M" + (cx(f.column) - 2.4) + " " + (TOP - 5.5) + " h4.8 l-2.4 3.6 z" }, overlay);
    } else if (f.kind === "pop") {
      // the popped disc leaves through the bottom: ghost disc and an arrow under the column
      var by = TOP + rows * CELL + 2 * PAD;
      el("rect", { "class": "marker", x: PAD + (f.column - 1) * CELL + 0.6, y: TOP + 0.4, width: CELL - 1.2, height: 1.2, rx: 0.6, opacity: 0.7 }, overlay);
      var ghost = el("g", { "class": "pop-marker", "data-pop-column": f.column }, overlay);
      el("circle", { "class": "disc p" + f.seat + " popped", cx: cx(f.column), cy: by + 10, r: 3.2 }, ghost);
      if (f.seat === 2) el("circle", { "class": "mark", cx: cx(f.column), cy: by + 10, r: 1.4 }, ghost);
      el("circle", { "class": "popped-ring", cx: cx(f.column), cy: by + 10, r: 4.2 }, ghost);
      var t = el("text", { "class": "marker-text", x: cx(f.column), y: TOP - 2.5 }, ghost);
      t.textContent = "pop";
    }
    if (showWin && data.winning_cells.length >= 2) {
      var cells = data.winning_cells.slice().sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; });
      var a = cells[0], b = cells[cells.length - 1], collinear = true;
      cells.forEach(function (p) {
        if ((b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0]) !== 0) collinear = false;
      });
      if (collinear) {
        // a dark line under the green one: the green alone is faint on yellow discs
        var ends = { x1: cx(a[0]), y1: cy(a[1]), x2: cx(b[0]), y2: cy(b[1]) };
        el("line", Object.assign({ "class": "winline-under" }, ends), overlay);
        el("line", Object.assign({ "class": "winline" }, ends), overlay);
      }
    }
    svg.classList.toggle("over", showWin);
    svg.setAttribute("data-ply", i);
    svg.setAttribute("data-final", last ? "true" : "false");
    // the board's name is the position in words (made in Python: arena/publish/replay.py)
    svg.setAttribute("aria-label", f.text || "board");
    slider.value = i;
    // status line
    var text = "Ply " + i + " of " + (frames.length - 1);
    if (f.ply > 0) {
      text += " · " + (f.opening ? "opening (set by the arena)" : name(f.seat))
        + (f.kind === "pop" ? " pops column " : " drops into column ") + f.column;
      if (f.ms !== null && f.ms !== undefined) text += " (" + (f.ms < 1 ? "<1" : f.ms < 10 ? f.ms.toFixed(1) : Math.round(f.ms)) + " ms)";
    } else {
      text += " · start position";
    }
    // the slider says the move, not only a number
    slider.setAttribute("aria-valuetext", text);
    if (last) text += " — " + describeEnd();
    status.textContent = text;
    if (theory) theory.textContent = f.theory || "unknown";
    // move list
    // one row of the move list takes Tab (a roving tabindex): the current one
    moveRows.forEach(function (row) {
      var on = Number(row.dataset.ply) === i;
      row.classList.toggle("current", on);
      row.tabIndex = on ? 0 : -1;
      if (on) row.setAttribute("aria-current", "true"); else row.removeAttribute("aria-current");
    });
    var cur = moveRows[i];
    if (cur && movesWrap) {
      var top = cur.offsetTop, bottom = top + cur.offsetHeight;
      if (top < movesWrap.scrollTop + 30) movesWrap.scrollTop = Math.max(0, top - 40);
      else if (bottom > movesWrap.scrollTop + movesWrap.clientHeight) movesWrap.scrollTop = bottom - movesWrap.clientHeight + 10;
    }
    // aria-disabled, not disabled: a button that disables itself would drop the focus to the
    // page, where the next Space restarted the game (a11y review); a click on it does nothing
    setOff('[data-action="first"]', i === 0);
    setOff('[data-action="back"]', i === 0);
    setOff('[data-action="forward"]', last);
    setOff('[data-action="last"]', last);
    if (last) stop();
    else if (!timer) rememberPly();
  }

  function setOff(selector, off) {
    var b = root.querySelector(selector);
    if (off) b.setAttribute("aria-disabled", "true"); else b.removeAttribute("aria-disabled");
  }

  // the shown ply is kept in the URL (#ply=N), so a copied link opens the same position; the
  // page's first drawing and a playing replay leave the URL alone
  var ready = false;
  function rememberPly() {
    if (!ready || !window.history || !window.history.replaceState) return;
    try { window.history.replaceState(null, "", "#ply=" + current); } catch (e) { /* file:// in some browsers */ }
  }

  function stop() {
    if (timer) {
      window.clearInterval(timer);
      timer = null;
      // announced once, where playing stopped: each frame was too many announcements
      status.setAttribute("aria-live", "polite");
      status.textContent = status.textContent;
    }
    playBtn.innerHTML = PLAY_HTML;
    playBtn.setAttribute("aria-label", "Play");
    rememberPly();
  }
  function play() {
    if (timer) { stop(); return; }
    if (current >= frames.length - 1) draw(0);
    status.setAttribute("aria-live", "off");  // quiet while playing: stop() announces the end
    playBtn.innerHTML = PAUSE_HTML;
    playBtn.setAttribute("aria-label", "Pause");
    timer = window.setInterval(function () { draw(current + 1); }, 650);
  }

  root.addEventListener("click", function (ev) {
    var b = ev.target.closest("[data-action]");
    if (!b || b.getAttribute("aria-disabled") === "true") return;
    var act = b.dataset.action;
    if (act !== "play") stop();
    if (act === "first") draw(0);
    else if (act === "back") draw(current - 1);
    else if (act === "forward") draw(current + 1);
    else if (act === "last") draw(frames.length - 1);
    else if (act === "play") play();
  });
  slider.addEventListener("input", function () { stop(); draw(Number(slider.value)); });
  if (movesTable) {
    movesTable.addEventListener("click", function (ev) {
      var row = ev.target.closest("tr[data-ply]");
      if (row) { stop(); draw(Number(row.dataset.ply)); }
    });
    // the list is one Tab stop (the current row, see draw); ↑/↓ (and ←/→) step through the
    // rows and show their positions, Home/End go to the first and last, Enter shows a row's
    movesTable.addEventListener("keydown", function (ev) {
      var row = ev.target.closest("tr[data-ply]");
      if (!row || ev.altKey || ev.ctrlKey || ev.metaKey) return;
      var to = null;
      if (ev.key === "Enter") to = Number(row.dataset.ply);
      else if (ev.key === "ArrowUp" || ev.key === "ArrowLeft") to = Number(row.dataset.ply) - 1;
      else if (ev.key === "ArrowDown" || ev.key === "ArrowRight") to = Number(row.dataset.ply) + 1;
      else if (ev.key === "Home") to = 0;
      else if (ev.key === "End") to = frames.length - 1;
      if (to === null) return;
      stop();
      draw(to);
      if (moveRows[current]) moveRows[current].focus({ preventScroll: true });  // draw scrolls the list
      ev.preventDefault();
      ev.stopPropagation();
    });
  }
  // the shortcuts belong to the replay: inside it all of them, and ←/→ from the page itself
  // (nothing focused); a link's Space and the page's Space/Home/End scrolling stay the
  // browser's (a11y review)
  document.addEventListener("keydown", function (ev) {
    var inside = root.contains(ev.target);
    // the page itself: body, or <main> (focusable for the skip link, so a click on the board
    // or the page focuses it: the arrows had stopped working after one; diff review)
    var page = ev.target === document.body || ev.target === document.getElementById("main");
    if (!inside && !page) return;
    var tag = (ev.target.tagName || "").toLowerCase();
    if (tag === "input" || tag === "select" || tag === "textarea" || ev.altKey || ev.ctrlKey || ev.metaKey) return;
    var handled = true;
    if (ev.key === "ArrowLeft") { stop(); draw(current - 1); }
    else if (ev.key === "ArrowRight") { stop(); draw(current + 1); }
    else if (ev.key === "Home" && inside) { stop(); draw(0); }
    else if (ev.key === "End" && inside) { stop(); draw(frames.length - 1); }
    else if (ev.key === " " && inside && tag !== "button" && tag !== "a") play();
    else handled = false;
    if (handled) ev.preventDefault();
  });

  var m = /(?:^#|&)ply=(\d+)/.exec(window.location.hash);
  draw(m ? Number(m[1]) : frames.length - 1);
  ready = true;
})();
