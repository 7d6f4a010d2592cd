"""The rule file: ``secrets.toml`` parsed (cached beside the bytecode), its ``[[rule]]`` tables as
:class:`Rule` objects, and its regexes with ``{name}`` expanded from ``[patterns]`` and ``[words]``.
Data only: nothing here judges a text."""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
from pathlib import Path
from typing import Any, NamedTuple

from scribed.bytecache import sha256_hex, write_whole

REDACTED = "[REDACTED_SECRET]"
Span = tuple[int, int, str]  # start, end, rule id
Spans = list[Span]
ANCHORS = "~JKA<:._=-"  # rarest first (counted on transcripts): a keyword is found through its rarest
KINDS = ("token", "context", "named", "scan")
MARK = re.compile("«([^«»]*)»")  # a test's secret: «value»


class Rule(NamedTuple):
    """One ``[[rule]]`` of ``secrets.toml`` (its header documents the fields), hashed by identity
    (rules are keys on the hot path). Not a dataclass: importing dataclasses costs a spawn ~40 M
    instructions."""

    id: str
    family: str
    kind: str
    keywords: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    pattern: str = ""
    regex: str = ""
    name: str = ""
    value: str = ""
    shape: str = ""
    allow: tuple[str, ...] = ()
    each: str = ""
    run: str = ""
    line: bool = False
    back: int = 0
    boundary: bool = True
    mixed: bool = False
    entropy: float = 0.0
    window: int = 0
    gate: tuple[str, ...] = ()
    gap: str = ""
    gate_gaps: tuple[list[str], ...] = ()  # [gate, gap]: a gate read backwards by a gap of its own
    tests: tuple[str, ...] = ()
    allow_tests: tuple[str, ...] = ()
    description: str = ""

    def __eq__(self, other: object) -> bool:
        return self is other

    def __ne__(self, other: object) -> bool:
        return self is not other

    @property
    def compiled(self) -> re.Pattern[bytes]:
        """The regex, compiled on first use (a spawn meets few rules), matched on latin-1 bytes."""
        return compiled_bytes(self.regex)


Rule.__hash__ = object.__hash__  # type: ignore[method-assign]  # by identity (a NamedTuple body cannot say so)


@functools.cache
def compiled_bytes(regex: str) -> re.Pattern[bytes]:
    """A regex of the file, expanded, matched on the text's latin-1 bytes."""
    return re.compile(expand(regex).encode("latin-1"))


@functools.cache
def compiled_str(regex: str, flags: int = 0) -> re.Pattern[str]:
    """A regex of the file, expanded, for judging a value (a ``str``)."""
    return re.compile(expand(regex), flags)


def compile_rule(raw: dict[str, Any]) -> Rule:
    """One ``[[rule]]`` table, checked (its regexes compile on first use; tests compile them all)."""
    words = data()["words"]
    names = [w for n in raw.get("names", ()) for w in (words[n[1:-1]] if n[:1] == "{" else [n])]
    raw = {**raw, "names": names}
    try:
        fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
        rule = Rule(**fields)
    except TypeError as e:
        raise ValueError(f"secrets.toml: rule {raw.get('id')}: {e}") from None
    need = {"token": rule.regex, "scan": rule.regex, "named": rule.shape, "context": rule.regex}
    if not need.get(rule.kind) or not (rule.keywords or rule.names or rule.pattern) or not rule.allow_tests:
        raise ValueError(f"secrets.toml: rule {rule.id}: bad kind, or no regex, keywords or allow_tests")
    if rule.kind in ("token", "context") and any(anchor(k) < 0 for k in rule.keywords):
        raise ValueError(f"secrets.toml: rule {rule.id}: each keyword needs one of {ANCHORS}")
    if not rule.tests or not all(MARK.search(t) for t in rule.tests):
        raise ValueError(f"secrets.toml: rule {rule.id}: each test marks its secret «like this»")
    return rule


def anchor(keyword: str) -> int:
    """Index of the keyword's rarest anchor character (the pass that finds it), or -1."""
    return next((keyword.rfind(a) for a in ANCHORS if a in keyword), -1)


def trie(entries: list[tuple[str, str]], many: int = 0) -> str:
    """Literal words (each with a leaf regex, "" for none) as one group laid out as a trie: every
    branch starts with a literal, which the regex engine rejects in a nanosecond; where ``many`` or
    more branch, a class of their first letters rejects them in one (a lookahead: none in a pattern
    that is read backwards). Longer words are tried first."""
    root: dict[str, Any] = {}
    for word, leaf in entries:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node.setdefault("", set()).add(leaf)

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        alts += sorted(node.get("", ()), key=lambda leaf: (leaf == "", leaf))
        head = f"(?=[{re.escape(''.join(sorted(node)))}])" if 0 < many <= len(node) and "" not in node else ""
        return alts[0] if len(alts) == 1 else head + "(?:" + "|".join(alts) + ")"

    return emit(root) if root else "(?!)"


