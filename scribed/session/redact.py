"""The redaction engine: where the rules of ``secrets.toml`` run, and their matches (judged by
:mod:`scribed.session.values`). Everything scribed stores, logs or sends passes through
:func:`redact`: fast, idempotent, never raising, replacing only the secret (``password=[REDACTED_SECRET]``).

Fast (``bench/redact_speed.py``) because no rule scans the text: each keyword holds an anchor
character (``~ J K A : . _ = -``, found through its rarest); the text is encoded once to latin-1
bytes (offsets match the str) and reversed, and one regex pass per anchor starts with that literal
(found at memchr speed), then tries a trie of the keywords' reversed beginnings (their ends checked
by a lookbehind), of the ``names`` before a separator, and the reversed ``pattern`` keywords. A
rule's regex runs only where its keyword is, with bounded quantifiers: linear time.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator
from typing import NamedTuple

from scribed import bytecache
from scribed.session import rules as data
from scribed.session import values as val
from scribed.session.rules import REDACTED, Rule, Spans

__all__ = ["REDACTED", "Finding", "Rule", "count_secrets", "find_secrets", "redact", "redact_path", "rules"]

RARE = b"~JK<"  # these anchors are located with bytes.find (memchr), which beats a regex scan
MIN_SECRET_TEXT = 6  # shorter text holds no keyword and value
LINE_MAX = 4096  # a ``line`` rule looks this far back for its line's start
NB = r"(?:(?![A-Za-z0-9])|(?=[nrt]\\))"  # reversed: no letter before a keyword, or a JSON escape
GAP = r"[ \t\]\"'`*\\]{0,40}+"  # between a name and its separator: quotes, brackets, markdown
SEPARATORS = {"=": "[:?]?", ":": ""}  # anchors a name stands before (``:=`` and ``?=`` end in '=')


class Finding(NamedTuple):
    start: int
    end: int
    rule: str  # the rule that found it


RULES = data.RULES
_KW: dict[bytes, list[Rule]] = {}  # literal keywords found by the passes
_BY_NAME: dict[str, list[Rule]] = {}  # a name's last word (lowercase) -> the context rules it runs
_PATTERNS: dict[str, list[Rule]] = {}  # a pattern keyword -> its rules (branch ``p{index}``)
_NAMED: dict[str, list[Rule]] = {}  # a vendor word inside a name -> named rules
_SCAN: list[tuple[Rule, list[bytes], list[tuple[bytes, str]]]] = []  # rule, words, gates (regex: gap, heads)
for _r in RULES:
    for _k in _r.keywords:
        if _r.kind == "named":
            _NAMED.setdefault(_k, []).append(_r)
        elif data.anchor(_k) >= 0:
            _KW.setdefault(_k.encode("latin-1"), []).append(_r)
    for _w in _r.names:
        _BY_NAME.setdefault(_w, []).append(_r)
    if _r.pattern:
        _PATTERNS.setdefault(_r.pattern, []).append(_r)
    if _r.kind == "scan":
        _ks = [k.encode("latin-1") for k in _r.keywords if data.anchor(k) < 0]
        _gs = {g.encode(): [(k[: -len(g)][::-1], "") for k in _r.keywords if k.endswith(g)] for g in _r.gate}
        _gap = {g: data.reverse(f"(?:{p})") for g, p in [*((g, _r.gap) for g in _r.gate), *_r.gate_gaps]}
        _SCAN.append((_r, _ks, [(g, _gap[g.decode()] + data.trie(h)) for g, h in _gs.items()]))
_PATTERN_RULES = list(_PATTERNS.values())
_SCAN_WORDS = {k for _, ks, gate in _SCAN if not gate for k in ks}  # a gated rule's are found by its gates
_GATED = [s for s in _SCAN if s[2]]  # the rules to look at in a text holding no other scan word
_GATES = dict.fromkeys(g for s in _GATED for g in s[2])  # their gates and heads, each looked for once a text
# The gates in lower, UPPER and Title case, found in one pass (a find each is a pass each); a gate's
# last byte is looked at, not taken: the next gate may start there. No gate begins another.
_SPELT = {v for g, _ in _GATES for w in [g.decode("latin-1")] for v in (w, w.upper(), w.title())}
_GATE_RE = data.trie([(v[:-1], f"(?={re.escape(v[-1])})") for v in _SPELT], many=4)  # tried at each blank
_NAMED_WORDS = data.trie([(w, "") for w in _NAMED])
# (anchor, reversed head the trie matched) -> (head length, keyword, rules), for the head and its
# suffixes (the trie reports the longest).
_BY_HEAD: dict[tuple[int, bytes], list[tuple[int, bytes, list[Rule]]]] = {}
for _kb, _rs in _KW.items():
    _i = data.anchor(_kb.decode("latin-1"))
    _BY_HEAD.setdefault((_kb[_i], _kb[:_i]), []).append((_i, _kb, _rs))
for (_c, _head), _entries in _BY_HEAD.items():
    for _j in range(1, len(_head) + 1):
        _entries.extend(e for e in _BY_HEAD.get((_c, _head[_j:]), []) if e not in _entries)


def rules() -> tuple[Rule, ...]:
    return RULES  # every rule, in file order


@functools.cache
def _pass(anchor: int) -> re.Pattern[bytes]:
    """One anchor's regex over the reversed text: the keyword trie (a hit has no ``lastgroup``), the
    names before a separator (``kw``), the pattern keywords (``p{i}``); compiled once per rule set."""

    def source() -> bytes:
        a, heads = chr(anchor), dict[str, list[tuple[str, str]]]()
        for kw, rs in _KW.items():
            k = kw.decode("latin-1")
            if k[i := data.anchor(k)] == a:
                heads.setdefault(k[:i], []).append((k[i + 1 :], NB if all(r.boundary for r in rs) else ""))
        # Each keyword's end is checked by a lookbehind; those sharing a head are tried after one
        # check of the character that follows the anchor (the anchor '-' is common, ``--password`` rare).
        entries = []
        for head, ends in heads.items():
            leaves = [(f"(?<={re.escape((head + a + t)[::-1])})" if t else "") + nb for t, nb in ends]
            firsts = re.escape("".join(sorted({t[:1] for t, _ in ends})))
            many = len(ends) > 1 and all(t for t, _ in ends)
            guard = f"(?<=[{firsts}]{re.escape((head + a)[::-1])})" if many else ""
            entries.append((head[::-1], guard + "(?:" + "|".join(leaves) + ")"))
        alts = [data.trie(entries)] if entries else []
        if a in SEPARATORS:
            words = {v[::-1] for w in _BY_NAME for v in (w.lower(), w.upper(), w.capitalize())}
            first = re.escape("".join(sorted({w[0] for w in words})))
            alts.append(f"{SEPARATORS[a]}{GAP}(?=[{first}])(?P<kw>{data.trie([(w, '') for w in words])})")
        for i, pattern in enumerate(_PATTERNS):
            rev = data.reverse(pattern)
            last = data.TOKEN.match(rev)
            if last and last.group() in (a, "\\" + a):  # the pattern ends in this anchor
                alts.append(f"{rev[last.end() :]}(?P<p{i}>)")
        return (re.escape(a) + "(?:" + ("|".join(alts) or "(?!)") + ")").encode("latin-1")

    return bytecache.compiled(f"pass{anchor}", source)


_GROUPS: dict[int, tuple[str, ...]] = {}  # by the pattern's id: a pattern's own hash reads its code


def _found(m: re.Match[bytes]) -> list[tuple[str, int, int]]:
    """A match's secrets: its groups ``s``, ``s2``… (``q``…: quoted) that took part, else the whole match."""
    if (groups := _GROUPS.get(id(m.re))) is None:
        groups = _GROUPS[id(m.re)] = tuple(g for g in m.re.groupindex if re.fullmatch(r"[sq]\d*", g))
    return [(g, *m.span(g)) for g in groups if m.start(g) >= 0] if groups else [("s", *m.span())]


