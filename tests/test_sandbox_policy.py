"""The pure parts of arena.sandbox: modes, limits and their overrides, the bwrap command line,
the availability probe and its messages, and the mapping of a dead bot to a limit."""

from __future__ import annotations

import shutil
import signal
import sys
from pathlib import Path

import pytest

from arena import cgroup, sandbox
from arena.sandbox import Limits, SandboxConfigError, SandboxPolicy

ROOT = Path(__file__).resolve().parent.parent


# --- modes and limits -------------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["auto", "on", "off"])
def test_modes_are_accepted(mode):
    assert sandbox.parse_mode(mode) == mode


@pytest.mark.parametrize("value, hint", [("onn", "did you mean 'on'"), (True, ""), ("", "")])
def test_bad_mode_is_one_line_naming_the_key(value, hint):
    with pytest.raises(SandboxConfigError) as caught:
        sandbox.parse_mode(value)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("'sandbox' must be one of 'auto', 'on'")
    assert hint in message and caught.value.key == "sandbox"


def test_documented_defaults():
    assert Limits() == Limits(memory_mb=1024, processes=64, file_size_mb=64, cpu_seconds=600,
                              tmp_mb=64, open_files=1024)
    assert SandboxPolicy().mode == "auto"
    assert Limits().describe() == ("memory 1024 MiB, processes 64, file size 64 MiB, cpu 600 s, "
                                   "tmp 64 MiB, open files 1024")
    assert "memory unlimited" in Limits(memory_mb=0).describe()


def test_tournament_then_bot_overrides_merge_over_the_defaults():
    tournament = {"memory_mb": 2048, "processes": 128}
    bot = {"memory_mb": 0, "cpu_seconds": 30}
    merged = sandbox.merge_limits(Limits(), tournament, None, bot)
    assert merged == Limits(memory_mb=0, processes=128, file_size_mb=64, cpu_seconds=30,
                            tmp_mb=64, open_files=1024)
    assert sandbox.merge_limits(Limits()) == Limits()


@pytest.mark.parametrize("table, key, text", [
    ({"memory": 5}, "memory", "unknown key 'memory' in limits; did you mean 'memory_mb'?"),
    ({"bogus": 5}, "bogus", "known: memory_mb, processes"),
    # the values as the TOML file wrote them, not as Python shows them
    ({"processes": "64"}, "processes",
     'must be a whole number (0 for no limit), got the string "64"'),
    ({"processes": True}, "processes", "must be a whole number (0 for no limit), got true"),
    ({"cpu_seconds": -1}, "cpu_seconds", "must be between 0 (no limit) and"),
    ({"tmp_mb": 0}, "tmp_mb", "'tmp_mb' must be at least 1"),
    ({"memory_mb": 1}, "memory_mb", "'memory_mb' = 1 is too small for a program to start (at "
                                    "least 16, or 0 for no limit)"),
    ({"open_files": 2}, "open_files", "'open_files' = 2 is too small for a program to start (at "
                                      "least 16, or 0 for no limit)"),
])
def test_bad_limits_are_one_line_naming_the_key(table, key, text):
    with pytest.raises(SandboxConfigError) as caught:
        sandbox.parse_limits(table)
    assert text in str(caught.value) and "\n" not in str(caught.value)
    assert caught.value.key == key


def test_limits_must_be_a_table():
    with pytest.raises(SandboxConfigError, match="'limits' must be a table of limits"):
        sandbox.parse_limits(64)


# --- the command line -------------------------------------------------------------------------

def _pairs(argv: list[str], option: str) -> list[str]:
    return [argv[i + 1] for i, part in enumerate(argv) if part == option]


