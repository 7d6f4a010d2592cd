"""Secret redaction for transcripts, summaries, ledger rows and log events.

The rules are data (``scribed/secrets.toml``: id, keywords, regex, an example that must be
redacted and a look-alike that must not); this module is the engine that runs them, and
:mod:`scribed.redact_context` holds the rules that judge a value by where it stands.
Everything scribed stores, logs or sends passes through :func:`redact`, so it is fast, never
raises and is idempotent. Only the secret is replaced (``password=[REDACTED_SECRET]``), so a
summary still says *which* credential was involved without containing it.

How it stays fast (see ``bench/redact_speed.py``): no rule scans the text on its own. Each
keyword contains an anchor character (``~ J K A : . _ = -``, rarest first: a keyword is found
through its rarest one); the text is encoded once to ``latin-1``/``replace`` bytes (one byte per
character, so offsets match the str) and reversed, and one pass per anchor character starts with
that single literal, which the regex engine finds at memchr speed, followed by a trie of the
keywords' reversed beginnings (their ends are checked by a lookbehind). A rule's regex runs only
where one of its keywords starts, with bounded quantifiers, so every input is handled in linear
time. A scan rule whose keyword has no anchor costs a full ``in`` check: keep those few.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from scribed import redact_context as ctx
from scribed import redact_values as val
from scribed.redact_values import REDACTED, Span, Spans

__all__ = ["REDACTED", "Finding", "Rule", "count_secrets", "find_secrets", "redact", "redact_obj", "rules"]

# Rarest first (counted on transcript text): a keyword is found through its rarest anchor. The
# rarest few are located with bytes.find (memchr), which beats a regex scan when hits are rare.
ANCHORS = "~JKA:._=-"
_FIND_ANCHORS = b"~JK"
KINDS = ("token", "named", "scan", "context")


@dataclass(frozen=True)
class Rule:
    """One entry of ``secrets.toml``, compiled."""

    id: str
    family: str
    kind: str
    keywords: tuple[str, ...]
    example: str
    secret: str
    lookalike: str
    description: str = ""
    pattern: re.Pattern[bytes] | None = None  # token and scan rules
    value: re.Pattern[str] | None = None  # named rules
    back: int = 0
    boundary: bool = True
    mixed: bool = False
    entropy: float = 0.0
    check: str = ""


class Finding(NamedTuple):
    """A secret found in a text: where, and which rule found it."""

    start: int
    end: int
    rule: str


def _compile(raw: dict[str, Any]) -> Rule:
    kind = raw["kind"]
    regex = raw.get("regex")
    rule = Rule(
        id=raw["id"],
        family=raw["family"],
        kind=kind,
        keywords=tuple(raw["keywords"]),
        example=raw["example"],
        secret=raw["secret"],
        lookalike=raw["lookalike"],
        description=raw.get("description", ""),
        pattern=re.compile(regex.encode("ascii")) if regex else None,
        value=re.compile(raw["value"], re.IGNORECASE) if "value" in raw else None,
        back=raw.get("back", 0),
        boundary=raw.get("boundary", True),
        mixed=raw.get("mixed", False),
        entropy=raw.get("entropy", 0.0),
        check=raw.get("check", ""),
    )
    if kind not in KINDS or (kind in ("token", "scan")) != (rule.pattern is not None):
        raise ValueError(f"secrets.toml: rule {rule.id}: bad kind or missing regex")
    if kind == "named" and rule.value is None:
        raise ValueError(f"secrets.toml: rule {rule.id}: a named rule needs a value")
    if kind == "token" and any(_anchor(k) < 0 for k in rule.keywords):
        raise ValueError(f"secrets.toml: rule {rule.id}: each keyword needs one of {ANCHORS}")
    return rule


def _anchor(keyword: str) -> int:
    """Index of the keyword's rarest anchor character (the pass that finds it), or -1."""
    return next((keyword.rfind(a) for a in ANCHORS if a in keyword), -1)


def _load() -> tuple[Rule, ...]:
    out = tuple(_compile(r) for r in val.data()["rule"])
    ids = [r.id for r in out]
    context = {r.id for r in out if r.kind == "context"}
    if len(set(ids)) != len(ids) or context != ctx.CONTEXT_IDS:
        raise ValueError("secrets.toml: rule ids must be unique and list every context rule")
    return out


