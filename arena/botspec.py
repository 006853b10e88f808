"""Naming a bot: a path to an executable, a `.py` file, or a folder with a `bot.toml` manifest.

A bare name such as `random` or `alphabeta` that is not a path names a bundled bot in
`<project>/bots/<name>/`.

Manifest (`bot.toml`)::

    name = "greedy"                 # required (defaults to the folder name)
    command = "bot.py"              # string (split like a shell would) or list
    author = "..."                  # optional
    version = "1.0"                 # optional
    language = "python"             # optional
    args = ["--level", "easy"]      # optional, appended to the command

A first command element ending in `.py` runs with the current Python interpreter; a first element
naming a file in the folder is made absolute; anything else is looked up on PATH.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BUNDLED_DIR = PROJECT_ROOT / "bots"
MANIFEST = "bot.toml"
HASH_CHARS = 16
_IGNORED_DIRS = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache", ".ruff_cache"}


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

    @property
    def argv(self) -> list[str]:
        """The full command line: the command followed by the extra arguments."""
        return [*self.command, *self.args]


def bundled_bots() -> list[str]:
    if not BUNDLED_DIR.is_dir():
        return []
    return sorted(p.name for p in BUNDLED_DIR.iterdir() if (p / MANIFEST).is_file())


def resolve_bot(ref: str, args: Sequence[str] = (), name: str | None = None) -> BotSpec:
    """Resolve a bot reference to a BotSpec; raises BotSpecError with a one-line message."""
    text = str(ref).strip()
    if not text:
        raise BotSpecError("empty bot reference")
    path = Path(text).expanduser()
    if not path.exists():
        bundled = BUNDLED_DIR / text
        if os.sep not in text and "/" not in text and (bundled / MANIFEST).is_file():
            path = bundled
        else:
            known = ", ".join(bundled_bots()) or "none"
            raise BotSpecError(
                f"no bot at {text!r}: not a file or folder, and not a bundled bot ({known})"
            )
    path = path.resolve()
    try:
        if path.is_dir():
            spec = _from_folder(path)
        elif not path.is_file():
            raise BotSpecError(f"bot {text!r} is not a regular file or a folder")
        elif path.suffix == ".py":
            spec = BotSpec(path.stem, [sys.executable, str(path)], path.parent, _hash_file(path),
                           language="python")
        elif os.access(path, os.X_OK):
            spec = BotSpec(path.stem or path.name, [str(path)], path.parent, _hash_file(path))
        else:
            raise BotSpecError(f"bot {text!r} is neither executable, a .py file nor a folder")
    except OSError as error:
        where = error.filename or text
        raise BotSpecError(f"cannot read bot {text!r}: {where}: {error.strerror or error}") \
            from None
    spec.args = tuple(spec.args) + tuple(str(a) for a in args)
    if name:
        spec.name = name
    return spec


def _from_folder(folder: Path) -> BotSpec:
    manifest = folder / MANIFEST
    if not manifest.is_file():
        raise BotSpecError(f"folder {str(folder)!r} has no {MANIFEST} manifest")
    import tomllib

    try:
        text = manifest.read_text(encoding="utf-8-sig")
        data = tomllib.loads(text)
    except OSError as error:
        raise BotSpecError(f"cannot read {str(manifest)!r}: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        if "end of document" in first:  # tomllib gives no line there: it is the last one
            first += f" (line {max(1, len(text.splitlines()))})"
        raise BotSpecError(f"bad manifest {str(manifest)!r}: {first}") from None
    where = f"manifest {str(manifest)!r}"
    name = data.get("name", folder.name)
    if not isinstance(name, str) or not name.strip():
        raise BotSpecError(f"{where}: 'name' must be a non-empty string")
    command = data.get("command")
    if isinstance(command, str):
        try:
            command = shlex.split(command)
        except ValueError as error:
            raise BotSpecError(f"{where}: bad 'command': {error}") from None
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(part, str) and part for part in command)
    ):
        raise BotSpecError(f"{where}: 'command' must be a string or a non-empty list of strings")
    extra = data.get("args", [])
    if not isinstance(extra, list) or not all(isinstance(a, str | int | float) for a in extra):
        raise BotSpecError(f"{where}: 'args' must be a list of strings")
    fields = {}
    for key in ("author", "version", "language"):
        value = data.get(key, "")
        if not isinstance(value, str | int | float):
            raise BotSpecError(f"{where}: {key!r} must be a string")
        fields[key] = str(value)
    first = command[0]
    if first.endswith(".py"):
        script = (folder / first).resolve()
        if not script.is_file():
            raise BotSpecError(f"{where}: script {first!r} not found in the folder")
        command = [sys.executable, str(script), *command[1:]]
        fields["language"] = fields["language"] or "python"
    elif (folder / first).is_file():
        command = [str((folder / first).resolve()), *command[1:]]
    elif shutil.which(first) is None:
        raise BotSpecError(f"{where}: command {first!r} not found (is its runtime installed?)")
    return BotSpec(
        name=name.strip(),
        command=command,
        cwd=folder,
        program_hash=_hash_folder(folder),
        args=tuple(str(a) for a in extra),
        **fields,
    )


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    digest.update(path.read_bytes())
    return digest.hexdigest()[:HASH_CHARS]


def _hash_folder(folder: Path) -> str:
    digest = hashlib.sha256()
    files = []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in _IGNORED_DIRS)
        for file_name in names:
            if file_name.endswith((".pyc", ".pyo")):
                continue
            files.append(Path(root) / file_name)
    for file in sorted(files, key=lambda p: p.relative_to(folder).as_posix()):
        digest.update(file.relative_to(folder).as_posix().encode() + b"\0")
        try:
            digest.update(file.read_bytes())
        except OSError:
            pass
        digest.update(b"\0")
    return digest.hexdigest()[:HASH_CHARS]


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