def test_argv_isolates_namespaces_and_runs_the_bot_last(tmp_path):
    bot = tmp_path / "random"  # a submitted bot (bundled ones also see the other bundled bots)
    shutil.copytree(ROOT / "bots" / "random", bot)
    command = [sys.executable, str(bot / "bot.py"), "--seed", "1"]
    argv = sandbox.build_argv(command, bot, Limits(), uid=1_900_000_123)
    options = argv[: argv.index("--")]
    for flag in ("--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                 "--die-with-parent", "--new-session"):
        assert flag in options
    assert argv[-len(command):] == command
    assert _pairs(argv, "--chdir") == [str(bot)]
    # a folder bot: its folder, read-only; the arena package for the SDK; never the project
    ro = _pairs(argv, "--ro-bind")
    assert str(bot) in ro and str(ROOT / "arena") in ro
    assert str(ROOT) not in ro and str(ROOT / "bots") not in ro
    assert "/usr" in ro and "/etc" in ro
    assert "--bind" not in argv  # nothing of the host is writable
    # limits through prlimit, then the unprivileged uid through setpriv
    tail = argv[argv.index("--") + 1:]
    assert tail[:tail.index("setpriv")] == [
        "prlimit", "--core=0", f"--memlock={64 << 10}", f"--as={1024 << 20}", "--nproc=64", f"--fsize={64 << 20}",
        "--cpu=600:601", "--nofile=1024", "--"]
    assert "--reuid=1900000123" in tail and "--no-new-privs" in tail


def test_only_the_shipped_bots_see_each_other_not_a_bot_kept_beside_them(tmp_path, monkeypatch):
    # SECURITY.md advises keeping submitted bots in the project's bots/: binding that folder
    # whole for any bot in it showed each such entrant every other one's code (hostile review)
    bots = tmp_path / "bots"
    for name in ("perfect", "alphabeta", "evil", "victim"):
        (bots / name).mkdir(parents=True)
        (bots / name / "bot.toml").write_text(f'name = "{name}"\ncommand = "bot.py"\n')
    monkeypatch.setattr(sandbox, "BUNDLED_BOTS", bots)
    evil = _pairs(sandbox.build_argv([sys.executable, "bot.py"], bots / "evil", Limits()),
                  "--ro-bind")
    assert str(bots / "evil") in evil
    assert not {str(bots), str(bots / "victim"), str(bots / "alphabeta")} & set(evil)
    perfect = _pairs(sandbox.build_argv([sys.executable, "bot.py"], bots / "perfect", Limits()),
                     "--ro-bind")
    assert {str(bots / "perfect"), str(bots / "alphabeta")} <= set(perfect)
    assert not {str(bots), str(bots / "evil"), str(bots / "victim")} & set(perfect)


def test_the_shipped_bots_are_the_bots_folder():
    assert sorted(sandbox.SHIPPED_BOTS) == sorted(
        p.parent.name for p in (ROOT / "bots").glob("*/bot.toml"))


def test_a_single_file_bot_sees_its_file_not_its_siblings(tmp_path):
    (tmp_path / "mine.py").write_text("print('hello name=x')\n")
    (tmp_path / "rival.py").write_text("SECRET = 1\n")
    argv = sandbox.build_argv([sys.executable, str(tmp_path / "mine.py")], tmp_path, Limits())
    ro = _pairs(argv, "--ro-bind")
    assert str(tmp_path / "mine.py") in ro
    assert str(tmp_path) not in ro and str(tmp_path / "rival.py") not in ro


def test_a_named_file_is_seen_where_named_and_a_link_only_to_a_file_beside_it(tmp_path):
    """Files a command names outside the bot's folder are bound (`../mine/bot.js`), at the
    path the command names them by. A symlink among them was bound at its target: an author
    could link `model.bin` to any file the arena may read and read it there (review of the
    diff). A link is followed only to a file where it is."""
    folder, mine, secret = tmp_path / "t", tmp_path / "mine", tmp_path / "secret"
    for path in (folder, mine, secret):
        path.mkdir()
    (secret / "key").write_text("s3cret\n")
    (mine / "bot.py").write_text("print('hello name=x')\n")
    (folder / "model.bin").symlink_to(secret / "key")  # planted inside the bot's folder
    (mine / "data.bin").symlink_to(secret / "key")  # and beside its program
    (mine / "weights.bin").symlink_to(mine / "bot.py")  # a link to a file beside it: fine
    linked = tmp_path / "linked"
    linked.symlink_to(mine)  # a folder reached through a link
    argv = sandbox.build_argv([sys.executable, "../mine/bot.py", "model.bin", "../mine/data.bin",
                               "../mine/weights.bin", "../linked/bot.py"], folder, Limits())
    pairs = [(argv[k + 1], argv[k + 2]) for k, a in enumerate(argv) if a == "--ro-bind"]
    assert (str(mine / "bot.py"), str(mine / "bot.py")) in pairs
    assert (str(mine / "bot.py"), str(mine / "weights.bin")) in pairs
    assert (str(mine / "bot.py"), str(linked / "bot.py")) in pairs  # seen where it is named
    assert not any(str(secret) in host for host, _ in pairs), pairs


def test_without_a_uid_the_bot_keeps_the_users_id_in_a_user_namespace():
    argv = sandbox.build_argv(["/bin/true"], "/", Limits())
    assert "--unshare-user" in argv and "setpriv" not in argv


def test_tmp_size_and_unlimited_limits():
    argv = sandbox.build_argv(["/bin/true"], "/", Limits(memory_mb=0, processes=0, tmp_mb=8))
    # /tmp and /dev/shm; /dev/pts, empty (no PTYs), holds a page at most and is read-only
    assert _pairs(argv, "--size") == [str(8 << 20), str(8 << 20), "4096"]
    masked = [d for d in sandbox.MASKED_ETC_DIRS if Path(d).is_dir() and not Path(d).is_symlink()]
    assert _pairs(argv, "--remount-ro") == [*masked, "/dev/pts", "/", "/dev"]
    assert sandbox.prlimit_argv(Limits(memory_mb=0, processes=0, file_size_mb=0,
                                       cpu_seconds=0, open_files=0)) == [
        "prlimit", "--core=0", f"--memlock={sandbox.LOCKED_MEMORY_BYTES}", "--"]


def test_secrets_under_etc_are_masked(monkeypatch):
    monkeypatch.setattr(sandbox.os.path, "isfile",
                        lambda p: p == "/etc/shadow" or Path(p).is_file())
    argv = sandbox.build_argv(["/bin/true"], "/", Limits())
    binds = list(zip(argv, argv[1:], argv[2:], strict=False))
    assert ("--ro-bind", "/dev/null", "/etc/shadow") in binds


def test_wrap_off_leaves_the_command_alone():
    argv, env = sandbox.wrap(["bot"], {"HOME": "/h"}, "/", SandboxPolicy("off"))
    assert argv == ["bot"] and env == {"HOME": "/h"}


def test_wrap_on_moves_home_and_tmpdir_into_the_sandbox(monkeypatch):
    monkeypatch.setattr(sandbox, "probe", lambda: sandbox.Probe(True))
    argv, env = sandbox.wrap(["/bin/true"], {"HOME": "/h", "TMPDIR": "/h", "X": "1"}, "/",
                             SandboxPolicy("on"))
    assert argv[0] == "bwrap" and argv[-1] == "/bin/true"
    assert env == {"HOME": "/tmp", "TMPDIR": "/tmp", "X": "1"}


# --- availability -----------------------------------------------------------------------------

def test_probe_without_bwrap_says_what_is_missing_and_is_cached(monkeypatch):
    sandbox.probe.cache_clear()
    monkeypatch.setenv("PATH", "/nonexistent")
    try:
        first = sandbox.probe()
        monkeypatch.setenv("PATH", "/usr/bin:/bin")
        assert sandbox.probe() is first  # cached: probed once per process
    finally:
        sandbox.probe.cache_clear()
    assert not first.available and first.reason.startswith("bwrap, prlimit")


def test_on_without_a_sandbox_refuses_in_one_line_with_the_install_hint(monkeypatch):
    monkeypatch.setattr(sandbox, "probe", lambda: sandbox.Probe(False, "bwrap not found on PATH",
                                                                 installable=True))
    with pytest.raises(sandbox.SandboxUnavailable) as caught:
        _ = SandboxPolicy("on").enabled
    message = str(caught.value)
    assert "\n" not in message
    assert "cannot be set up: bwrap not found on PATH" in message
    assert "apt-get install bubblewrap" in message and "--sandbox off" in message
    assert SandboxPolicy("auto").enabled is False
    assert SandboxPolicy("off").enabled is False
    assert "apt-get install bubblewrap" in sandbox.auto_notice("bwrap not found on PATH")


def test_a_bwrap_that_is_there_but_fails_is_not_told_to_be_installed(monkeypatch):
    # "install bubblewrap" followed a bwrap that was installed (non-root review)
    reason = "bwrap cannot create the sandbox: No permissions to create new namespace"
    monkeypatch.setattr(sandbox, "probe", lambda: sandbox.Probe(False, reason))
    with pytest.raises(sandbox.SandboxUnavailable) as caught:
        _ = SandboxPolicy("on").enabled
    for message in (str(caught.value), sandbox.auto_notice(reason, installable=False)):
        assert "install bubblewrap" not in message and "unprivileged_userns_clone" in message


def test_limits_stay_within_the_arenas_own_hard_limits_when_it_is_not_root(monkeypatch):
    # A login's `ulimit -t 600` failed every prlimit, and under `auto` the failed probe ran
    # every bot without the sandbox (non-root review)
    import resource

    own = {resource.RLIMIT_CPU: 600, resource.RLIMIT_NPROC: 50,
           resource.RLIMIT_FSIZE: 20 * 1024 * 1024, resource.RLIMIT_AS: 900 * 1024 * 1024,
           resource.RLIMIT_NOFILE: 20000, resource.RLIMIT_MEMLOCK: 8 * 1024 * 1024}
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    monkeypatch.setattr(sandbox.resource, "getrlimit", lambda kind: (0, own[kind]))
    limits = Limits(open_files=50000)
    argv = sandbox.prlimit_argv(limits)
    assert argv == ["prlimit", "--core=0", "--memlock=65536", f"--as={900 * 1024 * 1024}",
                    "--nproc=50", f"--fsize={20 * 1024 * 1024}", "--cpu=599:600",
                    "--nofile=20000", "--"]
    assert sandbox.lowered_limits(limits) == ["address space 900 MiB", "processes 50",
                                              "file size 20 MiB", "cpu 599 s",
                                              "open files 20000"]
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)  # root raises its own: as asked
    assert sandbox.lowered_limits(limits) == []
    assert "--cpu=600:601" in sandbox.prlimit_argv(limits)