@functools.cache
def _name_re(name: str) -> re.Pattern[bytes]:
    return data.compiled_bytes(name + r"(?![\w.\-])")


def _took(m: re.Match[bytes], group: str) -> bool:
    return group in m.re.groupindex and m.start(group) >= 0


_GLUE_RE = re.compile(rb"[A-Za-z0-9_\-]*+")
_RUN_RE = re.compile(rb"[A-Za-z0-9_\-]{0,1024}+")  # bounded: checked at every keyword hit
_NAME_BACK_RE = re.compile(rb"[A-Za-z0-9_.\-]{0,80}")  # a name, on the reversed bytes
_NOT_ALNUM_RE = re.compile(rb"[^A-Za-z0-9]")
_NEWLINE_RE = re.compile(rb"\r?\n|\\r\\n|\\n")


def _boundary_ok(data: bytes, start: int) -> bool:
    """Nothing alphanumeric right before ``start``, or a JSON escape (``\\n``) ends there."""
    return not data[start - 1 : start].isalnum() or data[start - 2 : start] in (b"\\n", b"\\r", b"\\t")


class _Scan:
    """A text being scanned, its bytes forward and reversed, what was found so far."""

    __slots__ = ("cover", "data", "rdata", "scans", "spans", "text")

    def __init__(self, text: str, data: bytes) -> None:
        self.text, self.data, self.rdata = text, data, data[::-1]
        self.spans: Spans = []
        self.scans: dict[Rule, list[int]] = {}  # scan keywords the passes found
        self.cover: list[tuple[int, int]] = []  # token spans, sorted: keywords inside are skipped

    def covered(self, pos: int) -> bool:
        i = bisect.bisect_right(self.cover, (pos, len(self.data))) - 1
        return i >= 0 and pos < self.cover[i][1]

    def token(self, s: int, e: int, rule_id: str) -> None:
        self.spans.append((s, e, rule_id))
        bisect.insort(self.cover, (s, e))

    def judge(self, rule: Rule, s: int, e: int, quoted: bool, code: bool) -> int:
        """Keep ``text[s:e]`` (stripped) as ``rule``'s secret if it is one: its end, else -1. A
        value at its regex's bound goes on over the rule's ``run``."""
        v = self.text[s:e]
        s += len(v) - len(v.lstrip())
        if not val.secret(rule, v := v.strip(), quoted, code):
            return -1
        run = data.compiled_bytes(rule.run).match(self.data, s + len(v)) if rule.run else None
        self.spans.append((s, run.end() if run else s + len(v), rule.id))
        return self.spans[-1][1]


