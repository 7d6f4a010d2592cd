"""Secret redaction for transcripts, summaries, ledger rows and log events.

The rules are data (``scribed/secrets.toml``: id, keywords, regex, an example that must be
redacted and a look-alike that must not); this module is the engine that runs them, and
:mod:`scribed.session.redact_context` holds the rules that judge a value by where it stands.
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

import bisect
import functools
import re
from typing import Any, NamedTuple

from scribed.session import redact_context as ctx
from scribed.session import redact_values as val
from scribed.session import regex_cache as saved
from scribed.session import rules as data
from scribed.session.rules import REDACTED, Rule, Spans

__all__ = [
    "REDACTED", "Finding", "Rule", "count_secrets", "find_secrets", "redact", "redact_obj", "redact_path", "rules",
]  # fmt: skip

# The rarest anchors are located with bytes.find (memchr), which beats a regex scan there.
_FIND_ANCHORS = b"~JK"
MIXED_MIN_ALNUM = 16  # a "mixed" token needs this many letters and digits after its keyword
SPLIT_TAIL_MIN = 4  # a token's continuation after a line break: at least this long
MIN_SECRET_TEXT = 6  # shorter text holds no keyword and value


class Finding(NamedTuple):
    """A secret found in a text: where, and which rule found it."""

    start: int
    end: int
    rule: str


RULES = data.RULES
if {r.id for r in RULES if r.kind == "context"} != ctx.CONTEXT_IDS:
    raise ValueError(
        "secrets.toml: the context rules must be exactly the handlers' (redact_context.CONTEXT_IDS)"
    )
# Keywords found by the passes (token rules, and scan rules whose keyword has an anchor).
_TOKEN_KW: dict[bytes, list[Rule]] = {}
for _r in RULES:
    for _k in _r.keywords:
        if _r.kind == "token" or (_r.kind == "scan" and data.anchor(_k) >= 0):
            _TOKEN_KW.setdefault(_k.encode("ascii"), []).append(_r)
# Scan rules, with their keywords that need an ``in`` check (the others are found by the passes).
_SCAN = [
    (r, tuple(k.encode("ascii") for k in r.keywords if data.anchor(k) < 0)) for r in RULES if r.kind == "scan"
]
# (anchor, the text before it that the trie matched) -> keywords ending there: (length of the
# part before the anchor, keyword, rules). A shorter keyword whose part before the anchor is a
# suffix of a longer one's is listed under the longer one too (the trie reports the longest).
_BY_HEAD: dict[tuple[int, bytes], list[tuple[int, bytes, list[Rule]]]] = {}
for _kb, _rs in _TOKEN_KW.items():
    _i = data.anchor(_kb.decode())
    _BY_HEAD.setdefault((_kb[_i], _kb[:_i]), []).append((_i, _kb, _rs))
for (_c, _head), _entries in _BY_HEAD.items():
    for _j in range(1, len(_head) + 1):
        _entries.extend(e for e in _BY_HEAD.get((_c, _head[_j:]), []) if e not in _entries)


def rules() -> tuple[Rule, ...]:
    """Every rule, in file order (tests feed each example through every writer)."""
    return RULES


def _token_alts(anchor: str) -> list[str]:
    """Trie of the reversed text that follows ``anchor`` for each keyword anchored on it."""
    entries = []
    for kw, rs in _TOKEN_KW.items():
        k = kw.decode()
        a = data.anchor(k)
        if k[a] != anchor:
            continue
        leaf = "" if a == len(k) - 1 else f"(?<={re.escape(k[::-1])})"
        entries.append((k[:a][::-1], leaf + (ctx.NB if all(r.boundary for r in rs) else "")))
    return ctx.trie_alts(entries) if entries else []


_ANCHORS = tuple(ord(a) for a in data.ANCHORS)
_branches = functools.cache(ctx.branches)


@functools.cache
def _pass(anchor: int) -> re.Pattern[bytes]:
    """One anchor's regex: the keyword trie (no group: a hit has ``lastgroup`` None), then the context
    patterns (each ends in a named group); compiled once per rule set (:mod:`.regex_cache`)."""

    def source() -> bytes:
        a = chr(anchor)
        alts = _token_alts(a) + _branches().get(a, []) or ["(?!)"]  # nothing anchored: never matches
        return (re.escape(a) + "(?:" + "|".join(alts) + ")").encode("latin-1")

    return saved.compiled(f"pass{anchor}", source)


@functools.cache
def _xml_close_re() -> re.Pattern[bytes]:
    return ctx.xml_close_re(data.ASSIGNMENT_WORDS)


_GLUE_RE = re.compile(rb"[A-Za-z0-9_\-]*+")
_RUN_RE = re.compile(rb"[A-Za-z0-9_\-]{0,1024}+")  # bounded: checked at every keyword hit
_NOT_ALNUM_RE = re.compile(rb"[^A-Za-z0-9]")
_NEWLINE_RE = re.compile(rb"\r?\n|\\r\\n|\\n")

# ---------------------------------------------------------------------------------------------
# Running the rules
# ---------------------------------------------------------------------------------------------


def _boundary_ok(data: bytes, start: int) -> bool:
    """Nothing alphanumeric right before ``start``, or a JSON escape (``\\n``) ends there."""
    return not data[start - 1 : start].isalnum() or data[start - 2 : start] in (b"\\n", b"\\r", b"\\t")


def _checked(rule: Rule, v: str) -> bool:
    """A rule's ``check``: "value" judges like a password (no placeholder), "base64" a blob."""
    if rule.check == "value":
        return val.secret_span(v, "pw", True, "", "password", "password") is not None
    return rule.check != "base64" or val.is_base64_blob(v)


