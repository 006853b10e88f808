"""Temporary folders left by a killed publish or submission are removed by the next one."""

from __future__ import annotations

import os
import time

from arena.leftovers import STALE_AFTER_S, remove_stale
from arena.publish.swap import build_and_swap


def _aged(path, seconds):
    then = time.time() - seconds
    os.utime(path, (then, then))
    return path


def test_only_old_folders_of_the_prefixes_go(tmp_path):
    old = tmp_path / ".site.new-abc"
    old.mkdir()
    _aged(old, STALE_AFTER_S + 60)
    young = tmp_path / ".site.new-def"
    young.mkdir()
    other = tmp_path / "site.new-keep"
    other.mkdir()
    _aged(other, STALE_AFTER_S + 60)
    (tmp_path / "target").mkdir()
    link = tmp_path / ".site.new-link"
    link.symlink_to(tmp_path / "target")
    assert remove_stale(tmp_path, (".site.new-",)) == 1
    assert not old.exists() and young.exists() and other.exists() and link.is_symlink()
    assert remove_stale(tmp_path / "missing", (".x",)) == 0


def test_a_publish_removes_a_killed_publishs_half_site(tmp_path):
    """A publish killed by kill -9 left its whole half-built site beside the target, which no
    later publish removed (a league over weeks)."""
    left = tmp_path / ".site.new-killed"
    left.mkdir()
    (left / "index.html").write_text("half a site")
    _aged(left, STALE_AFTER_S + 60)
    build_and_swap(tmp_path / "site", lambda folder: (folder / "index.html").write_text("ok"))
    assert not left.exists() and (tmp_path / "site" / "index.html").read_text() == "ok"
