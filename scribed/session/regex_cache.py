"""The redactor's big per-anchor regexes, compiled once per rule set rather than once per process.

A spawn's ``scribed context`` redacts a few short texts, yet building and compiling the pass of
each anchor its text holds (``_ : . - A``, a few thousand characters of regex each) cost it about
a third of its instructions. ``re`` cannot pickle a compiled pattern, but what ``re`` compiles is
a list of ints that ``_sre.compile`` turns into a pattern; that list is kept beside the package's
bytecode, as Python keeps a module's, in a file named by :func:`key`: the hash of everything the
pattern is built from (the rule file, the engine's modules) and of the Python and ``_sre`` that
compiled it. A different rule file, engine or Python never meets the file; a file that is
unreadable, malformed or refused by ``_sre`` is ignored, and anything unexpected in this Python's
``re`` internals falls back to :func:`re.compile`. ``tests/test_regex_cache.py`` checks that a
cached pattern equals the freshly compiled one (``re.Pattern`` equality compares the code).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from scribed.session import redact_values as val

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = os.path.dirname(__file__)
FOLDER = os.path.join(HERE, "__pycache__")


def key(*names: str) -> str | None:
    """A hash of what a pattern is built from: the files (in this folder) by size and time, as
    Python checks a .pyc, the rule file also by the hash of what the redactor loaded, and this
    Python's regex engine; None (no caching) when a file cannot be read."""
    import _sre  # type: ignore[import-not-found]

    parts = [sys.version, str(_sre.MAGIC), str(_sre.CODESIZE), val.DIGEST[0]]
    try:
        for name in names:
            st = os.stat(os.path.join(HERE, name))
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        return None
    return val.sha256_hex("\0".join(parts).encode())[:24]


def compiled(name: str, source: Callable[[], bytes]) -> re.Pattern[bytes]:
    """The pattern ``source()`` compiles to, read from ``__pycache__`` when an earlier process
    built it under the same :data:`KEY` (``source`` is then not called)."""
    path = os.path.join(FOLDER, f"regex.{KEY}.{name}.json") if KEY else ""
    if path:
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError, RuntimeError, AttributeError):
            return _read(path)
    text = source()
    try:
        parts = _parts(text)
        pattern = _load(parts)
    except Exception:  # this Python's re internals differ: compile as usual, cache nothing
        return re.compile(text)
    if path and not sys.dont_write_bytecode:
        _write(path, parts)
    return pattern


# Hashed when the redactor is imported, as it loads its rules: a later edit never pairs the rules
# this process holds with patterns built from other ones.
KEY = key("secrets.toml", "redact.py", "redact_context.py", "redact_values.py", "regex_cache.py")


def _parts(text: bytes) -> dict[str, Any]:
    """What :func:`re._compiler.compile` hands ``_sre.compile`` for ``text`` (no flags)."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    p = _parser.parse(text, 0)
    groupindex = dict(p.state.groupdict)
    indexgroup: list[str | None] = [None] * p.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    return {
        "pattern": text.decode("latin-1"),
        "flags": p.state.flags,
        "code": [int(c) for c in _compiler._code(p, 0)],  # plain ints: its opcodes are int subclasses
        "groups": p.state.groups - 1,
        "groupindex": groupindex,
        "indexgroup": indexgroup,
    }


def _read(path: str) -> re.Pattern[bytes]:
    with open(path, "rb") as f:
        return _load(json.loads(f.read()))


def _load(parts: dict[str, Any]) -> re.Pattern[bytes]:
    import _sre

    code, groupindex = parts["code"], parts["groupindex"]
    if not (isinstance(code, list) and isinstance(groupindex, dict)):  # _sre checks the items
        raise TypeError("malformed regex cache")
    text = parts["pattern"].encode("latin-1")
    indexgroup = tuple(parts["indexgroup"])
    pattern: re.Pattern[bytes] = _sre.compile(
        text, parts["flags"], code, parts["groups"], groupindex, indexgroup
    )
    return pattern


def _write(path: str, parts: dict[str, Any]) -> None:
    """Best effort, like a .pyc, and whole (temp + rename): a reader sees the file or none."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(parts))
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return
    _drop_stale(path)


DOTS = 3  # regex.KEY.NAME.json


def _drop_stale(path: str) -> None:
    """Remove this pattern's files made under other keys (an upgrade or an edited rule file), so
    the folder holds one file a pattern, as it holds one .pyc a module."""
    folder, name = os.path.split(path)
    suffix = "." + name.split(".", 2)[2]  # ".pass95.json"
    with contextlib.suppress(OSError):
        for other in os.listdir(folder):
            if (
                other != name
                and other.startswith("regex.")
                and other.endswith(suffix)
                and other.count(".") == DOTS
            ):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, other))
