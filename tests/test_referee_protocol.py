"""The referee and the player's protocol logic through a scripted transport: no processes.

Each test scripts how the fake bots answer; the referee's records and the lines it sent are
checked exactly. Timing is simulated (replies due some ms after the line that caused them), so
time limits and clocks are tested without waiting.
"""

from __future__ import annotations

import threading

import pytest

from arena import protocol
from arena.game import PRESETS, Game, parse_move
from arena.player import MAX_INFO_LINES, InfoCollector, Player, close_players
from arena.referee import GameAborted, TimeControl, play_game
from tests.fake_transport import Events, FirstLegal, Reply, Stderr, factory, spec

TC = TimeControl(move_ms=1000, startup_ms=2000, grace_ms=100)


def players(first: FirstLegal, second: FirstLegal, events: Events, **options) -> tuple[Player,
                                                                                     Player]:
    a = Player(spec(first.name), transport_factory=factory(first.name, first, events), **options)
    b = Player(spec(second.name), transport_factory=factory(second.name, second, events),
               **options)
    return a, b


def test_whole_game_lines_and_record():
    events = Events()
    one, two = FirstLegal("one"), FirstLegal("two", version="2.5")
    a, b = players(one, two, events)
    rec = play_game(PRESETS["classic"], a, b, TC, game_id="g1")
    # first legal move each: columns fill from the left, seat 1 wins on column 1
    game = Game(PRESETS["classic"])
    for token in rec.moves:
        game.push(parse_move(token))
    assert rec.reason == game.outcome.reason and rec.winner == game.outcome.winner
    assert (rec.first, rec.second, rec.first_version, rec.second_version) == (
        "one", "two", "1.0", "2.5")
    sent = events.of("one", "send")
    assert sent[0] == "hello protocol=fiar version=1"
    assert sent[1].startswith("game id=g1 seat=1 spec=classic columns=7 rows=6 connect=4 ")
    assert sent[1].endswith(" move_ms=1000 base_ms=0 increment_ms=0 startup_ms=2000 grace_ms=100"
                            " opponent=two")
    assert sent[2] == "turn ply=0 moves=- time_ms=1000 opponent_time_ms=- last_ms=-"
    assert sent[3].startswith("turn ply=2 moves=d1,d1 time_ms=1000 opponent_time_ms=- last_ms=")
    assert sent[-1] == f"end result=win winner=1 reason={rec.reason} plies={rec.plies}"
    assert events.of("two", "send")[-1].startswith("end result=loss winner=1 ")
    assert len(rec.move_ms) == len(rec.move_cpu_ms) == len(rec.infos) == rec.plies
    a.close()
    b.close()
    assert events.of("one", "quit") == [""] and events.of("one", "close") == [""]


def test_info_lines_before_the_move_and_between_turns_are_kept_capped():
    events = Events()

    def chatty(ply: int, move: str) -> list[str]:
        if ply == 1:
            return ["info depth 1", "", "info " + "x" * 5000, f"move {move}",
                    "info after the move"]
        return [f"move {move}"]

    a, b = players(FirstLegal("chatty", chatty), FirstLegal("plain"), events)
    rec = play_game(PRESETS["classic"], a, b, TC)
    assert rec.infos[0][0] == "depth 1"
    assert rec.infos[0] == ["depth 1", "x" * 4096]  # capped, not a loss: the last line kept
    assert rec.infos[2] == ["after the move"]  # sent after its move: counts for its next ply
    assert rec.forfeit_by is None


def test_info_collector_keeps_whole_lines_until_the_cap_and_always_the_last():
    """The last info line is stored with the move: past the cap it was an earlier line, or the
    line at the cap cut short (`depth 131 scor`; review as a new user)."""
    infos = InfoCollector(cap=10)
    for text in ("abc", "defghij"):
        infos.add(text)
    assert infos.lines == ["abc", "defghij"] and infos.chars == 10
    for text in ("klm", "a line longer than the cap", "nop"):
        infos.add(text)
    assert infos.lines == ["abc", "defghij", "nop"]
    infos.add("the last, longer than the cap")
    assert infos.lines == ["abc", "defghij", "the last, "]
    wide = InfoCollector(cap=40)
    for depth in range(1, 9):
        wide.add(f"depth {depth} score 0")
    assert wide.lines[-1] == "depth 8 score 0" and wide.chars <= 40


