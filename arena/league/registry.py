"""A league's entrants: immutable bot snapshots, their versions, and who is still scheduled.

A league is a folder: `games.db` (the tournament store's schema plus the `league_entrants` table
below), `bots/<name>/<hash>/` (one immutable snapshot per submitted version, addressed by its
content hash), `logs/` and, once published, `site/`. `submit`, `remove` and `league run` are
separate processes: entrants are changed in short SQLite transactions (WAL, busy timeout), and the
running league re-reads them before each scheduling decision, so no restart is needed. Games are
still written by `league run` alone.
"""

from __future__ import annotations

import fnmatch
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.botspec import (
    MAX_NAME_CHARS,
    NAME_RULE,
    BotSpec,
    BotSpecError,
    name_problem,
    open_regular,
    own_files_hash,
    resolve_bot,
)
from arena.clock import utc_now_iso
from arena.league import keys
from arena.leftovers import remove_stale
from arena.protocol import HELLO_FIELD_CAP, HIDDEN_CATEGORIES, truncate
from arena.tournament import sqlite_read
from arena.tournament.store import DB_NAME, Store, db_error

SNAPSHOT_DIR = "bots"
# What a snapshot leaves out of a submitted folder (caches a bot rebuilds, a repository's history).
SNAPSHOT_IGNORED = ("__pycache__", ".git", "*.pyc")
# The most a submission may hold: its copy lives in the league folder for good, and is hashed again
# before each of its pairs. A 12 KB folder with a sparse 2 GiB file became 2.1 GiB of zeros on the
# organiser's disk (hostile review); Kaggle takes 100 MB per submission.
MAX_SUBMISSION_BYTES = 100 * 1024 * 1024
MAX_SUBMISSION_ENTRIES = 100_000  # inodes: a Node bot's node_modules holds thousands
LEAGUE_MARK = "league"  # meta key: the folder is a league, not a tournament's results
_SCHEMA = """
CREATE TABLE IF NOT EXISTS league_entrants (
    display TEXT PRIMARY KEY,        -- NAME@VERSION: the name in the games table
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    program_hash TEXT NOT NULL,
    entry TEXT NOT NULL,             -- path of the bot inside the league folder
    author TEXT NOT NULL DEFAULT '',
    language TEXT NOT NULL DEFAULT '',
    submitted_at TEXT NOT NULL,
    retired_at TEXT,                 -- set by `remove` or when a newer version replaces it
    own_hash TEXT NOT NULL DEFAULT '', -- its own files' hash (`botspec.own_files_hash`)
    UNIQUE(name, version)
);
"""


class LeagueError(RuntimeError):
    """A league folder or a submission that cannot be used (one line, says why)."""


class UnchangedSubmission(LeagueError):
    """A submission of the program the name's active version already runs (a CI job retried,
    or two at once): no new version, which would split its rating. Not a failure."""

    def __init__(self, display: str, program_hash: str) -> None:
        super().__init__(f"unchanged: {display} already runs this program ({program_hash}); "
                         "nothing was stored")


@dataclass(frozen=True)
class Entrant:
    display: str
    name: str
    version: int
    program_hash: str
    entry: str
    author: str
    language: str
    submitted_at: str
    retired_at: str | None
    own_hash: str = ""  # '' for a version stored before the column (until a rehash)

    @property
    def active(self) -> bool:
        return self.retired_at is None


def display_name(name: str, version: int) -> str:
    return f"{name}@{version}"


def init_league(folder: str | Path, settings: dict[str, Any]) -> Path:
    """Create a league folder (refused if it already holds a league or a tournament's results)."""
    folder = Path(folder)
    if (folder / DB_NAME).exists():
        kind = "a league" if is_league(folder) else "a tournament's results"
        raise LeagueError(f"{folder} already holds {kind}; choose a new folder")
    with Store(folder) as store, store.transaction() as conn:
        conn.execute(f"INSERT OR REPLACE INTO meta(key, value) VALUES('{LEAGUE_MARK}', '1')")
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('settings', ?)",
                     (json.dumps(settings, sort_keys=True),))
        conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('created_at', ?)", (utc_now_iso(),))
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)
    (folder / SNAPSHOT_DIR).mkdir(exist_ok=True)
    return folder