def _valid(rule: Rule, secret: bytes, body: bytes) -> bool:
    """A token's checks: ``body`` (after the keyword) mixes classes, ``secret`` is one."""
    alnum = len(_NOT_ALNUM_RE.sub(b"", body))
    mixed = not rule.mixed or (val.mixed(body.decode("latin-1")) and alnum >= data.VALUES["mixed_min_alnum"])
    return mixed and val.secret(rule, secret.decode("latin-1"))


def _on_token(st: _Scan, rule: Rule, start: int, klen: int) -> None:
    """Run a token rule where its keyword starts; join a token wrapped onto the next line."""
    pattern, data = rule.compiled, st.data
    m = pattern.match(data, start)
    if m is None:  # perhaps cut by a line break
        run = _RUN_RE.match(data, start + klen)
        _on_split(st, rule, start, run.end() if run else start + klen, False)
        return
    nxt = data[m.end() : m.end() + 1]
    if not (nxt.isalnum() or nxt in (b"_", b"-")) and _on_split(st, rule, start, m.end(), True):
        return  # the token ends its run: it may go on after a line break
    grouped = "s" in pattern.groupindex
    s, e = m.span("s") if grouped else (m.start() - rule.back, m.end())
    if not _valid(rule, data[s:e], data[max(s, start + klen) : e]):
        return
    if grouped:
        st.spans.append((s, e, rule.id))
        return
    # A token glued to more token characters takes the whole run along, both ways, so that
    # redacting it cannot leave a shorter token-shaped run behind (idempotence).
    glue = _GLUE_RE.match(data, e) if data[e - 1 : e].isalnum() or data[e - 1 : e] == b"_" else None
    if data[s - 1 : s] in (b"_", b"-") and data[s : s + 1].isalnum():
        back = _GLUE_RE.match(st.rdata, len(data) - s)
        s -= back.end() - (len(data) - s) if back else 0
        s += data[s - 1 : s] == b"\\"  # keep a JSON escape (\n) whole
    st.token(s, glue.end() if glue else e, rule.id)