@pytest.mark.parametrize(("answers", "reason", "detail"), [
    (lambda move: ["move d99"], "illegal", "d99: there is no column 99 (columns 1-7), in its turn at ply=2"),
    (lambda move: ["move x4"], "protocol", "x4"),
    (lambda move: ["thinking hard"], "protocol", "unknown line 'thinking hard'"),
    (lambda move: ["move"], "protocol", "'move' without a move token"),
    # past Python's 4,300-digit int() limit: a ValueError of its own stopped every run
    (lambda move: ["move d" + "7" * 5000], "protocol", "malformed move 'd777"),
    (lambda move: [f"move {move}", "move d99"], "protocol", "move sent before its turn"),
    (lambda move: ["info flood"] * (MAX_INFO_LINES + 1), "protocol", "flood"),
    (lambda move: [Reply(f"move {move}", after_ms=1101)], "timeout",
     "no move within 1000 ms (+100 ms grace)"),
])
def test_misbehaviour_on_the_second_move_forfeits(answers, reason, detail):
    events = Events()

    def on_turn(ply: int, move: str) -> list:
        return answers(move) if ply == 2 else [f"move {move}"]

    a, b = players(FirstLegal("bad", on_turn), FirstLegal("good"), events)
    rec = play_game(PRESETS["classic"], a, b, TC)
    assert (rec.reason, rec.forfeit_by, rec.winner, rec.result) == (reason, 1, 2, 0.0)
    assert detail in rec.detail
    assert events.of("bad", "kill") == [""]  # the offender is ended at once
    assert not events.of("bad", "send")[-1].startswith("end")  # and gets no end line
    assert events.of("good", "send")[-1].startswith("end result=win winner=2 reason=")


def test_move_in_time_counts_up_to_the_grace_and_is_timed_by_arrival():
    # A reply is due after_ms from the fake's own clock read, which comes after the referee's
    # (its deadline's): a loaded machine can pause between the two (17 ms seen), and a reply at
    # 1099 ms of 1100 was then late (1 in ~300 runs). Half the grace leaves 50 ms for that.
    events = Events()
    late_but_in_grace = FirstLegal("slow", lambda ply, move: [Reply(f"move {move}", 1050)])
    a, b = players(late_but_in_grace, FirstLegal("fast"), events)
    rec = play_game(PRESETS["classic"], a, b, TC)
    assert rec.forfeit_by is None, rec.detail
    slow = rec.move_ms[0::2]
    assert all(1050 <= ms < 1100 for ms in slow), slow  # its arrival, not when it was looked at


def test_first_move_of_a_fresh_process_gets_the_startup_allowance():
    events = Events()
    first = FirstLegal("warming", lambda ply, move: [Reply(f"move {move}",
                                                            2500 if ply == 1 else 10)])
    a, b = players(first, FirstLegal("other"), events)
    assert play_game(PRESETS["classic"], a, b, TC).forfeit_by is None
    # the same process in a second game: no allowance any more
    first.on_turn = lambda ply, move: [Reply(f"move {move}", 2500)]
    rec = play_game(PRESETS["classic"], a, b, TC)
    assert rec.reason == "timeout" and rec.forfeit_by == 1
    assert rec.detail == "no move within 1000 ms (+100 ms grace)"
    assert a.starts == 1


def test_clock_is_charged_by_arrival_and_shown_to_both_bots():
    events = Events()
    tc = TimeControl(move_ms=None, base_ms=3000, increment_ms=50, startup_ms=2000, grace_ms=0)
    a, b = players(FirstLegal("a", lambda ply, move: [Reply(f"move {move}", 100)]),
                   FirstLegal("b", lambda ply, move: [Reply(f"move {move}", 20)]), events)
    rec = play_game(PRESETS["classic"], a, b, tc)
    assert rec.forfeit_by is None, rec.detail
    turns = [protocol.parse_turn_line(line) for line in events.of("a", "send")[2:5]]
    # the first moves came within the start-up allowance: not charged, the increment added
    assert (turns[0]["time_ms"], turns[0]["opponent_time_ms"]) == (3000, 3000)
    assert (turns[1]["time_ms"], turns[1]["opponent_time_ms"]) == (3050, 3050)
    # then each move is charged from the turn line to its arrival (ms floored), +50 ms; the
    # referee's clock read comes a little before the fake's, up to tens of ms on a loaded machine
    # (3063 seen): not charged (3100) or no increment (2950, 3030) is still told apart
    assert 2960 <= turns[2]["time_ms"] <= 3000 and 3040 <= turns[2]["opponent_time_ms"] <= 3080
    assert 100 <= turns[2]["last_ms"] <= 140