def test_the_sandboxs_root_and_masked_folders_are_remounted_read_only():
    # as a user other than root the bot owned them and wrote past tmp_mb (non-root review)
    argv = sandbox.build_argv(["/bin/true"], "/", Limits())
    bwrap = argv[argv.index("bwrap"):argv.index("--chdir")]
    root = len(bwrap) - 4
    assert bwrap[root:] == ["--remount-ro", "/", "--remount-ro", "/dev"]
    mounts = ("--ro-bind", "--bind", "--tmpfs", "--dir", "--symlink", "--proc", "--dev")
    assert not any(word in mounts for word in bwrap[root:])  # every mount made before
    for folder in sandbox.MASKED_ETC_DIRS:
        if Path(folder).is_dir() and not Path(folder).is_symlink():
            at = bwrap.index(folder)
            assert bwrap[at - 1] == "--tmpfs" and bwrap[at + 1:at + 3] == ["--remount-ro", folder]


# --- a dead bot and its limit -----------------------------------------------------------------

@pytest.mark.parametrize("returncode, stderr, detail", [
    (128 + signal.SIGXCPU, "", "cpu limit"),
    (-signal.SIGXCPU, "", "cpu limit"),
    (128 + signal.SIGXFSZ, "", "file size limit"),
    (1, "OSError: [Errno 27] File too large", "file size limit"),
    (1, "OSError: [Errno 28] No space left on device", "file size limit"),
    (1, "Traceback ...\nMemoryError", "memory limit"),
    (128 + signal.SIGABRT, "terminate called after throwing an instance of 'std::bad_alloc'",
     "memory limit"),
    (1, "Exception in thread main java.lang.OutOfMemoryError: Java heap space", "memory limit"),
    (127, "setpriv: error while loading shared libraries: libc.so.6: failed to map segment "
          "from shared object", "memory limit"),
    # V8 and the JVM short of address space (bot author review: named a crash, or SIGTRAP)
    (128 + signal.SIGTRAP, "#\n# Fatal process OOM in Failed to reserve virtual memory for "
                           "CodeRange\n#", "memory limit"),
    (1, "Error occurred during initialization of VM\nCould not allocate compressed class space: "
        "1073741824 bytes", "memory limit"),
    (1, "BlockingIOError: [Errno 11] Resource temporarily unavailable", "process limit"),
    (2, "sh: 1: Cannot fork", "process limit"),
    (1, "RuntimeError: can't start new thread", "process limit"),
    (1, "ValueError: bad move", None),
    (128 + signal.SIGKILL, "", None),
    (0, "", None),
    (None, "MemoryError", None),
])
def test_limit_detail(returncode, stderr, detail):
    assert sandbox.limit_detail(returncode, stderr) == detail