def _on_split(st: _Scan, rule: Rule, start: int, end: int, matched: bool) -> bool:
    """A token cut by a line break (terminal wrap, raw or JSON-escaped): match the two halves."""
    pattern = rule.compiled
    nl = _NEWLINE_RE.match(st.data, end)
    tail = _RUN_RE.match(st.data, nl.end()) if nl else None
    if not nl or not tail or tail.end() - nl.end() < data.VALUES["split_tail_min"]:
        return False
    t = st.text[nl.end() : tail.end()]  # a whole token then an ordinary word, a date, a commit sha:
    if matched and not (val.looks_random(t) and val.same_alphabet(st.text[start:end], t)):
        return False
    first, cut = start - rule.back, end - start + rule.back
    joined = st.data[first:end] + tail.group()
    m = pattern.match(joined, rule.back)
    if m is None or m.end() <= cut or not _valid(rule, joined[: m.end()], joined[rule.back : m.end()]):
        return False
    st.token(first, end, rule.id)
    st.token(nl.end(), nl.end() + m.end() - cut, rule.id)
    return True


def _on_scan(st: _Scan) -> None:
    """Scan rules: a keyword (found by the passes, by an ``in`` check, or as a gate's hit after a head
    and the rule's gap, read backwards) enables the regex over the text, or ``window`` characters near."""
    d, rev, n, words = st.data, st.rdata, len(st.data), st.scans or any(k in st.data for k in _SCAN_WORDS)
    hits: dict[bytes, list[int]] = {}  # the gates hit (a text meets few: the rest cost it nothing)
    for hit in data.compiled_bytes(_GATE_RE).finditer(d):
        hits.setdefault(d[hit.start() : hit.end() + 1].lower(), []).append(hit.start())
    gap = {k: data.compiled_bytes(k[1]) for k in _GATES if k[0] in hits}  # a hit after its gap: from the name
    back = {k: [(n - b.end(), p) for p in hits[k[0]] if (b := g.match(rev, n - p))] for k, g in gap.items()}
    for rule, keywords, gate in _SCAN if words else _GATED if any(back.values()) else ():  # no gap met: none
        w = rule.window
        found = [(p - w, p) for p in st.scans.get(rule, ())] + [x for k in gate for x in back.get(k, ())]
        if not found and not gate:
            found = [(p - w, p) for k in keywords for p in (_at(d, k) if w else [d.find(k)]) if p >= 0]
        if not found:
            continue
        pattern = data.compiled_bytes(rule.regex)
        for lo, hi in _merged([(max(0, a), p + w) for a, p in found]) if w else [(0, len(st.data))]:
            m = pattern.search(st.data, lo, hi)
            while m:
                for _, s, e in _found(m) if not rule.boundary or _boundary_ok(st.data, m.start()) else ():
                    st.judge(rule, s, e, True, False)
                m = pattern.search(st.data, max(_found(m)[0][1], m.start() + 1), hi)  # may start in a value


