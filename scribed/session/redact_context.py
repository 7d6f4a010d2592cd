"""Context rules of the redactor: a secret recognised by where it stands, not by its shape.

Assignments (``name=value``, ``"name": "value"``, a YAML key with its value on the next line),
``Authorization`` headers, URL credentials, ``--password`` / ``-u`` / ``-b`` / ``-p`` flags,
cookies, ``.pgpass`` lines, XML elements and PEM blocks (:mod:`scribed.session.redact_pem`).
:mod:`scribed.session.redact` finds the anchors and calls these handlers at the hits;
:mod:`scribed.session.redact_values` judges the values they find, and ``secrets.toml`` holds the
vocabulary and, for every context rule, an example and a look-alike.
"""

from __future__ import annotations

import re
from typing import Any

from scribed.session.redact_pem import on_pem as on_pem  # the PEM handler lives there
from scribed.session.redact_phrase import declared, phrase, phrase_follows, plain_word
from scribed.session.redact_values import (
    DOTTED_RE,
    IDENT_RE,
    NUM_RE,
    LazyPattern,
    is_placeholder,
    key_kind,
    looks_random,
    name_kind,
    named_span,
    secret_span,
)
from scribed.session.rules import ASSIGNMENT_WORDS, COOKIE_ATTRS, Span, Spans, data

TOKEN_USER_CHARS = 20  # a URL user this long, alphanumeric and mixed, is a token
COOKIE_MIN = 8  # a cookie value shorter than this is a flag, not a session
COOKIE_WORD_MAX = 16  # an all-letter cookie value shorter than this is a word

# Rule ids the handlers below report; secrets.toml must describe exactly these.
CONTEXT_IDS = frozenset((
    "generic-secret-assignment", "generic-high-entropy-key", "authorization-header",
    "yaml-next-line-value", "xml-secret-element", "url-credentials", "url-token", "private-key",
    "cli-secret-flag", "curl-user", "curl-cookie", "cookie-header", "pgpass-line", "split-token",
))  # fmt: skip


def rev_variants(words: list[str]) -> list[str]:
    """Reversed lower, UPPER and Title spellings (``password``, ``PASSWORD``, ``dbPassword``)."""
    out: set[str] = set()
    for w in words:
        out.update(v[::-1] for v in (w.lower(), w.upper(), w[:1].upper() + w[1:].lower()))
    return sorted(out)


def trie_alts(entries: list[tuple[str, str]]) -> list[str]:
    """Literal words laid out as a trie (its top-level alternatives); a word may end in a leaf
    regex. Every branch starts with a literal, which the regex engine rejects in about a
    nanosecond, so a long keyword list costs a few comparisons per anchor, not one per word.
    """
    root: dict[str, Any] = {}
    for word, leaf in entries:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node.setdefault("", set()).add(leaf)

    def alts(node: dict[str, Any]) -> list[str]:
        out = [re.escape(ch) + emit(sub) for ch, sub in sorted(node.items()) if ch]
        return out + sorted(node.get("", ()), key=lambda leaf: (leaf == "", leaf))  # longer words win

    def emit(node: dict[str, Any]) -> str:
        out = alts(node)
        return out[0] if len(out) == 1 else "(?:" + "|".join(out) + ")"

    return alts(root)


def trie(entries: list[tuple[str, str]]) -> str:
    """The trie of :func:`trie_alts` as one group."""
    return "(?:" + "|".join(trie_alts(entries)) + ")"


# Reversed: the character before a prefix is not alphanumeric, or it ends a JSON escape.
NB = r"(?:(?![A-Za-z0-9])|(?=[nrt]\\))"


