"""Bytecode of the arena's own modules that bots import, written by the arena for them.

Bots run with PYTHONDONTWRITEBYTECODE (a bot must not write into the arena's package, and in
the sandbox it cannot), so a module that only bots import (`arena.sdk`, `arena.botoptions`) was
compiled from source at every start of every Python bot wherever nothing else had cached it:
an editable install (the README's), or any machine with PYTHONDONTWRITEBYTECODE set, as many
Docker images have. A bundled random bot's start took 31.7 ms of CPU there, 17.1 ms with the
caches (issue 13: starts are what a large field pays for).

So before a bot starts, the arena writes the caches of the arena files the bot's scripts import,
where the bot's interpreter looks for them (`__pycache__` beside each file, as the import system
names it, whatever PYTHONPYCACHEPREFIX the arena itself runs under), atomically (a temporary
file renamed, as the import system does), and only for its own package: a bot's own modules are
its entrant's code, never compiled by the arena. A read-only install is skipped quietly; its bots
compile from source as before.
"""

from __future__ import annotations

import importlib.util
import os
import py_compile
import sys
from collections.abc import Iterable
from pathlib import Path

from arena.botspec import BotSpec, arena_modules_of

_prepared: set[tuple[str, str, tuple[str, ...]]] = set()  # the bots done in this process


def cache_path(source: Path) -> Path:
    """Where an interpreter without a pycache prefix looks for the cache of `source`."""
    return source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"


def is_current(source: Path, cache: Path) -> bool:
    """Whether `cache` is a timestamp-checked cache of `source` as it is now (the check the
    import system makes: magic number, flags, the source's modification time and size)."""
    try:
        info = source.stat()
        with open(cache, "rb") as handle:
            header = handle.read(16)
    except OSError:
        return False
    expected = (importlib.util.MAGIC_NUMBER + bytes(4)
                + (int(info.st_mtime) & 0xFFFF_FFFF).to_bytes(4, "little")
                + (info.st_size & 0xFFFF_FFFF).to_bytes(4, "little"))
    return header == expected


ARENA_PACKAGE = Path(__file__).resolve().parent


def ensure(sources: Iterable[Path], outside: Path | None = None) -> int:
    """Write the missing or stale caches of `sources` that are the arena package's own files
    (and not inside `outside`, a bot's folder); returns how many were written. A bot shapes
    what its scripts import, so a source or a `__pycache__` that is a link, or that lies
    anywhere else, is never written for: a bot that named a host file, or linked its folder's
    `__pycache__` into the package, had the arena write bytecode that the next arena process
    ran (diff review)."""
    return write_caches(s for s in sources if _own_file(s, outside))


def write_caches(sources: Iterable[Path]) -> int:
    """Write the missing or stale caches of `sources`, whatever they are (`ensure` decides
    which may be written); returns how many were written."""
    written = 0
    for source in sources:
        cache = cache_path(source)
        if is_current(source, cache):
            continue
        try:
            py_compile.compile(str(source), cfile=str(cache), doraise=True,
                               invalidation_mode=py_compile.PycInvalidationMode.TIMESTAMP)
        except (OSError, py_compile.PyCompileError):
            continue  # a read-only install, or a file being replaced: the bot compiles it
        written += 1
    return written


def _own_file(source: Path, outside: Path | None) -> bool:
    """Whether `source` is a regular file of the arena package, reached without links, with a
    `__pycache__` beside it that is no link either, and not inside `outside`."""
    try:
        real = source.resolve(strict=True)
    except OSError:
        return False
    if real != Path(os.path.abspath(source)) or not real.is_relative_to(ARENA_PACKAGE):
        return False
    if outside is not None and real.is_relative_to(outside.resolve()):
        return False
    return not (source.is_symlink() or (real.parent / "__pycache__").is_symlink())


def prepare_bot(spec: BotSpec) -> None:
    """Cache the arena modules `spec`'s scripts import, once per bot program and process."""
    key = (spec.program_hash, str(spec.cwd), tuple(spec.command))
    if key in _prepared:
        return
    _prepared.add(key)
    ensure(arena_modules_of(spec), outside=spec.cwd)
