"""Files kept beside the package's bytecode, as Python keeps a module's: written whole, best effort,
never where bytecode is not written, keyed by their content.

Big regexes (the redactor's per-anchor passes) are compiled once, not once per process: compiling
them cost a spawn's ``scribed context`` a third of its instructions. What ``re`` compiles is a list
of ints that ``_sre.compile`` turns into a pattern; it is kept in a file named by this Python's regex
engine (:data:`TAG`) and the hash of the pattern's text, which is stored and compared too. A file
unreadable, malformed or refused by ``_sre`` is ignored; anything unexpected in ``re``'s internals
falls back to :func:`re.compile`. A leaf module: it imports nothing of scribed."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

HERE = os.path.join(os.path.dirname(__file__), "session")  # the redactor's passes
# Where Python would put this folder's bytecode (PYTHONPYCACHEPREFIX moves it out of the package).
FOLDER = (
    os.path.join(sys.pycache_prefix, os.path.abspath(HERE).lstrip(os.sep))
    if sys.pycache_prefix
    else os.path.join(HERE, "__pycache__")
)


def sha256_hex(raw: bytes) -> str:
    """SHA-256 by Python's own module: hashlib loads OpenSSL (~10 M instructions, ~4 ms)."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found, unused-ignore]  # Python 3.11
    except ImportError:  # pragma: no cover (later Pythons name it otherwise)
        from hashlib import sha256
    return str(sha256(raw).hexdigest())


def write_whole(path: Path, text: str) -> bool:
    """Write a cache file whole (temp + rename): a reader sees it or nothing; False, leaving nothing
    behind, where the folder cannot be written."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text, "utf-8")
        os.replace(tmp, path)
    except (OSError, ValueError):
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        return False
    return True


def _tag() -> str:
    """This Python's regex engine: its compiled code is only valid for the same one."""
    import _sre  # type: ignore[import-not-found]

    return sha256_hex("\0".join((sys.version, str(_sre.MAGIC), str(_sre.CODESIZE))).encode())[:12]


TAG = _tag()


def compiled(name: str, source: Callable[[], bytes]) -> re.Pattern[bytes]:
    """The pattern ``source()`` compiles to, read from the cache when a process of the same
    :data:`TAG` compiled the same text before."""
    text = source()
    path = os.path.join(FOLDER, f"regex.{TAG}.{name}.{sha256_hex(text)[:24]}.json")
    with contextlib.suppress(OSError, ValueError, TypeError, KeyError, RuntimeError, AttributeError):
        with open(path, "rb") as f:
            parts = json.loads(f.read())
        if parts["pattern"].encode("latin-1") != text:  # never another text's code, whatever the name says
            raise ValueError("regex cache holds another pattern")
        return _load(parts)
    try:
        parts = _parts(text)
        pattern = _load(parts)
    except Exception:  # this Python's re internals differ: compile as usual, cache nothing
        return re.compile(text)
    if not sys.dont_write_bytecode and write_whole(Path(path), json.dumps(parts)):
        _drop_stale(path)
    return pattern


def _parts(text: bytes) -> dict[str, Any]:
    """What :func:`re._compiler.compile` hands ``_sre.compile`` for ``text`` (no flags)."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    p = _parser.parse(text, 0)
    groupindex = dict(p.state.groupdict)
    indexgroup: list[str | None] = [None] * p.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    code = [int(c) for c in _compiler._code(p, 0)]  # plain ints: its opcodes are int subclasses
    return {"pattern": text.decode("latin-1"), "flags": p.state.flags, "code": code,
            "groups": p.state.groups - 1, "groupindex": groupindex, "indexgroup": indexgroup}  # fmt: skip


def _load(parts: dict[str, Any]) -> re.Pattern[bytes]:
    import _sre

    code, groupindex = parts["code"], parts["groupindex"]
    if not (isinstance(code, list) and isinstance(groupindex, dict)):  # _sre checks the items
        raise TypeError("malformed regex cache")
    text, indexgroup = parts["pattern"].encode("latin-1"), tuple(parts["indexgroup"])
    pattern: re.Pattern[bytes] = _sre.compile(
        text, parts["flags"], code, parts["groups"], groupindex, indexgroup
    )
    return pattern


DOTS = 4  # regex.TAG.NAME.HASH.json


def _drop_stale(path: str) -> None:
    """Remove this pattern's files of this Python made from other texts (an upgrade, an edited rule
    file), as a folder holds one .pyc a module and a Python; another Python's files are its own."""
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
