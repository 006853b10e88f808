"""`arena.cgroup`: finding where bots' memory cgroups go, and one cgroup's files, without a
cgroup file system (a plain folder stands in for one); the real thing is in
tests/test_sandbox_hostile.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

from arena import cgroup, sandbox
from arena.cgroup import MemoryCgroup, find_base, memory_mounts, own_paths

HYBRID_CGROUP = """12:pids:/user.slice
4:memory:/process_api/ca51
1:name=systemd:/
0::/
"""
HYBRID_MOUNTS = """\
30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw
33 30 0:29 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
34 30 0:30 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
35 30 0:31 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
"""
V2_CGROUP = "0::/user.slice/user-1000.slice/session-2.scope\n"
V2_MOUNTS = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"


def test_v1_memory_hierarchy_is_preferred_to_v2():
    paths, mounts = own_paths(HYBRID_CGROUP), memory_mounts(HYBRID_MOUNTS)
    assert paths == {"memory": "/process_api/ca51", "": "/"}
    assert mounts["memory"] == ("/sys/fs/cgroup/memory", "/")
    assert find_base(paths, mounts) == (1, Path("/sys/fs/cgroup/memory/process_api/ca51"))


def test_v2_only():
    assert find_base(own_paths(V2_CGROUP), memory_mounts(V2_MOUNTS)) == (
        2, Path("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"))


def test_a_container_that_mounts_its_own_subtree():
    mounts = "40 30 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
    assert find_base(own_paths("0::/docker/abc/app\n"), memory_mounts(mounts)) == (
        2, Path("/sys/fs/cgroup/app"))


def test_no_cgroup_file_system():
    assert find_base(own_paths(V2_CGROUP), memory_mounts("")) is None
    assert find_base({}, memory_mounts(V2_MOUNTS)) is None


def test_limits_and_the_oom_count_of_each_version(tmp_path):
    v1 = MemoryCgroup(1, tmp_path / "v1")
    v1.path.mkdir()
    assert v1.set_limit(80 << 20)
    assert (v1.path / "memory.limit_in_bytes").read_text() == str(80 << 20)
    assert (v1.path / "memory.memsw.limit_in_bytes").read_text() == str(80 << 20)
    (v1.path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    assert not v1.oom_killed()
    (v1.path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert v1.oom_killed()

    v2 = MemoryCgroup(2, tmp_path / "v2")
    v2.path.mkdir()
    assert v2.set_limit(1 << 30)
    assert [(v2.path / f).read_text() for f in ("memory.max", "memory.swap.max",
                                                "memory.oom.group")] == [str(1 << 30), "0", "1"]
    (v2.path / "memory.events").write_text("low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n")
    assert v2.oom_killed()


def test_a_removed_cgroup_remembers_its_oom_kills(tmp_path):
    group = MemoryCgroup(2, tmp_path / "g")
    group.path.mkdir()
    (group.path / "memory.events").write_text("oom_kill 1\n")
    assert group.oom_killed()
    (group.path / "memory.events").unlink()  # a plain folder: rmdir needs it empty
    assert group.remove() and not group.path.exists()
    assert group.oom_killed()


def test_a_busy_cgroup_is_removed_at_a_later_start(tmp_path, monkeypatch):
    group = MemoryCgroup(1, tmp_path / "busy")
    group.path.mkdir()
    (group.path / "cgroup.procs").write_text("")  # not empty: rmdir fails, as with a process in it
    assert not group.remove()
    assert group in cgroup._pending
    (group.path / "cgroup.procs").unlink()
    monkeypatch.setattr(cgroup, "probe", lambda: cgroup.Support(1, tmp_path))
    fresh = MemoryCgroup.create(64 << 20)
    assert fresh is not None and fresh.path.parent == tmp_path
    assert not group.path.exists() and group not in cgroup._pending


def test_no_cgroup_where_the_machine_gives_none(monkeypatch):
    monkeypatch.setattr(cgroup, "probe", lambda: cgroup.Support(reason="read-only"))
    assert MemoryCgroup.create(64 << 20) is None
    assert sandbox.memory_cgroup(sandbox.SandboxPolicy("off")) is None
    assert sandbox.memory_cap_bytes(sandbox.Limits(memory_mb=0)) is None
    assert sandbox.memory_cap_bytes(sandbox.Limits()) == (1024 + 64) << 20


def test_the_shell_joins_the_cgroup_then_opens_the_filter(tmp_path):
    procs, seccomp = tmp_path / "cgroup.procs", tmp_path / "filter"
    seccomp.write_text("the filter\n")
    argv = sandbox._through_shell(["sh", "-c", 'echo "$@"; cat <&3', "x", "a b", "c"],
                                  str(seccomp), str(procs))
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    assert done.stdout == "a b c\nthe filter\n"
    assert procs.read_text() == "0\n"  # what moves the writer into a real cgroup
    procs.unlink()
    argv = sandbox._through_shell(["echo", "only"], None, str(procs))
    assert subprocess.run(argv, capture_output=True, text=True).stdout == "only\n"
    assert procs.read_text() == "0\n"
    assert sandbox._through_shell(["echo"], None, None) == ["echo"]
