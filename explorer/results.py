"""What every public result shares: `to_dict()` (JSON-safe), `to_json()`, and a notebook display.

A result class defines `to_dict()` and `_repr_html_()`; this mixin adds `to_json()`. `HTML` is the
one type for views that are pages rather than plotly figures (the head view, highlighted text):
it displays itself in a notebook and `save(path)` writes it as one standalone file.
"""
from __future__ import annotations

import errno
import json
import math
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

import numpy as np

from explorer.text.errors import ExplorerError
from explorer.text.plain import html as escape_html


def json_safe(value):
    """numpy arrays and scalars as lists and numbers, tuples as lists, recursively; NaN and infinity as None
    (JSON has no such numbers: a figure that is undefined is null); the rest as is."""
    if isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if isinstance(value, np.generic):
        return json_safe(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def strict_json(value, **dumps) -> str:
    """`value` as strict JSON text (RFC 8259: no NaN, no Infinity, which Python's json writes by default and
    other parsers refuse): every JSON the project prints or writes goes through here. `dumps` goes to json.dumps."""
    return json.dumps(json_safe(value), allow_nan=False, **dumps)


class JsonResult:
    """Mixin for result dataclasses: `to_json()` is `to_dict()` as one JSON object."""

    def to_dict(self) -> dict:
        raise NotImplementedError

    def to_json(self, **dumps) -> str:
        """`to_dict()` as JSON text; `dumps` goes to json.dumps (e.g. indent=2)."""
        return strict_json(self.to_dict(), **dumps)


def rounded(x):
    """An array (or None) as nested lists of floats rounded to 6 digits: what JSON output carries."""
    return None if x is None else np.round(np.asarray(x, dtype=np.float64), 6).tolist()


def html_table(rows: list[dict], caption: str = "") -> str:
    """An HTML table of `rows` (one dict per row, keys as columns), every cell escaped."""
    cols = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{escape_html(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{escape_html(_cell(row.get(c, '')))}</td>" for c in cols) + "</tr>"
                   for row in rows)
    cap = f"<caption style='text-align:left'>{escape_html(caption)}</caption>" if caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value) -> str:
    return f"{value:.4f}" if isinstance(value, (float, np.floating)) else str(value)


@dataclass(frozen=True)
class HTML(JsonResult):
    """A standalone HTML page (its scripts inlined, nothing fetched from the network)."""
    page: str
    title: str = ""
    height: int = 600  # pixels the notebook display gives it

    def save(self, path) -> Path:
        """Write the page to `path`, a new file (UTF-8; write_new_files' rules); returns the path."""
        write_new_files({path: self.page.encode("utf-8")})
        return Path(path)

    def to_dict(self) -> dict:
        return {"title": self.title, "html": self.page}

    def _repr_html_(self) -> str:
        # An iframe keeps the page's own <html>, styles and scripts apart from the notebook's.
        return (f'<iframe srcdoc="{escape_html(self.page)}" style="width:100%;border:0" '
                f'height="{self.height}" title="{escape_html(self.title)}"></iframe>')


# ---- output files ---------------------------------------------------------------------------------------

def _output_error(key: str, path) -> ExplorerError:
    return ExplorerError(key, path=str(path)[:200])


def check_new_files(paths) -> list[str]:
    """Refuse, before any work, every output path that could not become a new file: an empty or invalid name
    (a folder's name, a NUL byte, a name longer than its file system takes), a folder that does not exist, a
    path that exists already (a file, a folder, a device, a link: nothing is overwritten or written through),
    and two outputs of one command at the same place. One ExplorerError line naming the path as given."""
    out, seen = [], {}
    for given in paths:
        if not isinstance(given, (str, os.PathLike)):
            raise _output_error("output_bad_name", given)
        path = os.fspath(given)
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        name = os.path.basename(path)
        if not name or name in (".", "..") or "\0" in path:
            raise _output_error("output_bad_name", given)
        folder = os.path.dirname(os.path.abspath(path))
        try:
            limit = os.pathconf(folder, "PC_NAME_MAX") if os.path.isdir(folder) else 255
        except (OSError, ValueError):
            limit = 255
        if len(os.fsencode(name)) > limit:
            raise _output_error("output_name_too_long", given)
        if not os.path.isdir(folder):
            raise _output_error("output_no_folder", given)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            st = None
        except OSError:
            raise _output_error("output_bad_name", given) from None
        if st is not None:
            raise _output_error("output_exists" if stat.S_ISREG(st.st_mode) else "output_not_new_file", given)
        if not os.access(folder, os.W_OK | os.X_OK):
            raise _output_error("output_not_writable", given)
        where = os.stat(folder)
        key = (where.st_dev, where.st_ino, os.path.normcase(name))
        if key in seen:
            raise ExplorerError("output_same_path", path=str(given)[:200], other=str(seen[key])[:200])
        seen[key] = given
        out.append(path)
    return out


def write_new_files(files: Mapping) -> None:
    """Write each of `files` ({path: bytes}) as a new file, all of them or none: check_new_files first, then each
    into a new hidden file beside its path (O_CREAT|O_EXCL|O_NOFOLLOW, _new_temporary), then each linked into
    place, which fails where the path appeared meanwhile (link never follows a link at its destination). On
    any failure, Ctrl+C included, every file this call placed is removed again. Errors name the paths as
    given, never a temporary one."""
    paths = check_new_files(files)
    temps: list[str] = []
    placed: list[str] = []
    current = None
    try:
        for path, data in zip(paths, files.values()):
            current = path
            fd, tmp = _new_temporary(os.path.dirname(os.path.abspath(path)))
            temps.append(tmp)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
        for path, tmp in zip(paths, temps):
            current = path
            _place(tmp, path)
            placed.append(path)
    except BaseException as err:
        for path in placed:
            try:
                os.unlink(path)
            except OSError:
                pass
        if isinstance(err, FileExistsError):
            raise _output_error("output_exists", current) from None
        if isinstance(err, OSError):
            reason = err.strerror or type(err).__name__
            raise ExplorerError("output_failed", path=str(current)[:200], reason=reason) from None
        raise
    finally:
        for tmp in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass


def _place(tmp: str, path: str) -> None:
    """`tmp`'s content at `path`, a new file: a hard link (atomic, and it refuses an existing path); where the
    file system has no hard links, a copy into a file opened O_CREAT|O_EXCL|O_NOFOLLOW."""
    try:
        os.link(tmp, path)
        return
    except FileExistsError:
        raise
    except OSError as err:
        if err.errno not in (errno.EPERM, errno.ENOSYS, errno.EOPNOTSUPP):  # no hard links here
            raise
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as out, open(tmp, "rb") as src:
            out.write(src.read())
    except BaseException:
        os.unlink(path)
        raise


def _new_temporary(folder: str) -> tuple[int, str]:
    """A new hidden file in `folder`, opened for writing: O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666 less the umask
    (the permissions any new file gets; mkstemp's are 0600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = os.path.join(folder, f".head-explorer-{os.getpid()}-{secrets.token_hex(4)}.part")
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", folder)
