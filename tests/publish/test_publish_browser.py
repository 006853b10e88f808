"""The published site in a real browser: headless Debian Chromium driven by Playwright.

A real small tournament (random, greedy and a second random bot on classic and popout) is run with
`arena run`, published with `arena publish`, and opened through file:// URLs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from arena.game import Game, parse_move, parse_variant

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("ARENA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
INSTALL_HINT = "install Debian's chromium (apt-get install chromium) to run the browser tests"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--no-first-run", "--disable-sync"]

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None

pytestmark = [
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=INSTALL_HINT),
    pytest.mark.skipif(sync_playwright is None,
                       reason=f"{INSTALL_HINT}, and pip install playwright (the dev extra)"),
]


def arena(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run the `arena` command line in a subprocess, as a user would."""
    code = "import sys; from arena.cli import main; sys.exit(main())"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])}
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, f"arena {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def tournament(tmp_path_factory) -> dict:
    """Run a real small tournament, publish it, and collect `arena standings` for comparison."""
    work = tmp_path_factory.mktemp("tour")
    results = work / "results" / "browsertest"
    (work / "browsertest.toml").write_text(textwrap.dedent(f"""\
        name = "browsertest"
        variants = ["classic", "popout"]
        games = 4
        seed = 11
        concurrency = 4
        output = "{results.as_posix()}"
        [time]
        move_ms = 1000
        [[bots]]
        path = "{(REPO / 'bots' / 'random').as_posix()}"
        [[bots]]
        path = "{(REPO / 'bots' / 'greedy').as_posix()}"
        [[bots]]
        path = "{(REPO / 'bots' / 'random').as_posix()}"
        name = "random-b"
        args = ["--seed", "5"]
        """))
    arena("run", "browsertest.toml", "--quiet", cwd=work)
    # a small budget keeps it to a second or two: the book settles the early positions, in
    # which random bots blunder plenty; the rest is left unjudged
    arena("analyze", str(results), "--budget-ms", "5", cwd=work)
    site = work / "site"
    arena("publish", str(results), "--out", str(site), cwd=work)
    standings = {"all": json.loads(arena("standings", str(results), "--format", "json",
                                         cwd=work).stdout)}
    for variant in ("classic", "popout"):
        standings[variant] = json.loads(arena("standings", str(results), "--variant", variant,
                                              "--format", "json", cwd=work).stdout)
    from arena.tournament.store import load_games

    games = load_games(results)
    games = games[games["result"].notna()]
    return {"results": results, "site": site, "standings": standings, "games": games}


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        except Exception as error:
            pytest.skip(f"{INSTALL_HINT} (launch failed: {str(error).splitlines()[0]})")
        yield chromium
        chromium.close()


class Tab:
    """A page that records console errors, page errors and failed requests."""

    def __init__(self, browser, **context) -> None:
        self.context = browser.new_context(**context)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.errors.append(f"request failed: {r.url}"))

    def open(self, path: Path, fragment: str = "") -> object:
        self.page.goto(path.resolve().as_uri() + fragment)
        self.page.wait_for_load_state("load")
        return self.page

    def close(self) -> None:
        self.context.close()


@pytest.fixture
def tab(browser):
    t = Tab(browser, viewport={"width": 1280, "height": 900})
    yield t
    errors = list(t.errors)
    t.close()
    assert not errors, "browser reported errors:\n" + "\n".join(errors)


def _number(text: str) -> float:
    return float(text.strip().replace("−", "-").replace("%", ""))


def _visible_rows(page, scope: str) -> list[dict]:
    return page.eval_on_selector_all(
        f'table[data-leaderboard="{scope}"] tbody tr',
        """rows => rows.map(r => ({
            bot: r.dataset.bot,
            rank: r.querySelector('.rank').textContent,
            elo: r.querySelector('.elo strong').textContent,
            ts: r.querySelector('.ts').textContent,
            games: r.querySelector('.games').textContent,
            wdl: r.querySelector('.wdl').textContent,
            score: r.querySelector('.score').textContent,
            forfeits: r.querySelector('.forfeits').textContent,
            visible: r.offsetParent !== null,
        }))""",
    )


