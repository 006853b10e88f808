"""Naming a bot: a path to an executable, a `.py` file, a folder with a `bot.toml` manifest, a
command line, or the name of a bundled bot (`<project>/bots/<name>/`).

Manifest (`bot.toml`); unknown keys are rejected with a "did you mean"::

    name = "greedy"                 # optional: the display name (default: the folder's name)
    command = "bot.py"              # required: string (split like a shell would) or list
    author = "..."                  # optional
    version = "1.0"                 # optional
    language = "python"             # optional
    args = ["--level", "easy"]      # optional, appended to the command

One rule for commands everywhere (`bot.toml`, a tournament file's `command =`, `arena play
"node bot.js" random`), relative to a base folder (the manifest's folder, the tournament file's
folder, the current folder):
- a first word ending in `.py` is a script run with the arena's Python interpreter;
- a first word with a `/`, or naming a file in the base folder, is that program (it must be
  executable); a folder there is a bot folder, the rest of the words its extra arguments;
- anything else is looked up on PATH, like a shell does (then a bundled bot of that name), and
  kept as written.
Symlinks are never resolved: `.venv/bin/python bot.py` runs that venv's interpreter.

The display name is the given `name` (tournament file, `--name`), else the manifest's `name`,
else the script's name (`node bot.js` is `bot`), never the interpreter's. Where no name was given
(`named` is False), `arena play` shows the name the bot gives in its handshake instead.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shlex
import shutil
import stat
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from arena import protocol
from arena.textfile import decode, not_utf8

PROJECT_ROOT = Path(__file__).resolve().parent.parent
ARENA_DIR = PROJECT_ROOT / "arena"
BUNDLED_DIR = PROJECT_ROOT / "bots"
MANIFEST = "bot.toml"
HASH_CHARS = 16
MAX_NAME_CHARS = 64
NAME_RULE = (f"a display name is 1 to {MAX_NAME_CHARS} printable characters in any script "
             "(letters, digits, symbols, spaces inside), without control characters or "
             "leading/trailing spaces, and not '-' alone")
MANIFEST_KEYS = ("name", "command", "author", "version", "language", "args")
_IGNORED_DIRS = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".venv",
                 "venv", "node_modules"}


class BotSpecError(ValueError):
    """A bot reference that cannot be resolved (one-line message)."""


@dataclass
class BotSpec:
    name: str
    command: list[str]
    cwd: Path
    program_hash: str
    author: str = ""
    version: str = ""
    language: str = ""
    args: tuple[str, ...] = ()
    named: bool = False  # the name was given (argument or manifest), not taken from a file name
    # a command line's own files, which its hash covers with the arena modules their Python
    # imports (a folder bot: its folder's files, listed where needed)
    scripts: tuple[Path, ...] = ()

    @property
    def argv(self) -> list[str]:
        """The full command line: the command followed by the extra arguments."""
        return [*self.command, *self.args]

    def foreign_program(self) -> str | None:
        """The program this bot runs when it is neither its own (inside its folder), nor a
        system one (/usr, /bin, ...), nor a name the PATH finds, nor the arena's Python: None
        when there is no such program. A submitted bot must bring its own: the sandbox shows a
        bot the program its command names, and a manifest naming another entrant's submitted
        program played that program as its own."""
        program = self.command[0] if self.command else ""
        if not os.path.isabs(program) or program == sys.executable:
            return None
        path = Path(program).resolve()
        # the arena's Python by another of its names (a venv's `python` beside `python3`)
        if path.is_relative_to(self.cwd.resolve()) or path == Path(sys.executable).resolve():
            return None
        from arena.sandbox import SYSTEM_DIRS  # here: 25 ms of imports, for league submissions

        if any(path.is_relative_to(d) for d in SYSTEM_DIRS):
            return None
        return program


def name_problem(name: object) -> str | None:
    """Why `name` is not a valid display name, or None. Names are escaped where they are shown
    (HTML by the site, whitespace as `_` on the wire), so any script is fine."""
    if not isinstance(name, str) or not name:
        return "must be a non-empty string"
    if name != name.strip():
        return "must not start or end with whitespace"
    if len(name) > MAX_NAME_CHARS:
        return f"is longer than {MAX_NAME_CHARS} characters"
    if not name.replace(" ", "").isprintable():
        return "contains control or non-printable characters"
    if name == "-":
        return "is '-', which the protocol's lines use for 'none' (e.g. opponent=-)"
    return None


def check_name(name: object, where: str = "") -> str:
    """`name` if it follows NAME_RULE, else a BotSpecError naming the problem."""
    problem = name_problem(name)
    if problem:
        prefix = f"{where}: " if where else ""
        raise BotSpecError(f"{prefix}bot name {name!r} {problem} ({NAME_RULE})")
    return name  # type: ignore[return-value]


def bundled_bots() -> list[str]:
    if not BUNDLED_DIR.is_dir():
        return []
    return sorted(p.name for p in BUNDLED_DIR.iterdir() if (p / MANIFEST).is_file())


def _absolute(path: Path) -> Path:
    """An absolute path without resolving symlinks (a venv's python must stay the venv's)."""
    return Path(os.path.abspath(path))


# Source files a compiler turns into the bot: making them executable would not help.
_COMPILED_SOURCES = {".c": "gcc -O2 -o bot bot.c", ".cc": "g++ -O2 -o bot bot.cc",
                     ".cpp": "g++ -O2 -o bot bot.cpp", ".rs": "rustc -O bot.rs",
                     ".go": "go build", ".java": "javac Bot.java (then command = \"java Bot\")",
                     ".hs": "ghc -O2 bot.hs", ".zig": "zig build-exe -O ReleaseFast bot.zig"}


def _not_executable(path: Path) -> BotSpecError:
    if (build := _COMPILED_SOURCES.get(path.suffix.lower())) is not None:
        return BotSpecError(f"{str(path)!r} is source code: compile it (e.g. {build}) and give "
                            "the program, or a bot.toml whose command runs it")
    interpreter = _INTERPRETERS.get(path.suffix.lower(), "INTERPRETER")
    return BotSpecError(f"{str(path)!r} is not executable: run  chmod +x {shlex.quote(str(path))}"
                        f"  (or put its interpreter first: command = [\"{interpreter}\", "
                        f"\"{path.name}\"] in a bot.toml)")


# The interpreter a not-executable script's hint names, by its ending.
_INTERPRETERS = {".sh": "sh", ".bash": "bash", ".js": "node", ".mjs": "node", ".rb": "ruby",
                 ".pl": "perl", ".lua": "lua", ".php": "php"}


def resolve_bot(
    ref: str,
    args: Sequence[str] = (),
    name: str | None = None,
    base: Path | str | None = None,
    looked_in: Sequence[Path | str] = (),
) -> BotSpec:
    """Resolve a bot reference to a BotSpec; raises BotSpecError with a one-line message.

    `ref` is a path (relative to `base`, default the current folder), a bundled bot's name, or a
    command line such as `node bot.js` (see the module's rule for commands). `looked_in`: other
    folders the caller tried it in first (a tournament file's), named if it is found nowhere."""
    text = str(ref).strip()
    if not text:
        raise BotSpecError("empty bot reference")
    base_dir = Path(base) if base is not None else Path.cwd()
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = base_dir / path
    if path.exists():
        spec = _from_path(path, text)
    elif "/" not in text and os.sep not in text and (BUNDLED_DIR / text / MANIFEST).is_file():
        spec = _from_path(BUNDLED_DIR / text, text)
    else:
        try:
            parts = shlex.split(text)
        except ValueError as error:
            raise BotSpecError(f"bad command {text!r}: {error}") from None
        if len(parts) == 1 and shutil.which(parts[0]) is None:
            from arena.spelling import did_you_mean

            known = ", ".join(bundled_bots()) or "none"
            # where it was looked for: a path relative to another folder than meant (a
            # tournament file's, the current one) is the usual cause (user review)
            folders = " or ".join(repr(str(f)) for f in dict.fromkeys([*map(str, looked_in),
                                                                       str(base_dir)]))
            raise BotSpecError(f"no bot at {text!r}: not a file or folder in {folders}, not a "
                               f"command on PATH, and not a bundled bot ({known})"
                               f"{did_you_mean(text, bundled_bots())}")
        spec = resolve_command(parts, base_dir, where=f"bot {text!r}")
    spec.args = tuple(spec.args) + tuple(str(a) for a in args)
    if name is not None:
        spec.name = check_name(name)
        spec.named = True
    else:  # a name taken from a file follows the same rule (give a name to override it)
        check_name(spec.name, f"bot {text!r}")
    return spec


def _from_path(path: Path, text: str) -> BotSpec:
    path = _absolute(path)
    try:
        if path.is_dir():
            return _from_folder(path)
        if not path.is_file():
            raise BotSpecError(f"bot {text!r} is not a regular file or a folder")
        if path.suffix == ".py":
            return BotSpec(path.stem, [sys.executable, str(path)], path.parent,
                           _hash_files(path.parent, [path], python=True), language="python",
                           scripts=(path,))
        if os.access(path, os.X_OK):
            _refuse_unrunnable(path, f"bot {text!r}: ")
            return BotSpec(path.stem or path.name, [str(path)], path.parent,
                           _hash_files(path.parent, [path]))
        raise _not_executable(path)
    except OSError as error:
        where = error.filename or text
        raise BotSpecError(f"cannot read bot {text!r}: {where}: {error.strerror or error}") \
            from None


def resolve_command(
    parts: Sequence[str],
    base: Path | str,
    args: Sequence[str] = (),
    name: str | None = None,
    where: str = "",
) -> BotSpec:
    """A command line (already split) resolved by the one rule for commands, run in `base`."""
    base = _absolute(Path(base))
    parts = [str(p) for p in parts]
    prefix = f"{where}: " if where else ""
    if not parts or not all(parts):
        raise BotSpecError(f"{prefix}empty command")
    first, rest = parts[0], parts[1:]
    local = base / Path(first).expanduser()
    language = ""
    if first.endswith(".py"):
        if not local.is_file():
            raise BotSpecError(f"{prefix}script {first!r} not found in {str(base)!r}")
        command = [sys.executable, str(_absolute(local)), *rest]
        language = "python"
    elif "/" in first or os.sep in first or local.exists():
        if local.is_dir():
            try:
                spec = _from_path(local, first)
            except BotSpecError as error:
                raise BotSpecError(f"{prefix}{error}") from None
            spec.args = (*spec.args, *rest, *map(str, args))
            if name:
                spec.name, spec.named = check_name(name, where), True
            return spec
        if not local.is_file():
            raise BotSpecError(f"{prefix}program {first!r} not found in {str(base)!r}")
        if not os.access(local, os.X_OK):
            raise BotSpecError(f"{prefix}{_not_executable(_absolute(local))}")
        _refuse_unrunnable(_absolute(local), prefix)
        command = [str(_absolute(local)), *rest]
    else:
        found = shutil.which(first)
        if found is None:
            if (BUNDLED_DIR / first / MANIFEST).is_file():
                return resolve_bot(first, [*rest, *args], name)
            raise BotSpecError(f"{prefix}command {first!r} not found on PATH "
                               "(is its runtime installed?)")
        command = [first, *rest]  # as written: the bot's PATH is the arena's
        if (missing := _missing_script(rest, base)) is not None:
            # `node nothere.js` crashed every game, as a bot named `node`
            raise BotSpecError(f"{prefix}script {missing!r} not found in {str(base)!r} (where "
                               "the command runs)")
    # The program's own files: every argument naming a file here, else the program itself (an
    # interpreter followed by a script is not hashed: the script is what changes).
    scripts = [_absolute(base / word) for word in rest
               if not word.startswith("-") and (base / word).is_file()]
    if first.endswith(".py"):
        scripts.insert(0, _absolute(local))
    script = scripts[0] if scripts else None
    files = scripts or ([Path(command[0])] if local.is_file() else [])
    display = Path(script or command[0]).stem or first
    if script is not None and script.suffix == ".py":
        language = "python"
    return BotSpec(
        name=check_name(name if name else display, where),
        command=command,
        cwd=base,
        # the arena modules any of its Python scripts imports: `sh run.sh bot.py` runs them too
        program_hash=_hash_files(base, files, python=True, text=shlex.join(parts)),
        language=language,
        args=tuple(str(a) for a in args),
        named=bool(name),
        scripts=tuple(files),
    )


MAX_MANIFEST = 64 * 1024


ARGS_RULE = "'args' must be a list of strings (numbers are taken as written: [\"--seed\", 3])"


CRLF_PROBLEM = "its #! line ends in a carriage return"
BOM_PROBLEM = "its #! line comes after a byte-order mark"


def _refuse_unrunnable(program: Path, prefix: str) -> None:
    """BotSpecError for a program that can never start (a #! line saved with Windows line
    endings or after a byte-order mark); one without a #! line is left to its start, as some
    systems run it with sh."""
    if (problem := program_problem(program)).startswith((CRLF_PROBLEM, BOM_PROBLEM)):
        raise BotSpecError(f"{prefix}{program}: {problem}")


def program_problem(program: Path) -> str:
    """Why an executable file is not a program the system can start ('' when it looks like
    one): a script whose #! line ends in a carriage return (saved with Windows line endings:
    the system looks for an interpreter named `sh\\r`) or follows a byte-order mark, or a
    file with neither a #! line nor a compiled program's header (run as a shell script by some
    and refused by others).
    Reads its first bytes only; a file it cannot read has no problem said here."""
    fd = open_regular(program.resolve())  # a link to the script: what it leads to
    if fd is None:
        return ""
    with os.fdopen(fd, "rb") as handle:
        head = handle.read(256)
    if head.startswith(b"\xef\xbb\xbf#!"):  # the system reads #! only as the first two bytes
        return (f"{BOM_PROBLEM} (saved as UTF-8 with BOM, Notepad's default): save it without "
                "one")
    if head.startswith(b"#!"):
        line = head.split(b"\n", 1)[0]
        if line.endswith(b"\r"):
            return (f"{CRLF_PROBLEM} (Windows line endings): save it with Unix ones "
                    "(e.g. `sed -i 's/\\r$//' FILE` or dos2unix)")
        return ""
    if head.startswith(b"\x7fELF") or not head:
        return ""
    return ("it has no #! first line naming its interpreter (e.g. #!/bin/sh or "
            "#!/usr/bin/env python3) and is not a compiled program")


def _missing_script(words: Sequence[str], base: Path) -> str | None:
    """The script an interpreter is given (its first word that is no option) when it has a
    script's ending and is not there; None otherwise, and for code given inline (`sh -c`,
    `node -e`), where the words are the interpreter's to read."""
    for before, word in zip(["", *words][:len(words)], words, strict=True):
        if before in INLINE_CODE_OPTIONS:
            return None
        if word.startswith("-"):
            continue
        if Path(word).suffix in SCRIPT_SUFFIXES and not any(c.isspace() for c in word) \
                and not (base / word).exists():
            return word
        return None
    return None


INLINE_CODE_OPTIONS = frozenset({"-c", "-e", "--eval", "-p", "--print", "-E", "-r"})


def argument_list(value: object) -> list[str] | None:
    """A bot's `args` as the command line gets them, the same in a bot.toml and a tournament
    file (`["--seed", 3]` was accepted in one and refused in the other); None if it is not a
    list of strings and numbers."""
    if not isinstance(value, list) or not all(
            isinstance(a, str | int | float) and not isinstance(a, bool) for a in value):
        return None
    return [str(a) for a in value]


# What an interpreter's script argument ends with: one that is missing is a typo, not a bot.
SCRIPT_SUFFIXES = frozenset({".js", ".mjs", ".cjs", ".ts", ".py", ".rb", ".pl", ".lua", ".php",
                             ".jar", ".sh", ".R", ".jl", ".exs", ".class"})


def _from_folder(folder: Path) -> BotSpec:
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise BotSpecError(f"folder {str(folder)!r} has no {MANIFEST} manifest")
    import tomllib

    from arena.tomlcheck import KeyLines, suggest, syntax_error

    fd = open_regular(manifest)  # not a link to /dev/zero or a FIFO: see open_regular
    if fd is None:
        raise BotSpecError(f"{str(manifest)!r} is not a regular file")
    try:
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read(MAX_MANIFEST + 1)
        if len(raw) > MAX_MANIFEST:
            raise BotSpecError(f"{str(manifest)!r} is over {MAX_MANIFEST // 1024} KiB: a manifest "
                               "names the bot and its command")
        text = decode(raw)
        data = tomllib.loads(text)
    except OSError as error:
        raise BotSpecError(f"cannot read {str(manifest)!r}: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise BotSpecError(f"{manifest}: {not_utf8(error)}") from None
    except tomllib.TOMLDecodeError as error:
        raise BotSpecError(syntax_error(manifest, text, error)) from None
    lines = KeyLines(text)

    def where(key: str | None) -> str:
        number = lines.line(key)
        return f"{manifest}:{number}" if number else str(manifest)

    for key in data:
        if key not in MANIFEST_KEYS:
            raise BotSpecError(f"{where(key)}: unknown key {key!r}{suggest(key, MANIFEST_KEYS)}")
    named = "name" in data
    name = data.get("name", folder.name)
    if named:
        check_name(name, where("name"))
    if "command" not in data:
        raise BotSpecError(f"{where(None)}: 'command' is missing: add e.g. command = \"bot.py\" "
                           "or command = [\"node\", \"bot.js\"]")
    command = data["command"]
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as error:
            raise BotSpecError(f"{where('command')}: bad 'command': {error}") from None
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(part, str) and part for part in command)
    ):
        raise BotSpecError(
            f"{where('command')}: 'command' must be a string or a non-empty list of strings")
    extra = argument_list(data.get("args", []))
    if extra is None:
        raise BotSpecError(f"{where('args')}: {ARGS_RULE}")
    fields = {}
    for key in ("author", "version", "language"):
        value = data.get(key, "")
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise BotSpecError(f"{where(key)}: {key!r} must be a string")
        fields[key] = protocol.truncate(str(value), protocol.HELLO_FIELD_CAP)
    resolved = resolve_command(command, folder, where=where("command"))
    if resolved.cwd != folder:
        raise BotSpecError(f"{where('command')}: 'command' must name a program, not a bot folder")
    python = resolved.language == "python" or _imports_arena(folder)
    return BotSpec(
        name=check_name(name, where("name")),
        command=resolved.command,
        cwd=folder,
        program_hash=_hash_folder(folder, python),
        args=(*resolved.args, *(str(a) for a in extra)),
        named=named,
        author=fields["author"],
        version=fields["version"],
        language=fields["language"] or resolved.language,
    )


# --- program hashes: what the bot runs -------------------------------------------------------

def _folder_files(folder: Path) -> list[Path]:
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _IGNORED_DIRS)
        files.extend(Path(root) / n for n in names if not n.endswith((".pyc", ".pyo")))
    return files