def is_league(folder: str | Path) -> bool:
    path = Path(folder) / DB_NAME
    if not path.is_file():
        return False
    try:
        with _connect(Path(folder), readonly=True) as conn:
            return conn.execute(f"SELECT 1 FROM meta WHERE key='{LEAGUE_MARK}'").fetchone() is not None
    except sqlite3.Error:
        return False


@contextmanager
def _connect(folder: Path, readonly: bool = False) -> Iterator[sqlite3.Connection]:
    path = folder / DB_NAME
    if readonly:  # creates nothing beside the file: a league folder the user may not write
        # (plain `mode=ro` failed there: "attempt to write a readonly database", non-root review)
        reader = sqlite_read.Reader(path)
        try:
            yield reader.conn
        finally:
            reader.close()
        return
    uri = path.absolute().as_uri()  # `#`, `?` escaped
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30)
    try:
        yield conn
    finally:
        conn.close()


def open_league(folder: str | Path) -> Path:
    """The league folder, checked: one line saying what is wrong otherwise."""
    folder = Path(folder)
    if not (folder / DB_NAME).is_file():
        raise LeagueError(f"{folder} is not a league: no {DB_NAME} (create one with `arena league init {folder}`)")
    try:
        with _connect(folder, readonly=True) as conn:
            marked = conn.execute(
                f"SELECT 1 FROM meta WHERE key='{LEAGUE_MARK}'").fetchone() is not None
    except sqlite3.DatabaseError as error:
        if "no such table" not in str(error):
            raise LeagueError(db_error(folder / DB_NAME, error)) from None
        marked = False
    if not marked:
        raise LeagueError(f"{folder} holds a tournament's results, not a league")
    return folder


def settings(folder: str | Path) -> dict[str, Any]:
    with _connect(open_league(folder), readonly=True) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key='settings'").fetchone()
    return json.loads(row[0]) if row else {}


def entrants(folder: str | Path) -> list[Entrant]:
    """Every version ever submitted, oldest first."""
    with _connect(open_league(folder), readonly=True) as conn:
        own = "own_hash" if _has_own_hash(conn) else "''"
        rows = conn.execute(
            "SELECT display, name, version, program_hash, entry, author, language, submitted_at,"
            f" retired_at, {own} FROM league_entrants ORDER BY submitted_at, name, version"
        ).fetchall()
    return [Entrant(*row) for row in rows]


def _has_own_hash(conn: sqlite3.Connection) -> bool:
    return any(row[1] == "own_hash" for row in conn.execute("PRAGMA table_info(league_entrants)"))


def _add_own_hash(conn: sqlite3.Connection) -> None:
    """The `own_hash` column in a league made before it (read as '' until set)."""
    if not _has_own_hash(conn):
        conn.execute("ALTER TABLE league_entrants ADD COLUMN own_hash TEXT NOT NULL DEFAULT ''")


def game_counts(folder: str | Path) -> tuple[dict[str, int], int]:
    """Games per bot (display name) and in all, read-only."""
    with _connect(open_league(folder), readonly=True) as conn:
        per_bot: dict[str, int] = {}
        for first, second, n in conn.execute("SELECT first, second, COUNT(*) FROM games GROUP BY 1, 2"):
            per_bot[first] = per_bot.get(first, 0) + n
            per_bot[second] = per_bot.get(second, 0) + n
        total = conn.execute("SELECT COUNT(*) FROM games").fetchone()[0]
    return per_bot, total


def active_entrants(folder: str | Path) -> list[Entrant]:
    return [e for e in entrants(folder) if e.active]


def spec_of(folder: str | Path, entrant: Entrant) -> BotSpec:
    """The runnable spec of a stored snapshot, checked against its recorded hash."""
    spec = resolve_bot(str(Path(folder) / entrant.entry), name=entrant.display)
    if spec.program_hash != entrant.program_hash and entrant.own_hash and \
            own_files_hash(spec) != entrant.own_hash:
        raise LeagueError(tampered_message(entrant, own_files_hash(spec)))
    if spec.program_hash != entrant.program_hash:
        # the hash covers the arena modules a bot imports: an upgrade of the arena changes it
        # too, and "changed on disk" sent organisers looking for an edit (review of the diff)
        raise LeagueError(f"{entrant.display} no longer hashes as when it was submitted (hash "
                          f"{spec.program_hash}, stored {entrant.program_hash}): its snapshot's "
                          "files or the arena modules it imports changed (an upgrade of the "
                          "arena changes an SDK bot's: `arena league rehash` records the new "
                          "hashes under the same versions); else resubmit the bot")
    return spec