def _check_rows(rows: list[dict], expected: list[dict]) -> None:
    assert [r["bot"] for r in rows] == [e["bot"] for e in expected]
    elos = [_number(r["elo"]) for r in rows]
    assert elos == sorted(elos, reverse=True), "leaderboard is not in rating order"
    for row, exp in zip(rows, expected, strict=True):
        assert int(row["rank"]) == exp["rank"]  # shared by ties (the standings' rank)
        assert _number(row["elo"]) == pytest.approx(exp["elo"], abs=0.51)
        mu, sigma = (_number(x) for x in row["ts"].split("±"))
        assert mu == pytest.approx(exp["ts_mu"], abs=0.051)
        assert sigma == pytest.approx(exp["ts_sigma"], abs=0.051)
        assert int(row["games"]) == exp["games"]
        w, d, losses = (int(x) for x in row["wdl"].split("/"))
        assert (w, d, losses) == (exp["wins"], exp["draws"], exp["losses"])
        assert _number(row["score"]) == pytest.approx(100 * exp["score"], abs=0.051)
        if "forfeits" in exp:
            assert int(row["forfeits"]) == exp["forfeits"]


def test_leaderboard_matches_arena_standings(tab, tournament):
    page = tab.open(tournament["site"] / "index.html")
    expected = tournament["standings"]["all"]
    bots = set(tournament["games"]["first"]) | set(tournament["games"]["second"])
    rows = _visible_rows(page, "all")
    assert {r["bot"] for r in rows} == bots == {"random", "greedy", "random-b"}
    assert all(r["visible"] for r in rows)
    _check_rows(rows, expected)
    # tournament facts: versions and program hashes of the bots
    text = page.inner_text("main")
    assert "browsertest" in page.title()
    for bot in bots:
        assert bot in text


def test_variant_switcher(tab, tournament):
    page = tab.open(tournament["site"] / "index.html")
    tabs = page.locator("[data-switcher] .tab")
    assert tabs.count() == 3
    for scope in ("popout", "classic", "all"):
        page.click(f'[data-switcher] .tab[data-scope="{scope}"]')
        assert page.get_attribute(f'[data-switcher] .tab[data-scope="{scope}"]',
                                  "aria-selected") == "true"
        for other in ("all", "classic", "popout"):
            visible = page.is_visible(f'section.scope[data-scope="{other}"]')
            assert visible == (other == scope), f"{other} shown={visible} after choosing {scope}"
        rows = _visible_rows(page, scope)
        assert all(r["visible"] for r in rows)
        _check_rows(rows, tournament["standings"][scope])
    # each tab names the section it shows, which names its tab back (site review: ARIA)
    for k in range(tabs.count()):
        panel_id = tabs.nth(k).get_attribute("aria-controls")
        panel = page.locator(f"#{panel_id}")
        assert panel.get_attribute("role") == "tabpanel"
        assert panel.get_attribute("data-scope") == tabs.nth(k).get_attribute("data-scope")
        assert panel.get_attribute("aria-labelledby") == tabs.nth(k).get_attribute("id")
    # the choice survives in the URL, and the crosstable honours it
    page.click('[data-switcher] .tab[data-scope="popout"]')
    assert "variant=popout" in page.url
    cross = tab.open(tournament["site"] / "crosstable.html", "#variant=popout")
    assert cross.is_visible('section.scope[data-scope="popout"]')
    assert not cross.is_visible('section.scope[data-scope="classic"]')
    cells = cross.locator('section.scope[data-scope="popout"] td.cell .los')
    assert cells.count() == 6  # 3 bots: every ordered pair
    assert all("LOS" in t for t in cells.all_inner_texts())


