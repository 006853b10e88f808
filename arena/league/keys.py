"""Submission keys: who may submit a new version of a league bot.

The first submission of a name sets its key: one the submitter gives (`--key`, or the
`ARENA_LEAGUE_KEY` variable, which stays out of the process list), or one made for them and
shown once. A later version of that name needs the same key, so that nobody replaces somebody
else's bot by submitting under its name. Only a salted scrypt hash of each key is stored (table
`league_keys` of the league's games.db), so reading the database does not give a key away.

The league's organiser sets or resets a name's key with `arena league key` (a lost key, a name
submitted before keys existed). This guards the names against other submitters, not against
whoever can write the league folder itself (they can edit the database): see SECURITY.md.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import sqlite3

SCHEMA = """CREATE TABLE IF NOT EXISTS league_keys (
    name TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL,          -- scrypt$SALT$HASH, hex
    created_at TEXT NOT NULL
)"""
MIN_LENGTH = 8
# scrypt's cost: about 30 ms a check here, slow enough against guessing a stored hash offline
_N, _R, _P = 1 << 14, 8, 1


class SubmissionKeyError(ValueError):
    """A missing, wrong or unusable key (one line, says what to do)."""


def new_key() -> str:
    return secrets.token_urlsafe(18)


def hash_key(key: str, salt: bytes | None = None) -> str:
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.scrypt(key.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${salt.hex()}${digest.hex()}"


def matches(key: str, stored: str) -> bool:
    kind, _, rest = stored.partition("$")
    salt_hex, _, _ = rest.partition("$")
    if kind != "scrypt":
        return False
    try:
        salt = bytes.fromhex(salt_hex)
    except ValueError:
        return False
    return hmac.compare_digest(hash_key(key, salt), stored)


def check_given(key: str | None) -> None:
    """A key given by a submitter must be worth guarding with, and text."""
    if key is None:
        return
    if len(key) < MIN_LENGTH:
        raise SubmissionKeyError(f"a submission key needs at least {MIN_LENGTH} characters "
                                 "(or give none, and one is made for you)")
    _check_text(key)


def _check_text(key: str) -> None:
    try:
        key.encode()
    except UnicodeEncodeError:  # undecodable bytes from the environment
        raise SubmissionKeyError("the submission key is not valid UTF-8 text") from None


def stored_hash(conn: sqlite3.Connection, name: str) -> str | None:
    try:
        row = conn.execute("SELECT key_hash FROM league_keys WHERE name=?", (name,)).fetchone()
    except sqlite3.OperationalError as error:  # a league made before keys: no table yet
        if "no such table" in str(error):
            return None
        raise
    return row[0] if row else None


def verify(conn: sqlite3.Connection, name: str, key: str | None, has_versions: bool) -> bool:
    """Whether `key` may submit `name` (raises SubmissionKeyError if not): a new name is free,
    one with a key needs it, and one already in the league without a key (submitted before
    keys existed) needs the organiser to give it one first (`arena league key`). True if the
    name has a key."""
    stored = stored_hash(conn, name)
    if stored is None:
        check_given(key)  # a name's first key; a wrong one of a keyed name is just wrong
        if has_versions:
            raise SubmissionKeyError(
                f"{name!r} was submitted before submission keys existed: the league's organiser "
                f"gives it one with `arena league key LEAGUE {name}` (then pass it with --key or "
                "ARENA_LEAGUE_KEY)")
        return False
    if key is None:
        raise SubmissionKeyError(f"{name!r} is already in the league and has a submission key: "
                                 "give it with --key or ARENA_LEAGUE_KEY to submit a new version, "
                                 "or choose another --name")
    _check_text(key)
    if not matches(key, stored):
        raise SubmissionKeyError(f"wrong submission key for {name!r}: a new version needs the key "
                                 "of its first submission (or choose another --name)")
    return True


def authorise(conn: sqlite3.Connection, name: str, key: str | None, stamp: str,
              has_versions: bool) -> str | None:
    """Inside the submission's transaction: check `key` against the name's stored key, or store
    the name's first key. Returns a key made here (to show once), or None. Raises
    SubmissionKeyError."""
    if verify(conn, name, key, has_versions):
        return None
    return set_key(conn, name, key, stamp)


def set_key(conn: sqlite3.Connection, name: str, key: str | None, stamp: str) -> str | None:
    """Store `key` (or a new one, returned to show once) as the key of `name`, replacing any."""
    check_given(key)
    made = None if key is not None else new_key()
    conn.execute(SCHEMA)
    conn.execute("INSERT OR REPLACE INTO league_keys(name, key_hash, created_at) VALUES(?,?,?)",
                 (name, hash_key(key if key is not None else made), stamp))
    return made
