"""Bad input to `league init` and `league submit`, refused in one line before anything is stored:
names `league run` could never play, and init options that were ignored or rewritten. In-process
(no bot is started: each refusal comes before the conformance check)."""

from __future__ import annotations

import itertools
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.commands.league import command as league
from arena.league import registry

KEY = "correct horse battery"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return registry.init_league(tmp_path / "club", {"variants": ["classic"],
                                                     "time_control": {"move_ms": 50}})


_copies = itertools.count()


def program(folder: Path) -> Path:
    """A copy of bots/random unlike every other: a new version is a new program (the same one
    again is not stored)."""
    copy = folder.parent / f"random-{next(_copies)}"
    shutil.copytree(registry.check_source("random"), copy)
    (copy / "bot.py").write_text((copy / "bot.py").read_text() + f"# {copy.name}\n")
    return copy


def add(folder: Path, name: str) -> registry.Entrant:
    entry, spec = registry.snapshot(folder, program(folder), name)
    return registry.add_version(folder, name, entry, spec, key=KEY)[0]


def refused(result) -> str:
    """The error line of a refused command (after click's usage lines, for a usage error)."""
    assert result.exit_code in (1, 2), result.output
    assert isinstance(result.exception, SystemExit), result.exception  # not a crash
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    return errors[0]


@pytest.mark.parametrize(("name", "why"), [
    ("r" * 63, "'" + "r" * 63 + "@1', which is longer than 64 characters (so at most 62"),
    ("r" * 65, "longer than 64 characters"),
    ("-", "is '-'"),
])
def test_a_name_whose_version_cannot_play_is_refused_before_anything_is_stored(
        folder: Path, name: str, why: str) -> None:
    with pytest.raises(registry.LeagueError, match="^--name: bot name .*" + why.replace("(", r"\(")):
        registry.check_version_name(folder, name, "--name")
    with pytest.raises(registry.LeagueError):  # in the transaction too: a race changes nothing
        add(folder, name)
    assert registry.entrants(folder) == []
    result = CliRunner().invoke(league, ["submit", str(folder), "random", "--name", name])
    assert why in refused(result) and registry.entrants(folder) == []
    assert "submission key" not in result.output


def test_the_longest_name_is_checked_with_the_version_it_would_get(folder: Path) -> None:
    name = "r" * 62  # '@1' to '@9' fit in 64 characters, '@10' does not
    registry.check_version_name(folder, name)
    for _ in range(9):
        add(folder, name)
    with pytest.raises(registry.LeagueError, match=f"'{name}@10', which is longer than 64"):
        registry.check_version_name(folder, name)
    with pytest.raises(registry.LeagueError):
        add(folder, name)
    assert [e.display for e in registry.active_entrants(folder)] == [f"{name}@9"]


@pytest.mark.parametrize(("args", "why"), [
    (["--move-ms", "50", "--variants", "classic"],
     "'--config': give --config (a league file, which sets them) or --variants, --move-ms, not both"),
    (["--sandbox", "off"], "or --sandbox, not both"),
    (["--startup-ms", "100"], "or --startup-ms, not both"),
])
def test_init_refuses_options_besides_a_league_file(tmp_path: Path, args: list[str],
                                                    why: str) -> None:
    config = tmp_path / "club.toml"
    config.write_text('variants = ["popout"]\n[time]\nmove_ms = 150\n')
    result = CliRunner().invoke(league, ["init", str(tmp_path / "club"), "--config", str(config),
                                         *args])
    assert result.exit_code == 2 and why in refused(result)
    assert not (tmp_path / "club").exists()


@pytest.mark.parametrize(("variants", "why"), [
    ([""], "'--variants': '' names no variant"),
    ([" , "], "names no variant"),
    (["classic,classic"], "variant 'classic' is given twice"),
    (["popout", "classic,popout"], "variant 'popout' is given twice"),
])
def test_init_refuses_an_empty_or_repeated_variant(tmp_path: Path, variants: list[str],
                                                   why: str) -> None:
    args = [arg for text in variants for arg in ("--variants", text)]
    result = CliRunner().invoke(league, ["init", str(tmp_path / "club"), *args])
    assert result.exit_code == 2 and why in refused(result)
    assert not (tmp_path / "club").exists()


def test_init_names_a_missing_league_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.toml"
    result = CliRunner().invoke(league, ["init", str(tmp_path / "club"), "--config", str(missing)])
    line = refused(result)
    assert result.exit_code == 1 and f"--config {missing}: no such league file" in line
    assert "tournament" not in line and not (tmp_path / "club").exists()


