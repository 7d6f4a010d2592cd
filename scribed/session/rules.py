"""The rule file: ``secrets.toml`` parsed (cached beside the bytecode), its ``[[rule]]`` tables as
:class:`Rule` objects and its ``[words]``, the vocabulary the value judges and handlers use. Data
only: nothing here judges a text."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, NamedTuple

REDACTED = "[REDACTED_SECRET]"
Span = tuple[int, int, str]  # start, end, rule id
Spans = list[Span]


# Rarest first (counted on transcript text): a keyword is found through its rarest anchor. The
# rarest few are located with bytes.find (memchr), which beats a regex scan when hits are rare.
ANCHORS = "~JKA:._=-"
KINDS = ("token", "named", "scan", "context")


class Rule(NamedTuple):
    """One entry of ``secrets.toml``, compiled: immutable, hashed by identity (rules are keys on the
    hot path). A NamedTuple, not a dataclass: importing dataclasses (and inspect) cost a spawn ~40 M
    instructions, and a tuple is built faster than a frozen dataclass (194 rules at every start)."""

    id: str
    family: str
    kind: str
    keywords: tuple[str, ...]
    example: str
    secret: str
    lookalike: str
    description: str = ""
    regex: str | None = None  # token and scan rules (compiled on first use: see ``pattern``)
    value_regex: str | None = None  # named rules (see ``value``)
    back: int = 0
    boundary: bool = True
    mixed: bool = False
    entropy: float = 0.0
    check: str = ""
    window: int = 0  # scan rules: search this far around each keyword (0: the whole text)

    def __eq__(self, other: object) -> bool:  # identity, as the dataclass (eq=False) had
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    # Compiled on first use, not at import: a ``scribed context`` spawn loads this module but
    # meets few keywords, and compiling all rules up front was most of its import time.
    @property
    def pattern(self) -> re.Pattern[bytes] | None:
        """The token or scan regex (matched on latin-1 bytes)."""
        return _compiled(self.regex) if self.regex else None

    @property
    def value(self) -> re.Pattern[str] | None:
        """A named rule's value shape (case-insensitive)."""
        return _compiled_value(self.value_regex) if self.value_regex else None


Rule.__hash__ = object.__hash__  # type: ignore[method-assign]  # by identity (a NamedTuple body cannot say so)


@functools.cache
def _compiled(regex: str) -> re.Pattern[bytes]:
    return re.compile(regex.encode("ascii"))


@functools.cache
def _compiled_value(regex: str) -> re.Pattern[str]:
    return re.compile(regex, re.IGNORECASE)


def compile_rule(raw: dict[str, Any]) -> Rule:
    """One ``[[rule]]`` table, checked (its regexes compile on first use; tests compile them all)."""
    kind, regex, value = raw["kind"], raw.get("regex"), raw.get("value")
    fields = ("id", "family", "kind", "example", "secret", "lookalike", "description")
    rule = Rule(
        keywords=tuple(raw["keywords"]),
        regex=regex or None,
        value_regex=value or None,
        **{
            k: raw[k]
            for k in (*fields, "back", "boundary", "mixed", "entropy", "check", "window")
            if k in raw
        },
    )
    if kind not in KINDS or (kind in ("token", "scan")) != (rule.regex is not None):
        raise ValueError(f"secrets.toml: rule {rule.id}: bad kind or missing regex")
    if kind == "named" and rule.value_regex is None:
        raise ValueError(f"secrets.toml: rule {rule.id}: a named rule needs a value")
    if kind == "token" and any(anchor(k) < 0 for k in rule.keywords):
        raise ValueError(f"secrets.toml: rule {rule.id}: each keyword needs one of {ANCHORS}")
    return rule


def anchor(keyword: str) -> int:
    """Index of the keyword's rarest anchor character (the pass that finds it), or -1."""
    return next((keyword.rfind(a) for a in ANCHORS if a in keyword), -1)


@functools.cache
def data() -> dict[str, Any]:
    """The rule file, parsed once; it ships inside the package (read by path: importlib.resources
    costs a spawn's `scribed context` ~10 ms of imports). Parsing its TOML costs every spawn ~20 ms,
    so the parsed form is cached beside the package's bytecode, as Python caches a module."""
    raw = Path(__file__).with_name("secrets.toml").read_bytes()
    DIGEST[0] = sha256_hex(raw)
    cache = _cache_path(DIGEST[0])
    try:
        got = json.loads(cache.read_bytes())
        if isinstance(got, dict) and _whole(got, raw):
            return got
    except (OSError, ValueError):
        pass
    import tomllib  # only on a cache miss: importing it costs a spawn ~8 ms

    parsed = tomllib.loads(raw.decode("utf-8"))
    _write_cache(cache, parsed)
    return parsed


def _whole(got: dict[str, Any], raw: bytes) -> bool:
    """A cache is used only if it holds every rule table and the word lists of the file it was
    made from: one that parses but lost rules would redact less, silently."""
    if not isinstance(got.get("words"), dict) or not isinstance(got.get("values"), dict):
        return False
    rules = got.get("rule")
    return isinstance(rules, list) and len(rules) == len(re.findall(rb"(?m)^\s*\[\[rule\]\]", raw))


def _cache_path(digest: str) -> Path:
    """``__pycache__/secrets.<sha256 of the TOML>.json``: an edited rule file never meets a stale cache."""
    return Path(__file__).with_name("__pycache__") / f"secrets.{digest[:20]}.json"


DIGEST = [""]  # the sha256 of the rule file data() read (the compiled passes' cache is keyed by it)


def sha256_hex(raw: bytes) -> str:
    """SHA-256 by Python's own module: hashlib loads OpenSSL (~10 M instructions, ~4 ms) for a spawn's two hashes."""
    try:
        from _sha256 import sha256  # type: ignore[import-not-found, unused-ignore]  # Python 3.11
    except ImportError:  # pragma: no cover (later Pythons name it otherwise)
        from hashlib import sha256
    return str(sha256(raw).hexdigest())


def _write_cache(cache: Path, parsed: dict[str, Any]) -> None:
    """Best effort, like a .pyc: skipped where bytecode is not written or the folder is read-only;
    written whole (temp + rename), so a reader sees the old cache, the new one or none."""
    if sys.dont_write_bytecode:
        return
    tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(exist_ok=True)
        tmp.write_text(json.dumps(parsed, ensure_ascii=False), "utf-8")
        os.replace(tmp, cache)
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def _load() -> tuple[Rule, ...]:
    out = tuple(compile_rule(r) for r in data()["rule"])
    if len({r.id for r in out}) != len(out):
        raise ValueError("secrets.toml: rule ids must be unique")
    return out


RULES = _load()  # every rule, in file order


def _words(name: str) -> frozenset[str]:
    return frozenset(data()["words"][name])


PW, STRONG, WEAK, PASS_TOOLS = _words("pw"), _words("strong"), _words("weak"), _words("pass_verb_tools")
LITERAL_MIN_CHARS = int(data()["values"]["literal_min_chars"])
LITERAL_MIN_ENTROPY = float(data()["values"]["literal_min_entropy"])
KEY_STRONG_MODS = tuple(data()["words"]["key_strong_mods"])
KEY_PUBLIC_MODS = tuple(data()["words"]["key_public_mods"])
KEY_PLAIN_MODS = _words("key_plain_mods")
PLACEHOLDER_WORDS, FUNCTION_WORDS = _words("placeholder"), _words("function")
COOKIE_ATTRS = _words("cookie_attributes")
ASSIGNMENT_WORDS = sorted(PW | STRONG | WEAK | {"cookie"})