def snapshot(folder: Path, source: Path, name: str,
             checked_hash: str | None = None) -> tuple[Path, BotSpec]:
    """Copy a bot (folder or single program) under the league, addressed by its content hash.

    The copy is made in a temporary folder first, hashed there and renamed into place, so a crash
    never leaves half a snapshot and the stored copy is what was hashed; the same content
    submitted twice shares one snapshot. `checked_hash`: the hash of the program that passed the
    conformance checks; a source or copy that hashes otherwise (changed while it was checked or
    copied) is refused, so that the stored bot is the checked one. The copy writes at most
    MAX_SUBMISSION_BYTES, however the files grow meanwhile.
    """
    check_size(source)
    spec = resolve_bot(str(source))
    expected = checked_hash or spec.program_hash
    if spec.program_hash != expected:
        raise _changed(source, expected, spec.program_hash, "checked")
    target = folder / SNAPSHOT_DIR / name / spec.program_hash
    entry_name = source.name if source.is_file() else ""
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        remove_stale(target.parent, (".incoming-",))  # a copy killed half made
        staging = Path(tempfile.mkdtemp(prefix=".incoming-", dir=target.parent))
        try:
            _copy_into(source, staging)
            staged = _hash_of(source, staging / entry_name)
            if staged != expected:
                raise _changed(source, expected, staged, "copied")
            staging.rename(target)
        finally:
            if staging.exists():
                _remove_tree(staging)
    return target / entry_name, spec


@contextmanager
def checking_copy(folder: Path, source: Path, expected: str) -> Iterator[BotSpec]:
    """A throwaway copy of `source` in the league's folder, for the conformance checks to run:
    it hashes as `expected` (the program `snapshot` then stores), and the submitter's folder is
    never run, so a bot that writes into its own folder while it is checked (unsandboxed) only
    changes this copy (it was refused for ever: diff review). Removed afterwards."""
    check_size(source)
    parent = folder / SNAPSHOT_DIR
    try:
        parent.mkdir(parents=True, exist_ok=True)
        remove_stale(parent, (".checking-",))  # those of a submission killed while checked
        scratch = Path(tempfile.mkdtemp(prefix=".checking-", dir=parent))
    except OSError as error:
        raise LeagueError(f"cannot write into {parent}: {error.strerror or error} (the league "
                          "folder must be writable by whoever submits)") from None
    try:
        place = scratch / source.name  # the name a bot takes from its folder or file stays
        _copy_into(source, place if source.is_dir() else scratch)
        copied = _hash_of(source, place)
        if copied != expected:
            raise _changed(source, expected, copied, "copied")
        yield resolve_bot(str(place))
        # a bot that wrote beside itself while checked would change its snapshot as it plays,
        # and be left out of the league at its first game (review of the last commits)
        if (after := _hash_of(source, place)) != expected:
            raise LeagueError(
                f"{source} wrote into its own folder while it was checked (its copy hashed "
                f"{after} afterwards, {expected} before): its snapshot would change as it plays "
                "and be left out; nothing was stored: let it write into /tmp or its HOME")
    finally:
        _remove_tree(scratch)


def _remove_tree(folder: Path) -> None:
    """Remove a copy of a bot, read-only folders too (copied as the submitter made them)."""
    def writable_again(function, path, _info) -> None:
        try:
            os.chmod(os.path.dirname(path), 0o700)
            if os.path.isdir(path) and not os.path.islink(path):
                os.chmod(path, 0o700)
            function(path)
        except OSError:
            pass

    if sys.version_info >= (3, 12):  # `onerror` is deprecated there, for `onexc`
        shutil.rmtree(folder, onexc=writable_again)
    else:
        shutil.rmtree(folder, onerror=writable_again)