def branches() -> dict[str, list[str]]:
    """Context patterns per anchor character, on the reversed text."""
    words = rev_variants(ASSIGNMENT_WORDS)
    asg = (
        r"[ \t\]\"'`*\\]{0,40}+(?=[" + re.escape("".join(sorted({w[0] for w in words}))) + "])"
        "(?P<kw>" + trie([(w, "") for w in words]) + ")"
    )
    cli = "|".join(f"(?<=[ \\t]{re.escape(k[::-1])}-)" for k in data()["words"]["cli_flags"])
    return {
        "=": ["[:?]?" + asg],
        ":": [
            r"(?<=//:)(?P<url>)",
            # The colon after the port of ``host:port:db:user:password`` starting a line or a word,
            # perhaps behind what tools put before a line: a number (``cat -n``, the Read tool's ``1→``).
            r'(?=(?:\d{4,5}|\*):[^\s:]{1,253}(?:(?:[\t?]|t\\)\d{1,7})?[ \t>#*+\-]{0,16}+(?:\n|n\\|\Z|"|(?<=[ \t])))(?P<pgpass>)',
            asg,
        ],
        "-": [
            "----(?P<pem>(?:KCOLB )?YEK ETAVIRP)",
            f"(?<=[ptska]-)(?:{cli})(?P<cli>)",
            r"(?=[ \t])(?<=[ub]-)(?P<short>)",
            r"-(?=[ \t])(?:(?<=[ \t=]resu--)|(?<=[ \t=]eikooc--))(?P<long>)",
        ],
    }


# ---------------------------------------------------------------------------------------------
# Assignments
# ---------------------------------------------------------------------------------------------

_NAME_BACK_RE = re.compile(rb"[A-Za-z0-9_.\-]{0,80}")  # run on the reversed bytes
_UV_MAX, _QV_MAX = 512, 4096
_VALUE = (
    r"[ \t]{0,64}+(?:\*\*|__)?[ \t]{0,8}+(?:"
    r"(?:[rbfuRBFU]{1,2}(?=[\"']))?\\{0,3}+(?:"
    # Quoted content ends at its quote, a line end, or an escaped line end (``\n`` inside a
    # JSON string); single and back quotes also end at '"' so a JSON string stays intact.
    rf"\"(?P<dq>(?:[^\"\\\n\r]|\\[^\"nr\n\r]){{0,{_QV_MAX}}}+)"
    rf"|'(?P<sq>(?:[^'\"\\\n\r]|\\[^'\"nr\n\r]){{0,{_QV_MAX}}}+)"
    rf"|`(?P<bq>(?:[^`\"\\\n\r]|\\[^`\"nr\n\r]){{0,{_QV_MAX}}}+))"
    r"|(?P<ph><[^<>\n\r]{0,100}+>|\$?\{\{?[^{}\n\r]{0,200}+\}?\}|%\(\w{0,64}+\)s|\$\([^()\n\r]{0,200}+\))"
    rf"|(?P<uv>[^\s\"'`,;()\[\]{{}}<>\\]{{1,{_UV_MAX}}}+))"
)
_SEP_VALUE_RE = LazyPattern(
    r"[ \t]{0,4}+[\]\"'`*\\]{0,6}+[ \t]{0,32}+(?P<sep>:=|=>|\?=|[:=>])(?:" + _VALUE + ")?"
)
_VALUE_RE = LazyPattern(_VALUE)
# An unquoted value ends at the next query parameter (``?token=abc&page=2``), not at any '&'.
_QUERY_CUT_RE = LazyPattern(r"&[A-Za-z_][\w.\-]{0,64}=")
_UV_RUN_RE = LazyPattern(r"[^\s\"'`,;()\[\]{}<>\\]*+")
_UV_TAIL_RE = LazyPattern(r"[^\s\"'`,;\\]{0,512}+")
AUTH_VALUE_RE = LazyPattern(
    r"[ \t]{0,64}+(?:[rbfuRBFU]{1,2}(?=[\"']))?\\{0,3}+[\"'`]?[ \t]{0,8}+"
    r"(?:(?i:" + "|".join(map(re.escape, data()["words"]["auth_schemes"])) + r")[ \t]{1,8}+)?"
    r"(?P<cred>[^\s\"'`\\,;<>{}$()]{1,4096}+)"
)
_NEXT_LINE_RE = LazyPattern(
    r"[ \t]*+(?:\r?\n|\\r\\n|\\n)(?P<ind>[ \t]{1,64}+)(?P<v>[^\s#\-\"'`\\][^\s\"'`\\]{0,4096}+)[ \t]*+(?=\r?\n|\\n|\Z)"
)
_BLOCK_MARKS = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
_COMPARE_BEFORE = frozenset("!<>=+-/%&|^~")