def _merged(windows: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Overlapping windows as one: each character is searched once (keywords in a flood stay linear)."""
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(windows):
        out[-1:] = [(out[-1][0], max(hi, out[-1][1]))] if out and lo <= out[-1][1] else [*out[-1:], (lo, hi)]
    return out


def _name_start(st: _Scan, kw_start: int) -> int:
    """Where the name holding a keyword starts: the run of name characters before it (after the
    letter of a JSON escape such as ``\\n``)."""
    back = _NAME_BACK_RE.match(st.rdata, len(st.data) - kw_start)
    start = kw_start - (back.end() - (len(st.data) - kw_start) if back else 0)
    return start + (0 < start < kw_start and st.data[start - 1] == ord("\\") and st.data[start] in b"nrt")


def _named(st: _Scan, rule: Rule, ns: int, ke: int) -> re.Match[bytes] | None:
    """The rule's ``name`` regex over the name: from its start to the keyword's end, where its run
    of name characters ends (lookaheads may look past it); None if it does not match."""
    nm = _name_re(rule.name).match(st.data, ns)
    return nm if nm is not None and nm.end() == ke else None


def _on_context(
    st: _Scan, rule: Rule, ks: int, ke: int, nm: re.Match[bytes] | None = None
) -> tuple[int, int] | None:
    """A context rule at its keyword (``ks``–``ke``) whose name (if it has one) matched, ``nm``: the
    regex from the keyword's end (or its line's start); its secret groups are judged. The last
    secret's span."""
    pos = ke
    if rule.line:
        lo, esc = max(0, ks - LINE_MAX), st.data.rfind(b"\\n", max(0, ks - LINE_MAX), ks)
        pos = max(st.data.rfind(b"\n", lo, ks) + 1, esc + 2 if esc >= 0 else lo)
    if (m := data.compiled_bytes(rule.regex).match(st.data, pos)) is None:
        return None
    code = _took(m, "code") or bool(nm and _took(nm, "code") and _took(m, "spaced"))  # a declaration, spaced
    got = None
    for g, s, e in _found(m):
        each = data.compiled_bytes(rule.each).finditer(st.data, s, e) if rule.each else ()
        for g2, s2, e2 in [f for m2 in each for f in _found(m2)] if rule.each else [(g, s, e)]:
            end = st.judge(rule, s2, e2, g2[0] == "q", code)
            got = (s2, end) if end >= 0 else got
    return got


def _on_name(st: _Scan, ks: int, ke: int) -> tuple[int, int] | None:
    """A secret-ish word before a separator: the named rules (a vendor's word inside the name and a
    value of its shape) first, then the context rules listing the word."""
    ns = _name_start(st, ks)
    for km in data.compiled_str(_NAMED_WORDS).finditer(st.text[ns:ke].lower()):
        m = data.compiled_bytes("{assign}").match(st.data, ke)
        if not (found := _found(m) if m else []) or found[0][0] not in ("q", "q2", "q3", "s"):
            break
        _, s, e = found[0]
        if rule := next((r for r in _NAMED[km.group()] if val.shaped(r, st.text[s:e])), None):
            st.spans.append((s, e, rule.id))
            return None
    got = None
    for rule in _BY_NAME.get(st.text[ks:ke].lower(), ()):
        if nm := _named(st, rule, ns, ke):
            got = _on_context(st, rule, ks, ke, nm) or got
    return got


