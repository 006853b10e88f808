"""Temporary folders left by a killed publish or submission are removed by the next one."""

from __future__ import annotations

import os
import time

import pytest

import arena.leftovers as leftovers
from arena.leftovers import STALE_AFTER_S, remove_stale
from arena.publish.swap import build_and_swap


@pytest.fixture
def an_hour_later(monkeypatch):
    """The clock as it will read once every folder made now is stale."""
    later = time.time() + STALE_AFTER_S + 60
    monkeypatch.setattr(leftovers.time, "time", lambda: later)


def test_only_stale_folders_of_the_prefixes_go(tmp_path, an_hour_later):
    old = tmp_path / ".site.new-abc"
    old.mkdir()
    other = tmp_path / "site.new-keep"
    other.mkdir()
    (tmp_path / "target").mkdir()
    link = tmp_path / ".site.new-link"
    link.symlink_to(tmp_path / "target")
    assert remove_stale(tmp_path, (".site.new-",)) == 1
    assert not old.exists() and other.exists() and link.is_symlink()
    assert remove_stale(tmp_path / "missing", (".x",)) == 0


def test_a_live_folder_dated_back_by_a_copy_stays(tmp_path):
    """A copy that keeps its source's dates made a live staging folder look days old, and a
    submission beside it deleted it mid-copy (second review): the change time decides."""
    live = tmp_path / ".incoming-live"
    live.mkdir()
    days_ago = time.time() - 3 * 86400
    os.utime(live, (days_ago, days_ago))
    assert remove_stale(tmp_path, (".incoming-",)) == 0 and live.exists()


def test_a_publish_removes_a_killed_publishs_half_site(tmp_path, an_hour_later):
    """A publish killed by kill -9 left its whole half-built site beside the target, which no
    later publish removed (a league over weeks)."""
    left = tmp_path / ".site.new-killed"
    left.mkdir()
    (left / "index.html").write_text("half a site")
    build_and_swap(tmp_path / "site", lambda folder: (folder / "index.html").write_text("ok"))
    assert not left.exists() and (tmp_path / "site" / "index.html").read_text() == "ok"
