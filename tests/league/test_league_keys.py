"""`arena.league.keys` without processes: who may submit a new version of a name."""

from __future__ import annotations

import sqlite3

import pytest

from arena.league import keys
from arena.league.keys import SubmissionKeyError


@pytest.fixture
def conn():
    connection = sqlite3.connect(":memory:")
    yield connection
    connection.close()


def test_the_first_submission_sets_the_key_and_later_ones_need_it(conn):
    assert keys.authorise(conn, "ada-bot", "correct horse", "t0", False) is None  # given: nothing shown
    assert keys.authorise(conn, "ada-bot", "correct horse", "t1", True) is None
    with pytest.raises(SubmissionKeyError, match="wrong submission key for 'ada-bot'"):
        keys.authorise(conn, "ada-bot", "battery staple", "t2", True)
    with pytest.raises(SubmissionKeyError, match="has a submission key: give it with --key"):
        keys.authorise(conn, "ada-bot", None, "t2", True)
    # a short wrong key is a wrong key, not advice on making one (user review)
    with pytest.raises(SubmissionKeyError, match="wrong submission key for 'ada-bot'"):
        keys.authorise(conn, "ada-bot", "wrong", "t2", True)
    with pytest.raises(SubmissionKeyError, match="not valid UTF-8"):
        keys.authorise(conn, "ada-bot", "\udcff\udcfe-undecodable", "t2", True)


def test_a_key_is_made_when_none_is_given(conn):
    made = keys.authorise(conn, "bob-bot", None, "t0", False)
    assert made and len(made) >= keys.MIN_LENGTH
    assert keys.authorise(conn, "bob-bot", made, "t1", True) is None
    assert keys.authorise(conn, "other", None, "t1", False) != made  # each name its own


def test_a_league_made_before_keys_gets_its_table_on_the_first_submission(conn):
    assert keys.stored_hash(conn, "new") is None  # no table: a name without a key
    keys.verify(conn, "new", None, has_versions=False)
    assert keys.authorise(conn, "new", "a key of mine", "t0", False) is None
    assert keys.matches("a key of mine", keys.stored_hash(conn, "new"))


def test_a_name_from_before_keys_waits_for_the_organiser(conn):
    # whoever submitted next would otherwise take over a bot already playing
    with pytest.raises(SubmissionKeyError, match="arena league key LEAGUE old"):
        keys.authorise(conn, "old", "a thief's key", "t0", True)
    made = keys.set_key(conn, "old", None, "t1")  # `arena league key`: shown to the organiser
    assert keys.authorise(conn, "old", made, "t2", True) is None


def test_a_key_that_is_not_text_is_one_clear_line(conn):
    with pytest.raises(SubmissionKeyError, match="not valid UTF-8"):
        keys.authorise(conn, "x", "\udcff\udcfe-undecodable", "t0", False)


def test_short_keys_and_damaged_hashes_are_refused(conn):
    with pytest.raises(SubmissionKeyError, match="at least 8 characters"):
        keys.authorise(conn, "x", "short", "t0", False)
    assert not keys.matches("anything", "md5$00$00")
    assert not keys.matches("anything", "scrypt$zz$00")
    stored = keys.hash_key("same key")
    assert stored != keys.hash_key("same key")  # salted
    assert keys.matches("same key", stored)