def _skip_escape(text: str, start: int, limit: int) -> int:
    """Move ``start`` past the letter of a JSON escape (``\\n``, ``\\r``, ``\\t``) it begins with."""
    if 0 < start < limit and text[start - 1] == "\\" and text[start] in "nrt":
        return start + 1
    return start


def on_assignment(
    text: str, rtext: bytes, kw_start: int, kw_end: int, *, spans: Spans
) -> tuple[int, int] | None:
    """``name<sep>value`` around a secret-ish keyword (or a vendor name for the named rules).

    Returns the span of a redacted *unquoted* value, so later keywords deep inside it can be
    skipped (``password=password=...`` must stay linear), else None.
    """
    name_start, before = _name_start(text, rtext, kw_start)
    if before in ("/", "\\"):
        return None  # a path component: /etc/passwd: ...
    prefix, kw = text[name_start:kw_start], text[kw_start:kw_end]
    if before == "[" and (prefix + kw).upper() == "REDACTED_SECRET":
        return None  # our own marker followed by ':' or '='
    boundary = kw_start == name_start or not text[kw_start - 1].isalnum()
    if not boundary:
        p = text[kw_start - 1]
        boundary = (p.islower() or p.isdigit()) and kw[0].isupper()
    m = _SEP_VALUE_RE.match(text, kw_end)
    if not m or _not_assignment(text, m, before):
        return None
    name = text[name_start:kw_end]
    kind = name_kind(prefix, kw, boundary)
    group = m.lastgroup
    if group in ("dq", "sq", "bq", "uv") and named_span(name, m.group(group), m.start(group), spans):
        return None
    if kind == "cookie":
        cookie_spans(text, m.end("sep"), "cookie-header", spans)
        return None
    if kind is None:
        return None
    return _assigned_value(text, m, name_start, (kind, kw.lower(), name), spans)


def _name_start(text: str, rtext: bytes, kw_start: int) -> tuple[int, str]:
    """Where the name holding the keyword starts, and the character before it ("\\n" after a
    JSON escape)."""
    n = len(text)
    back = _NAME_BACK_RE.match(rtext, n - kw_start)
    name_start = kw_start - (back.end() - (n - kw_start) if back else 0)
    before = text[name_start - 1] if name_start > 0 else ""
    if before == "\\":
        name_start = _skip_escape(text, name_start, kw_start)
        before = text[name_start - 1]
        if before == "\\" and text[name_start - 2 : name_start] != "\\\\":
            before = "\n"  # the name follows a JSON escape such as \n
    return name_start, before


def _not_assignment(text: str, m: re.Match[str], before: str) -> bool:
    """A comparison or an operator, not an assignment: ``==``, ``=~``, ``!=``, ``<=``, ``->``, ``::``, ``://``."""
    sep, (sep_start, sep_end) = m.group("sep"), m.span("sep")
    nxt = text[sep_end : sep_end + 2]
    if sep == "=" and (nxt[:1] in ("=", "~") or (sep_start > 0 and text[sep_start - 1] in _COMPARE_BEFORE)):
        return True  # ==, =~, !=, <=, >=, +=, ...
    return (sep == ">" and (before != "<" or nxt[:1] == "=")) or (
        sep == ":" and (nxt[:1] == ":" or nxt == "//")
    )