def _copy_into(source: Path, destination: Path) -> None:
    """Copy a bot folder's files into `destination` (a single program: into that folder), within
    MAX_SUBMISSION_BYTES; LeagueError (one line) for what cannot be copied."""
    copy = _BudgetedCopy(source, MAX_SUBMISSION_BYTES)
    try:
        if source.is_dir():
            shutil.copytree(source, destination, dirs_exist_ok=True, symlinks=True,
                            ignore=shutil.ignore_patterns(*SNAPSHOT_IGNORED), copy_function=copy)
        else:
            copy(source, destination / source.name)
    except shutil.Error as error:  # a list of (source, copy, why): name the first
        problems = error.args[0] if error.args and isinstance(error.args[0], list) else []
        why = problems[0][2] if problems and len(problems[0]) == 3 else str(error)
        raise LeagueError(f"cannot copy {source}: {why} (a bot folder holds files and "
                          "folders only)") from None


def _hash_of(source: Path, copy: Path) -> str:
    try:
        return resolve_bot(str(copy)).program_hash
    except BotSpecError as error:
        raise LeagueError(f"the copy of {source}: {error}") from None


def _changed(source: Path, expected: str, now: str, while_: str) -> LeagueError:
    return LeagueError(
        f"{source} changed while it was {while_} (hash {expected} when checked, {now} now); "
        "nothing was stored: submit it again once it stays as it is")


class _BudgetedCopy:
    """A `copy_function` that writes at most `budget` bytes in all (LeagueError past it): a file
    may grow, or a sparse one fill in, after the size check (diff review)."""

    def __init__(self, source: Path, budget: int) -> None:
        self.source = source
        self.budget = budget
        self.left = budget

    def __call__(self, src: str | Path, dst: str | Path) -> str:
        fd = open_regular(Path(src))  # a FIFO would hang the copy, a device never end it
        if fd is None:
            raise LeagueError(f"cannot copy {src}: not a regular file (a bot folder holds files "
                              "and folders only)")
        with os.fdopen(fd, "rb") as reader, open(dst, "wb") as writer:
            while chunk := reader.read(1 << 20):
                self.left -= len(chunk)
                if self.left < 0:
                    raise LeagueError(
                        f"{self.source} holds more than {self.budget / 1024 / 1024:g} MB "
                        "(it grew while it was copied; the most a submission may hold)")
                writer.write(chunk)
        shutil.copymode(src, dst)
        return str(dst)


# Characters a name may not hold: controls, and those that hide or reorder text
# (`protocol.HIDDEN_CATEGORIES`: zero-width spaces, direction marks, private use, ...).
_HIDDEN_CATEGORIES = {"Cc", *HIDDEN_CATEGORIES}


def league_name(raw: str) -> str:
    """A submitted name as the league keeps it (NFKC, outer spaces off), or LeagueError: names
    are shown side by side on the leaderboard, so none may hide characters or separators."""
    name = unicodedata.normalize("NFKC", raw).strip()
    bad = [c for c in name if unicodedata.category(c) in _HIDDEN_CATEGORIES
           or (c.isspace() and c != " ")]
    if not name or any(c in name for c in "@/\\") or bad:
        shown = f" (it holds {', '.join(f'U+{ord(c):04X}' for c in bad)})" if bad else ""
        raise LeagueError(f"bad bot name {raw!r}: not empty, no '@', '/' or '\\', no control or "
                          f"invisible characters{shown}")
    return name


def _version_problem(name: str, version: int, where: str) -> str | None:
    """Why `name` cannot be stored as `version`, or None. `league run` plays a version under
    its display name NAME@VERSION, which the display-name rule (`arena.botspec`) must allow:
    a version it refuses could be stored but never played."""
    prefix = f"{where}: " if where else ""
    shown = display_name(name, version)
    if len(shown) > MAX_NAME_CHARS:  # said of the version: a name that fits alone may not
        room = MAX_NAME_CHARS - (len(shown) - len(name))
        return (f"{prefix}bot name {name!r} is too long for the league: version {version} plays "
                f"as {shown!r}, which {name_problem(shown)} (so at most {room} characters here)")
    if problem := name_problem(name) or name_problem(shown):
        return f"{prefix}bot name {name!r} {problem} ({NAME_RULE})"
    return None


