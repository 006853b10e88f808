"""Content-addressed bot snapshots: a bot's folder or program, shipped to machines that lack it.

A cluster worker shares no filesystem with the coordinator, so each bot travels as a `Snapshot`:
the files `arena.botspec` hashes for its `program_hash` (a folder minus caches, or one program
file), packed as a tar, addressed by that hash. A worker unpacks it once under
`<root>/<hash>/`, checks the unpacked files hash to the same value (a mismatch is refused, never
run) and reuses it for every later game. `PortableBot` carries the rest of the `BotSpec` in a form
that does not depend on the coordinator's paths: the coordinator's Python becomes the worker's,
paths inside the bot become paths inside the snapshot, and anything else the command needs (an
interpreter on PATH, an absolute program) must exist on the worker, else `MissingProgram`.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import sys
import tarfile
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from arena.botspec import MANIFEST, BotSpec, folder_files, hash_folder, hash_program, open_regular

FOLDER, FILE = "folder", "file"
_READY = ".arena-snapshot-ok"  # written last: a folder without it is an interrupted unpack
_unpack_lock = threading.Lock()  # one unpack at a time per process (threads of one worker)


class SnapshotError(ValueError):
    """A snapshot that cannot be made or does not match its hash (one-line message)."""


class MissingProgram(RuntimeError):
    """The machine lacks something a bot's command needs (an interpreter, a program)."""


@dataclass(frozen=True)
class Snapshot:
    digest: str  # the bot's program_hash, as arena.botspec computes it
    kind: str  # FOLDER or FILE
    data: bytes  # a tar of the files (FOLDER: relative paths; FILE: one member, the program)

    @property
    def size(self) -> int:
        return len(self.data)


# Command parts: ("python",) the running interpreter, ("bot", relpath) a file of the snapshot,
# ("text", value) anything else (a program on PATH or an absolute program, when first).
Part = tuple[str, ...]


@dataclass(frozen=True)
class PortableBot:
    """A `BotSpec` without the coordinator's paths; `localize` makes it one for this machine."""

    name: str
    digest: str
    command: tuple[Part, ...]
    args: tuple[str, ...]
    author: str = ""
    version: str = ""
    language: str = ""

    def localize(self, folder: Path) -> BotSpec:
        """The spec for the snapshot unpacked at `folder`; MissingProgram if a part is absent."""
        argv: list[str] = []
        for index, part in enumerate(self.command):
            if part[0] == "python":
                argv.append(sys.executable)
            elif part[0] == "bot":
                argv.append(str(folder / part[1]))
            elif index == 0:
                argv.append(_find_program(part[1], self.name))
            else:
                argv.append(part[1])
        return BotSpec(self.name, argv, folder, self.digest, author=self.author,
                       version=self.version, language=self.language, args=self.args)


def _find_program(program: str, bot: str) -> str:
    if os.path.isabs(program):
        if os.access(program, os.X_OK) and os.path.isfile(program):
            return program
        raise MissingProgram(f"bot {bot!r} needs {program}, which this machine does not have")
    if shutil.which(program) is None:
        raise MissingProgram(f"bot {bot!r} needs {program!r}, which is not on this machine's "
                             "PATH (is its runtime installed?)")
    return program


def take_snapshot(spec: BotSpec, name: str = "") -> tuple[Snapshot, PortableBot]:
    """Pack the bot's files; SnapshotError if they no longer hash to `spec.program_hash`.

    `name` is the bot's display name in the tournament (errors name it), by default its own.
    """
    name = name or spec.name
    program = _program_file(spec)
    if program is not None:
        root, files = program.parent, [program]
        kind = FILE
    elif (spec.cwd / MANIFEST).is_file():
        root, files, kind = spec.cwd, folder_files(spec.cwd), FOLDER
    else:
        raise SnapshotError(f"bot {name!r}: no file or folder of it hashes to "
                            f"{spec.program_hash} any more (was it changed since the tournament "
                            "file was read?)")
    if kind == FOLDER and (actual := hash_folder(root)) != spec.program_hash:
        raise SnapshotError(f"bot {name!r} changed since the tournament file was read: "
                            f"{root} hashes to {actual}, not {spec.program_hash}; refused")
    data = _pack(root, files, name)
    command = tuple(_portable_part(part, root) for part in spec.command)
    portable = PortableBot(spec.name, spec.program_hash, command, tuple(spec.args),
                           spec.author, spec.version, spec.language)
    return Snapshot(spec.program_hash, kind, data), portable


