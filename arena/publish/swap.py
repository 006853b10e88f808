"""Replace a folder by a freshly built one in a single step, so that nobody sees half of it.

`build_and_swap(target, build)` builds into a temporary folder next to `target` (same file system,
so the final rename cannot be a copy), then puts it in place: on Linux with one `renameat2`
exchange (readers of a live site see the old folder or the new one, never neither), elsewhere
with two renames. A build that fails leaves `target` exactly as it was, and no temporary folder.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from arena.leftovers import remove_stale

_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths atomically (Linux renameat2); False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                          ctypes.c_uint]
    done = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return done == 0  # e.g. EINVAL on a file system without exchange: fall back


def build_and_swap(target: str | Path, build: Callable[[Path], object]) -> Path:
    """Call `build(folder)` on an empty temporary folder, then make that folder `target`.

    An existing `target` is replaced as a whole (its old contents are deleted afterwards). If
    `build` raises, the temporary folder is removed, `target` is untouched and the error goes on.
    """
    target = Path(target)
    if target.is_symlink():  # a link to the live folder stays a link: replace what it names
        target = target.resolve()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        # a build killed outright (kill -9, a power cut) left its whole site beside the target
        remove_stale(target.parent, (f".{target.name}.new-", f".{target.name}.old-"))
        fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}.new-", dir=target.parent))
    except (FileExistsError, NotADirectoryError) as error:
        # the file in the way: the nearest folder above that is there, unless it is a folder
        blocking = next((p for p in target.parents if p.exists()), None)
        if blocking is None or blocking.is_dir():
            blocking = error.filename
        raise OSError(error.errno, f"{blocking} is a file, not a folder", str(target)) from None
    except OSError as error:  # named by the folder asked for, not the temporary one beside it
        raise OSError(error.errno, error.strerror, str(target)) from None
    try:
        build(fresh)
        os.chmod(fresh, 0o755)  # mkdtemp makes it private; a site is for reading
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise
    if not target.exists():
        os.rename(fresh, target)
        return target
    if _exchange(fresh, target):
        shutil.rmtree(fresh, ignore_errors=True)  # now the old contents
        return target
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rename(target, old / target.name)
    os.rename(fresh, target)
    shutil.rmtree(old, ignore_errors=True)
    return target