RULES = _load()
# Keywords found by the passes (token rules, and scan rules whose keyword has an anchor).
_TOKEN_KW: dict[bytes, list[Rule]] = {}
_NAMED_KW: dict[str, list[Rule]] = {}
for _r in RULES:
    for _k in _r.keywords:
        if _r.kind == "token" or (_r.kind == "scan" and _anchor(_k) >= 0):
            _TOKEN_KW.setdefault(_k.encode("ascii"), []).append(_r)
        elif _r.kind == "named":
            _NAMED_KW.setdefault(_k, []).append(_r)
# Scan rules, with their keywords that need an ``in`` check (the others are found by the passes).
_SCAN = [
    (r, tuple(k.encode("ascii") for k in r.keywords if _anchor(k) < 0)) for r in RULES if r.kind == "scan"
]
_NAMED_RE = re.compile("|".join(map(re.escape, sorted(_NAMED_KW, key=len, reverse=True))))
# Keyword lengths per anchor: at a hit, the keyword is data[start:start + length] for one of them.
_LENS: dict[int, tuple[int, ...]] = {}
for _kb in _TOKEN_KW:
    _c = _kb[_anchor(_kb.decode())]
    _LENS[_c] = tuple(sorted({*_LENS.get(_c, ()), len(_kb)}))


def rules() -> tuple[Rule, ...]:
    """Every rule, in file order (tests feed each example through every writer)."""
    return RULES


def _token_alts(anchor: str) -> list[str]:
    """Trie of the reversed text that follows ``anchor`` for each keyword anchored on it."""
    entries = []
    for kw, rs in _TOKEN_KW.items():
        k = kw.decode()
        a = _anchor(k)
        if k[a] != anchor:
            continue
        leaf = "" if a == len(k) - 1 else f"(?<={re.escape(k[::-1])})"
        entries.append((k[:a][::-1], leaf + (ctx.NB if all(r.boundary for r in rs) else "")))
    return ctx.trie_alts(entries) if entries else []


def _passes() -> tuple[tuple[int, re.Pattern[bytes]], ...]:
    """One regex per anchor: the keyword trie (no group: a hit has ``lastgroup`` None), then
    the context patterns (each ends in a named group)."""
    context = ctx.branches()
    out = []
    for anchor in ANCHORS:
        alts = _token_alts(anchor) + context.get(anchor, [])
        if alts:
            out.append(
                (
                    ord(anchor),
                    re.compile((re.escape(anchor) + "(?:" + "|".join(alts) + ")").encode("latin-1")),
                )
            )
    return tuple(out)


_PASSES = _passes()
_XML_CLOSE_RE = ctx.xml_close_re(val.ASSIGNMENT_WORDS)
_GLUE_RE = re.compile(rb"[A-Za-z0-9_\-]{0,4096}+")
_NOT_ALNUM_RE = re.compile(rb"[^A-Za-z0-9]")
_NEWLINE_RE = re.compile(rb"\r?\n|\\r\\n|\\n")
_DIGIT_RE = re.compile(rb"[0-9]")

# ---------------------------------------------------------------------------------------------
# Running the rules
# ---------------------------------------------------------------------------------------------


def _boundary_ok(data: bytes, start: int) -> bool:
    """Nothing alphanumeric right before ``start``, or a JSON escape (``\\n``) ends there."""
    return (
        start == 0
        or not data[start - 1 : start].isalnum()
        or data[start - 2 : start] in (b"\\n", b"\\r", b"\\t")
    )


def _valid(rule: Rule, secret: bytes, body: bytes) -> bool:
    """The per-rule checks: ``body`` (after the keyword) mixes classes, ``secret`` is random."""
    if rule.mixed and (not val.mixed(body.decode("latin-1")) or len(_NOT_ALNUM_RE.sub(b"", body)) < 16):
        return False
    return not rule.entropy or val.entropy(secret.decode("latin-1")) >= rule.entropy


def _on_token(rule: Rule, data: bytes, start: int, klen: int, spans: Spans) -> None:
    """Run a token rule where its keyword starts; join a token wrapped onto the next line."""
    assert rule.pattern is not None
    m = rule.pattern.match(data, start)
    run_end = _GLUE_RE.match(data, m.end() if m else start + klen)
    end = run_end.end() if run_end else start
    if (m is None or m.end() == end) and _on_split(rule, data, start, end, m is not None, spans):
        return
    if m is None:
        return
    s, e = m.span("s") if "s" in rule.pattern.groupindex else (m.start() - rule.back, m.end())
    if _valid(rule, data[s:e], data[max(s, start + klen) : e]):
        glue = _GLUE_RE.match(data, e)  # a token glued to more token characters takes them along
        spans.append((s, glue.end() if glue and "s" not in rule.pattern.groupindex else e, rule.id))