def test_handshake_failures_and_void_game():
    events = Events()
    silent = Player(spec("silent"), transport_factory=factory(
        "silent", lambda line: [Reply("hello name=late", 2101)] if line.startswith("hello")
        else [], events))
    rude = Player(spec("rude"), transport_factory=factory(
        "rude", lambda line: ["I am a bot"] if line.startswith("hello") else [], events))
    rec = play_game(PRESETS["classic"], silent, rude, TC)
    assert rec.void and rec.reason == "void" and rec.result is None
    assert rec.detail == ("seat 1: handshake: no hello answer within 2000 ms; "
                          "seat 2: handshake: expected 'hello name=...', got 'I am a bot'")
    good = Player(spec("good"), transport_factory=factory("good", FirstLegal("good"), events))
    rec = play_game(PRESETS["classic"], good, rude, TC)
    assert (rec.reason, rec.forfeit_by, rec.winner) == ("handshake", 2, 1)
    assert rec.startup_ms[0] is not None and rec.startup_ms[1] is None


def test_bot_that_cannot_start_loses_by_crash():
    events = Events()
    broken = Player(spec("broken"), transport_factory=factory(
        "broken", FirstLegal("broken"), events, fail_start=True))
    good = Player(spec("good"), transport_factory=factory("good", FirstLegal("good"), events))
    rec = play_game(PRESETS["classic"], good, broken, TC)
    assert (rec.reason, rec.forfeit_by) == ("crash", 2)
    assert "cannot start 'broken'" in rec.detail
    # the game never began: the opponent was greeted but got no game line
    assert events.of("good", "send") == ["hello protocol=fiar version=1"]


def test_bot_that_exits_mid_game_loses_by_crash():
    events = Events()

    def quitter(ply: int, move: str) -> list:
        if ply == 3:
            raise SystemExit
        return [f"move {move}"]

    a, b = players(FirstLegal("good"), FirstLegal("quitter", quitter), events)
    rec = play_game(PRESETS["classic"], a, b, TC)
    assert (rec.reason, rec.forfeit_by, rec.detail) == ("crash", 2, "bot exited with code 0")


def test_a_crash_mid_game_says_the_last_line_the_bot_wrote_to_stderr():
    """Without a log folder (`arena check`, `play`) the record is the only place it is seen."""
    events = Events()

    def quitter(ply: int, move: str) -> list:
        if ply == 3:
            raise SystemExit
        return [Stderr(b"thinking\n"), f"move {move}"] if ply == 1 else [
            Stderr(b"weights.bin: no such file\n\n"), f"move {move}"]

    a, b = players(FirstLegal("good"), FirstLegal("quitter", quitter), events)
    rec = play_game(PRESETS["classic"], a, b, TC)
    assert (rec.reason, rec.forfeit_by) == ("crash", 2)
    assert rec.detail == "bot exited with code 0; stderr: weights.bin: no such file"


def test_a_kept_bots_crash_does_not_quote_an_earlier_games_stderr():
    """Without a log folder nothing takes the stderr buffer: a silent death in game 2 read
    game 1's last line (and a full buffer kept it for good)."""
    events = Events()
    dying = []

    def talker(turns: int, move: str) -> list:
        if dying:  # game 2's first turn: dies without a word
            raise SystemExit
        return [Stderr(b"game 1 talk\n"), f"move {move}"]

    a, b = players(FirstLegal("good"), FirstLegal("talker", talker), events)
    assert play_game(PRESETS["classic"], a, b, TC).forfeit_by is None
    dying.append(True)
    second = play_game(PRESETS["classic"], a, b, TC)
    assert (second.reason, second.forfeit_by, second.detail) == (
        "crash", 2, "bot exited with code 0")