def test_every_page_loads_images_and_has_no_errors(tab, tournament):
    site = tournament["site"]
    pages = sorted(site.rglob("*.html"))
    # index, crosstable, plots, games; one page per bot and per game
    assert len(pages) == 4 + 3 + len(tournament["games"])
    images = 0
    for path in pages:
        page = tab.open(path)
        broken = page.evaluate(
            "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0))"
            ".map(i => i.getAttribute('src'))"
        )
        assert not broken, f"{path.name}: images that did not load: {broken}"
        images += page.evaluate("document.images.length")
        links = page.evaluate(
            "Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"
            ".filter(h => h.startsWith('file:'))"
        )
        for link in links:
            target = Path(re.sub(r"^file://", "", link.split("#")[0]))
            assert target.exists(), f"{path.name}: broken link {link}"
    plots = tab.open(site / "plots.html")
    assert plots.evaluate("document.images.length") >= 4
    assert images >= 4


def _engine_replay(variant: str, moves: str) -> Game:
    game = Game(parse_variant(variant))
    for token in moves.split():
        game.push(parse_move(token))
    return game


def _drawn_board(page, rows: int, columns: int) -> list[str]:
    discs = page.eval_on_selector_all(
        "svg.board circle.disc[data-col]",
        "ds => ds.map(d => [Number(d.dataset.col), Number(d.dataset.row), d.dataset.owner])",
    )
    grid = [["."] * columns for _ in range(rows)]
    for col, row, owner in discs:
        grid[rows - row][col - 1] = owner
    return ["".join(r) for r in grid]


def test_popout_replay_steps_to_the_engine_board(tab, tournament):
    games = tournament["games"]
    popout = games[games["variant"] == parse_variant("popout").spec]
    with_pops = popout[popout["moves"].str.contains(r"\bp\d", regex=True)]
    assert len(popout) > 0
    game_row = (with_pops if len(with_pops) else popout).iloc[0]
    engine = _engine_replay(game_row["variant"], game_row["moves"])
    page = tab.open(tournament["site"] / "games.html")
    # find the game through the filterable list
    page.select_option('select[name="variant"]', game_row["variant"])
    page.fill('input[name="q"]', game_row["game_id"])
    visible = page.locator("table[data-games] tbody tr:visible")
    assert visible.count() == 1
    # the filters are in the URL: a copied link shows the same list (site review)
    assert f"q={game_row['game_id']}" in page.url and "variant=popout" in page.url
    again = tab.open(tournament["site"] / "games.html", "#" + page.url.split("#", 1)[1])
    assert again.locator("table[data-games] tbody tr:visible").count() == 1
    visible.locator("td.result a").click()
    page.wait_for_load_state("load")
    assert page.get_attribute("svg.board", "data-final") == "true"
    page.click('[data-action="first"]')
    assert page.get_attribute("svg.board", "data-ply") == "0"
    assert page.locator("svg.board circle.disc[data-col]").count() == 0
    rows, columns = engine.variant.rows, engine.variant.columns
    replay = Game(engine.variant)
    tokens = game_row["moves"].split()
    saw_pop = False
    for i, token in enumerate(tokens, start=1):
        page.click('[data-action="forward"]')
        replay.push(parse_move(token))
        assert page.get_attribute("svg.board", "data-ply") == str(i)
        if token.startswith("p"):
            saw_pop = True
            marker = page.locator("svg.board .pop-marker")
            assert marker.count() == 1
            assert marker.get_attribute("data-pop-column") == token[1:]
            assert "pops column" in page.inner_text("[data-status]")
            assert _drawn_board(page, rows, columns) == replay.board_rows()
        else:
            assert page.locator("svg.board .pop-marker").count() == 0
    assert saw_pop == bool(len(with_pops))
    assert page.get_attribute("svg.board", "data-final") == "true"
    assert _drawn_board(page, rows, columns) == engine.board_rows()
    win = page.eval_on_selector_all(
        "svg.board circle.disc.win", "ds => ds.map(d => [Number(d.dataset.col), Number(d.dataset.row)])"
    )
    assert sorted(map(tuple, win)) == sorted(engine.winning_cells())
    # back, slider and the move list
    page.click('[data-action="back"]')
    assert page.get_attribute("svg.board", "data-ply") == str(len(tokens) - 1)
    page.fill("[data-slider]", "1")
    page.dispatch_event("[data-slider]", "input")
    assert page.get_attribute("svg.board", "data-ply") == "1"
    page.click('[data-action="last"]')
    assert _drawn_board(page, rows, columns) == engine.board_rows()
    times = page.locator("table[data-moves] tbody tr").nth(1).inner_text()
    assert "ms" in times
    # the move list by keyboard: a row takes the focus, Enter shows its position (site review)
    page.locator("table[data-moves] tbody tr").nth(2).focus()
    page.keyboard.press("Enter")
    assert page.get_attribute("svg.board", "data-ply") == "2"
    # the shown ply is in the URL, and a link with it opens that position (site review)
    assert page.url.endswith("#ply=2")
    shared = tab.open(Path(page.url.split("#", 1)[0].removeprefix("file://")), "#ply=2")
    assert shared.get_attribute("svg.board", "data-ply") == "2"