def _valid(rule: Rule, secret: bytes, body: bytes) -> bool:
    """The per-rule checks: ``body`` (after the keyword) mixes classes, ``secret`` is random."""
    if rule.mixed and (
        not val.mixed(body.decode("latin-1")) or len(_NOT_ALNUM_RE.sub(b"", body)) < MIXED_MIN_ALNUM
    ):
        return False
    text = secret.decode("latin-1")
    return (not rule.entropy or val.entropy(text) >= rule.entropy) and _checked(rule, text)


class _Scan:
    """One text being scanned: its bytes (forward and reversed) and what was found so far."""

    __slots__ = ("cover", "data", "rdata", "scans", "spans", "text")

    def __init__(self, text: str, data: bytes, rdata: bytes) -> None:
        self.text, self.data, self.rdata = text, data, rdata
        self.spans: Spans = []
        self.scans: dict[Rule, list[int]] = {}  # scan keywords the passes found
        # Token spans, sorted: a keyword inside one is skipped, which keeps keyword floods linear.
        self.cover: list[tuple[int, int]] = []

    def covered(self, pos: int) -> bool:
        i = bisect.bisect_right(self.cover, (pos, len(self.data))) - 1
        return i >= 0 and pos < self.cover[i][1]

    def token(self, s: int, e: int, rule_id: str) -> None:
        self.spans.append((s, e, rule_id))
        bisect.insort(self.cover, (s, e))


def _on_token(st: _Scan, rule: Rule, start: int, klen: int) -> None:
    """Run a token rule where its keyword starts; join a token wrapped onto the next line."""
    assert rule.pattern is not None
    data = st.data
    m = rule.pattern.match(data, start)
    if m is None:  # perhaps cut by a line break
        run = _RUN_RE.match(data, start + klen)
        _on_split(st, rule, start, run.end() if run else start + klen, False)
        return
    nxt = data[m.end() : m.end() + 1]
    if not (nxt.isalnum() or nxt in (b"_", b"-")) and _on_split(st, rule, start, m.end(), True):
        return  # the token ends its run: it may go on after a line break
    if "s" in rule.pattern.groupindex:
        s, e = m.span("s")
        if _valid(rule, data[s:e], data[max(s, start + klen) : e]):
            st.spans.append((s, e, rule.id))
        return
    s, e = m.start() - rule.back, m.end()
    if not _valid(rule, data[s:e], data[max(s, start + klen) : e]):
        return
    # A token glued to more token characters takes the whole run along, both ways, so that
    # redacting it cannot leave a shorter token-shaped run behind (idempotence).
    glue = _GLUE_RE.match(data, e)
    if data[s - 1 : s] in (b"_", b"-"):
        back = _GLUE_RE.match(st.rdata, len(data) - s)
        s -= back.end() - (len(data) - s) if back else 0
        s += data[s - 1 : s] == b"\\"  # keep a JSON escape (\n) whole
    st.token(s, glue.end() if glue else e, rule.id)


def _on_split(st: _Scan, rule: Rule, start: int, end: int, matched: bool) -> bool:
    """A token cut by a line break (terminal wrap, raw or JSON-escaped): match the two halves."""
    assert rule.pattern is not None
    nl = _NEWLINE_RE.match(st.data, end)
    tail = _RUN_RE.match(st.data, nl.end()) if nl else None
    if not nl or not tail or tail.end() - nl.end() < SPLIT_TAIL_MIN:
        return False
    t = st.text[nl.end() : tail.end()]  # a whole token then an ordinary word, a date, a commit sha:
    if matched and not (val.looks_random(t) and val.same_alphabet(st.text[start:end], t)):
        return False
    first = start - rule.back
    joined = st.data[first:end] + tail.group()
    m = rule.pattern.match(joined, rule.back)
    cut = end - first
    if m is None or m.end() <= cut or not _valid(rule, joined[: m.end()], joined[rule.back : m.end()]):
        return False
    st.token(first, end, "split-token")
    st.token(nl.end(), nl.end() + m.end() - cut, "split-token")
    return True


def _on_scan(st: _Scan) -> None:
    """Scan rules: a keyword anywhere in the text (found by the passes, else by an ``in`` check,
    case-sensitive like every keyword) enables the regex over the text, or around the keyword."""
    data = st.data
    for rule, keywords in _SCAN:
        found = st.scans.get(rule) or [i for k in keywords for i in _finds(data, k, rule.window)]
        if not found:
            continue
        w = rule.window
        for lo, hi in [(max(0, p - w), p + w) for p in found] if w else [(0, len(data))]:
            _search(st, rule, lo, hi)