def test_kept_processes_are_closed_both_at_once():
    events = Events()
    a, b = players(FirstLegal("a"), FirstLegal("b"), events)
    for i in range(3):
        play_game(PRESETS["classic"], a, b, TC) if i % 2 == 0 else play_game(
            PRESETS["classic"], b, a, TC)
    assert (a.starts, b.starts) == (1, 1)
    assert events.of("a", "send").count("hello protocol=fiar version=1") == 1
    close_players([a, b])
    ends = [(who, what) for who, what, _ in events.log if what in ("quit", "close")]
    # both bots are asked to quit before either is waited for: their exits overlap
    assert ends == [("a", "quit"), ("b", "quit"), ("a", "close"), ("b", "close")]


def test_restart_every_game_retires_processes_without_waiting():
    events = Events()
    a, b = players(FirstLegal("a"), FirstLegal("b"), events, restart_every_game=True)
    for _ in range(2):
        rec = play_game(PRESETS["classic"], a, b, TC)
        assert rec.forfeit_by is None
        # quit was sent when the game ended; the rest of the close runs in the background
        assert a.process is None and not a.running and not b.running
    assert (a.starts, b.starts) == (2, 2)
    a.close()
    b.close()  # waits for the retired processes
    for name in ("a", "b"):
        assert events.of(name, "start") == ["", ""]
        assert events.of(name, "quit") == ["", ""] and events.of(name, "close") == ["", ""]
        sent = events.of(name, "send")
        assert sent.count("hello protocol=fiar version=1") == 2


def test_stop_event_aborts_and_kills_both():
    events = Events()
    stop = threading.Event()

    def stop_on_third(ply: int, move: str) -> list:
        if ply == 3:
            stop.set()
        return [f"move {move}"]

    a, b = players(FirstLegal("a", stop_on_third), FirstLegal("b"), events)
    with pytest.raises(GameAborted):
        play_game(PRESETS["classic"], a, b, TC, stop=stop)
    assert events.of("a", "kill") == [""] and events.of("b", "kill") == [""]


def test_stderr_goes_to_the_games_log(tmp_path):
    events = Events()
    a = Player(spec("loud"), log_dir=tmp_path, transport_factory=factory(
        "loud", FirstLegal("loud"), events, stderr=b"thinking...\n"))
    b = Player(spec("quiet"), log_dir=tmp_path,
               transport_factory=factory("quiet", FirstLegal("quiet"), events))
    play_game(PRESETS["classic"], a, b, TC, game_id="t/1")
    assert [p.name for p in tmp_path.iterdir()] == ["t_1-1-loud.log"]
    assert (tmp_path / "t_1-1-loud.log").read_bytes() == b"thinking...\n"


def test_stderr_log_is_capped_per_game_across_appends(tmp_path):
    from arena.player import StderrLog

    log = StderrLog(tmp_path / "g-1-bot.log", cap=10)
    log.add(b"12345678", 0)
    log.add(b"abcdef", 3)  # 2 bytes fit, 4 + 3 are dropped
    log.add(b"", 0)
    assert (tmp_path / "g-1-bot.log").read_bytes() == (
        b"12345678ab\n[arena: 7 more bytes of stderr dropped]\n")
    StderrLog(tmp_path / "empty.log").add(b"", 0)
    assert not (tmp_path / "empty.log").exists()  # no file for a bot that wrote nothing


def test_stderr_written_after_a_games_end_goes_to_that_games_log(tmp_path):
    # A kept bot answers `end` on stderr: that line belongs to the game that ended, even though
    # it is only seen when the next game starts.
    class Talker(FirstLegal):
        def __call__(self, line: str) -> list:
            if line.startswith("end"):
                return [Stderr(b"after the end\n")]
            if line.startswith("turn"):
                return [Stderr(f"thinking at ply {len(self.turns)}\n".encode()),
                        *super().__call__(line)]
            return super().__call__(line)

    events = Events()
    a = Player(spec("talker"), log_dir=tmp_path,
               transport_factory=factory("talker", Talker("talker"), events))
    b = Player(spec("quiet"), transport_factory=factory("quiet", FirstLegal("quiet"), events))
    with a, b:
        play_game(PRESETS["classic"], a, b, TC, game_id="one")
        play_game(PRESETS["classic"], a, b, TC, game_id="two")
    first = (tmp_path / "one-1-talker.log").read_text().splitlines()
    second = (tmp_path / "two-1-talker.log").read_text().splitlines()
    assert first[0] == "thinking at ply 0" and first[-1] == "after the end"
    assert second[0].startswith("thinking at ply") and second[-1] == "after the end"
    assert "after the end" not in second[:-1]