def _hash_folder(folder: Path, python: bool) -> str:
    return _hash_files(folder, _folder_files(folder), python=python)


def folder_files(folder: Path) -> list[Path]:
    """The files a folder bot's hash reads (and a snapshot of it carries), in a stable order."""
    return sorted(_folder_files(folder), key=lambda p: p.relative_to(folder).as_posix())


def hash_folder(folder: Path) -> str:
    """A folder bot's program hash, as `resolve_bot` computes it (the arena modules its Python
    scripts import are included; a folder without such imports hashes its files alone)."""
    return _hash_folder(folder, python=True)


def own_files(spec: BotSpec) -> list[Path]:
    """The bot's own files among those `spec.program_hash` reads: a folder bot's files, else
    its command line's own (`scripts`, or the program)."""
    if (spec.cwd / MANIFEST).is_file():
        return folder_files(spec.cwd)
    program = Path(spec.command[0]) if spec.command else None
    return list(spec.scripts) or ([program] if program and program.is_file() else [])


def hashed_files(spec: BotSpec) -> list[Path]:
    """The files `spec.program_hash` read: the bot's own (`own_files`), plus the arena modules
    their Python imports."""
    files = own_files(spec)
    return files + _arena_modules([f for f in files if f.suffix == ".py"])


def own_files_hash(spec: BotSpec) -> str:
    """A hash of the bot's own files alone, without the arena modules its program hash covers:
    what an upgrade of the arena leaves as it was (a league's `rehash` checks it)."""
    return _hash_files(spec.cwd, own_files(spec))


