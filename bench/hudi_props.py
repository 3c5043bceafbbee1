"""A ``--props`` file read as Apache Hudi's ``DFSPropertiesConfiguration`` reads it.

Hudi's rules (``hudi-common/.../DFSPropertiesConfiguration.java``), line by line, in file order:

* a line that starts with ``#`` (in its first column) or is empty is skipped;
* a line with neither ``=`` nor any whitespace is skipped, silently (``isValidLine``);
* runs of whitespace become one space; the separator is the first ``=`` when the line has one,
  else the first space; key and value are trimmed (``splitProperty``): ``key=value``,
  ``key = value`` and ``key value`` are the same setting. ``:`` is not a separator;
* a line starting ``include=`` or ``include =`` reads the named file there, as if inline; a name
  that is not absolute is relative to the including file's folder; a file read twice is a loop,
  refused;
* a later line wins over an earlier one.

Two differences, both for lines Hudi would turn into nonsense: a line of only whitespace (Hudi
sets the empty key to the empty value) is skipped, and so is an indented ``#`` comment (Hudi sets
the empty key to the comment). Files are read through :class:`engines.table.storage.Storage`: a
local path, ``file://``, or ``s3://`` (with the storage layer's query parameters, kept for an
included file).
"""

from __future__ import annotations

import re
from posixpath import dirname, isabs, join, normpath
from urllib.parse import urlsplit, urlunsplit

from engines.table.storage import Storage, StorageError


class PropsError(ValueError):
    """A properties file that cannot be read: the message names the file."""


def split_property(line: str) -> tuple[str, str]:
    """(key, value) of a valid line, as Hudi's ``splitProperty``: ``=`` first, else whitespace."""
    line = re.sub(r"\s+", " ", line)
    delimiter = "=" if "=" in line else " "
    key, _, value = line.partition(delimiter)
    return key.strip(), value.strip()


def is_setting(line: str) -> bool:
    """Hudi's ``isValidLine``: not a ``#`` comment, not empty, and has ``=`` or whitespace (plus
    our two skips: a blank or an indented comment line)."""
    if line.startswith("#") or not line.strip() or line.lstrip().startswith("#"):
        return False
    return "=" in line or re.search(r"\s", line) is not None


def _sibling(path: str, name: str) -> str:
    """``name`` as Hudi resolves an include from ``path``: a URI or an absolute path as it is, else
    beside ``path`` (an ``s3://`` file's query parameters kept)."""
    if "://" in name:
        return name
    if "://" not in path:
        return name if isabs(name) else normpath(join(dirname(path), name))
    parts = urlsplit(path)
    where = name if isabs(name) else normpath(join(dirname(parts.path), name))
    return urlunsplit((parts.scheme, parts.netloc, where, parts.query, ""))


def _read_text(path: str) -> str:
    parts = urlsplit(path) if "://" in path else None
    if parts is None:
        folder, name = dirname(path) or ".", path.rsplit("/", 1)[-1]
    else:
        folder = urlunsplit((parts.scheme, parts.netloc, dirname(parts.path), parts.query, ""))
        name = parts.path.rsplit("/", 1)[-1]
    try:
        return Storage(folder).read_bytes(name).decode("utf-8")
    except (OSError, StorageError, ValueError) as exc:
        raise PropsError(f"--props {path}: cannot read it: {' '.join(str(exc).split())}") from None


def read_props(path: str, _visited: set[str] | None = None) -> list[tuple[str, str, str]]:
    """Every setting of the file at ``path`` (includes followed, inline) in order, each as
    ``(where, key, value)`` with ``where`` = ``file:line``; a later one wins."""
    visited = set() if _visited is None else _visited
    if path in visited:
        raise PropsError(f"--props {path}: include loop: the file is already referenced")
    visited.add(path)
    out: list[tuple[str, str, str]] = []
    for number, line in enumerate(_read_text(path).splitlines(), 1):
        if not is_setting(line):
            continue
        key, value = split_property(line)
        if line.startswith(("include=", "include =")):
            out += read_props(_sibling(path, value), visited)
        else:
            out.append((f"{path}:{number}", key, value))
    return out