def _on_split(rule: Rule, data: bytes, start: int, end: int, matched: bool, spans: Spans) -> bool:
    """A token cut by a line break (terminal wrap, raw or JSON-escaped): match the two halves."""
    assert rule.pattern is not None
    nl = _NEWLINE_RE.match(data, end)
    tail = _GLUE_RE.match(data, nl.end()) if nl else None
    if not nl or not tail or tail.end() - nl.end() < 4:
        return False
    if matched and (not val.mixed(tail.group().decode("latin-1")) or not _DIGIT_RE.search(tail.group())):
        return False  # a whole token followed by an ordinary word
    first = start - rule.back
    joined = data[first:end] + tail.group()
    m = rule.pattern.match(joined, rule.back)
    cut = end - first
    if m is None or m.end() <= cut or not _valid(rule, joined[: m.end()], joined[rule.back : m.end()]):
        return False
    spans.append((first, end, "split-token"))
    spans.append((nl.end(), nl.end() + m.end() - cut, "split-token"))
    return True


def _on_named(name: str, value: str, vstart: int, spans: Spans) -> bool:
    """Named rules: a vendor keyword in the assignment's name and a value of the vendor's shape."""
    if not value or val.is_placeholder(value):
        return False
    for km in _NAMED_RE.finditer(name.lower()):
        for rule in _NAMED_KW[km.group()]:
            assert rule.value is not None
            if rule.value.fullmatch(value) and val.entropy(value) >= max(rule.entropy, 2.5):
                spans.append((vstart, vstart + len(value), rule.id))
                return True
    return False


def _on_scan(data: bytes, text: str, spans: Spans, found: set[Rule]) -> None:
    """Scan rules: a keyword anywhere in the text (``found`` by the passes, else by an ``in``
    check, case-sensitive like every keyword) enables a whole-text regex."""
    for rule, keywords in _SCAN:
        if rule not in found:
            for k in keywords:
                if k in data:
                    break
            else:
                continue
        assert rule.pattern is not None
        for m in rule.pattern.finditer(data):
            s, e = m.span("s") if "s" in rule.pattern.groupindex else m.span()
            v = text[s:e]
            if rule.boundary and not _boundary_ok(data, m.start()):
                continue
            if rule.check == "value" and not val.secret_span(v, "pw", False, "", "password", "password"):
                continue
            if rule.check == "base64" and not val.is_base64_blob(v):
                continue
            spans.append((s, e, rule.id))


def _dispatch(
    text: str, data: bytes, rdata: bytes, anchor: int, m: re.Match[bytes], spans: Spans, scans: set[Rule]
) -> None:
    """Confirm one anchor hit; reversed index ``r`` is forward index ``n - 1 - r``."""
    n, kind, pos = len(data), m.lastgroup, len(data) - 1 - m.start()
    if kind is None:  # a keyword: its reversed beginning ends the match
        start = n - m.end()
        for klen in _LENS[anchor]:
            for rule in _TOKEN_KW.get(data[start : start + klen], ()):
                if rule.kind == "scan":
                    scans.add(rule)
                elif not rule.boundary or _boundary_ok(data, start):
                    _on_token(rule, data, start, klen, spans)
    elif kind == "url":
        ctx.on_url(text, pos, spans)
    elif kind == "pgpass":
        ctx.on_pgpass(text, pos, spans)
    elif kind == "pem":
        ctx.on_pem(text, n - m.end(), spans)
    elif kind == "cli":
        ctx.on_cli(text, rdata, pos, spans)
    elif kind in ("short", "long"):
        ctx.on_short_flag(text, pos, kind == "long", spans)


def _rare_hits(rx: re.Pattern[bytes], anchor: int, rdata: bytes) -> list[re.Match[bytes]]:
    """A pass for one of the rarest anchors: a memchr loop beats a regex scan."""
    out = []
    pos = rdata.find(anchor)
    while pos >= 0:
        m = rx.match(rdata, pos)
        if m:
            out.append(m)
        pos = rdata.find(anchor, pos + 1)
    return out


