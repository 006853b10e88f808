"""Accessibility of the published site, checked on its files (the a11y review's findings).

The browser's side (focus, keys, the live region while playing) is in test_publish_browser.py;
here: the text alternatives, the static board, the no-JavaScript rules, the contrast of the
stylesheet's colour pairs (WCAG formula, computed from its custom properties), the named table
scrollers and the plots' alt texts.
"""

from __future__ import annotations

import colorsys
import html
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from arena.game import Game, parse_move, parse_variant
from arena.publish.context import score_colour
from arena.publish.replay import add_position_texts, board_svg, position_text, replay_frames

STATIC = Path(__file__).resolve().parents[2] / "arena" / "publish" / "static"
CSS = (STATIC / "style.css").read_text(encoding="utf-8")
REPLAY_JS = (STATIC / "replay.js").read_text(encoding="utf-8")
SITE_JS = (STATIC / "site.js").read_text(encoding="utf-8")


# -- colours ------------------------------------------------------------------------------------

def _custom_properties(block: str) -> dict[str, str]:
    return dict(re.findall(r"--([\w-]+):\s*([^;]+);", block))


def _schemes() -> dict[str, dict[str, str]]:
    """The stylesheet's custom properties, light, and dark (light overridden by the dark block)."""
    light = _custom_properties(re.search(r":root\s*\{(.*?)\n\}", CSS, re.S).group(1))
    dark_block = re.search(r"prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{(.*?)\}", CSS, re.S)
    return {"light": light, "dark": {**light, **_custom_properties(dark_block.group(1))}}


def _rgb(hex_colour: str) -> tuple[float, float, float]:
    h = hex_colour.strip().lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    return tuple(int(h[i:i + 2], 16) / 255 for i in (0, 2, 4))


def _hsla_over(css: str, under: tuple[float, float, float]) -> tuple[float, float, float]:
    """An `hsl(H S% L% / A)` colour (context.score_colour's) blended over `under`."""
    h, s, lum, a = (float(x) for x in re.findall(r"[\d.]+", css))
    rgb = colorsys.hls_to_rgb(h / 360, lum / 100, s / 100)
    return tuple(a * x + (1 - a) * y for x, y in zip(rgb, under, strict=True))


def _luminance(rgb: tuple[float, float, float]) -> float:
    lin = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_helper_matches_known_ratios():
    assert contrast(_rgb("#000"), _rgb("#fff")) == pytest.approx(21)
    # the review's figure for the dark-mode Play button before the fix
    assert contrast(_rgb("#ffffff"), _rgb("#7aa7ff")) == pytest.approx(2.39, abs=0.01)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_play_button_text_has_contrast(scheme):
    rule = re.search(r"\.controls button\.play \{([^}]*)\}", CSS).group(1)
    assert "color: var(--on-accent)" in rule and "background: var(--accent)" in rule
    v = _schemes()[scheme]
    assert contrast(_rgb(v["on-accent"]), _rgb(v["accent"])) >= 4.5


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_crosstable_cell_text_has_contrast_on_the_deepest_colours(scheme):
    # the score link and the LOS line take the page's text colour; the link keeps an underline
    pts = re.search(r"\.crosstable td\.cell \.pts \{([^}]*)\}", CSS).group(1)
    los = re.search(r"\.crosstable td\.cell \.los \{([^}]*)\}", CSS).group(1)
    assert "color: var(--text)" in pts and "text-decoration: underline" in pts
    assert "color: var(--text)" in los
    v = _schemes()[scheme]
    for pct in (0.0, 1.0):  # the ends of the scale: the most opaque red and blue
        cell = _hsla_over(score_colour(pct), _rgb(v["surface"]))
        assert contrast(_rgb(v["text"]), cell) >= 4.5, (scheme, pct)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_board_holes_and_disc_marks_have_contrast(scheme):
    v = _schemes()[scheme]
    assert contrast(_rgb(v["hole"]), _rgb(v["board"])) >= 3  # dark mode was 2.29:1
    # the second seat's ring shows on its disc, and tells the disc from an empty hole
    assert contrast(_rgb(v["p2-mark"]), _rgb(v["p2"])) >= 3
    assert contrast(_rgb(v["p2-mark"]), _rgb(v["hole"])) >= 3 or \
        contrast(_rgb(v["p2"]), _rgb(v["hole"])) >= 3
    assert contrast(_rgb(v["p1"]), _rgb(v["hole"])) >= 3


def test_final_position_does_not_fade_the_other_discs():
    # faded to 0.55, a yellow disc was 1.35:1 against an empty hole
    assert not re.search(r"\.over \.disc:not\(\.win\)\s*\{[^}]*opacity", CSS)
    assert re.search(r"svg\.board \.mark \{[^}]*stroke: var\(--p2-mark\)", CSS)
    assert "winline-under" in CSS and "winline-under" in REPLAY_JS