def test_init_still_takes_its_options_or_a_league_file(tmp_path: Path) -> None:
    runner = CliRunner()
    done = runner.invoke(league, ["init", str(tmp_path / "a"), "--variants", "classic,popout",
                                  "--variants", "five", "--move-ms", "200"])
    assert done.exit_code == 0, done.output
    assert registry.settings(tmp_path / "a")["variants"] == ["classic", "popout", "five"]
    config = tmp_path / "club.toml"
    config.write_text('variants = ["popout"]\n[time]\nmove_ms = 150\n')
    done = runner.invoke(league, ["init", str(tmp_path / "b"), "--config", str(config)])
    assert done.exit_code == 0, done.output
    stored = registry.settings(tmp_path / "b")
    assert stored["variants"] == ["popout"] and stored["time_control"]["move_ms"] == 150


def test_a_new_version_keeps_its_names_author_unless_given(folder: Path):
    """The key's holder submits again: bot.toml's author (the program's: "arena" for a copy of
    a bundled bot) named only a name's first version, and replaced the submitter's."""
    def submit(name: str, author: str = "") -> str:
        entry, spec = registry.snapshot(folder, program(folder), name)
        return registry.add_version(folder, name, entry, spec, author=author, key=KEY)[0].author

    assert submit("mine", "Ada") == "Ada"
    assert submit("mine") == "Ada"
    assert submit("mine", "Bob") == "Bob"
    assert submit("theirs") == "arena"  # bots/random's bot.toml
    # cleaned as bot.toml's author is (site review: a direction override, a newline)
    assert submit("eve", "Eve \u202eevil\nx") == "Eve \\u202eevil\\nx"


def test_submitting_the_same_program_again_stores_no_new_version(folder: Path, tmp_path: Path):
    """A retried CI job submitted the same bot twice: a new version replaced the old one, which
    split its rating and restarted its placement (review as a new user). The same program is
    now reported unchanged, before the checks; a changed one is a new version as before."""
    entry, spec = registry.snapshot(folder, registry.check_source("random"), "random")
    registry.add_version(folder, "random", entry, spec, key=KEY)
    result = CliRunner().invoke(league, ["submit", str(folder), "random", "--key", KEY])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("unchanged: random@1 already runs this program (")
    assert [e.display for e in registry.entrants(folder)] == ["random@1"]
    changed = tmp_path / "changed"
    shutil.copytree(registry.check_source("random"), changed)
    (changed / "bot.py").write_text((changed / "bot.py").read_text() + "# tuned\n")
    entry, spec = registry.snapshot(folder, changed, "random")
    registry.check_changed(folder, "random", spec.program_hash)  # a changed program: no error
    # the same program stored by a job running beside this one, after its check: refused as
    # the version is stored, in the same transaction (review of the diff)
    entry, spec = registry.snapshot(folder, registry.check_source("random"), "random")
    with pytest.raises(registry.UnchangedSubmission, match="unchanged: random@1 already runs"):
        registry.add_version(folder, "random", entry, spec, key=KEY)
    assert [e.display for e in registry.entrants(folder)] == ["random@1"]


def test_a_command_line_given_to_submit_is_one_line_naming_what_it_takes(folder: Path):
    """`league submit club "python3 bots/random/bot.py"` said the current folder had no
    bot.toml, a folder the user never named (review as a new user)."""
    result = CliRunner().invoke(league, ["submit", str(folder), "python3 bots/random/bot.py"])
    assert refused(result) == ("Error: 'python3 bots/random/bot.py' is a command line: submit "
                               "takes a bot folder, a program file or a bundled bot's name (a "
                               "folder's bot.toml gives its command: command = \"...\")")
    assert registry.entrants(folder) == []
    # a missing folder with a space in its name is a missing folder (review of the diff)
    missing = CliRunner().invoke(league, ["submit", str(folder), str(folder.parent / "my bots" / "x")])
    assert "is a command line" not in refused(missing)


def test_a_submission_past_the_size_cap_is_refused_before_it_is_read(folder: Path) -> None:
    """A sparse file takes no disk in the submitter's folder but its full size in a copy (a
    12 KB folder became 2.1 GiB under the league: hostile review); nothing is copied or hashed."""
    source = program(folder)
    with open(source / "blob.bin", "wb") as handle:
        handle.truncate(registry.MAX_SUBMISSION_BYTES + 1)  # sparse: no block written
    result = CliRunner().invoke(league, ["submit", str(folder), str(source), "--key", KEY])
    line = refused(result)
    assert str(source) in line and "100 MB" in line and "sparse" in line
    assert not (folder / registry.SNAPSHOT_DIR).exists() or not any(
        (folder / registry.SNAPSHOT_DIR).iterdir())
    assert registry.entrants(folder) == []