# What a process started later would run differently if it changed: code by its suffix, any
# executable, the manifest. Other files (a log, a table the bot writes) are left to the bot.
_CODE_SUFFIXES = frozenset((".py", ".pyw", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".pm",
                            ".lua", ".php", ".sh", ".bash", ".jar", ".class", ".so", ".wasm",
                            ".jl", ".r", ".exe", ".dll", ".toml"))


def code_files(spec: BotSpec) -> list[Path]:
    """The files of `hashed_files` that hold code (by suffix, or executable) or the manifest:
    what a run watches for a change while it plays (`file_stamps`). A bot writing its own log
    into its folder (a test's logging bot does) must not read as a changed program."""
    return [f for f in hashed_files(spec)
            if f.suffix.lower() in _CODE_SUFFIXES or f.name == MANIFEST or os.access(f, os.X_OK)]


# (path, modification time in ns, size, content digest) of a file; (path, -1, -1, "") for one
# that is gone
FileStamp = tuple[str, int, int, str]


def _digest(file: Path) -> str:
    digest = hashlib.sha256()
    _hash_content(digest, file)
    return digest.hexdigest()


def file_stamps(files: Iterable[Path]) -> tuple[FileStamp, ...]:
    """What a file's change shows: its stat, checked at each start of a bot's process (cheap),
    and its content's digest, read only where the stat differs (a `touch` is no change)."""
    stamps = []
    for file in files:
        try:
            info = file.stat()
            stamps.append((str(file), info.st_mtime_ns, info.st_size, _digest(file)))
        except OSError:
            stamps.append((str(file), -1, -1, ""))
    return tuple(stamps)