# -- the replay: text alternative, static board, keyboard ----------------------------------------

WON = "d1 d2 d1 d2 d1 d2 d1"  # classic: red wins up column 1


def _won_replay() -> dict:
    replay = replay_frames("classic", WON)
    add_position_texts(replay, "alpha", "beta bot")
    return replay


def test_position_text_names_the_turn_the_columns_and_the_winning_line():
    replay = _won_replay()
    start = replay["frames"][0]["text"]
    assert start.startswith("Start position, red (alpha) to move.")
    assert "1: empty;" in start and start.endswith("Red is alpha, yellow is beta bot.")
    third = position_text(replay, 3, "alpha", "beta bot")
    assert third.startswith("Position after ply 3 of 7, yellow (beta bot) to move.")
    assert "1: red, red; 2: yellow; 3: empty" in third
    final = replay["frames"][-1]["text"]
    assert "game over" in final and "1: red, red, red, red; 2: yellow, yellow, yellow" in final
    assert ("Winning line, red: column 1 row 1, column 1 row 2, column 1 row 3, "
            "column 1 row 4.") in final


def test_position_text_of_a_popout_board_follows_the_engine():
    moves = "d1 d1 d2 d3 p1"  # red pops its bottom disc: yellow's drops to row 1
    replay = replay_frames("popout", moves)
    text = position_text(replay, 5, "a", "b")
    game = Game(parse_variant("popout"))
    for token in moves.split():
        game.push(parse_move(token))
    assert game.board_rows()[-1].startswith("21")
    assert "1: yellow; 2: red; 3: yellow; 4: empty" in text and "yellow (b) to move" in text


def test_static_board_is_the_final_position():
    replay = _won_replay()
    svg = board_svg(replay)
    assert svg["label"] == replay["frames"][-1]["text"] and svg["over"] == "over"
    discs = re.findall(r'<circle class="disc p(\d)([^"]*)"[^>]*data-col="(\d)" data-row="(\d)"',
                       svg["markup"])
    assert len(discs) == 7
    assert sorted((int(c), int(r)) for _, cls, c, r in discs if "win" in cls) == \
        [(1, 1), (1, 2), (1, 3), (1, 4)]
    assert svg["markup"].count('class="mark"') == 3  # one ring per yellow disc
    assert svg["markup"].count('class="hole"') == 42
    assert 'class="winline"' in svg["markup"] and 'class="disc p1 win last"' in svg["markup"]


def _embedded(page: Path) -> dict:
    text = page.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', text, re.S)
    return json.loads(match.group(1))


