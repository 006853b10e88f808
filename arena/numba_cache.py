"""Machine code of numba-compiled bot code for bots that see their own folder read-only.

numba keeps compiled code beside its module (`__pycache__`) only where it can write. A
sandboxed bot cannot write its folder, so each of its processes would compile afresh: 1.2 s of
CPU for the solver (`arena.solver.kernel`), 4 s for alphabeta's search (`bots/alphabeta/
compiled.py`), at every start. Two halves fix that:

- `seed_private_cache(module_file)`, called by such a module before its functions are compiled:
  where the module's `__pycache__` is read-only, numba gets a cache folder of the process's own
  (made in the temporary folder, the sandbox's private tmp, removed at exit) holding copies of
  the machine code found beside the module, which it then loads instead of compiling;
- `warm_for_bot(folder)`, called by the arena before it starts a sandboxed bundled bot: compiles the
  bundled numba code outside the sandbox, where the folder is writable (an editable or a user
  install), once per change of the code; a stamp beside the code says it is done.

Where neither can write (a read-only system-wide install), bots compile in each process, as
before: slower to start, never wrong.

A third helper is for the bot itself: `compile_aside(module_file, code)`, called by a bot's
loader thread, compiles in a child process unless the machine code is known fresh (a copy or an
edit of a bundled bot, its first run, or every run of a copy in the sandbox). Compiling in the
bot's own process starves its search thread of the GIL: measured, 100 ms moves took up to
200 ms for the 4-40 s of alphabeta's compile, and a bot lost games on time.
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

PRIVATE_ROOT = "arena-numba-cache"
# the bundled modules with numba code: what compiles all of it, and the bundled bots (folder
# names) that use it
_ROOT = Path(__file__).resolve().parent.parent
_ALPHABETA = _ROOT / "bots" / "alphabeta"
KERNEL = _ROOT / "arena" / "solver" / "kernel.py"
BUNDLED = {
    KERNEL: (
        "from arena.solver.engine import warm_up; warm_up()",
        ("perfect",)),
    _ALPHABETA / "compiled.py": (
        f"import sys; sys.path.insert(0, {str(_ALPHABETA)!r}); import compiled; "
        "compiled.warm_up()",
        ("alphabeta", "perfect")),
}
WARM_TIMEOUT_S = 180


def _cache_folder(module_file: str | Path) -> Path:
    return Path(os.path.abspath(module_file)).parent / "__pycache__"


def _writable(folder: Path) -> bool:
    target = folder if folder.is_dir() else folder.parent
    return os.access(target, os.W_OK)


def _seeds(module_file: str | Path) -> bool:
    """Whether `seed_private_cache` gives numba a private folder for `module_file`: machine code
    lies beside it, read-only."""
    tree = _cache_folder(module_file)
    return tree.is_dir() and not _writable(tree)


def seed_private_cache(module_file: str | Path) -> None:
    """Before `module_file`'s functions are compiled: if numba cannot write beside it, point
    numba at a private cache seeded with the machine code found there (see the module's doc)."""
    import numba
    from numba.core.caching import UserProvidedCacheLocator

    source = os.path.abspath(module_file)  # the path numba derives its cache folder from
    tree = _cache_folder(source)
    if not _seeds(source):
        return  # numba writes beside the module, or there is nothing to copy
    # this process's own folder (in the sandbox, its private tmp): nobody else can plant machine
    # code in it, and no other process half-writes a file of it
    root = numba.config.CACHE_DIR or _private_root()
    if root is None:
        return  # no room: numba compiles in memory
    target = Path(root) / UserProvidedCacheLocator.get_suitable_cache_subpath(source)
    try:
        target.mkdir(parents=True, exist_ok=True)
        for entry in tree.glob(f"{Path(source).stem}.*.nb[ic]"):
            # a file already there came from this process or its child (`compile_aside`),
            # newer than what lies beside the module: kept
            if not (target / entry.name).exists():
                shutil.copyfile(entry, target / entry.name)
    except OSError:
        return
    numba.config.CACHE_DIR = str(root)


@functools.cache
def _private_root() -> str | None:
    try:
        root = tempfile.mkdtemp(prefix=PRIVATE_ROOT + "-")
    except OSError:
        return None
    atexit.register(shutil.rmtree, root, True)
    return root


def _stamp(module: Path) -> Path:
    return _cache_folder(module) / f"{module.stem}.arena-warm"


def _stamp_text(module: Path) -> str:
    import importlib.metadata

    stat = module.stat()
    version = importlib.metadata.version("numba")
    return f"{stat.st_mtime_ns} {stat.st_size} numba {version} python {sys.version_info[:2]}\n"


def is_warm(module: Path) -> bool:
    try:
        return _stamp(module).read_text() == _stamp_text(module)
    except (OSError, ImportError):
        return False


def warm_for_bot(folder: str | Path) -> list[str]:
    """Before a sandboxed start of the bundled bot in `folder`: the numba code it uses, compiled
    where it is stale and can be written (see `warm`); returns the modules compiled now."""
    name = Path(folder).name
    return [module.name for module, (_, bots) in BUNDLED.items()
            if name in bots and warm(module)]


@functools.cache
def warm(module: Path) -> bool:
    """Compile `module`'s numba code beside it if stale and writable (once per process); True if
    it was compiled now. Never raises: a failure only costs the bots their compile time."""
    code, _ = BUNDLED[module]
    tree = _cache_folder(module)
    if not module.is_file() or is_warm(module) or not _writable(tree):
        return False
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    try:
        # no stamp until this compile is done: a failed one (another Python, no numba) is retried
        _stamp(module).unlink(missing_ok=True)
        subprocess.run([sys.executable, "-c", code], cwd=_ROOT, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=WARM_TIMEOUT_S, check=True)
        _stamp(module).write_text(_stamp_text(module))
    except (OSError, subprocess.SubprocessError, ImportError):
        return False
    return True


def compile_aside(module_file: str | Path, code: str) -> bool:
    """Unless `module_file`'s machine code is known fresh (`is_warm`), run `code`, which compiles
    it, in a child process, so that this process only loads the result; True if it ran and
    succeeded. Never raises: a failure only means the caller compiles in its own process.

    numba keeps one cache folder per process. Where the child can write beside the module and
    no private folder is in play, it does, and a stamp marks the code fresh. Otherwise (the
    sandbox, a read-only install) both processes use this process's private folder, named to
    the child, which would else write into a folder of its own, removed at its exit."""
    module = Path(os.path.abspath(module_file))
    if is_warm(module):
        return False
    try:
        import numba
    except ImportError:
        return False
    env = dict(os.environ)
    beside = (_writable(_cache_folder(module)) and not numba.config.CACHE_DIR
              and not _seeds(KERNEL))
    if not beside:
        root = numba.config.CACHE_DIR or _private_root()
        if root is None:
            return False
        numba.config.CACHE_DIR = env["NUMBA_CACHE_DIR"] = str(root)
    try:
        subprocess.run([sys.executable, "-c", code], cwd=module.parent, env=env,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       timeout=WARM_TIMEOUT_S, check=True)
        if beside:
            _stamp(module).write_text(_stamp_text(module))
    except (OSError, subprocess.SubprocessError, ImportError):
        return False
    return True