def _finds(data: bytes, keyword: bytes, all_of_them: int) -> list[int]:
    """Where ``keyword`` occurs: the first place only, unless ``all_of_them``."""
    out, pos = [], data.find(keyword)
    while pos >= 0:
        out.append(pos)
        pos = data.find(keyword, pos + 1) if all_of_them else -1
    return out


def _search(st: _Scan, rule: Rule, lo: int, hi: int) -> None:
    assert rule.pattern is not None
    m = rule.pattern.search(st.data, lo, hi)
    while m:
        s, e = m.span("s") if "s" in rule.pattern.groupindex else m.span()
        if (not rule.boundary or _boundary_ok(st.data, m.start())) and _checked(rule, st.text[s:e]):
            st.spans.append((s, e, rule.id))
        m = rule.pattern.search(st.data, max(s, m.start() + 1), hi)  # the next may start in a value


def _dispatch(st: _Scan, anchor: int, m: re.Match[bytes]) -> None:
    """Confirm one anchor hit; reversed index ``r`` is forward index ``n - 1 - r``."""
    n, kind, pos = len(st.data), m.lastgroup, len(st.data) - 1 - m.start()
    if kind is None:  # a keyword: the trie matched the text before the anchor, reversed
        head = st.data[n - m.end() : pos]
        for hlen, kw, rules in _BY_HEAD.get((anchor, head), ()):
            start = pos - hlen
            if not st.data.startswith(kw, start) or st.covered(start):
                continue
            for rule in rules:
                if rule.kind == "scan":
                    st.scans.setdefault(rule, []).append(start)
                elif not rule.boundary or _boundary_ok(st.data, start):
                    _on_token(st, rule, start, len(kw))
    elif kind == "url":
        ctx.on_url(st.text, pos, st.spans)
    elif kind == "pgpass":
        ctx.on_pgpass(st.text, pos, st.spans)
    elif kind == "pem":
        ctx.on_pem(st.text, n - m.end(), st.spans)
    elif kind == "cli":
        ctx.on_cli(st.text, st.rdata, pos, st.spans)
    elif kind in ("short", "long"):
        ctx.on_short_flag(st.text, pos, kind == "long", st.spans)


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
    n = len(text)
    if n < MIN_SECRET_TEXT:
        return []
    # One byte per character (non-latin-1 becomes '?'), so byte offsets are str offsets, and
    # the scan runs over compact bytes even when the str holds emoji (4 bytes per character).
    data = text.encode("latin-1", "replace")
    st = _Scan(text, data, data[::-1])
    keywords: list[tuple[int, int]] = []
    for anchor in _ANCHORS:
        if anchor not in st.rdata:
            continue  # one memchr; short texts lack most anchors
        rx = _pass(anchor)
        for m in _rare_hits(rx, anchor, st.rdata) if anchor in _FIND_ANCHORS else rx.finditer(st.rdata):
            if m.lastgroup == "kw":
                ks, ke = m.span("kw")
                keywords.append((n - ke, n - ks))
            else:
                _dispatch(st, anchor, m)
    if b"</" in data:
        for m in _xml_close_re().finditer(data):
            ctx.on_xml(text, m.start(), m.group("name").decode("latin-1"), st.spans)
    if _SCAN:
        _on_scan(st)
    # Assignments in text order, skipping keywords inside a value that was already redacted:
    # deep inside a redacted unquoted run, a keyword's separator and value are in the run too.
    keywords.sort()
    cov_start = cov_end = -1
    for kw_start, kw_end in keywords:
        if cov_start <= kw_start and kw_end + 8 < cov_end:
            continue
        cov = ctx.on_assignment(text, st.rdata, kw_start, kw_end, spans=st.spans)
        if cov is not None and cov[1] > cov_end:
            cov_start, cov_end = cov
    return st.spans


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``, as found (unmerged, sorted): for tests and diagnostics."""
    return sorted(Finding(*s) for s in _spans(text) if s[1] > s[0])


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where :func:`redact` replaces: secret spans, sorted and merged (touching spans become one)."""
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
    spans = secret_spans(text)
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for s, e in spans:
        out += (text[pos:s], REDACTED)
        pos = e
    out.append(text[pos:])
    return "".join(out)


_PATH_SEP = re.compile(r"([/\\])")


@functools.lru_cache(maxsize=1024)  # the same few source paths, redacted per session they hold
def redact_path(path: str) -> str:
    """A file path for display or storage (provenance, the ledger, an archive's sidecar), redacted
    whole and then one component at a time: in running text a name right after ``/`` is a path,
    never an assignment (``/etc/passwd: …``), but a file name can be ``DB_PASSWORD=hunter2 x.md``."""
    parts = _PATH_SEP.split(redact(path))
    return "".join(p if p in ("/", "\\") else redact(p) for p in parts)


def count_secrets(text: str) -> int:
    """How many secrets :func:`redact` would replace (log the count, never the values)."""
    return len(secret_spans(text))


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
    sub = ctx.keyed_value_span(key, value)
    return redact(value[: sub[0]] + REDACTED + value[sub[1] :] if sub else value)