def _assigned_value(
    text: str, m: re.Match[str], name_start: int, who: tuple[str, str, str], spans: Spans
) -> tuple[int, int] | None:
    """Judge the value of a secret-ish name; ``who`` is (kind, keyword lowercased, name)."""
    kind, kwl, name = who
    sep, sep_end, group = m.group("sep"), m.end("sep"), m.lastgroup
    if kwl == "authorization":
        am = AUTH_VALUE_RE.match(text, sep_end)
        if am:
            sub = secret_span(am.group("cred"), "strong", False, text[am.end() : am.end() + 1], kwl, name)
            if sub:
                spans.append((am.start("cred") + sub[0], am.start("cred") + sub[1], "authorization-header"))
        return None
    if group in (None, "sep") or (group == "uv" and m.group("uv") in _BLOCK_MARKS):
        if sep == ":":
            _next_line(text, name_start, m.end(), who=who, spans=spans)
        return None
    if group == "ph":
        return None
    v, (vstart, vend) = m.group(group), m.span(group)
    if group != "uv":
        sub = secret_span(v, kind, True, text[vend : vend + 1], kwl, name)
        if sub:
            spans.append((vstart + sub[0], vstart + sub[1], sub[2]))
        return None
    spaced = text[m.start("sep") - 1 : m.start("sep")] in (" ", "\t") or text[sep_end : sep_end + 1] == " "
    if spaced and plain_word(v) and phrase_follows(text, vend):
        phrase(text, vstart, who=who, spans=spans)
        return None
    code = sep == ":=" or (spaced and declared(text, name_start, name))
    return _unquoted(text, v, (vstart, vend), who=who, spans=spans, code=code)


def _unquoted(
    text: str, v: str, span: tuple[int, int], *, who: tuple[str, str, str], spans: Spans, code: bool
) -> tuple[int, int] | None:
    """Judge an unquoted value, which may end at a query parameter or continue past the cap."""
    (vstart, vend), (kind, kwl, name) = span, who
    cut = _QUERY_CUT_RE.search(v)
    if cut:
        v, vend = v[: cut.start()], vstart + cut.start()
    if not v:
        return None
    capped = len(v) >= _UV_MAX and not cut
    follow = text[vend : vend + 1]
    if follow and follow in "([" and not capped:
        if IDENT_RE.fullmatch(v) or DOTTED_RE.fullmatch(v):
            return None  # a call or subscript: code, not a literal
        tail = _UV_TAIL_RE.match(text, vend)
        if tail:
            vend = tail.end()  # P@ss(w0rd): the parenthesis is part of it
            v = text[vstart:vend]
        follow = ""
    sub = secret_span(v, kind, False, follow, kwl, name, code)
    if not sub:
        return None
    start = vstart + sub[0]
    end = _run_end(text, vend) if capped else vstart + sub[1]
    spans.append((start, end, sub[2]))
    return (start, end)


def _run_end(text: str, pos: int) -> int:
    """End of an unquoted run that hit the length cap: it is redacted whole, so keyword floods
    inside it can be skipped and stay linear."""
    run = _UV_RUN_RE.match(text, pos)
    end = run.end() if run else pos
    cut = _QUERY_CUT_RE.search(text, pos, end)
    return cut.start() if cut else end


def _next_line(text: str, name_start: int, pos: int, *, who: tuple[str, str, str], spans: Spans) -> None:
    """``password:`` (or ``password: |``) with the value alone on the next, deeper line."""
    kind, kwl, name = who
    m = _NEXT_LINE_RE.match(text, pos)
    if not m:
        return
    esc = text.rfind("\\n", 0, name_start)
    line_start = max(text.rfind("\n", 0, name_start) + 1, esc + 2 if esc >= 0 else 0)
    head = text[line_start:name_start]
    v = m.group("v")
    if len(m.group("ind")) <= len(head) - len(head.lstrip(" \t")) or v.endswith(":"):
        return  # a nested mapping or a shallower line, not this key's value
    sub = secret_span(v, kind, True, "", kwl, name)
    if sub:
        spans.append((m.start("v") + sub[0], m.start("v") + sub[1], "yaml-next-line-value"))


# ---------------------------------------------------------------------------------------------
# Other context handlers (forward positions)
# ---------------------------------------------------------------------------------------------

