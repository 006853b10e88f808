"""`arena.cgroup`: finding where bots' memory cgroups go, and one cgroup's files, without a
cgroup file system (a plain folder stands in for one); the real thing is in
tests/test_sandbox_hostile.py."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from arena import cgroup, sandbox
from arena.cgroup import BotCgroup, cgroup_mounts, find_base, own_paths

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
    paths, mounts = own_paths(HYBRID_CGROUP), cgroup_mounts(HYBRID_MOUNTS)
    assert paths == {"memory": "/process_api/ca51", "": "/"}
    assert mounts["memory"] == ("/sys/fs/cgroup/memory", "/")
    assert find_base(paths, mounts) == (1, Path("/sys/fs/cgroup/memory/process_api/ca51"))


def test_v2_only():
    assert find_base(own_paths(V2_CGROUP), cgroup_mounts(V2_MOUNTS)) == (
        2, Path("/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope"))


def test_a_container_that_mounts_its_own_subtree():
    mounts = "40 30 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
    assert find_base(own_paths("0::/docker/abc/app\n"), cgroup_mounts(mounts)) == (
        2, Path("/sys/fs/cgroup/app"))


def test_no_cgroup_file_system():
    assert find_base(own_paths(V2_CGROUP), cgroup_mounts("")) is None
    assert find_base({}, cgroup_mounts(V2_MOUNTS)) is None


def test_limits_and_the_oom_count_of_each_version(tmp_path):
    v1 = BotCgroup(1, tmp_path / "v1")
    v1.path.mkdir()
    assert v1.set_limit(80 << 20)
    assert (v1.path / "memory.limit_in_bytes").read_text() == str(80 << 20)
    assert (v1.path / "memory.memsw.limit_in_bytes").read_text() == str(80 << 20)
    (v1.path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    assert not v1.oom_killed()
    (v1.path / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n")
    assert v1.oom_killed()

    v2 = BotCgroup(2, tmp_path / "v2")
    v2.path.mkdir()
    assert v2.set_limit(1 << 30)
    assert [(v2.path / f).read_text() for f in ("memory.max", "memory.swap.max",
                                                "memory.oom.group")] == [str(1 << 30), "0", "1"]
    (v2.path / "memory.events").write_text("low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n")
    assert v2.oom_killed()


def test_a_removed_cgroup_remembers_its_oom_kills(tmp_path):
    group = BotCgroup(1, tmp_path / "g")
    group.path.mkdir()
    (group.path / "memory.oom_control").write_text("oom_kill 1\n")
    assert group.oom_killed()
    (group.path / "memory.oom_control").unlink()  # a plain folder: rmdir needs it empty
    assert group.remove() and not group.path.exists()
    assert group.oom_killed()


def test_a_busy_cgroup_is_removed_at_a_later_start(tmp_path, monkeypatch):
    group = BotCgroup(1, tmp_path / "busy")
    group.path.mkdir()
    (group.path / "cgroup.procs").write_text("")  # not empty: rmdir fails, as with a process in it
    assert not group.remove()
    assert group in cgroup._pending
    (group.path / "cgroup.procs").unlink()
    monkeypatch.setattr(cgroup, "probe", lambda: cgroup.Support(1, tmp_path))
    fresh = BotCgroup.create(64 << 20)
    assert fresh is not None and fresh.path.parent == tmp_path
    assert not group.path.exists() and group not in cgroup._pending


def test_no_cgroup_where_the_machine_gives_none(monkeypatch):
    monkeypatch.setattr(cgroup, "probe", lambda: cgroup.Support(reason="read-only"))
    assert BotCgroup.create(64 << 20) is None
    assert sandbox.memory_cgroup(sandbox.SandboxPolicy("off")) is None
    assert sandbox.memory_cap_bytes(sandbox.Limits(memory_mb=0)) is None
    assert sandbox.memory_cap_bytes(sandbox.Limits()) == (1024 + 64) << 20


def test_the_shell_joins_the_cgroup_then_opens_the_filter(tmp_path):
    procs, seccomp = tmp_path / "cgroup.procs", tmp_path / "filter"
    seccomp.write_text("the filter\n")
    argv = sandbox._through_shell(
        ["sh", "-c", 'echo "$@"; cat <&3; cat /proc/self/oom_score_adj', "x", "a b", "c"],
        str(seccomp), str(procs))
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    # the bot is the first the kernel kills when memory runs out, before the arena
    assert done.stdout == "a b c\nthe filter\n1000\n"
    assert procs.read_text() == "0\n"  # what moves the writer into a real cgroup
    procs.unlink()
    argv = sandbox._through_shell(["echo", "only"], None, str(procs))
    assert subprocess.run(argv, capture_output=True, text=True).stdout == "only\n"
    assert procs.read_text() == "0\n"
    assert sandbox._through_shell(["echo"], None, None) == ["echo"]


def test_a_failed_join_stops_the_start(tmp_path):
    gone = tmp_path / "no such cgroup" / "cgroup.procs"
    done = subprocess.run(sandbox._through_shell(["echo", "started"], None, str(gone)),
                          capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (125, "")


def test_the_memory_label_needs_the_kill_itself():
    # a child the bot lived on without was OOM-killed earlier: its later CPU-limit end says so
    assert sandbox.status_text(128 + 24, b"", oom_killed=True) == "hit the cpu limit (killed by SIGXCPU)"
    assert sandbox.status_text(137, b"", oom_killed=True) == "hit the memory limit (killed by SIGKILL)"
    assert sandbox.status_text(137, b"", oom_killed=False) == "killed by SIGKILL"


def test_threads_probing_at_once_share_one_probe(monkeypatch):
    calls = []

    def slow_probe():
        calls.append(1)
        time.sleep(0.2)  # long enough for the other threads to arrive (a fault, not a wait)
        return cgroup.Support(1, Path("/sys/fs/cgroup/memory/x"))

    monkeypatch.setattr(cgroup, "_probed", None)
    monkeypatch.setattr(cgroup, "_probe_now", slow_probe)
    barrier = threading.Barrier(4)
    answers = []

    def probe():
        barrier.wait()
        answers.append(cgroup.probe())

    threads = [threading.Thread(target=probe) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and len(answers) == 4 and all(a.available for a in answers)


def test_a_failing_probe_means_not_capped(monkeypatch):
    def broken():
        raise ValueError("invalid literal for int()")

    monkeypatch.setattr(cgroup, "_probed", None)
    monkeypatch.setattr(cgroup, "_probe_now", broken)
    assert not cgroup.probe().available
    assert "probe failed" in cgroup.probe().reason


def test_the_sweep_removes_only_the_cgroups_of_dead_arenas(tmp_path):
    for name in (f"{cgroup.PREFIX}{os.getpid()}-1", f"{cgroup.PREFIX}999999999-1",
                 f"{cgroup.PREFIX}\u00b2-1", "other"):
        (tmp_path / name).mkdir()
    cgroup._sweep_stale(1, tmp_path)  # "²" is a digit to str.isdigit, not to int()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [f"{cgroup.PREFIX}{os.getpid()}-1", f"{cgroup.PREFIX}\u00b2-1", "other"])


def test_drain_waits_for_a_busy_cgroup(tmp_path):
    group = BotCgroup(1, tmp_path / "busy")
    group.path.mkdir()
    (group.path / "cgroup.procs").write_text("")
    assert not group.remove()
    (group.path / "cgroup.procs").unlink()  # its last process is gone
    cgroup.drain_pending(patience=5.0)
    assert not group.path.exists() and group not in cgroup._pending


# --- cgroup v2: the arena never goes above its own cgroup ------------------------------------

def _v2_tree(tmp_path: Path, controllers: str, subtree: str, procs: str) -> Path:
    own = tmp_path / "own"
    own.mkdir()
    for name, text in (("cgroup.controllers", controllers), ("cgroup.subtree_control", subtree),
                       ("cgroup.procs", procs)):
        (own / name).write_text(text)
    return own


def test_v2_with_memory_already_given_to_children(tmp_path):
    own = _v2_tree(tmp_path, "cpu memory pids\n", "memory pids\n", "")
    assert cgroup._v2_children_allowed(own, 42) is None
    assert not (own / cgroup.V2_LEAF).exists()


def test_v2_alone_in_a_delegated_cgroup_the_arena_moves_into_a_leaf(tmp_path, monkeypatch):
    own = _v2_tree(tmp_path, "cpu memory pids\n", "\n", "42\n")
    monkeypatch.setattr(cgroup, "_delegated", lambda path: path == own)
    assert cgroup._v2_children_allowed(own, 42) is None
    assert (own / cgroup.V2_LEAF / "cgroup.procs").read_text() == "42"
    assert (own / "cgroup.subtree_control").read_text() == "+memory"


def test_v2_in_a_cgroup_not_delegated_nothing_changes(tmp_path):
    # e.g. a systemd service without Delegate=yes: systemd owns its cgroup's processes
    own = _v2_tree(tmp_path, "cpu memory pids\n", "\n", "42\n")
    assert "not delegated" in cgroup._v2_children_allowed(own, 42)
    assert not (own / cgroup.V2_LEAF).exists()
    assert (own / "cgroup.subtree_control").read_text() == "\n"


def test_systemds_delegation_mark_is_read(tmp_path):
    try:
        os.setxattr(tmp_path, "user.delegate", b"1")
    except OSError as error:
        pytest.skip(f"no user xattrs on {tmp_path}: {error.strerror}")
    assert cgroup._delegated(tmp_path)
    os.setxattr(tmp_path, "user.delegate", b"0")
    assert not cgroup._delegated(tmp_path)


def test_v2_beside_other_processes_nothing_changes(tmp_path, monkeypatch):
    own = _v2_tree(tmp_path, "cpu memory pids\n", "\n", "42\n7\n")
    monkeypatch.setattr(cgroup, "_delegated", lambda path: True)
    reason = cgroup._v2_children_allowed(own, 42)
    assert "not alone" in reason
    assert not (own / cgroup.V2_LEAF).exists()
    assert (own / "cgroup.subtree_control").read_text() == "\n"


def test_v2_without_the_memory_controller(tmp_path):
    own = _v2_tree(tmp_path, "cpu pids\n", "\n", "42\n")
    assert "not available" in cgroup._v2_children_allowed(own, 42)


def test_the_sweep_counts_a_zombie_owner_as_gone(tmp_path):
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)  # a zombie now, not reaped
        (tmp_path / f"{cgroup.PREFIX}{pid}-1").mkdir()
        cgroup._sweep_stale(1, tmp_path)
        assert list(tmp_path.iterdir()) == []
    finally:
        os.waitpid(pid, 0)


def test_freezing_writes_each_versions_file(tmp_path):
    v1 = BotCgroup(1, tmp_path / "mem", tmp_path / "frz")
    v1.freezer.mkdir()
    (v1.freezer / "freezer.state").write_text("")  # a plain file keeps every write, in order
    assert v1.procs_files == [str(tmp_path / "mem" / "cgroup.procs"),
                              str(tmp_path / "frz" / "cgroup.procs")]
    assert v1.can_freeze and v1.freeze()
    v1.thaw()
    v1.thaw()  # not frozen: nothing written
    assert (v1.freezer / "freezer.state").read_text() == "FROZENTHAWED"

    v2 = BotCgroup(2, tmp_path / "v2")
    v2.path.mkdir()
    (v2.path / "cgroup.freeze").write_text("")
    assert v2.procs_files == [str(tmp_path / "v2" / "cgroup.procs")]  # one cgroup does all
    assert v2.freeze()
    v2.thaw()
    assert (v2.path / "cgroup.freeze").read_text() == "10"
    for group in (v1, v2):
        os.close(group._freeze_fd)  # (`remove` closes it: not for plain folders)

    plain = BotCgroup(1, tmp_path / "alone")  # v1 without a freezer: signals instead
    assert not plain.can_freeze and not plain.freeze()


def test_retries_from_several_threads_never_share_the_kept_file(tmp_path):
    # a v1 group that stays busy (a plain folder with files cannot be removed): each retry
    # opens its freeze file to thaw it and closes it again
    group = BotCgroup(1, tmp_path / "mem", tmp_path / "frz")
    for folder in (group.path, group.freezer):
        folder.mkdir()
    (group.freezer / "freezer.state").write_text("")
    assert not group.remove()
    fds_before = len(os.listdir("/proc/self/fd"))
    errors = []
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can

    def retry():
        try:
            for _ in range(300):
                cgroup._retry_pending()
        except OSError as error:
            errors.append(error)

    try:
        threads = [threading.Thread(target=retry) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(old_interval)
        with cgroup._pending_lock:
            cgroup._pending[:] = [g for g in cgroup._pending if g is not group]
    assert errors == [] and len(os.listdir("/proc/self/fd")) == fds_before


needs_freezer = pytest.mark.skipif(
    cgroup.probe().freezer is None, reason=f"no freezer cgroup here: {cgroup.probe().reason}")


@needs_freezer
def test_the_sweep_thaws_a_dead_workers_frozen_bot_before_it_kills_it():
    support = cgroup.probe()
    dead = subprocess.Popen(["true"])
    dead.wait()
    name = f"{cgroup.PREFIX}{dead.pid}-1"  # made by a worker that was killed since
    group = BotCgroup(support.version, support.base / name, support.freezer / name)
    group.path.mkdir()
    group.freezer.mkdir()
    sleeper = subprocess.Popen(["/bin/sh", "-c", 'echo 0 >"$0"; echo 0 >"$1"; exec sleep 600',
                                *group.procs_files])
    try:
        deadline = time.monotonic() + 30
        while len(group.pids()) < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert group.freeze()
        cgroup.sweep_stale()  # what a coordinator does after its workers
        assert sleeper.wait(30) == -9  # frozen in v1 it could not even die: thawed first
        # until this test reaped it, the killed process held its cgroups: removed now
        cgroup.drain_pending(patience=30)
        assert not group.path.exists() and not group.freezer.exists()
    finally:
        if sleeper.poll() is None:
            group.thaw()
            sleeper.kill()
            sleeper.wait()
        group.remove()


@needs_freezer
def test_a_bot_without_a_memory_limit_still_gets_its_freezer():
    # `memory_mb = 0` (a JVM's reserved heap): no cap, but `ponder = false` still freezes it
    group = sandbox.memory_cgroup(sandbox.SandboxPolicy("on", sandbox.Limits(memory_mb=0)))
    try:
        assert group is not None and group.can_freeze
        assert int((group.path / "memory.limit_in_bytes").read_text()) > 1 << 40  # no limit set
    finally:
        if group is not None:
            group.remove()


def test_a_cap_that_cannot_keep_the_bot_out_of_swap_says_so(tmp_path, monkeypatch):
    """Where swap is on and the cgroup cannot cap it, a bot at its cap is swapped out, not
    killed: the sandbox then keeps the address space as the cap (diff review)."""
    from arena import sandbox

    monkeypatch.setattr(cgroup, "swap_on", lambda: True)
    limits = sandbox.Limits()
    for version, swap_file in ((2, "memory.swap.max"), (1, "memory.memsw.limit_in_bytes")):
        group = cgroup.BotCgroup(version, tmp_path / f"v{version}")
        group.path.mkdir()
        assert group.set_limit(1 << 30) and group.swap_capped  # plain files here: all written
        assert sandbox.caps_real_memory(group, limits)
        blocked = cgroup.BotCgroup(version, tmp_path / f"v{version}-blocked")
        blocked.path.mkdir()
        (blocked.path / swap_file).mkdir()  # the write fails
        if version == 1:
            (blocked.path / "memory.swappiness").mkdir()
        assert blocked.set_limit(1 << 30) and not blocked.swap_capped
        assert not sandbox.caps_real_memory(blocked, limits)
        monkeypatch.setattr(cgroup, "swap_on", lambda: False)  # no swap: nothing to keep out of
        assert blocked.set_limit(1 << 30) and blocked.swap_capped
        monkeypatch.setattr(cgroup, "swap_on", lambda: True)
    assert not sandbox.caps_real_memory(None, limits)