def test_blunders_are_marked_in_the_replay(tab, tournament):
    site = tournament["site"]
    marked = next(p for p in sorted((site / "games").glob("*.html"))
                  if "blunder-mark" in p.read_text(encoding="utf-8"))
    page = tab.open(marked)
    mark = page.locator("table[data-moves] tr.blunder .blunder-mark").first
    mark.scroll_into_view_if_needed()
    assert mark.is_visible() and mark.inner_text() == "??"
    assert "blunder: " in mark.get_attribute("title")
    ply = mark.evaluate("m => m.closest('tr').dataset.ply")
    page.click(f'table[data-moves] tr[data-ply="{ply}"]')
    assert page.get_attribute("svg.board", "data-ply") == ply
    assert page.inner_text(".theory").startswith("Theoretical value: ")
    index = tab.open(site / "index.html")
    assert index.locator('table[data-leaderboard="all"] td.accuracy').count() == 3
    assert index.locator('table[data-leaderboard="popout"] td.accuracy').count() == 0


def test_play_button_runs_to_the_end(tab, tournament):
    site = tournament["site"]
    games = tournament["games"]
    short = games.sort_values("plies").iloc[0]
    link = tab.open(site / "games.html").locator(
        f'table[data-games] tbody tr[data-text^="{short["game_id"]} "] td.result a'
    ).get_attribute("href")
    page = tab.open(site / link)
    page.click('[data-action="play"]')  # at the end: restarts from the first ply
    page.wait_for_function("document.querySelector('svg.board').dataset.final === 'true'",
                           timeout=int(short["plies"]) * 1000 + 5000)
    engine = _engine_replay(short["variant"], short["moves"])
    v = engine.variant
    assert _drawn_board(page, v.rows, v.columns) == engine.board_rows()


def test_phone_layout_has_no_page_level_horizontal_scroll(browser, tournament):
    t = Tab(browser, viewport={"width": 390, "height": 844}, device_scale_factor=2,
            is_mobile=True, has_touch=True, color_scheme="dark")
    try:
        site = tournament["site"]
        first_game = sorted((site / "games").glob("*.html"))[0]
        bot_page = sorted((site / "bots").glob("*.html"))[0]
        for path in (site / "index.html", site / "crosstable.html", site / "games.html",
                     site / "plots.html", first_game, bot_page):
            page = t.open(path)
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 1, f"{path.name} scrolls sideways on a phone by {overflow}px"
        # what a visitor reads first fits the screen without scrolling the table: a row's
        # score, and a game's second player (both were off-screen: site review)
        for path, cell in ((site / "index.html", "table[data-leaderboard] tbody tr td.score"),
                           (site / "games.html", "table tbody tr td:nth-child(5)")):
            page = t.open(path)
            right = page.evaluate(f"document.querySelector({cell!r}).getBoundingClientRect()"
                                  ".right - document.documentElement.clientWidth")
            assert right <= 1, f"{path.name}: {cell} ends {right}px past a phone's screen"
        assert not t.errors, t.errors
    finally:
        t.close()