def check_version_name(folder: str | Path, name: str, where: str = "") -> None:
    """Before a submission's checks: LeagueError (one line, naming `where` the name came from)
    if the next version of `name` would have a display name `league run` cannot play;
    `add_version` checks again, in its transaction."""
    with _connect(open_league(folder), readonly=True) as conn:
        version = _last_version(conn, name) + 1
    if problem := _version_problem(name, version, where):
        raise LeagueError(problem)


def _last_version(conn: sqlite3.Connection, name: str) -> int:
    row = conn.execute("SELECT COALESCE(MAX(version), 0) FROM league_entrants WHERE name=?",
                       (name,)).fetchone()
    return int(row[0])


def _name_in_use(conn: sqlite3.Connection, name: str) -> bool:
    """Whether `name` has versions in the league already; LeagueError (one line) for a new name
    that differs from one in the league only by case."""
    names = {row[0] for row in conn.execute("SELECT DISTINCT name FROM league_entrants")}
    close = sorted(n for n in names if n != name and n.casefold() == name.casefold())
    if close:
        raise LeagueError(f"bot name {name!r} is too close to {close[0]!r}, already in the league "
                          "(names may not differ only in case)")
    return name in names


def check_key(folder: str | Path, name: str, key: str | None) -> None:
    """Before a submission's checks: whether `key` may submit `name` (raises
    keys.SubmissionKeyError or LeagueError, one line); `add_version` checks again, in its
    transaction."""
    with _connect(open_league(folder), readonly=True) as conn:
        keys.verify(conn, name, key, _name_in_use(conn, name))


def set_key(folder: str | Path, name: str, key: str | None) -> str | None:
    """The organiser's reset: `key` (or a new one, returned to show once) becomes the
    submission key of `name`, which must be in the league."""
    folder = open_league(folder)
    with _connect(folder) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            known = conn.execute("SELECT 1 FROM league_entrants WHERE name=? LIMIT 1",
                                 (name,)).fetchone()
            if known is None:
                raise LeagueError(f"no bot named {name!r} in the league (a new name gets its key "
                                  "at its first submission)")
            made = keys.set_key(conn, name, key, utc_now_iso())
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return made


def _last_author(conn: sqlite3.Connection, name: str) -> str:
    row = conn.execute("SELECT author FROM league_entrants WHERE name=? ORDER BY version DESC "
                       "LIMIT 1", (name,)).fetchone()
    return row[0] if row else ""


def add_version(folder: str | Path, name: str, entry: Path, spec: BotSpec, author: str = "",
                key: str | None = None) -> tuple[Entrant, str | None]:
    """Store a new version of `name` and retire the previous one, in one transaction, if `key`
    may submit it (`arena.league.keys`); the entrant, and the key made for a new name (shown
    once) when none was given."""
    folder = open_league(folder)
    stamp = utc_now_iso()
    own = _own_hash_of(entry)  # of the stored copy: what `rehash` later compares
    # as bot.toml's author is: a `\u202e` reversed the site's byline, a newline split a row
    author = truncate(author, HELLO_FIELD_CAP) if author else ""
    with _connect(folder) as conn:
        conn.execute("BEGIN IMMEDIATE")
        try:
            made = keys.authorise(conn, name, key, stamp, _name_in_use(conn, name))
            # again here: a job running beside this one may have stored it meanwhile
            _refuse_unchanged(conn, name, spec.program_hash)
            earlier = conn.execute(
                "SELECT version FROM league_entrants WHERE name=? AND retired_at IS NOT NULL AND "
                "program_hash=? ORDER BY version DESC LIMIT 1", (name, spec.program_hash)).fetchone()
            if earlier is not None:
                # a program this name ran before (a removal undone, a version reverted to): that
                # version comes back with its games and rating, not a new one from zero
                conn.execute("UPDATE league_entrants SET retired_at=? WHERE name=? AND "
                             "retired_at IS NULL", (stamp, name))
                conn.execute("UPDATE league_entrants SET retired_at=NULL WHERE name=? AND "
                             "version=?", (name, earlier[0]))
                conn.execute("COMMIT")
                return next(e for e in entrants(folder)
                            if e.display == display_name(name, earlier[0])), made
            version = _last_version(conn, name) + 1
            # the key's holder submits again: the name keeps its author unless told otherwise
            # (bot.toml's is the program's, e.g. "arena" for a copy of a bundled bot)
            author = author or _last_author(conn, name) or spec.author
            # again here: a version submitted meanwhile may have taken the number checked before
            if problem := _version_problem(name, version, ""):
                raise LeagueError(problem)
            conn.execute("UPDATE league_entrants SET retired_at=? WHERE name=? AND retired_at IS NULL",
                         (stamp, name))
            _add_own_hash(conn)
            conn.execute(
                "INSERT INTO league_entrants(display, name, version, program_hash, entry, author,"
                " language, submitted_at, own_hash) VALUES(?,?,?,?,?,?,?,?,?)",
                (display_name(name, version), name, version, spec.program_hash,
                 entry.relative_to(folder).as_posix(), author, spec.language, stamp, own))
            # The tournament store's bots table too, so standings and the site show who and what.
            conn.execute(
                "INSERT OR REPLACE INTO bots(name, ref, command, args, cwd, program_hash, version,"
                " author, language, first_seen, last_seen) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                (display_name(name, version), entry.relative_to(folder).as_posix(),
                 json.dumps(spec.command), json.dumps(list(spec.args)), "", spec.program_hash,
                 str(version), author, spec.language, stamp, stamp))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return next(e for e in entrants(folder) if e.display == display_name(name, version)), made