def _program_file(spec: BotSpec) -> Path | None:
    """The command's program file when the bot is a single program (its hash is that file's)."""
    for part in spec.command:
        path = Path(part)
        if path.is_absolute() and path.is_file() and part != sys.executable:
            try:
                if hash_program(path) == spec.program_hash:
                    return path
            except OSError:
                continue
    return None


def _pack(root: Path, files: list[Path], bot: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", compresslevel=6) as tar:
        for file in files:
            # regular files only, read without following links (as the hash reads them): a
            # link to a FIFO hung the run, one to /dev/zero ran it out of memory (hostile review)
            fd = open_regular(file)
            if fd is None:
                raise SnapshotError(f"bot {bot!r}: {file} is a link or not a regular file: a "
                                    "cluster's workers get a bot's regular files only")
            try:
                with os.fdopen(fd, "rb") as handle:
                    content = handle.read()
                    mode = os.fstat(handle.fileno()).st_mode
            except OSError as error:
                raise SnapshotError(f"bot {bot!r}: cannot read {file}: "
                                    f"{error.strerror or error}") from None
            info = tarfile.TarInfo(file.relative_to(root).as_posix())
            info.size = len(content)
            info.mode = 0o755 if mode & stat.S_IXUSR else 0o644
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


def _portable_part(part: str, root: Path) -> Part:
    if part == sys.executable:
        return ("python",)
    path = Path(part)
    if path.is_absolute():
        try:
            return ("bot", path.relative_to(root).as_posix())
        except ValueError:
            pass
    return ("text", part)


def unpack(snapshot: Snapshot, root: Path) -> Path:
    """The snapshot's files under `root/<digest>/`, unpacked on first use and verified.

    SnapshotError if the unpacked files do not hash to the snapshot's digest (nothing is kept).
    """
    if not snapshot.digest.isalnum():
        raise SnapshotError(f"bad snapshot digest {snapshot.digest!r}; refused")
    target = root / snapshot.digest
    if (target / _READY).is_file():
        return target
    with _unpack_lock:
        if (target / _READY).is_file():
            return target
        root.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{snapshot.digest}-", dir=root))
        try:
            files = scratch / "files"
            try:
                with tarfile.open(fileobj=io.BytesIO(snapshot.data), mode="r:gz") as tar:
                    tar.extractall(files, filter="data")
            except (tarfile.TarError, OSError, EOFError) as error:
                raise SnapshotError(f"snapshot {snapshot.digest} cannot be unpacked: {error}; "
                                    "refused") from None
            actual = _unpacked_hash(snapshot.kind, files)
            if actual != snapshot.digest:
                raise SnapshotError(f"snapshot {snapshot.digest} does not match its hash (its "
                                    f"files hash to {actual}); refused")
            (files / _READY).write_text(snapshot.digest)
            shutil.rmtree(target, ignore_errors=True)  # an interrupted earlier unpack
            os.replace(files, target)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return target


def _unpacked_hash(kind: str, files: Path) -> str:
    if kind == FOLDER:
        return hash_folder(files)
    members = [p for p in files.iterdir() if p.is_file()] if files.is_dir() else []
    if kind != FILE or len(members) != 1:
        return "(not a one-program snapshot)"
    return hash_program(members[0])