def _spans(text: str) -> Spans:
    """Every secret span in ``text`` with the rule that found it, unsorted."""
    spans: Spans = []
    n = len(text)
    if n < 6:
        return spans
    # One byte per character (non-latin-1 becomes '?'), so byte offsets are str offsets, and
    # the scan runs over compact bytes even when the str holds emoji (4 bytes per character).
    data = text.encode("latin-1", "replace")
    rdata = data[::-1]
    keywords: list[tuple[int, int]] = []
    scans: set[Rule] = set()
    for anchor, rx in _PASSES:
        if anchor not in rdata:
            continue  # one memchr; short texts lack most anchors
        for m in _rare_hits(rx, anchor, rdata) if anchor in _FIND_ANCHORS else rx.finditer(rdata):
            if m.lastgroup == "kw":
                ks, ke = m.span("kw")
                keywords.append((n - ke, n - ks))
            else:
                _dispatch(text, data, rdata, anchor, m, spans, scans)
    if b"</" in data:
        for m in _XML_CLOSE_RE.finditer(data):
            ctx.on_xml(text, m.start(), m.group("name").decode("latin-1"), spans)
    if _SCAN:
        _on_scan(data, text, spans, scans)
    # Assignments in text order, skipping keywords inside a value that was already redacted:
    # deep inside a redacted unquoted run, a keyword's separator and value are in the run too.
    keywords.sort()
    cov_start = cov_end = -1
    for kw_start, kw_end in keywords:
        if cov_start <= kw_start and kw_end + 8 < cov_end:
            continue
        cov = ctx.on_assignment(text, rdata, kw_start, kw_end, spans, _on_named)
        if cov is not None and cov[1] > cov_end:
            cov_start, cov_end = cov
    return spans


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``, as found (unmerged, sorted): for tests and diagnostics."""
    return sorted(Finding(*s) for s in _spans(text) if s[1] > s[0])


def _merged(text: str) -> list[tuple[int, int]]:
    """Secret spans, sorted and merged (touching spans become one)."""
    spans = _spans(text)
    if not spans:
        return []
    out: list[tuple[int, int]] = []
    for s, e, _ in sorted(spans):
        if e <= s:
            continue
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def redact(text: str) -> str:
    """Replace every secret value in ``text`` with :data:`REDACTED`; idempotent, never raises."""
    spans = _merged(text)
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for s, e in spans:
        out.append(text[pos:s])
        out.append(REDACTED)
        pos = e
    out.append(text[pos:])
    return "".join(out)


def count_secrets(text: str) -> int:
    """How many secrets :func:`redact` would replace (log the count, never the values)."""
    return len(_merged(text))


def redact_obj(obj: Any) -> Any:
    """Redact every string inside nested dicts/lists/tuples/sets (log events, ledger rows).

    A string under a secret-ish key (``{"password": "hunter2"}``) is judged with the key as its
    name, because the value alone carries no hint. Containers are copied, never mutated; cycles
    are preserved.
    """
    return _redact_obj(obj, {})


def _redact_obj(obj: Any, memo: dict[int, Any]) -> Any:
    if isinstance(obj, str):
        return redact(obj)
    oid = id(obj)
    if oid in memo:
        return memo[oid]
    if isinstance(obj, dict):
        out_d: dict[Any, Any] = {}
        memo[oid] = out_d
        for k, v in obj.items():
            nk = redact(k) if isinstance(k, str) else k
            out_d[nk] = (
                _redact_named(k, v) if isinstance(k, str) and isinstance(v, str) else _redact_obj(v, memo)
            )
        return out_d
    if isinstance(obj, list):
        out_l: list[Any] = []
        memo[oid] = out_l
        out_l.extend(_redact_obj(v, memo) for v in obj)
        return out_l
    if isinstance(obj, tuple):
        items = [_redact_obj(v, memo) for v in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, (set, frozenset)):
        return type(obj)(_redact_obj(v, memo) for v in obj)
    return obj


def _redact_named(key: str, value: str) -> str:
    """Redact a string stored under ``key``, using the key as the value's name."""
    kk = val.key_kind(key)
    sub: Span | None = None
    if kk is not None:
        kind, kw = kk
        if kw == "authorization":
            am = ctx.AUTH_VALUE_RE.match(value)
            s = val.secret_span(am.group("cred"), "strong", True, "", kw, key) if am else None
            sub = (am.start("cred") + s[0], am.start("cred") + s[1], s[2]) if am and s else None
        else:
            sub = val.secret_span(value, kind, True, "", kw, key)
    if sub:
        value = value[: sub[0]] + REDACTED + value[sub[1] :]
    return redact(value)