def check_changed(folder: str | Path, name: str, program_hash: str) -> None:
    """UnchangedSubmission when the active version of `name` already runs this very program:
    said before the checks, which take minutes, and again as the version is stored."""
    with _connect(open_league(folder), readonly=True) as conn:
        _refuse_unchanged(conn, name, program_hash)


def _refuse_unchanged(conn, name: str, program_hash: str) -> None:
    same = conn.execute("SELECT display FROM league_entrants WHERE name=? AND retired_at IS NULL"
                        " AND program_hash=?", (name, program_hash)).fetchone()
    if same:
        raise UnchangedSubmission(same[0], program_hash)


def retire(folder: str | Path, name: str) -> list[str]:
    """Retire every active version of `name` (games kept, no new ones); the displays retired."""
    folder = open_league(folder)
    with _connect(folder) as conn:
        conn.execute("BEGIN IMMEDIATE")
        rows = conn.execute("SELECT display FROM league_entrants WHERE name=? AND retired_at IS NULL",
                            (name,)).fetchall()
        conn.execute("UPDATE league_entrants SET retired_at=? WHERE name=? AND retired_at IS NULL",
                     (utc_now_iso(), name))
        conn.execute("COMMIT")
    if not rows:
        active = sorted({e.name for e in entrants(folder) if e.retired_at is None})
        raise LeagueError(f"no active bot named {name!r} in the league"
                          + (f" (active: {', '.join(active)})" if active
                             else " (it has no active bots)"))
    return [r[0] for r in rows]


def rehash(folder: str | Path, left: list[str] | None = None) -> list[tuple[str, str, str]]:
    """Record, under the same versions, the hashes the entrants' stored snapshots have
    now: after an upgrade of the arena, which changes the hash of every bot importing it (an
    SDK bot's), every such bot was "cannot play" until each author resubmitted it, as a new
    version with a fresh rating (review of a league over weeks). The organiser's call: the
    snapshots are the league's copies, read-only to sandboxed bots. Returns (display, old,
    new) of each entrant whose hash changed.

    A retired version whose snapshot cannot be read or was altered is left as it was (it plays
    no more, and a resubmission cannot bring it back under its old hash), with a line in
    `left`: it had stopped every rehash of the league for good, `remove` being no cure."""
    folder = open_league(folder)
    changed = []
    own_hashes: list[tuple[str, str]] = []  # (own hash, display) of versions stored without one
    # retired versions too: one brought back later must still match its program (second review)
    for entrant in entrants(folder):
        try:
            spec = resolve_bot(str(folder / entrant.entry), name=entrant.display)
        except BotSpecError as error:
            why = f"{entrant.display}: its snapshot cannot be read: {error}"
            if entrant.active:
                raise LeagueError(why) from None
            _left_as_it_was(left, why)
            continue
        own = own_files_hash(spec)
        if entrant.own_hash and own != entrant.own_hash:
            # only the arena's share of a hash may change under the organiser's hand: a
            # snapshot whose own files changed is not the program submitted (a bot run
            # without the sandbox can write into its folder)
            if entrant.active:
                raise LeagueError(tampered_message(entrant, own) + "; nothing was rehashed")
            _left_as_it_was(left, tampered_message(entrant, own))
            continue
        if not entrant.own_hash:
            own_hashes.append((own, entrant.display))
        if spec.program_hash != entrant.program_hash:
            changed.append((entrant.display, entrant.program_hash, spec.program_hash))
    if changed or own_hashes:
        with _connect(folder) as conn:
            conn.execute("BEGIN IMMEDIATE")
            _add_own_hash(conn)
            conn.executemany("UPDATE league_entrants SET program_hash=? WHERE display=?",
                             [(new, display) for display, _, new in changed])
            conn.executemany("UPDATE league_entrants SET own_hash=? WHERE display=?", own_hashes)
            conn.execute("COMMIT")
    return changed


