"""Hostile bots (tests/bots_hostile/hostile.py) run through `arena.sandbox.wrap`: each attack is
prevented in the sandbox and succeeds with the sandbox off, so the tests show the difference.

The harness is the arena's own way of starting a bot minus the referee: the bot's argv, its
minimal environment (with a unique token) and its folder go through `wrap()`, the result is
spawned with subprocess, given `hello` and `quit` on stdin, and its one-line report (stderr) and
the effect on the host are checked. The attacked files live in a throw-away project tree in the
test's temp folder, with unique names, so the unsandboxed runs harm nothing else on the machine.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from arena import cgroup, sandbox
from arena.process import minimal_env

HOSTILE = Path(__file__).resolve().parent / "bots_hostile"
ON = sandbox.SandboxPolicy("on")
OFF = sandbox.SandboxPolicy("off")

pytestmark = pytest.mark.skipif(
    not sandbox.probe().available,
    reason=f"bubblewrap sandbox unavailable: {sandbox.probe().reason}",
)


@dataclass
class Project:
    """A throw-away project: a hostile bot folder, a victim bot, results and a tournament file."""

    root: Path
    bot: Path
    victim_source: Path
    games_db: Path
    log: Path
    tournament: Path


@dataclass
class Run:
    returncode: int
    report: str
    stderr: str
    token: str


@pytest.fixture
def project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    bot = root / "bots" / "hostile"
    shutil.copytree(HOSTILE, bot)
    victim = root / "bots" / "victim"
    victim.mkdir(parents=True)
    (victim / "bot.py").write_text("SECRET_STRATEGY = 'play the centre'\n")
    results = root / "results" / "t"
    (results / "logs").mkdir(parents=True)
    db = results / f"games-{uuid.uuid4().hex}.db"
    db.write_bytes(b"SQLite format 3\0fake")
    log = results / "logs" / "g0001-1-victim.log"
    log.write_text("victim's stderr\n")
    tournament = root / "tournaments" / "t.toml"
    tournament.parent.mkdir()
    tournament.write_text('name = "t"\n')
    yield Project(root, bot, victim / "bot.py", db, log, tournament)
    _kill_token_holders(_tokens_started)


_tokens_started: list[str] = []


def _processes_with(token: str) -> list[int]:
    """Live processes whose environment holds `token` (a bot's unique token)."""
    needle = token.encode()
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle not in f.read():
                    continue
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        if stat[stat.rfind(b")") + 2:].split()[0] not in (b"Z", b"X"):
            found.append(int(name))
    return found


def _kill_token_holders(tokens: list[str]) -> None:
    for token in tokens:
        for pid in _processes_with(token):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
    tokens.clear()


def run_hostile(project: Project, policy: sandbox.SandboxPolicy, *args: str,
                timeout: float = 90, group: cgroup.BotCgroup | None = None) -> Run:
    """Start the hostile bot as the arena would (wrapped by `policy`, in the memory cgroup
    `group` if given), say hello and quit."""
    token = uuid.uuid4().hex
    _tokens_started.append(token)
    home = project.root.parent / f"home-{token[:8]}"
    home.mkdir()
    argv = [sys.executable, str(project.bot / "hostile.py"), *args]
    argv, env = sandbox.wrap(argv, minimal_env(str(home), token), project.bot, policy,
                             group=group)
    done = subprocess.run(argv, cwd=project.bot, env=env, capture_output=True, text=True,
                          input="hello protocol=fiar version=1\nquit\n", timeout=timeout,
                          start_new_session=True)
    lines = [line for line in done.stderr.splitlines() if line.startswith(f"hostile {args[0]}:")]
    report = lines[-1].partition(": ")[2] if lines else ""
    return Run(done.returncode, report, done.stderr, token)


def assert_gone(run: Run, timeout: float = 10.0) -> None:
    """Nothing started by the bot is still running once its sandbox is torn down (which the
    kernel finishes a moment after bwrap itself exits: wait for it, within a generous margin)."""
    deadline = time.monotonic() + timeout
    while _processes_with(run.token) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _processes_with(run.token) == [], "a process of the bot survived it"


# --- files: other bots, results, logs, tournament file, project tree ---------------------------

@pytest.mark.parametrize("target", ["victim_source", "games_db", "log", "tournament"])
def test_reading_other_files_is_prevented(project, target):
    path = getattr(project, target)
    run = run_hostile(project, ON, "read", str(path))
    assert run.report.startswith("denied"), run.stderr
    assert run.returncode == 0
    assert_gone(run)
    off = run_hostile(project, OFF, "read", str(path))
    assert off.report == f"ok {path.stat().st_size} bytes", off.stderr


@pytest.mark.parametrize("target", ["games_db", "log", "tournament", "project_file", "own_folder"])
def test_writing_results_and_project_tree_is_prevented(project, target):
    path = {
        "project_file": project.root / "planted.py",
        "own_folder": project.bot / "debug.log",
    }.get(target) or getattr(project, target)
    before = path.read_bytes() if path.exists() else None
    run = run_hostile(project, ON, "write", str(path))
    assert run.report.startswith("denied"), run.stderr
    assert (path.read_bytes() if path.exists() else None) == before
    assert_gone(run)
    off = run_hostile(project, OFF, "write", str(path))
    assert off.report == "ok", off.stderr
    assert path.read_bytes().endswith(b"tampered by a bot\n")


def test_private_tmp_is_not_the_hosts(project):
    """The sandboxed bot's TMPDIR is its own tmpfs: what it writes there never reaches the host."""
    run = run_hostile(project, sandbox.SandboxPolicy("on", sandbox.Limits(tmp_mb=8)),
                      "filltmp", "16")
    assert run.report.startswith("denied after"), run.stderr
    assert "No space left on device" in run.report
    assert int(run.report.split()[2]) <= 8
    assert_gone(run)
    off = run_hostile(project, OFF, "filltmp", "16")
    assert off.report == "ok wrote 16 MiB", off.stderr


def test_a_user_namespace_of_its_own_is_refused(project):
    """In one, a bot is root with its own mounts (a tmpfs past `tmp_mb`, more of the kernel):
    as another user bwrap's --disable-userns refuses it; as root (where bwrap cannot), a
    seccomp filter does, which this review found missing."""
    run = run_hostile(project, ON, "userns")
    assert run.report.startswith("denied"), run.stderr
    assert_gone(run)


@pytest.mark.parametrize("mode", ["aio", "keyring"])
def test_machine_wide_kernel_pools_and_keyrings_are_refused(project, mode):
    """A bot took every AIO context of the machine (`fs.aio-max-nr`, the host's too) and left
    keys in its uid's keyring that outlived it (review of the sandbox): as root, where the
    seccomp filter is installed, both are refused; as another user bwrap's own rules apply."""
    if os.geteuid() != 0:
        pytest.skip("the filter is installed where the arena runs as root")
    run = run_hostile(project, ON, mode)
    assert run.report == "denied Function not implemented", run.stderr
    assert_gone(run)
    if mode == "aio":  # outside the sandbox it works (and is undone at once)
        off = run_hostile(project, OFF, mode)
        assert off.report == "ok", off.stderr


def test_open_files_are_capped(project):
    """A bot inherited the arena's open-file limit: with 64 processes it took half of the
    machine's file table (hostile review)."""
    run = run_hostile(project, sandbox.SandboxPolicy("on", sandbox.Limits(open_files=64)),
                      "openfiles", "500")
    assert run.report.startswith("denied after ") and run.report.endswith("Too many open files")
    assert int(run.report.split()[2].rstrip(":")) < 64, run.report
    assert_gone(run)
    assert run_hostile(project, OFF, "openfiles", "500").report == "ok opened 500"


def test_sockets_other_than_unix_ones_are_refused(project):
    """On the bot's own loopback, TCP and UDP buffers are memory cgroup v1 does not count: a
    bot held 2.5 GiB of the machine's that way, and 1.5 GiB in netlink queues (hostile
    reviews). As root, where the seccomp filter is installed, the sandbox allows Unix sockets
    only (a bot has no network anyway)."""
    if os.geteuid() != 0:
        pytest.skip("the filter is installed where the arena runs as root")
    run = run_hostile(project, ON, "sockets")
    refused = "denied Address family not supported by protocol"
    assert run.report == (f"inet {refused}; inet6 {refused}; netlink {refused}; unix ok; "
                          "unix pair ok"), run.stderr
    assert_gone(run)
    assert run_hostile(project, OFF, "sockets").report.startswith("inet ok; inet6 ok; netlink ok")


def test_perf_events_are_refused(project):
    """perf_event_open's ring buffers are locked memory outside any cgroup: 200 processes of a
    bot pinned 1.5 GiB (hostile review). Refused by the filter (as root), and a bot may lock
    next to nothing (RLIMIT_MEMLOCK) either way."""
    if os.geteuid() != 0 or os.uname().machine not in ("x86_64", "aarch64"):
        pytest.skip("the filter is installed where the arena runs as root")
    run = run_hostile(project, ON, "perf")
    assert run.report == "errno Function not implemented", run.stderr
    assert run_hostile(project, OFF, "perf").report == "errno Bad address"
    assert f"--memlock={sandbox.LOCKED_MEMORY_BYTES}" in sandbox.prlimit_argv(sandbox.Limits())


def test_pseudo_terminals_are_refused(project):
    """A PTY comes from a machine-wide pool (`kernel.pty.max`) that no cgroup counts: a bot that
    took them all left other sandboxes and containers none (SECURITY.md listed it as not
    isolated). The sandbox's /dev has none to open; outside it, opening one works."""
    run = run_hostile(project, ON, "pty")
    assert run.report == "denied No such file or directory", run.stderr
    assert_gone(run)
    assert run_hostile(project, OFF, "pty").report == "ok"


def test_the_seccomp_filter_jumps_where_it_means_to():
    """The filter for each machine, decoded: every jump lands inside the program, and the ABI
    checks come in the documented order."""
    import struct

    for machine in ("x86_64", "aarch64"):
        program = sandbox.no_userns_filter(machine)
        rows = [struct.unpack("<HBBI", program[k:k + 8]) for k in range(0, len(program), 8)]
        for index, (op, true, false, _) in enumerate(rows):
            if op in (0x15, 0x35, 0x45):
                assert index + 1 + max(true, false) < len(rows)
        assert rows[-1] == (0x06, 0, 0, 0x00050026) and rows[-2] == (0x06, 0, 0, 0x00050001)
    assert sandbox.no_userns_filter("sparc") is None


# --- processes: signals, /proc pipes and fds, daemons ------------------------------------------

@pytest.fixture
def victim(project):
    """A process standing for the opponent or the arena worker: it holds games.db open and its
    stdout is a pipe read by the test; its command line carries a unique marker."""
    marker = f"victim-{uuid.uuid4().hex}"
    code = ("import sys; db = open(sys.argv[1], 'ab'); sys.stderr.write('ready\\n'); "
            "sys.stderr.flush(); sys.stdin.read()")
    proc = subprocess.Popen([sys.executable, "-c", code, str(project.games_db), marker],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.marker = marker
    # games.db is open once it says so: on a loaded machine the unsandboxed bot's scan of /proc
    # came before the victim had opened it, and found nothing to tamper with
    assert proc.stderr.readline() == b"ready\n"
    yield proc
    proc.kill()
    proc.wait(10)
    proc.stdin.close()
    proc.stdout.close()
    proc.stderr.close()


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat", "rb") as f:
        data = f.read()
    return data[data.rfind(b")") + 2:].split()[0].decode()


@pytest.mark.parametrize("signame", ["SIGSTOP", "SIGKILL"])
def test_signalling_other_processes_found_in_proc_is_prevented(project, victim, signame):
    run = run_hostile(project, ON, "hunt", victim.marker, signame)
    assert run.report == "denied no process found", run.stderr
    assert victim.poll() is None and _state(victim.pid) not in ("T", "t")
    assert_gone(run)
    off = run_hostile(project, OFF, "hunt", victim.marker, signame)
    assert off.report == "ok signalled 1", off.stderr
    if signame == "SIGKILL":
        assert victim.wait(10) == -signal.SIGKILL
    else:
        assert _state(victim.pid) in ("T", "t")


def test_writing_into_the_opponents_pipe_is_prevented(project, victim):
    run = run_hostile(project, ON, "inject", victim.marker)
    assert run.report == "denied no pipe found", run.stderr
    assert select.select([victim.stdout], [], [], 0.5)[0] == []
    off = run_hostile(project, OFF, "inject", victim.marker)
    assert off.report == "ok injected 1", off.stderr
    assert select.select([victim.stdout], [], [], 10)[0] == [victim.stdout]
    assert os.read(victim.stdout.fileno(), 100) == b"move d1\n"


def test_tampering_with_an_open_games_db_through_proc_is_prevented(project, victim):
    name = project.games_db.name
    before = project.games_db.read_bytes()
    run = run_hostile(project, ON, "procfd", name)
    assert run.report == "denied no such open file", run.stderr
    assert project.games_db.read_bytes() == before
    off = run_hostile(project, OFF, "procfd", name)
    assert off.report.startswith("ok tampered"), off.stderr
    assert project.games_db.read_bytes().endswith(b"tampered through /proc\n")


def test_a_daemon_does_not_survive_the_bot(project):
    marker = uuid.uuid4().hex
    run = run_hostile(project, ON, "daemon", marker)
    assert run.report == "ok left a daemon", run.stderr
    assert_gone(run)
    off = run_hostile(project, OFF, "daemon", marker)
    assert off.report == "ok left a daemon", off.stderr
    assert _processes_with(off.token), "unsandboxed, the daemon lives on"  # the fixture kills it


# --- network -------------------------------------------------------------------------------------

def test_connecting_to_a_listener_of_the_host_is_prevented(project):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(4)
        listener.settimeout(0)
        port = str(listener.getsockname()[1])
        run = run_hostile(project, ON, "connect", port)
        assert run.report.startswith("denied"), run.stderr
        with pytest.raises(BlockingIOError):
            listener.accept()
        off = run_hostile(project, OFF, "connect", port)
        assert off.report == "ok connected", off.stderr
        listener.settimeout(10)
        connection, _ = listener.accept()
        connection.close()


# --- limits: memory, processes, file size, CPU -------------------------------------------------

def test_reserving_20_gib_hits_the_memory_limit(project):
    run = run_hostile(project, ON, "alloc", "20")
    assert run.report.startswith("denied"), run.stderr
    assert run.returncode != 0
    assert sandbox.limit_detail(run.returncode, run.stderr) == "memory limit"
    assert_gone(run)
    off = run_hostile(project, OFF, "alloc", "20")
    assert off.report == "ok reserved 20 GiB", off.stderr


needs_cgroup = pytest.mark.skipif(not cgroup.probe().available,
                                  reason=f"no memory cgroup here: {cgroup.probe().reason}")
# Small limits keep these cheap: 96 MiB of address space a process, 112 MiB in all.
SMALL = sandbox.SandboxPolicy("on", sandbox.Limits(memory_mb=96, tmp_mb=16))


@pytest.fixture
def small_cgroup():
    group = sandbox.memory_cgroup(SMALL)
    yield group
    if group is not None:
        group.remove()
        assert not group.path.exists()


@needs_cgroup
def test_processes_that_hold_memory_together_hit_the_total_cap(project, small_cgroup):
    # three processes of 48 MiB each: every one within its own address-space limit (96 MiB)
    run = run_hostile(project, SMALL, "hog", "3", "48", group=small_cgroup)
    assert run.report.startswith("denied: "), run.stderr
    assert small_cgroup.oom_killed()
    assert_gone(run)
    # the per-process limits alone let the same bot hold 144 MiB
    alone = run_hostile(project, SMALL, "hog", "3", "48")
    assert alone.report == "ok 3 processes held 144 MiB together", alone.stderr


@needs_cgroup
def test_reserved_address_space_is_no_memory_where_a_cgroup_counts_the_real(project, small_cgroup):
    """The JVM and Node reserve far more address space than they touch: where the cgroup caps
    what the bot really holds, each process may reserve up to the backstop (6 GiB here)."""
    run = run_hostile(project, SMALL, "alloc", "4", group=small_cgroup)
    assert run.report == "ok reserved 4 GiB", run.stderr
    beyond = run_hostile(project, SMALL, "alloc", "8", group=small_cgroup)
    assert beyond.report.startswith("denied"), beyond.stderr
    assert sandbox.limit_detail(beyond.returncode, beyond.stderr) == "memory limit"
    alone = run_hostile(project, SMALL, "alloc", "4")  # no cgroup: the address space is the cap
    assert alone.report.startswith("denied"), alone.stderr


@needs_cgroup
def test_anonymous_files_count_against_the_total_cap(project, small_cgroup):
    run = run_hostile(project, SMALL, "memfd", "160", group=small_cgroup)
    assert sandbox.describe_status(run.returncode) == "killed by SIGKILL", run.stderr
    assert sandbox.status_text(run.returncode, run.stderr.encode(),
                               small_cgroup.oom_killed()).startswith("hit the memory limit")
    assert_gone(run)
    alone = run_hostile(project, SMALL, "memfd", "160")  # held outside any address space
    assert alone.report == "ok held 160 MiB", alone.stderr


def test_forking_2000_processes_hits_the_process_limit(project):
    run = run_hostile(project, ON, "fork", "2000")
    assert run.report.startswith("denied after"), run.stderr
    assert int(run.report.split()[2].rstrip(":")) < sandbox.Limits().processes
    assert sandbox.limit_detail(run.returncode, run.stderr) == "process limit"
    assert_gone(run)
    # Unsandboxed the same bot goes past the cap (fewer forks: the machine is shared).
    off = run_hostile(project, OFF, "fork", "100")
    assert off.report == "ok started 100", off.stderr


def test_a_large_file_hits_the_file_size_limit(project):
    policy = sandbox.SandboxPolicy("on", sandbox.Limits(file_size_mb=2, tmp_mb=16))
    run = run_hostile(project, policy, "bigfile", "8")
    assert run.report == "", run.stderr
    # Python ignores SIGXFSZ, so the write fails with EFBIG and the bot exits; a C bot is killed
    # by SIGXFSZ instead (both map to the same detail: see test_sandbox_policy.py).
    assert "File too large" in run.stderr and run.returncode == 1
    assert sandbox.limit_detail(run.returncode, run.stderr) == "file size limit"
    assert_gone(run)
    off = run_hostile(project, OFF, "bigfile", "8")
    assert off.report == "ok wrote one file of 8 MiB", off.stderr


def test_spinning_hits_the_cpu_limit(project):
    policy = sandbox.SandboxPolicy("on", sandbox.Limits(cpu_seconds=1))
    run = run_hostile(project, policy, "spin")
    assert sandbox.describe_status(run.returncode) == "killed by SIGXCPU"
    assert sandbox.limit_detail(run.returncode, run.stderr) == "cpu limit"
    assert_gone(run)


@needs_cgroup
def test_a_bot_process_gets_its_cgroup_and_a_readable_detail(project):
    from arena.process import BotProcess

    bot = BotProcess([sys.executable, str(project.bot / "hostile.py"), "memfd", "160"],
                     project.bot, sandbox_policy=SMALL)
    bot.start()
    try:
        group = bot._cgroup
        assert group is not None and group.path.is_dir()
        assert bot.wait_exit(60) is not None
        assert bot.status() == "hit the memory limit (killed by SIGKILL)"
    finally:
        bot.close()
    assert not group.path.exists()
    assert bot.status() == "hit the memory limit (killed by SIGKILL)"  # still known after


@needs_cgroup
def test_a_start_that_fails_leaves_no_cgroup(project):
    from arena.process import BotProcess

    before = set(cgroup.probe().base.glob(f"{cgroup.PREFIX}{os.getpid()}-*"))
    bot = BotProcess([sys.executable, "bot.py", "bad\0argument"], project.bot, sandbox_policy=SMALL)
    with pytest.raises(ValueError):
        bot.start()
    assert set(cgroup.probe().base.glob(f"{cgroup.PREFIX}{os.getpid()}-*")) == before
    assert not Path(bot._home).exists()  # nor its HOME folder


def test_nothing_outside_tmp_is_writable_not_even_the_sandboxs_own_root(project):
    # As a user other than root the bot owns the tmpfs mounts bwrap makes (its root, with the
    # folders above the binds; the masked /etc folders) and wrote 2.4 GiB there, past tmp_mb
    # (non-root review): all are read-only now, whoever runs the arena.
    # (the folders above a bot's own are in that root, where its folder is not under /tmp)
    masked = [d for d in sandbox.MASKED_ETC_DIRS if os.path.isdir(d) and not os.path.islink(d)]
    run = run_hostile(project, ON, "writeall", "/", *masked)
    assert run.report == "denied " + " ".join(
        f"{d}=Read-only file system" for d in ["/", *masked]), run.stderr
    assert_gone(run)