@pytest.mark.parametrize("returncode, text", [
    (0, "exited with code 0"), (3, "exited with code 3"), (137, "killed by SIGKILL"),
    (-15, "killed by SIGTERM"), (None, "still running"), (128 + 24, "killed by SIGXCPU"),
])
def test_describe_status_reads_bwraps_128_plus_signal(returncode, text):
    assert sandbox.describe_status(returncode) == text


# --- tournament files -------------------------------------------------------------------------

def test_tournament_settings_and_per_bot_policy():
    settings = sandbox.parse_tournament({"sandbox": "on", "limits": {"memory_mb": 2048}})
    assert settings.mode == "on"
    bot = sandbox.parse_bot_limits({"path": "x", "limits": {"processes": 8}}, "bot #1")
    assert settings.policy(bot) == SandboxPolicy("on", Limits(memory_mb=2048, processes=8))
    assert settings.policy() == SandboxPolicy("on", Limits(memory_mb=2048))
    assert sandbox.parse_tournament({}) == sandbox.TournamentSandbox("auto", {})
    assert settings.settings() == {"sandbox": "on", "limits": Limits(memory_mb=2048).describe()}


@pytest.mark.parametrize("data, key, text", [
    ({"sandbox": "yes"}, "sandbox",
     "'sandbox' must be one of 'auto', 'on', 'off', got the string \"yes\""),
    ({"sandbox": True}, "sandbox", "'sandbox' must be one of 'auto', 'on', 'off', got true"),
    ({"limits": {"memry_mb": 1}}, "memry_mb", "unknown key 'memry_mb' in [limits]; did you mean"),
    ({"limits": 5}, "limits", "'[limits]' must be a table of limits"),
    ({"limits": [1, 2]}, "limits", "got a list ([1, 2])"),
])
def test_bad_tournament_settings_name_the_key(data, key, text):
    with pytest.raises(SandboxConfigError) as caught:
        sandbox.parse_tournament(data)
    assert text in str(caught.value) and caught.value.key == key