def first_changed(stamps: Iterable[FileStamp]) -> str | None:
    """The first of the stamped files that is not as it was (other content, or gone), None when
    all are. Files added since do not count (a log the bot writes into its folder)."""
    for path, mtime, size, digest in stamps:
        file = Path(path)
        try:
            info = file.stat()
        except OSError:
            if size >= 0:
                return f"{path} was removed"
            continue
        if (info.st_mtime_ns, info.st_size) == (mtime, size):
            continue
        try:
            if size < 0 or _digest(file) != digest:
                return f"{path} was modified" if size >= 0 else f"{path} was added back"
        except OSError:
            return f"{path} cannot be read"
    return None


def hash_folder_files(folder: Path, names: Iterable[str]) -> str:
    """The hash `hash_folder` gave when the folder held exactly `names` (relative paths), from
    their current content: a bot that only added files (a log it wrote) still hashes the same."""
    return _hash_files(folder, [folder / name for name in names], python=True)


def hash_program(path: Path) -> str:
    """A one-file bot's program hash, as `resolve_bot` computes it."""
    return _hash_files(path.parent, [path], python=path.suffix == ".py")


def hash_files(base: Path, files: Iterable[Path]) -> str:
    """A hash of the files' names (relative to `base`) and contents, as a program hash reads
    them (links by their target, special files by kind), without the arena modules they import:
    the cluster's code fingerprint of the arena package itself."""
    return _hash_files(base, files)