def test_tables_sort_by_clicking_a_column_head(tab, tournament):
    page = tab.open(tournament["site"] / "index.html")
    table = 'table[data-leaderboard="all"]'

    def column(name: str) -> list[str]:
        return page.eval_on_selector_all(
            f"{table} tbody tr", f"rows => rows.map(r => r.querySelector('{name}').textContent)")

    elo_head = page.locator(f"{table} thead th", has_text="Elo").first
    elo_head.click()  # a number column sorts biggest first
    assert elo_head.get_attribute("aria-sort") == "descending"
    elos = [_number(t) for t in column(".elo strong")]
    assert elos == sorted(elos, reverse=True)
    elo_head.click()
    assert elo_head.get_attribute("aria-sort") == "ascending"
    assert [_number(t) for t in column(".elo strong")] == sorted(elos)
    page.locator(f"{table} thead th", has_text="Bot").first.click()
    bots = [t.strip() for t in column(".bot a")]
    assert bots == sorted(bots, key=str.lower)
    games = tab.open(tournament["site"] / "games.html")
    games.locator("table[data-games] thead th", has_text="Plies").click()
    plies = games.eval_on_selector_all("table[data-games] tbody tr",
                                       "rows => rows.map(r => Number(r.cells[6].textContent))")
    assert plies == sorted(plies, reverse=True)


def test_crosstable_cells_are_coloured_by_score(tab, tournament):
    page = tab.open(tournament["site"] / "crosstable.html")
    cells = page.eval_on_selector_all(
        'section.scope[data-scope="all"] td.cell[data-score]',
        "cs => cs.map(c => [Number(c.dataset.score), getComputedStyle(c).backgroundColor])")
    assert len(cells) == 6
    by_score = {score: colour for score, colour in cells}
    assert len(set(by_score.values())) == len(by_score)  # each score its own colour
    best, worst = (_rgb(by_score[max(by_score)]), _rgb(by_score[min(by_score)]))
    assert best[1] > best[0] and worst[0] > worst[1]  # green for the best, red for the worst


def _rgb(css: str) -> list[float]:
    return [float(x) for x in re.findall(r"[\d.]+", css)][:3]


def test_replay_of_recorded_moves_that_break_the_rules_says_so(tab, tmp_path):
    from arena.publish.site import build_site

    csv = tmp_path / "games.csv"
    csv.write_text("first,second,result,variant,moves,reason\n"
                   "a,b,1,classic,d1 d2 d1 d2 d1 d2 d1,line\n"
                   "b,a,0,classic,d1 d1 d1 d1 d1 d1 d1 d2,\n"
                   "a,b,1,classic,d4 d4 d4 d4,adjudicated\n")
    site = build_site(csv, tmp_path / "site", plots=False, warn=lambda _message: None)
    page = tab.open(site / "games" / "2.html")
    assert page.inner_text(".tag.reason") == "illegal move at ply 7"
    status = page.inner_text("[data-status]")
    assert "ply 7 breaks the rules" in status and status.rstrip().endswith("a wins"), status
    ended = tab.open(site / "games" / "1.html")
    assert ended.inner_text("[data-status]").rstrip().endswith("a wins with 4 in a row")
    # the phrases come from arena.reasons (the script's own copy lacked `adjudicated`)
    cut = tab.open(site / "games" / "3.html")
    assert cut.inner_text("[data-status]").rstrip().endswith(
        "a wins with adjudication (the exact solver proved the result)")


