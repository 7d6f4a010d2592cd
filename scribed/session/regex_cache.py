"""The redactor's big per-anchor regexes, compiled once per rule set rather than once per process.

A spawn's ``scribed context`` redacts a few short texts, yet compiling the pass of each anchor its
text holds (``_ : . - A``, a few thousand characters of regex each) cost it about a third of its
instructions. ``re`` cannot pickle a compiled pattern, but what ``re`` compiles is a list of ints
that ``_sre.compile`` turns into a pattern; that list is kept beside the package's bytecode, as
Python keeps a module's, in a file named by this Python's regex engine (:data:`TAG`) and the hash
of the pattern's own text. The text is built every time (cheap); only its compilation is saved.
So a cached file can only ever be the compiled form of the very text asked for (the text stored
in it is compared too), whatever was edited when; another Python keeps files of its own tag. A
file that is unreadable, malformed or refused by ``_sre`` is ignored, and anything unexpected in
this Python's ``re`` internals falls back to :func:`re.compile`. ``tests/test_regex_cache.py``
checks that a cached pattern equals the freshly compiled one (``re.Pattern`` equality compares
the code).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from scribed.session.rules import sha256_hex

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = os.path.dirname(__file__)
# Where Python would put this folder's bytecode (PYTHONPYCACHEPREFIX moves it out of the package).
FOLDER = (
    os.path.join(sys.pycache_prefix, os.path.abspath(HERE).lstrip(os.sep))
    if sys.pycache_prefix
    else os.path.join(HERE, "__pycache__")
)


def _tag() -> str:
    """This Python's regex engine: its compiled code is only valid for the same one."""
    import _sre  # type: ignore[import-not-found]

    parts = (sys.version, str(_sre.MAGIC), str(_sre.CODESIZE))
    return sha256_hex("\0".join(parts).encode())[:12]


TAG = _tag()


def compiled(name: str, source: Callable[[], bytes]) -> re.Pattern[bytes]:
    """The pattern ``source()`` compiles to, read from the cache when a process of the same
    :data:`TAG` compiled the same text before."""
    text = source()
    path = os.path.join(FOLDER, f"regex.{TAG}.{name}.{sha256_hex(text)[:24]}.json")
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError, RuntimeError, AttributeError):
        return _read(path, text)
    try:
        parts = _parts(text)
        pattern = _load(parts)
    except Exception:  # this Python's re internals differ: compile as usual, cache nothing
        return re.compile(text)
    if not sys.dont_write_bytecode:
        _write(path, parts)
    return pattern


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


def _read(path: str, text: bytes) -> re.Pattern[bytes]:
    with open(path, "rb") as f:
        parts = json.loads(f.read())
    if parts["pattern"].encode("latin-1") != text:  # never another text's code, whatever the name says
        raise ValueError("regex cache holds another pattern")
    return _load(parts)


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


DOTS = 4  # regex.TAG.NAME.HASH.json


def _drop_stale(path: str) -> None:
    """Remove this pattern's files of this Python made from other texts (an upgrade or an edited
    rule file), so the folder holds one file a pattern and a Python, as it holds one .pyc a module
    and a Python; another Python's files are its own."""
    folder, name = os.path.split(path)
    prefix = name.rsplit(".", 2)[0] + "."  # "regex.TAG.pass95."
    with contextlib.suppress(OSError):
        for other in os.listdir(folder):
            if (
                other != name
                and other.startswith(prefix)
                and other.endswith(".json")
                and other.count(".") == DOTS
            ):
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(folder, other))