_AUTHORITY_RE = LazyPattern(r"[^\s/?#\"'<>`\\]{1,2048}+")
_CLI_KW_RE = LazyPattern(r"(?i:" + "|".join(data()["words"]["cli_flags"]) + r")(?=[ \t])")
_FLAG_BACK_RE = re.compile(rb"[A-Za-z0-9_\-]{0,80}")  # reversed bytes
_USERPASS_RE = LazyPattern(r"[ \t=]{1,8}+[\"']?([^\s:\"'@/\\\[\]]{1,128}+):([^\s\"'\\/][^\s\"'\\]{0,255}+)")
_FLAG_VALUE_RE = LazyPattern(
    r"[ \t=]{0,8}+(?:'([^'\n]{1,256}+)'|\"([^\"\n]{1,256}+)\"|([^\s'\"`;|&)]{1,256}+))"
)
_COOKIE_REGION_RE = LazyPattern(r"[ \t]*+[\"'`]?([^\"'`\n\r\\]{0,8192}+)")
_COOKIE_PAIR_RE = LazyPattern(r"([^\s=;,]{1,128}+)=([^;\s,]{1,4096}+)")
_PGPASS_RE = LazyPattern(r"[^\s:]{1,64}+:[^\s:]{1,64}+:(?P<pw>[^\s\"'\\]{1,256}+)(?=\r?\n|\\n|\"|\Z)")
_HEX_COLONS_RE = LazyPattern(r"[0-9A-Fa-f:]+")


def on_url(text: str, colon: int, spans: Spans) -> None:
    """``scheme://user:password@host`` and ``scheme://TOKEN@host`` (``colon`` is the scheme's)."""
    m = _AUTHORITY_RE.match(text, colon + 3)
    at = m.group().rfind("@") if m else -1
    if not m or at <= 0:
        return
    userinfo, start = m.group()[:at], colon + 3
    user, sep, pw = userinfo.partition(":")
    if sep:
        if pw and not is_placeholder(pw) and pw.lower() not in ("password", "pass", "secret", "pwd"):
            spans.append((start + len(user) + 1, start + at, "url-credentials"))
    elif not is_placeholder(user) and (looks_random(user) or _token_like(user)):
        spans.append((start, start + at, "url-token"))


def _token_like(user: str) -> bool:
    """A URL user part that is a token (long, alphanumeric, with digits), not a login name."""
    return (
        len(user) >= TOKEN_USER_CHARS
        and user.isalnum()
        and user.isascii()
        and not user.isalpha()
        and not user.isdigit()
    )


def on_cli(text: str, rtext: bytes, dash: int, spans: Spans) -> None:
    """``--password VALUE`` style flags (the ``--password=VALUE`` form is an assignment)."""
    n = len(text)
    km = _CLI_KW_RE.match(text, dash + 1)
    if not km:
        return
    back = _FLAG_BACK_RE.match(rtext, n - 1 - dash)
    flag_start = _skip_escape(text, dash + 1 - ((back.end() - (n - 1 - dash)) if back else 1), dash)
    if not text.startswith("--", flag_start) or (flag_start > 0 and text[flag_start - 1] not in " \t\"'(\\"):
        return
    kind = name_kind(text[flag_start + 2 : dash + 1], km.group(), True)
    vm = _VALUE_RE.match(text, km.end())
    if kind is None or kind == "cookie" or not vm or vm.group("ph") is not None:
        return
    group = vm.lastgroup or "uv"
    v = vm.group(group)
    if group == "uv":
        if v.startswith("-"):
            return
        cut = _QUERY_CUT_RE.search(v)
        v = v[: cut.start()] if cut else v
    follow = text[vm.end() : vm.end() + 1]
    tier = "weak" if kind == "weak" else "cli"
    sub = secret_span(v, tier, group != "uv", follow, km.group().lower(), text[flag_start : km.end()])
    if sub:
        spans.append((vm.start(group) + sub[0], vm.start(group) + sub[1], "cli-secret-flag"))