def test_a_crosstable_cell_leads_to_the_games_of_its_pair(tab, tournament):
    """Cells linked nowhere (site review): a cell's score opens the games of the two bots."""
    games = tournament["games"]
    cross = tab.open(tournament["site"] / "crosstable.html")
    link = cross.locator('section.scope[data-scope="all"] td.cell a.pts').first
    href = link.get_attribute("href")
    page = tab.open(tournament["site"] / "games.html", "#" + href.split("#", 1)[1])
    params = dict(kv.split("=") for kv in href.split("#", 1)[1].split("&"))
    from urllib.parse import unquote

    a, b = unquote(params["bot"]), unquote(params["vs"])
    pair = games[((games["first"] == a) & (games["second"] == b))
                 | ((games["first"] == b) & (games["second"] == a))]
    shown = page.locator("table[data-games] tbody tr:visible")
    assert shown.count() == len(pair) > 0


def test_replay_keyboard_keeps_the_focus_and_names_the_board(tab, tournament):
    """The a11y review: a button that disabled itself dropped the focus to the page, where the
    next Space restarted the game; the shortcuts took Space/Home/End from the whole page; the
    board's name never changed; the move list was one Tab stop per ply."""
    page = tab.open(sorted((tournament["site"] / "games").glob("*.html"))[0])
    last = int(page.get_attribute("svg.board", "data-ply"))
    static = page.get_attribute("svg.board", "aria-label")
    assert static.startswith("Position after ply") and "Red is " in static
    page.focus('[data-action="first"]')
    page.keyboard.press("Enter")
    assert page.get_attribute("svg.board", "data-ply") == "0"
    assert page.evaluate("document.activeElement.dataset.action") == "first"
    assert page.get_attribute("svg.board", "aria-label").startswith("Start position, red (")
    assert page.get_attribute("[data-slider]", "aria-valuetext") == f"Ply 0 of {last} · start position"
    page.focus('[data-action="forward"]')
    for _ in range(last + 2):
        page.keyboard.press("Space")
    assert page.get_attribute("svg.board", "data-ply") == str(last)
    assert page.evaluate("document.activeElement.dataset.action") == "forward"
    assert page.get_attribute('[data-action="play"]', "aria-label") == "Play"  # not restarted
    assert page.get_attribute('[data-action="forward"]', "aria-disabled") == "true"
    # outside the replay, Space and End are the page's and the link's
    page.focus(".crumbs a")
    page.keyboard.press("Home")
    page.keyboard.press("Space")
    assert page.get_attribute("svg.board", "data-ply") == str(last)
    # quiet while playing, polite again when stopped
    page.click('[data-action="play"]')
    assert page.get_attribute("[data-status]", "aria-live") == "off"
    page.click('[data-action="play"]')
    assert page.get_attribute("[data-status]", "aria-live") == "polite"
    # the move list: one row takes Tab, the arrows move the focus and the board
    rows = "table[data-moves] tbody tr"
    assert page.eval_on_selector_all(rows, "rs => rs.filter(r => r.tabIndex === 0).length") == 1
    page.click('[data-action="first"]', force=True)  # aria-disabled at ply 0: a no-op there
    page.focus(f"{rows}[tabindex='0']")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    assert page.get_attribute("svg.board", "data-ply") == "2"
    assert page.evaluate("document.activeElement.dataset.ply") == "2"
    # <main> takes the focus on a click outside the controls (it is the skip link's target):
    # the arrows still step the game from there (diff review)
    page.evaluate("document.getElementById('main').focus()")
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("svg.board", "data-ply") == "3"


def test_without_javascript_the_board_is_drawn_and_dead_controls_hide(browser, tournament):
    t = Tab(browser, viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    try:
        page = t.open(sorted((tournament["site"] / "games").glob("*.html"))[0])
        assert page.locator("svg.board circle.disc").count() > 0
        assert not page.is_visible(".controls") and not page.is_visible("[data-slider]")
        index = t.open(tournament["site"] / "index.html")
        assert not index.is_visible(".switcher")
        assert index.is_visible('table[data-leaderboard="popout"]')  # every variant shows
    finally:
        t.close()
