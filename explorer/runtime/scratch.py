"""Scratch folders that never outlive their run.

Each is named after the process that made it (`.<name>.partial-<pid>-<random>` beside an export,
`head-explorer-<pid>-<random>` in the app's one writable folder, cache_dir()). `finally`
removes it on errors, Ctrl+C and SIGTERM; what a SIGKILL or a power cut leaves behind is removed by
the next run, which deletes every such folder whose process is gone. Folders are made with mkdir's
normal mode (0777 less the umask), so a renamed export gets the permissions any new folder would.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import uuid
from pathlib import Path
from typing import Iterator

from explorer.runtime.config import env_config



def cache_dir() -> Path:
    """The one folder the app writes to at run time (scratch folders for training and model zips), made
    on first use: $HEAD_EXPLORER_CACHE, else the user's cache folder (XDG_CACHE_HOME on Linux). The code
    tree is only read, so it can be read-only and owned by another user."""
    import platformdirs

    path = Path(env_config().cache or platformdirs.user_cache_dir("head-explorer", appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


_OWNED = re.compile(r"^(?:\..+\.partial|head-explorer)-(\d+)-[0-9a-f]{8}$")


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def clean_stale(folder: str | os.PathLike) -> list[Path]:
    """Remove our scratch folders in `folder` whose process has died; returns what was removed."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _OWNED.match(entry.name)
        if m and entry.is_dir(follow_symlinks=False) and not _alive(int(m[1])):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _new(parent: Path, stem: str) -> Path:
    clean_stale(parent)
    path = parent / f"{stem}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    path.mkdir()  # mode 0777 & ~umask, unlike mkdtemp's 0700
    return path


def _umask() -> int:
    try:  # Linux: read it without changing it (os.umask would, briefly, for every thread)
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def normal_modes(folder: Path) -> None:
    """Give `folder`'s files the mode a plain open() would (some writers use 0600 temp files)."""
    mask = _umask()
    for f in folder.rglob("*"):
        f.chmod((0o777 if f.is_dir() else 0o666) & ~mask)


def partial_for(out: Path) -> Path:
    """A new scratch folder beside `out`, to be renamed onto it when complete."""
    return _new(out.parent, f".{out.name}.partial")


@contextlib.contextmanager
def temporary() -> Iterator[Path]:
    """A scratch folder in the app's cache folder, removed on exit whatever happens."""
    path = _new(cache_dir(), "head-explorer")
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


_PROCESS: list[Path] = []  # the process's long-lived scratch folder, once made


def process_folder() -> Path:
    """A scratch folder that lives as long as this process (files built once and served many times,
    e.g. model zips), removed at exit; after a crash, by the next run's clean_stale."""
    if not _PROCESS or not _PROCESS[0].is_dir():
        import atexit

        path = _new(cache_dir(), "head-explorer")
        atexit.register(shutil.rmtree, path, True)
        _PROCESS[:] = [path]
    return _PROCESS[0]
