"""A hostile bot: it attacks the machine as its first argument says, reports what it achieved on
stderr (one line, `hostile MODE: ok|denied ...`), then plays the first legal move like any bot.

Used by tests/test_sandbox_hostile.py to show what the sandbox prevents (and, with the sandbox
off, that the same attack succeeds). Modes and arguments:

    read PATH               read a file (another bot's source, games.db, logs, tournament file)
    write PATH              append a line to a file, or create it (the project tree, games.db)
    hunt MARKER SIG         signal every process whose command line holds MARKER (the opponent, the
                            arena worker), found by listing /proc
    inject MARKER           write a move line into the stdout pipe of those processes via /proc
    procfd NAME             find a file named NAME open in another process (/proc/PID/fd) and
                            append to it through that link (games.db held by the arena)
    openfiles N             open /dev/null N times, each kept open
    sockets                 open an internet (v4, v6) and a unix socket
    connect PORT            connect to 127.0.0.1:PORT (a listener of the host)
    alloc GIB               reserve GIB GiB of address space (not touched: harmless unsandboxed)
    fork N                  start N processes that wait for this bot to exit
    hog N MIB               N processes holding MIB MiB of touched memory each, all at once
    memfd MIB               hold MIB MiB in anonymous files (memfd_create, 32 MiB each), unmapped
    daemon MARKER           leave a double-forked, setsid() process running MARKER in its environ
    filltmp MIB             write up to MIB MiB into $TMPDIR, in 1 MiB files
    bigfile MIB             write one file of MIB MiB into $TMPDIR
    writeall DIR...         create a file in each folder (outside $TMPDIR: the sandbox's root,
                            its masked /etc folders, the folders above its own)
    spin                    burn CPU forever
"""

import mmap
import os
import select
import signal
import socket
import sys
import time

MODE = sys.argv[1]
ARGS = sys.argv[2:]


def report(outcome: str) -> None:
    sys.stderr.write(f"hostile {MODE}: {outcome}\n")
    sys.stderr.flush()