def on_short_flag(text: str, dash: int, long_flag: bool, spans: Spans) -> None:
    """``-u user:pw`` / ``--user`` and ``-b k=v`` / ``--cookie`` (``dash`` is the flag's last dash);
    the flags of other programs (``mysql -pPW``, ``sshpass -p``, ``redis-cli -a``) are scan rules
    in secrets.toml."""
    if long_flag:
        letter = "u" if text.startswith("user", dash + 1) else "b"
        after = dash + (5 if letter == "u" else 7)
    else:
        letter, after = text[dash + 1], dash + 2
    if letter == "u":
        m = _USERPASS_RE.match(text, after)
        if m and not is_placeholder(m.group(2)) and not NUM_RE.fullmatch(m.group(2)):
            spans.append((*m.span(2), "curl-user"))
        return
    vm = _FLAG_VALUE_RE.match(text, after)
    if vm and vm.lastindex is not None and "=" in vm.group():
        cookie_spans(text, vm.start(vm.lastindex), "curl-cookie", spans, vm.end())


def cookie_spans(text: str, pos: int, rule: str, spans: Spans, end: int = -1) -> None:
    """Redact session-like values of ``name=value; ...`` from ``pos`` to the end of the header."""
    region = _COOKIE_REGION_RE.match(text, pos)
    if not region:
        return
    stop = region.end(1) if end < 0 else min(end, region.end(1))
    for m in _COOKIE_PAIR_RE.finditer(text, region.start(1), stop):
        name, v = m.group(1), m.group(2).strip("\"'")
        if name.lower() in COOKIE_ATTRS or is_placeholder(v) or len(v) < COOKIE_MIN or NUM_RE.fullmatch(v):
            continue
        if v.isalpha() and len(v) < COOKIE_WORD_MAX:
            continue  # theme=production
        spans.append((*m.span(2), rule))


def on_pgpass(text: str, colon: int, spans: Spans) -> None:
    """``host:port:database:user:password`` on a line of its own (``colon`` follows the port)."""
    m = _PGPASS_RE.match(text, colon + 1)
    if m and _HEX_COLONS_RE.fullmatch(m.group()):
        return  # an IPv6 address written out in full, not a credential line
    if m and m.group("pw") != "*" and secret_span(m.group("pw"), "pw", True, "", "password", "password"):
        spans.append((*m.span("pw"), "pgpass-line"))


def xml_close_re(words: list[str]) -> re.Pattern[bytes]:
    """``</password>``, ``</db_token>``: found forwards from the closing tag (``</`` is rare)."""
    rev = sorted({v[::-1] for v in rev_variants(words)})
    pat = r"</(?P<name>[A-Za-z0-9_.:\-]{0,64}?" + trie([(w, "") for w in rev]) + ")>"
    return re.compile(pat.encode("ascii"))


def on_xml(text: str, close: int, name: str, spans: Spans) -> None:
    """``<password>value</password>``: judge the element text with the tag as its name."""
    kk = key_kind(name)
    if kk is None:
        return
    tag = f"<{name}>"
    open_at = text.rfind(tag, max(0, close - _QV_MAX), close)
    if open_at < 0:
        return
    vstart = open_at + len(tag)
    v = text[vstart:close]
    if not v or "<" in v or "\n" in v:
        return  # nested elements or a multi-line block: not a single value
    sub = secret_span(v, kk[0], True, "", kk[1], name)
    if sub:
        spans.append((vstart + sub[0], vstart + sub[1], "xml-secret-element"))


def keyed_value_span(key: str, value: str) -> Span | None:
    """A value stored under a secret-ish key (``{"password": "hunter2"}``): the key is its name."""
    kk = key_kind(key)
    if kk is None:
        return None
    kind, kw = kk
    if kw != "authorization":
        return secret_span(value, kind, True, "", kw, key)
    am = AUTH_VALUE_RE.match(value)
    sub = secret_span(am.group("cred"), "strong", True, "", kw, key) if am else None
    return (am.start("cred") + sub[0], am.start("cred") + sub[1], sub[2]) if am and sub else None