@functools.cache
def expand(regex: str) -> str:
    """``{name}``: a ``[patterns]`` regex (itself expanded) or a ``[words]`` list as a trie;
    ``{^name}``: the list in lower, UPPER and Title case; ``{<name}``: as lookbehinds."""

    def sub(m: re.Match[str]) -> str:
        key, words, patterns = m.group(1), data()["words"], data()["patterns"]
        if key[0] == "<" and key[1:] in words:
            return "(?:" + "|".join(f"(?<={re.escape(w)})" for w in words[key[1:]]) + ")"
        if key[0] == "^" and key[1:] in words:  # lower, UPPER, Title: literal branches are fast
            return trie([(v, "") for w in words[key[1:]] for v in {w.lower(), w.upper(), w.capitalize()}])
        if key in patterns or key in words:
            return (
                "(?:" + expand(patterns[key]) + ")"
                if key in patterns
                else trie([(w, "") for w in words[key]])
            )
        raise ValueError(f"secrets.toml: unknown {{{key}}} in {regex!r}")

    return re.sub(r"(?<!\\)\{([<^]?[a-z][a-z0-9_]*)\}", sub, regex)


TOKEN = re.compile(
    r"\\.|\[\^?\]?(?:\\.|[^\]\\])*\]|\(\?(?:<[=!]|[:!=>]|[aiLmsux]+:|P<\w+>)|[()|]|\{\d*,?\d*\}[+?]?|[?*+][+?]?|."
)


def reverse(regex: str) -> str:
    """``regex`` read backwards (it matches a text exactly when this matches the text reversed), for
    a ``pattern`` keyword: the passes run over the reversed text. No lookarounds or backreferences."""
    toks, swap = TOKEN.findall(expand(regex)), {"^": r"\Z", "$": r"\A", r"\A": "$", r"\Z": "^"}
    if any(t in ("(?!", "(?=") or t.startswith("(?<") for t in toks):
        raise ValueError(f"secrets.toml: a pattern has no lookaround: {regex!r}")

    def seq(i: int) -> tuple[str, int]:
        alts: list[list[str]] = [[]]
        while i < len(toks) and toks[i] != ")":
            t, i = toks[i], i + 1
            if t == "|":
                alts.append([])
                continue
            if t.startswith("("):
                inner, i = seq(i)
                t, i = t + inner + ")", i + 1
            while i < len(toks) and toks[i][0] in "{?*+":
                t, i = t + toks[i], i + 1  # a quantifier stays with its atom
            alts[-1].append(swap.get(t, t))
        return "|".join("".join(reversed(a)) for a in alts), i

    return seq(0)[0]


@functools.cache
def data() -> dict[str, Any]:
    """The rule file, parsed once; it ships inside the package (read by path: importlib.resources
    costs a spawn ~10 ms of imports). Parsing its TOML costs every spawn ~20 ms, so the parsed form
    is cached beside the package's bytecode, as Python caches a module, and used only whole: a
    cache that parses but lost rules or lists would redact less, silently."""
    raw = Path(__file__).with_name("secrets.toml").read_bytes()
    cache = Path(__file__).with_name("__pycache__") / f"secrets.{sha256_hex(raw)[:20]}.json"
    with contextlib.suppress(OSError, ValueError):
        got = json.loads(cache.read_bytes())
        rules = got.get("rule") if isinstance(got, dict) else None
        lists = isinstance(got, dict) and all(
            isinstance(got.get(k), dict) for k in ("words", "patterns", "allow")
        )
        if lists and isinstance(rules, list) and len(rules) == len(re.findall(rb"(?m)^\s*\[\[rule\]\]", raw)):
            return got  # type: ignore[no-any-return]
    import tomllib  # only on a cache miss: importing it costs a spawn ~8 ms

    parsed = tomllib.loads(raw.decode("utf-8"))
    if not sys.dont_write_bytecode:  # best effort, like a .pyc
        write_whole(cache, json.dumps(parsed, ensure_ascii=False))
    return parsed


RULES = tuple(compile_rule(r) for r in data()["rule"])  # every rule, in file order
if len({r.id for r in RULES}) != len(RULES):
    raise ValueError("secrets.toml: rule ids must be unique")
PATTERNS: dict[str, str] = data()["patterns"]
VALUES: dict[str, float] = data()["values"]
ALLOW: dict[str, list[str]] = data()["allow"]