def others_matching(marker: str) -> list[int]:
    """Pids of processes (other than this one) whose command line contains `marker`."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def hog(count: int, size: int) -> None:
    """`count` children each touch `size` bytes, say so, and hold them until this process says
    to let go: together they hold count * size bytes, each far below a per-process limit."""
    ready_read, ready_write = os.pipe()
    release_read, release_write = os.pipe()
    for _ in range(count):
        if os.fork() == 0:
            os.close(release_write)
            block = bytearray(size)
            block[::4096] = b"\1" * len(range(0, size, 4096))  # every page resident
            os.write(ready_write, b"1")
            os.read(release_read, 1)
            os._exit(0)
    os.close(ready_write)
    ready, killed = 0, 0
    while ready + killed < count:  # each child either says it holds its share or dies
        if select.select([ready_read], [], [], 0.05)[0]:
            ready += len(os.read(ready_read, count))
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid and os.WIFSIGNALED(status):
            killed += 1
    os.close(release_write)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        if os.WIFSIGNALED(status):
            killed += 1
    if killed:
        report(f"denied: {killed} of {count} killed")
    else:
        report(f"ok {count} processes held {count * (size >> 20)} MiB together")


def attack() -> None:
    if MODE == "read":
        try:
            with open(ARGS[0], "rb") as f:
                report(f"ok {len(f.read())} bytes")
        except OSError as error:
            report(f"denied {error.strerror}")
    elif MODE == "write":
        try:
            with open(ARGS[0], "ab") as f:
                f.write(b"tampered by a bot\n")
            report("ok")
        except OSError as error:
            report(f"denied {error.strerror}")
    elif MODE == "hunt":
        sig = getattr(signal, ARGS[1])
        hit = 0
        for pid in others_matching(ARGS[0]):
            try:
                os.kill(pid, sig)
                hit += 1
            except OSError:
                pass
        report(f"ok signalled {hit}" if hit else "denied no process found")
    elif MODE == "inject":
        hit = 0
        for pid in others_matching(ARGS[0]):
            try:
                with open(f"/proc/{pid}/fd/1", "wb") as f:
                    f.write(b"move d1\n")
                hit += 1
            except OSError:
                pass
        report(f"ok injected {hit}" if hit else "denied no pipe found")
    elif MODE == "procfd":
        hit = 0
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                fds = os.listdir(f"/proc/{name}/fd")
            except OSError:
                continue
            for fd in fds:
                link = f"/proc/{name}/fd/{fd}"
                try:
                    if os.readlink(link).endswith(ARGS[0]):
                        with open(link, "ab") as f:
                            f.write(b"tampered through /proc\n")
                        hit += 1
                except OSError:
                    pass
        report(f"ok tampered {hit}" if hit else "denied no such open file")
    elif MODE == "connect":
        try:
            with socket.create_connection(("127.0.0.1", int(ARGS[0])), timeout=3) as s:
                s.sendall(b"hello from a bot\n")
            report("ok connected")
        except OSError as error:
            report(f"denied {error.strerror or error}")
    elif MODE == "openfiles":  # open /dev/null until refused (or ARGS[0] times)
        opened = []
        try:
            while len(opened) < int(ARGS[0]):
                opened.append(os.open(os.devnull, os.O_RDONLY))
            report(f"ok opened {len(opened)}")
        except OSError as error:
            report(f"denied after {len(opened)}: {error.strerror}")
        for fd in opened:
            os.close(fd)
    elif MODE == "sockets":  # internet sockets (their buffers escape cgroup v1), and a unix one
        said = []
        for name, family in (("inet", socket.AF_INET), ("inet6", socket.AF_INET6),
                             ("netlink", socket.AF_NETLINK), ("unix", socket.AF_UNIX)):
            try:
                socket.socket(family, socket.SOCK_DGRAM).close()
                said.append(f"{name} ok")
            except OSError as error:
                said.append(f"{name} denied {error.strerror}")
        try:
            for end in socket.socketpair(socket.AF_UNIX):
                end.close()
            said.append("unix pair ok")
        except OSError as error:
            said.append(f"unix pair denied {error.strerror}")
        report("; ".join(said))
    elif MODE == "alloc":
        size = int(ARGS[0]) << 30
        try:
            # MAP_NORESERVE (Python 3.12 names it; 0x4000 on Linux): a reservation the kernel's
            # overcommit heuristic does not refuse for exceeding the RAM
            area = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS
                             | getattr(mmap, "MAP_NORESERVE", 0x4000))
            area.close()
            report(f"ok reserved {ARGS[0]} GiB")
        except OSError as error:
            report(f"denied {error.strerror}")
            raise MemoryError(f"cannot reserve {ARGS[0]} GiB") from None
    elif MODE == "fork":
        read_end, write_end = os.pipe()
        started = 0
        error = None
        for _ in range(int(ARGS[0])):
            try:
                pid = os.fork()
            except OSError as failure:
                error = failure
                break
            if pid == 0:  # wait for the parent to go (end of file on the pipe), then leave
                os.close(write_end)
                os.read(read_end, 1)
                os._exit(0)
            started += 1
        if error is None:
            report(f"ok started {started}")
        else:
            report(f"denied after {started}: {error.strerror}")
            raise error
    elif MODE == "hog":
        hog(int(ARGS[0]), int(ARGS[1]) << 20)
    elif MODE == "memfd":
        files, held = [], 0
        try:
            while held < int(ARGS[0]):
                files.append(os.memfd_create("hog"))
                for _ in range(32):
                    os.write(files[-1], b"\1" * (1 << 20))
                    held += 1
            report(f"ok held {held} MiB")
        except OSError as error:
            report(f"denied after {held} MiB: {error.strerror}")
        for fd in files:
            os.close(fd)
    elif MODE == "daemon":
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(devnull, fd)
                os.environ["HOSTILE_DAEMON"] = ARGS[0]
                os.execvp("sh", ["sh", "-c", "sleep 60", ARGS[0]])
            os._exit(0)
        os.wait()
        report("ok left a daemon")
    elif MODE == "filltmp":
        folder = os.environ.get("TMPDIR", "/tmp")
        written = 0
        try:
            for index in range(int(ARGS[0])):
                with open(os.path.join(folder, f"fill-{index}"), "wb") as f:
                    f.write(b"\0" * (1 << 20))
                written += 1
            report(f"ok wrote {written} MiB")
        except OSError as error:
            report(f"denied after {written} MiB: {error.strerror}")
    elif MODE == "writeall":
        outcomes = []
        for folder in ARGS:
            try:
                with open(os.path.join(folder, f"hostile-{os.getpid()}"), "wb") as f:
                    f.write(b"x")
                outcomes.append(f"{folder}=written")
            except OSError as error:
                outcomes.append(f"{folder}={error.strerror}")
        written = any(o.endswith("=written") for o in outcomes)
        report(("ok " if written else "denied ") + " ".join(outcomes))
    elif MODE == "bigfile":
        with open(os.path.join(os.environ.get("TMPDIR", "/tmp"), "big"), "wb") as f:
            for _ in range(int(ARGS[0])):
                f.write(b"\0" * (1 << 20))
        report(f"ok wrote one file of {ARGS[0]} MiB")
    elif MODE == "userns":  # a user namespace of its own: root in it, its own mounts
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(0x10000000) == 0:  # CLONE_NEWUSER
            report("ok")
        else:
            report(f"denied {os.strerror(ctypes.get_errno())}")
    elif MODE == "perf":  # perf_event_open: its ring buffers are locked memory no cgroup counts
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        # perf_event_open(NULL, ...): EFAULT where the call exists, ENOSYS where it is refused
        number = {"x86_64": 298, "aarch64": 241}[os.uname().machine]
        libc.syscall(number, None, 0, -1, -1, 0)
        report(f"errno {os.strerror(ctypes.get_errno())}")
    elif MODE in ("aio", "keyring"):  # machine-wide kernel pools, state that outlives the bot
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        if MODE == "aio":
            context = ctypes.c_ulong(0)
            # io_setup(128, &context): x86_64 206, aarch64 0
            number = {"x86_64": 206, "aarch64": 0}[os.uname().machine]
            done = libc.syscall(number, 128, ctypes.byref(context))
            if done == 0:
                libc.syscall({"x86_64": 207, "aarch64": 1}[os.uname().machine], context)
        else:  # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0): reads, stores nothing
            done = libc.syscall({"x86_64": 250, "aarch64": 219}[os.uname().machine], 0, -4, 0)
        report("ok" if done >= 0 else f"denied {os.strerror(ctypes.get_errno())}")
    elif MODE == "pty":  # pseudo-terminals: a machine-wide pool (kernel.pty.max)
        try:
            primary, secondary = os.openpty()
            os.close(primary)
            os.close(secondary)
            report("ok")
        except OSError as error:
            report(f"denied {error.strerror}")
    elif MODE == "spin":
        end = time.monotonic() + 60
        while time.monotonic() < end:
            pass
        report("ok spun 60 s")
    else:
        raise SystemExit(f"unknown mode {MODE!r}")


def main() -> None:
    attack()
    from arena.sdk import run_bot

    run_bot(lambda turn: turn.game.legal_moves()[0], name=f"hostile-{MODE}")


if __name__ == "__main__":
    main()