def _keywords(st: _Scan, anchor: int, m: re.Match[bytes]) -> None:
    """Confirm a literal keyword hit; reversed index ``r`` is forward index ``n - 1 - r``."""
    n = len(st.data)
    pos = n - 1 - m.start()
    for hlen, kw, rules in _BY_HEAD.get((anchor, st.data[n - m.end() : pos]), ()):
        start = pos - hlen
        if not st.data.startswith(kw, start) or st.covered(start):
            continue
        for rule in rules:
            if rule.kind == "scan":
                st.scans.setdefault(rule, []).append(start)
            elif rule.boundary and not _boundary_ok(st.data, start):
                continue
            elif rule.kind == "token":
                _on_token(st, rule, start, len(kw))
            elif not rule.name:
                _on_context(st, rule, start, start + len(kw))
            elif nm := _named(st, rule, _name_start(st, start), start + len(kw)):
                _on_context(st, rule, start, start + len(kw), nm)


def _spans(text: str) -> Spans:
    """Every secret span in ``text`` with the rule that found it, unsorted."""
    # One byte per character (non-latin-1 becomes '?'), so byte offsets are str offsets, and
    # the scan runs over compact bytes even when the str holds emoji (4 bytes per character).
    st, n = _Scan(text, text.encode("latin-1", "replace")), len(text)
    names: list[tuple[int, int]] = []
    if n < MIN_SECRET_TEXT:
        return []
    for anchor in data.ANCHORS.encode():
        if anchor not in st.rdata:
            continue  # one memchr; short texts lack most anchors
        rx = _pass(anchor)
        rare = anchor in RARE and (rx.match(st.rdata, p) for p in _at(st.rdata, anchor))
        for m in filter(None, rare) if rare else rx.finditer(st.rdata):
            if m.lastgroup is None:
                _keywords(st, anchor, m)
            elif m.lastgroup == "kw":
                names.append((n - m.end("kw"), n - m.start("kw")))
            else:
                for rule in _PATTERN_RULES[int(m.lastgroup[1:])]:
                    _on_context(st, rule, n - m.end(), n - m.start())
    if _SCAN:
        _on_scan(st)
    # Names in text order, skipping keywords inside a value that was already redacted: deep inside
    # a redacted unquoted run, a keyword's separator and value are in the run too.
    cov = (-1, -1)
    for ks, ke in sorted(names):
        if not (cov[0] <= ks and ke + 8 < cov[1]):
            cov = _on_name(st, ks, ke) or cov
    return st.spans


def _at(data: bytes, needle: bytes | int) -> Iterator[int]:
    """Where ``needle`` (an anchor byte, or a scan rule's word: the whole literal) is."""
    pos = data.find(needle)
    while pos >= 0:
        yield pos
        pos = data.find(needle, pos + 1)


def find_secrets(text: str) -> list[Finding]:
    """Every secret in ``text``, as found (unmerged, sorted): for tests and diagnostics."""
    return sorted(Finding(*s) for s in _spans(text) if s[1] > s[0])


def secret_spans(text: str) -> list[tuple[int, int]]:
    """Where :func:`redact` replaces: secret spans, sorted and merged (touching spans become one)."""
    return _merged([(s, e) for s, e, _ in _spans(text) if e > s])


def redact(text: str) -> str:
    """Replace every secret value in ``text`` with :data:`REDACTED`; idempotent, never raises."""
    out: list[str] = []
    pos = 0
    for s, e in secret_spans(text):
        out += (text[pos:s], REDACTED)
        pos = e
    return "".join([*out, text[pos:]]) if out else text


def count_secrets(text: str) -> int:
    """How many secrets :func:`redact` would replace (log the count, never the values)."""
    return len(secret_spans(text))


@functools.lru_cache(maxsize=1024)  # the same few source paths, redacted per session they hold
def redact_path(path: str) -> str:
    """A file path for display or storage (provenance, the ledger, an archive's sidecar), redacted
    whole and then one component at a time: in running text a name right after ``/`` is a path,
    never an assignment (``/etc/passwd: …``), but a file name can be ``DB_PASSWORD=hunter2 x.md``."""
    return "".join(p if p in ("/", "\\") else redact(p) for p in re.split(r"([/\\])", redact(path)))