def test_without_pondering_a_bot_runs_only_on_its_turns():
    events = Events()
    a, b = players(FirstLegal("one"), FirstLegal("two"), events, ponder=False)
    records = [play_game(PRESETS["classic"], a, b, TC, game_id="g1"),
               play_game(PRESETS["classic"], b, a, TC, game_id="g2")]  # kept processes
    close_players([a, b])
    for name in ("one", "two"):
        frozen, turns = None, 0
        for _who, what, arg in (e for e in events.log if e[0] == name):
            word = arg.split(" ")[0]
            if what in ("freeze", "thaw"):
                frozen = what == "freeze"
            elif what == "send" and word == "turn":
                assert frozen is False, f"{name}: a turn line to a stopped bot"
                turns += 1
            elif what == "send" and word != "hello":
                # the game and end lines wait in its input: it reads them on its next turn
                assert frozen is True, f"{name}: running at {arg!r}"
            elif what == "quit":
                assert frozen is False, f"{name}: stopped at its close"
        # one freeze after its hello answer and one after each of its moves, nothing else
        assert len(events.of(name, "freeze")) == turns + 1
        assert len(events.of(name, "thaw")) == turns + 1  # before each turn, and at the close
    assert sum(len(r.moves) for r in records) == len(events.of("one", "freeze")) + len(
        events.of("two", "freeze")) - 2


@pytest.mark.parametrize("ponder", [False, True])
def test_without_pondering_each_games_first_move_has_the_start_up_allowance(ponder):
    # a stopped bot first reads a game's `game` line (work a pondering bot does between games)
    # at its first turn: that turn gets the start-up allowance, as a new process's first move
    class SlowFirst(FirstLegal):  # 1.5 s for the first move of each game (the limit: 1.1 s)
        first = False

        def __call__(self, line: str) -> list:
            answers = super().__call__(line)
            if line.startswith("turn ") and self.first:
                answers = [Reply(text, after_ms=1500) for text in answers]
            self.first = line.startswith("game ")
            return answers

    events = Events()
    a, b = players(SlowFirst("slow"), FirstLegal("plain"), events, ponder=ponder)
    play_game(PRESETS["classic"], a, b, TC, game_id="g1")  # a new process: allowed either way
    kept = play_game(PRESETS["classic"], b, a, TC, game_id="g2")
    close_players([a, b])
    if ponder:
        assert kept.reason == "timeout" and kept.forfeit_by == 2
    else:
        assert kept.forfeit_by is None


def test_pondering_is_the_default_and_stops_nothing():
    events = Events()
    a, b = players(FirstLegal("one"), FirstLegal("two"), events)
    play_game(PRESETS["classic"], a, b, TC, game_id="g1")
    assert not [e for e in events.log if e[1] in ("freeze", "thaw")]
    close_players([a, b])


def test_a_wrong_hello_answer_is_followed_by_what_the_bot_wrote_next():
    """A runtime's error on stdout is several lines: the first alone read as a protocol
    mistake (the JVM's "Error occurred during initialization of VM")."""
    events = Events()
    jvm = Player(spec("jvm"), transport_factory=factory(
        "jvm", lambda line: ["Error occurred during initialization of VM", "",
                             "Could not reserve enough space for 2097152KB object heap"]
        if line.startswith("hello") else [], events))
    good = Player(spec("good"), transport_factory=factory("good", FirstLegal("good"), events))
    rec = play_game(PRESETS["classic"], good, jvm, TC)
    assert (rec.reason, rec.forfeit_by) == ("handshake", 2)
    assert rec.detail == ("expected 'hello name=...', got 'Error occurred during initialization "
                          "of VM'; then 'Could not reserve enough space for 2097152KB object "
                          "heap'")