def test_game_pages_hold_a_named_static_board(synthetic_site):
    pages = sorted((synthetic_site / "games").glob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        data = _embedded(page)
        svg = re.search(r'<svg class="board[^"]*" data-board role="img" aria-label="([^"]*)"'
                        r' viewBox="[\d. ]+">(.*?)</svg>', text, re.S)
        assert svg, page.name
        assert html.unescape(svg.group(1)) == data["frames"][-1]["text"]
        assert all(f["text"] for f in data["frames"])
        filled = sum(row.count("1") + row.count("2") for row in data["frames"][-1]["board"])
        assert len(re.findall(r'class="disc p\d[^"]*"[^>]*data-col', svg.group(2))) == filled


def test_replay_script_names_the_board_and_keeps_the_live_region_quiet_while_playing():
    assert 'svg.setAttribute("aria-label", f.text' in REPLAY_JS
    assert 'slider.setAttribute("aria-valuetext"' in REPLAY_JS
    assert 'status.setAttribute("aria-live", "off")' in REPLAY_JS
    assert 'status.setAttribute("aria-live", "polite")' in REPLAY_JS
    # the script redraws the page's static board rather than drawing a second one
    assert "while (svg.firstChild) svg.removeChild(svg.firstChild)" in REPLAY_JS


def test_replay_buttons_keep_the_focus_and_the_shortcuts_stay_in_the_replay(synthetic_site):
    assert ".disabled =" not in REPLAY_JS and 'setAttribute("aria-disabled", "true")' in REPLAY_JS
    assert 'b.getAttribute("aria-disabled") === "true") return' in REPLAY_JS
    assert "root.contains(ev.target)" in REPLAY_JS
    assert re.search(r'\[aria-disabled="true"\] \{ opacity', CSS)
    page = next((synthetic_site / "games").glob("*.html")).read_text(encoding="utf-8")
    for action, keys in (("first", "Home"), ("back", "ArrowLeft"), ("play", "Space"),
                         ("forward", "ArrowRight"), ("last", "End")):
        assert f'data-action="{action}" aria-keyshortcuts="{keys}"' in page


def test_move_list_is_one_tab_stop_below_the_sticky_header(synthetic_site):
    assert "row.tabIndex = on ? 0 : -1" in REPLAY_JS
    assert "row.tabIndex = 0;" not in REPLAY_JS
    assert re.search(r"html \{[^}]*scroll-padding-top: \d+px", CSS)
    index = (synthetic_site / "index.html").read_text(encoding="utf-8")
    assert '<a class="skip-link" href="#main">Skip to content</a>' in index
    assert '<main class="wrap" id="main" tabindex="-1">' in index


# -- without JavaScript ---------------------------------------------------------------------------

def test_controls_that_need_javascript_hide_without_it(synthetic_site):
    rule = re.search(r"((?:html:not\(\.js\) [^,{]+,?\s*)+)\{ display: none; \}", CSS)
    assert rule
    hidden = {s.strip().removeprefix("html:not(.js) ") for s in rule.group(1).split(",")}
    assert {".controls", ".slider", ".switcher"} <= hidden
    # the class is set before the first paint, and by site.js as before
    index = (synthetic_site / "index.html").read_text(encoding="utf-8")
    head = index.split("</head>", 1)[0]
    assert '<script>document.documentElement.classList.add("js")</script>' in head
    assert 'document.documentElement.classList.add("js")' in SITE_JS


# -- tables -------------------------------------------------------------------------------------

class _Wraps(HTMLParser):
    """The attributes of every `.table-wrap` and `th` of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.wraps: list[dict] = []
        self.heads: list[dict] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "div" and "table-wrap" in (a.get("class") or "").split():
            self.wraps.append(a)
        if tag == "th":
            self.heads.append(a)


def _parsed(page: Path) -> _Wraps:
    parser = _Wraps()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_table_scrollers_are_named_focusable_regions(synthetic_site):
    seen = 0
    for page in sorted(synthetic_site.rglob("*.html")):
        for wrap in _parsed(page).wraps:
            assert wrap.get("role") == "region" and wrap.get("tabindex") == "0", page.name
            assert (wrap.get("aria-label") or "").strip(), page.name
            seen += 1
    assert seen > 5
    labels = [w["aria-label"] for w in _parsed(synthetic_site / "index.html").wraps]
    assert "Leaderboard: All variants" in labels or any(x.startswith("Leaderboard") for x in labels)


def test_crosstable_row_names_wrap_and_carry_a_title(synthetic_site):
    rows = [h for h in _parsed(synthetic_site / "crosstable.html").heads if h.get("scope") == "row"]
    assert rows and all(h.get("title") for h in rows)
    rule = re.search(r"\.crosstable tbody th \{([^}]*)\}", CSS).group(1)
    assert "white-space: normal" in rule and "text-overflow" not in rule
    # the move list goes under the board below 900px (its Time column was cut at 768px)
    assert re.search(r"@media \(max-width: 900px\) \{ \.replay \{ grid-template-columns: "
                     r"minmax\(0, 1fr\); \} \}", CSS)


def test_sortable_heads_get_buttons_and_the_initial_order_is_announced(synthetic_site):
    assert 'button.className = "sort"' in SITE_JS and "th.tabIndex" not in SITE_JS
    index = _parsed(synthetic_site / "index.html").heads
    ranks = [h for h in index if h.get("aria-sort")]
    assert ranks and all(h["aria-sort"] == "ascending" for h in ranks)
    games = _parsed(synthetic_site / "games.html").heads
    assert [h.get("aria-sort") for h in games if h.get("aria-sort")] == ["ascending"]
    bot = _parsed(next((synthetic_site / "bots").glob("*.html"))).heads
    assert "descending" in [h.get("aria-sort") for h in bot]  # latest games: newest first


def test_games_list_shows_the_opponent_filter(synthetic_site):
    games = (synthetic_site / "games.html").read_text(encoding="utf-8")
    assert re.search(r'<label>Opponent\s*<select name="vs">', games)
    for bot in ("alpha", "beta bot", "gamma/γ"):
        assert f'<option value="{html.escape(bot)}">' in games
    # a form field like the others, in the URL and in the count, not hidden state
    assert 'var FIELDS = ["variant", "bot", "vs", "result", "reason", "q"];' in SITE_JS
    assert "vs = params.vs" not in SITE_JS
    assert '" vs " + vs' in SITE_JS


# -- plots ----------------------------------------------------------------------------------------

def test_plot_images_say_what_they_show_and_where_the_numbers_are(synthetic_site):
    page = (synthetic_site / "plots.html").read_text(encoding="utf-8")
    figures = re.findall(r'<img src="([^"]+)" alt="([^"]*)">\s*</a>\s*<figcaption>([^<\n]*)',
                         page)
    assert len(figures) >= 5
    for src, alt, caption in figures:
        alt = html.unescape(alt)
        assert alt.strip() != caption.strip() and len(alt) > len(caption) + 30, src
        assert re.search(r"leaderboard|crosstable|data/|bot's page", alt), (src, alt)