def _hash_files(base: Path, files: Iterable[Path], python: bool = False, text: str = "") -> str:
    """A hash of the files (named relative to `base`), plus for Python programs the arena modules
    they import (transitively): changing `arena/sdk.py` changes every SDK bot's hash."""
    digest = hashlib.sha256(text.encode())
    files = sorted(set(files), key=lambda p: _label(p, base))
    if python:
        files += _arena_modules([f for f in files if f.suffix == ".py"])
    for file in files:
        digest.update(_label(file, base).encode() + b"\0")
        _hash_content(digest, file)
        digest.update(b"\0")
    return digest.hexdigest()[:HASH_CHARS]


def open_regular(file: Path) -> int | None:
    """A read-only descriptor of `file` if it is a regular file, else None. A bot's folder is
    the submitter's to shape, and the arena reads it on the host, before any sandbox: a link
    to /dev/zero ran the arena out of memory, and a FIFO hung it (links are not followed; the
    FIFO check is on the opened descriptor, so a swap after a check cannot slip in)."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return fd


def _hash_content(digest, file: Path) -> None:
    """Add a file's content to `digest`, read in chunks; a link adds its target's name, and
    anything else that is not a regular file (a FIFO, a device) only its kind."""
    try:
        if file.is_symlink():
            digest.update(b"link:" + os.fsencode(os.readlink(file)))
            return
    except OSError:
        return
    fd = open_regular(file)
    if fd is None:
        digest.update(b"special")
        return
    with os.fdopen(fd, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)


def _label(file: Path, base: Path) -> str:
    for root in (base, PROJECT_ROOT):
        try:
            return file.relative_to(root).as_posix()
        except ValueError:
            continue
    return file.name


def arena_modules_of(spec: BotSpec) -> list[Path]:
    """The arena package's files that the bot's Python scripts import (what its hash covers
    besides its own files): a folder bot's scripts, else those of its command line's files."""
    files = _folder_files(spec.cwd) if (spec.cwd / MANIFEST).is_file() else spec.scripts
    return _arena_modules([f for f in files if f.suffix == ".py"])


def _imports_arena(folder: Path) -> bool:
    return bool(_arena_modules([f for f in _folder_files(folder) if f.suffix == ".py"]))


def _arena_modules(scripts: Sequence[Path]) -> list[Path]:
    """The files of the `arena` package that the scripts import, directly or through each other
    (parent packages' `__init__.py` included), sorted."""
    found: set[Path] = set()
    todo = list(scripts)
    seen: set[Path] = set()
    stamps: dict[str, int] = {}  # folder -> modification time, read once per call
    while todo:
        script = todo.pop()
        if script in seen:
            continue
        seen.add(script)
        for module in _imported_modules(script):
            for file in _module_files(module, stamps):
                if file not in found:
                    found.add(file)
                    todo.append(file)
    return sorted(found)


def _imported_modules(script: Path) -> frozenset[str]:
    """Dotted names of the arena modules a file imports anywhere (also inside functions)."""
    try:
        info = script.stat()
    except OSError:
        return frozenset()
    return _imported_modules_of(script, info.st_mtime_ns, info.st_size)


# `from X import a, b` (names possibly in parentheses over several lines) and `import X, Y`.
# A text scan, not a parse: fast, and it errs on the side of including a module (e.g. an import
# shown in a docstring), which only makes the hash cover more.
_IMPORT = re.compile(
    rb"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]*))",
    re.M,
)


# a larger "script" is not scanned for arena imports (a bot's data file named .py, say)
MAX_SCANNED_SCRIPT = 16 << 20


@functools.lru_cache(maxsize=1024)
def _imported_modules_of(script: Path, mtime_ns: int, size: int) -> frozenset[str]:
    fd = open_regular(script)
    if fd is None:
        return frozenset()
    with os.fdopen(fd, "rb") as handle:
        source = handle.read(MAX_SCANNED_SCRIPT)
    package = _package_of(script)
    names: set[str] = set()
    for match in _IMPORT.finditer(source):
        origin, imported, plain = (g.decode("ascii", "replace") if g else "" for g in match.groups())
        if plain:
            names.update(part.split()[0] for part in plain.split(",") if part.strip())
            continue
        level = len(origin) - len(origin.lstrip("."))
        module = origin.lstrip(".")
        if level and package:  # relative import inside the arena package
            parts = package.split(".")
            stem = ".".join(parts[: len(parts) - level + 1])
            module = f"{stem}.{module}" if module else stem
        names.add(module)
        for part in imported.strip("()").replace("\n", " ").split(","):
            if part.strip():
                names.add(f"{module}.{part.split()[0]}")  # perhaps a submodule
    # dotted names only: `import arena./abs/path/x` in a bot's docstring made a module path of
    # a host file, whose bytecode the arena then wrote (diff review)
    return frozenset(n for n in names if _ARENA_MODULE.fullmatch(n))


_ARENA_MODULE = re.compile(r"arena(?:\.[A-Za-z_]\w*)*")


def _package_of(script: Path) -> str:
    try:
        relative = script.relative_to(PROJECT_ROOT)
    except ValueError:
        return ""
    return ".".join(relative.parent.parts) if relative.parts[0] == "arena" else ""


def _module_files(module: str, stamps: dict[str, int]) -> tuple[Path, ...]:
    """The file of a dotted arena module and of each package above it, those that exist.
    `stamps`: the folders' modification times already read in this scan."""
    parts = module.split(".")
    # which files exist can change only with their folders (an upgrade of a long-running
    # league): the folders' modification times are part of the cache key, each folder's read
    # once per scan (a 16-bot tournament file took 0.17 s re-reading them for every import)
    folders = [os.path.join(_ROOT_TEXT, *parts[:end]) for end in range(len(parts))]
    return _module_files_under(PROJECT_ROOT, module,
                               tuple(_mtime(folder, stamps) for folder in folders))


_ROOT_TEXT = str(PROJECT_ROOT)


def _mtime(folder: str, stamps: dict[str, int]) -> int:
    if folder not in stamps:
        try:
            stamps[folder] = os.stat(folder).st_mtime_ns
        except OSError:
            stamps[folder] = -1
    return stamps[folder]


@functools.lru_cache(maxsize=4096)
def _module_files_under(root: Path, module: str, stamps: tuple[int, ...]) -> tuple[Path, ...]:
    # Cached: a tournament of many bots asks for the same modules again for each bot.
    parts = module.split(".")
    files = []
    for end in range(1, len(parts) + 1):
        path = root.joinpath(*parts[:end])
        if (path / "__init__.py").is_file():
            files.append(path / "__init__.py")
        elif path.with_suffix(".py").is_file():
            files.append(path.with_suffix(".py"))
    return tuple(files)


def distinct_names(names: Sequence[str]) -> list[str]:
    """Display names made distinct: a repeated name gets `#2`, `#3`, ... appended."""
    seen: dict[str, int] = {}
    taken = set(names)
    out = []
    for name in names:
        count = seen.get(name, 0) + 1
        seen[name] = count
        if count == 1:
            out.append(name)
            continue
        candidate = f"{name}#{count}"
        while candidate in taken:  # e.g. a bot already named "x#2" besides two named "x"
            count += 1
            candidate = f"{name}#{count}"
        seen[name] = count
        taken.add(candidate)
        out.append(candidate)
    return out