def test_a_submission_of_too_many_files_is_refused(folder: Path, monkeypatch) -> None:
    source = program(folder)
    monkeypatch.setattr(registry, "MAX_SUBMISSION_ENTRIES", 5)
    for n in range(5):
        (source / f"data{n}.txt").write_text("x")
    with pytest.raises(registry.LeagueError, match="more than 5 files and folders"):
        registry.check_size(source)
    # what a snapshot leaves out does not count: caches, a repository's history
    for n in range(5):
        (source / f"data{n}.txt").unlink()
    (source / "__pycache__").mkdir(exist_ok=True)
    for n in range(10):
        (source / "__pycache__" / f"m{n}.pyc").write_bytes(b"")
    registry.check_size(source)


def test_a_source_that_changed_after_its_checks_is_not_stored(folder: Path) -> None:
    """The stored snapshot is the program that passed the conformance checks: a submitter who
    edits the folder while the checks run gets nothing stored (hostile review)."""
    source = program(folder)
    checked = registry.check_source(source)
    from arena.botspec import resolve_bot

    checked_hash = resolve_bot(str(checked)).program_hash
    (source / "bot.py").write_text((source / "bot.py").read_text() + "# edited meanwhile\n")
    with pytest.raises(registry.LeagueError, match="changed while it was checked"):
        registry.snapshot(folder, source, "edited", checked_hash)
    assert not any((folder / registry.SNAPSHOT_DIR).glob("edited/*"))


def test_a_link_to_a_large_folder_is_measured_where_it_leads(folder: Path, tmp_path: Path) -> None:
    """`lstat` of a link to a folder holding a sparse 2 GiB file passed the cap, and the bot was
    hashed for seconds before the snapshot refused it (diff review)."""
    source = program(folder)
    with open(source / "blob.bin", "wb") as handle:
        handle.truncate(registry.MAX_SUBMISSION_BYTES + 1)
    link = tmp_path / "link-to-bot"
    link.symlink_to(source)
    with pytest.raises(registry.LeagueError, match="more than 100 MB"):
        registry.check_source(link)
    with pytest.raises(registry.LeagueError, match="more than 100 MB"):
        registry.snapshot(folder, link, "linked")


def test_the_copy_writes_no_more_than_the_cap_and_no_special_file(folder: Path, monkeypatch) -> None:
    """A file may grow (or a sparse one fill in) after the size check: the copy itself stops at
    the cap, and a FIFO in the folder is refused, not waited on (diff review)."""
    source = program(folder)
    (source / "data.bin").write_bytes(b"x" * 4096)
    monkeypatch.setattr(registry, "check_size", lambda source: None)  # as if it grew since
    monkeypatch.setattr(registry, "MAX_SUBMISSION_BYTES", 2048)
    with pytest.raises(registry.LeagueError, match="grew while it was copied"):
        registry.snapshot(folder, source, "grower")
    (source / "data.bin").unlink()
    os.mkfifo(source / "pipe")
    monkeypatch.setattr(registry, "MAX_SUBMISSION_BYTES", 100 * 1024 * 1024)
    with pytest.raises(registry.LeagueError, match="not a regular file"):
        registry.snapshot(folder, source, "piper")
    assert not any((folder / registry.SNAPSHOT_DIR).glob("*/*"))  # nothing left, staging gone


def test_a_program_the_name_ran_before_brings_that_version_back(folder: Path) -> None:
    """A removal undone, or a version reverted to: the version that ran the program comes back
    with its games and rating (it had been a new version from zero; a league over weeks)."""
    first_program, second_program = program(folder), program(folder)
    for source in (first_program, second_program):
        entry, spec = registry.snapshot(folder, source, "rb")
        registry.add_version(folder, "rb", entry, spec, key=KEY)
    entry, spec = registry.snapshot(folder, first_program, "rb")
    back, _ = registry.add_version(folder, "rb", entry, spec, key=KEY)
    assert back.display == "rb@1" and back.active
    assert [(e.display, e.active) for e in registry.entrants(folder)] == [
        ("rb@1", True), ("rb@2", False)]
    registry.retire(folder, "rb")
    entry, spec = registry.snapshot(folder, second_program, "rb")
    again, _ = registry.add_version(folder, "rb", entry, spec, key=KEY)
    assert again.display == "rb@2" and again.active
