"""PEM private-key blocks: the armour's header, every body line, and the footer.

A key reaches a transcript pasted whole, JSON-escaped (``\\n`` inside a string), with each line
prefixed (a diff's ``+``, a quote's ``> ``, a file read's line numbers), or written in code as one
string literal per line: Python's adjacent literals inside parentheses, ``"...\\n" +`` in Python,
Java or JavaScript, PHP's ``.``, a list of lines joined later. :func:`on_pem` is called by
:mod:`scribed.session.redact` where ``PRIVATE KEY-----`` occurs and redacts the block from its
``-----BEGIN`` to its footer (or to where the body stops). A key written a statement per line
(``echo "…" >> key.pem``, ``lines.push("…");``), which the body pattern cannot join, loses each
line's base64 run instead, and the code around the runs stays (:func:`_key_lines`).
"""

from __future__ import annotations

import re

from scribed.session.lazy_pattern import LazyPattern
from scribed.session.rules import Spans

_PEM_HEAD_RE = LazyPattern(r"-----BEGIN (?:[A-Z0-9]{1,16} ){0,4}PRIVATE KEY(?: BLOCK)?-----")
# A pasted line's start: a diff's "+"/"-", "> > ", Aider's "#### ", "//", a line number ("12→", "12\t").
_PEM_PREFIX = r"(?:(?:[+>#*|]{1,8}+|//|\d{1,7}+(?:→|\\u2192|\t|\\t))[ \t]*+)*+"  # JSON escapes too
_PEM_NL = r"\\{1,4}[rn]|[ \t\r\n]"  # a line end or a blank, raw or JSON-escaped
_PEM_QUOTE = r"\\{0,3}+[\"'`]"
# A key written as one string literal per line: one literal closed and the next opened. After the
# quote: `+`, `,` or PHP's `.`, a line continuation (`\`), then line ends and a line's prefix (which
# takes a `+` at the next line's start), a string prefix (b"", r'') and the next quote.
_PEM_JOIN = (
    rf"{_PEM_QUOTE}[ \t]*+(?:[+,.][ \t]*+)?(?:\\(?=\r?\n))?"
    rf"(?:(?:{_PEM_NL})++{_PEM_PREFIX})?+(?:[rbuRBU]{{1,2}}+)?{_PEM_QUOTE}"
)
_PEM_SEP = rf"(?:{_PEM_NL}|{_PEM_JOIN})++(?:{_PEM_PREFIX}|-(?!----)[ \t]*+)"
# The body: header lines (Proc-Type: …), then base64 lines. A line shorter than 16 characters is
# a key's last line only after a full one: else the words of code after a header written as a
# string literal (`("-----BEGIN … KEY-----", "pkcs8")`) would read as a key's body.
_PEM_BODY_RE = LazyPattern(
    rf"(?:{_PEM_SEP}(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset|MessageID):[^\r\n\\]{{0,200}}+){{0,8}}"
    rf"(?:(?:{_PEM_SEP}[A-Za-z0-9+/=]{{16,}}+){{1,4000}}"
    rf"(?:{_PEM_SEP}[A-Za-z0-9+/=]{{1,15}}+(?=\\{{1,4}}[rn]|[\r\n]|{_PEM_QUOTE}|\Z|[ \t]++-----END))?)?"
)
_PEM_END_RE = LazyPattern(
    rf"(?:{_PEM_NL}|{_PEM_JOIN}){{0,64}}+(?:{_PEM_PREFIX}|-(?=-----)|-[ \t]++)-----END [A-Z0-9 ]{{0,60}}-----"
)


# A key line in a shape the body pattern does not join (``echo "…" >> key.pem`` per line, ``k += "…"``,
# ``lines.push("…");``, a literal with a comment after it, SQL's ``|| CHR(10) ||``): its run of
# base64, found line by line. A full line has 64 characters; the last, shorter one follows a full one.
_PEM_RUN_RE = LazyPattern(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{4,}+={0,2}+(?![A-Za-z0-9+/=])")
_PEM_FULL = 40
_PEM_LINES_MAX = 200  # a 4096-bit RSA key is ~50 lines of 64
_PEM_SCAN_MAX = 16_384  # characters read on one line (a whole 4096-bit key on one line is ~3,200)


def on_pem(text: str, private_pos: int, spans: Spans) -> None:
    """A whole PEM private-key block, from its header to its footer (or where it was cut)."""
    head = text.rfind("-----BEGIN ", max(0, private_pos - 80), private_pos)
    m = _PEM_HEAD_RE.match(text, head) if head >= 0 else None
    if not m:
        return
    end = m.end()
    body = _PEM_BODY_RE.match(text, end)
    if body is None or body.end() == end:
        _key_lines(text, end, spans)  # no line joined to the header: look for the key line by line
    end = body.end() if body else end
    tail = _PEM_END_RE.match(text, end)
    spans.append((head, tail.end() if tail else end, "private-key"))


def _key_lines(text: str, start: int, spans: Spans) -> None:
    """The key's body after its header when the body pattern joined none of it: the runs of 40+
    base64 characters left on the header's line, then the longest run of each line (40+, or a
    shorter one with a digit or ``=`` ending the key after a full one) up to the footer or the
    first line without one."""
    nl = text.find("\n", start, start + _PEM_SCAN_MAX)
    line_end = min(len(text), start + _PEM_SCAN_MAX) if nl < 0 else nl
    stop = text.find("-----", start, line_end)  # a footer, or the next header: the key ends there
    full = False
    for r in _PEM_RUN_RE.finditer(text, start, line_end if stop < 0 else stop):
        if _full(r) or (full and _last_line(r.group())):
            spans.append((r.start(), r.end(), "private-key"))
            full = full or _full(r)
    for _ in range(_PEM_LINES_MAX):
        if nl < 0 or stop >= 0:
            return
        pos, nl = nl, text.find("\n", nl + 1, nl + 1 + _PEM_SCAN_MAX)
        line_end = min(len(text), pos + 1 + _PEM_SCAN_MAX) if nl < 0 else nl
        stop = text.find("-----", pos, line_end)
        run = max(_PEM_RUN_RE.finditer(text, pos, line_end if stop < 0 else stop), key=_size, default=None)
        if run is None or not (_full(run) or (full and _last_line(run.group()))):
            return
        spans.append((run.start(), run.end(), "private-key"))
        if not _full(run):
            return  # a key's last line
        full = True


def _size(m: re.Match[str]) -> int:
    return m.end() - m.start()


def _full(m: re.Match[str]) -> bool:
    return _size(m) >= _PEM_FULL


def _last_line(run: str) -> bool:
    """A key's short last line: base64 with a digit or padding, not a word."""
    return run.endswith("=") or any(c.isdigit() for c in run)