def test_bad_bot_limits_name_the_bot():
    with pytest.raises(SandboxConfigError, match=r"bot #2 limits 'processes' must be a whole"):
        sandbox.parse_bot_limits({"limits": {"processes": 1.5}}, "bot #2")


def test_the_address_space_is_a_backstop_where_a_cgroup_caps_real_memory():
    """A JVM reserves 1 GiB of class space and a quarter of the RAM before main(), Node's V8 its
    code range: under the 1 GiB address-space limit neither started (bot author review). Where
    the bot's cgroup caps its real memory the address space is only a backstop; elsewhere it
    stays the one cap."""
    limits = Limits(memory_mb=1024)
    assert f"--as={1024 * sandbox.MIB}" in sandbox.prlimit_argv(limits)
    assert f"--as={64 * 1024 * sandbox.MIB}" in sandbox.prlimit_argv(limits, memory_capped=True)
    assert not any(a.startswith("--as") for a in sandbox.prlimit_argv(Limits(memory_mb=0), True))
    capped = sandbox.build_argv(["/bin/true"], "/", limits, cgroup_procs=["/x/cgroup.procs"],
                                memory_capped=True)
    assert f"--as={64 * 1024 * sandbox.MIB}" in capped


def test_run_description_for_arena_check(monkeypatch):
    monkeypatch.setattr(sandbox, "probe", lambda: sandbox.Probe(True))
    monkeypatch.setattr(cgroup, "swap_on", lambda: False)
    monkeypatch.setattr(cgroup, "probe", lambda: cgroup.Support(
        1, Path("/sys/fs/cgroup/memory/x"), freezer=Path("/sys/fs/cgroup/freezer/x")))
    run = sandbox.start_run("auto")
    assert run == sandbox.RunSandbox("auto", True, "")
    assert run.describe(Limits(memory_mb=512)) == (
        "sandbox: bubblewrap: network none, processes its own only, files its own folder "
        "read-only + a private /tmp; memory 512 MiB, processes 64, file size 64 MiB, cpu 600 s, "
        "tmp 64 MiB, open files 1024; total memory 576 MiB (memory cgroup v1); address space a "
        "process 32 GiB, a backstop; between turns (ponder = false): its cgroup frozen")
    assert "; total memory not capped (memory_mb = 0); " in run.describe(Limits(memory_mb=0))
    # with swap on and no control of it in the (made-up) hierarchy, the address space stays
    monkeypatch.setattr(cgroup, "swap_on", lambda: True)
    assert ("total memory 1088 MiB (memory cgroup v1), not counting swap; 1024 MiB of address "
            "space a process") in run.describe()
    monkeypatch.setattr(cgroup, "swap_on", lambda: False)
    assert run.settings()["freezer_cgroup"] is True
    monkeypatch.setattr(cgroup, "probe", lambda: cgroup.Support(2, reason="no write access"))
    assert ("; total memory not capped: no memory cgroup (no write access); 1024 MiB of address "
            "space a process (the JVM and Node reserve more: raise memory_mb); ") in run.describe()
    assert run.describe().endswith("its process group stopped by signals (a bot can get around that)")
    assert run.settings()["memory_cgroup"] == "no memory cgroup (no write access)"
    assert run.settings()["freezer_cgroup"] is False
    off = sandbox.start_run("off")
    assert off.describe().startswith("sandbox: none (sandbox = off): the bot runs as ")
    monkeypatch.setattr(sandbox, "probe", lambda: sandbox.Probe(False, "bwrap not found on PATH"))
    missing = sandbox.start_run("auto")
    assert not missing.enabled and "bwrap not found on PATH" in missing.notice
    assert "bubblewrap unavailable" in missing.describe()
    assert missing.settings() == {"sandbox": "auto", "sandboxed": False,
                                  "sandbox_notice": missing.notice}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_probe_works_from_a_folder_the_sandbox_does_not_show(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # e.g. `arena play` run from a folder under /tmp
    sandbox.probe.cache_clear()
    try:
        assert sandbox.probe() == sandbox.Probe(True)
    finally:
        sandbox.probe.cache_clear()


def test_open_files_stay_under_the_arenas_hard_limit_when_it_cannot_raise_it(monkeypatch):
    # prlimit --nofile=1024 under a hard limit of 512 failed every start of every bot, for a
    # user that may not raise it (review of the diff); root may
    monkeypatch.setattr(sandbox.resource, "getrlimit", lambda _: (512, 512))
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    assert "--nofile=512" in sandbox.prlimit_argv(Limits())
    assert "--memlock=512" in sandbox.prlimit_argv(Limits())  # the same for locked memory
    assert "--nofile=100" in sandbox.prlimit_argv(Limits(open_files=100))
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    assert "--nofile=1024" in sandbox.prlimit_argv(Limits())