def _left_as_it_was(left: list[str] | None, why: str) -> None:
    if left is not None:
        left.append(f"{why}; it is retired: left as it was, not rehashed")


def tampered_message(entrant: Entrant, now: str) -> str:
    """The one line for a snapshot whose own files are no longer those submitted."""
    return (f"{entrant.display}: its own files changed since it was submitted (hash {now}, "
            f"stored {entrant.own_hash}): its snapshot in the league folder was altered, which "
            "an upgrade of the arena does not do; resubmit the bot, or remove it")


def _own_hash_of(entry: Path) -> str:
    try:
        return own_files_hash(resolve_bot(str(entry)))
    except BotSpecError as error:
        raise LeagueError(f"the stored copy {entry}: {error}") from None


def check_source(path: str | Path) -> Path:
    """The folder or program file to snapshot: a path, or a bundled bot's name."""
    source = Path(path).expanduser()
    words = str(path).split()
    if not source.exists() and len(words) > 1 and (shutil.which(words[0]) or Path(words[0]).is_file()):
        raise LeagueError(f"{str(path)!r} is a command line: submit takes a bot folder, a "
                          "program file or a bundled bot's name (a folder's bot.toml gives its "
                          "command: command = \"...\")")
    if source.exists():  # before resolve_bot, which reads every byte to hash it
        check_size(source)
    try:
        spec = resolve_bot(str(path))
    except BotSpecError as error:
        raise LeagueError(str(error)) from None
    return source.resolve() if source.exists() else spec.cwd


def check_size(source: Path) -> None:
    """LeagueError if what a snapshot of `source` would copy passes MAX_SUBMISSION_BYTES (sizes
    as the files claim them: a sparse file is copied at its full size) or MAX_SUBMISSION_ENTRIES
    files and folders. Links inside are not followed (a snapshot copies them as links); the
    source itself is measured where it leads (a link to a folder passed: diff review)."""
    source = source.resolve()
    total, entries = 0, 0
    if source.is_dir() and not source.is_symlink():
        for root, dirs, names in os.walk(source):
            dirs[:] = [d for d in dirs if not _snapshot_ignores(d)]
            kept = [n for n in names if not _snapshot_ignores(n)]
            entries += len(dirs) + len(kept)
            total += sum(_size(os.path.join(root, n)) for n in kept)
            if entries > MAX_SUBMISSION_ENTRIES or total > MAX_SUBMISSION_BYTES:
                break
    else:
        entries, total = 1, _size(str(source))
    if entries > MAX_SUBMISSION_ENTRIES:
        raise LeagueError(f"{source} holds more than {MAX_SUBMISSION_ENTRIES:,} files and folders "
                          "(the most a submission may hold): submit the bot's own files only")
    if total > MAX_SUBMISSION_BYTES:
        raise LeagueError(f"{source} holds more than {MAX_SUBMISSION_BYTES // 1024 // 1024} MB "
                          f"(at least {total / 1024 / 1024:,.0f} MB as its files give their sizes, "
                          "sparse files at full size; the most a submission may hold): submit "
                          "the bot's own files only")


def _snapshot_ignores(name: str) -> bool:
    return any(fnmatch.fnmatch(name, pattern) for pattern in SNAPSHOT_IGNORED)


def _size(path: str) -> int:
    try:
        return os.lstat(path).st_size
    except OSError:
        return 0
