"""How an assignment's value stands among words: a plain word with more words after it on its line
is judged as one phrase (prose is kept whole, a passphrase is redacted whole), and a statement in
code (``const password = confirmPassword``, ``this.token = authToken``) names a variable; a bare
``password = confirmPassword`` is judged as a config value (redacted when long and varied enough). Called by
:mod:`scribed.session.redact_context` for ``name<sep>value`` assignments."""

from __future__ import annotations

from scribed.session.redact_values import LazyPattern, secret_span
from scribed.session.rules import Spans, data

_PHRASE_RE = LazyPattern(r"[ \t]{1,4}+[A-Za-z]")  # a value followed by more words on its line
_LINE_REST_RE = LazyPattern(r"[^\s\"'`\\#]++(?:[ \t]{1,4}+[^\s\"'`\\#]++){0,15}+")
_HEAD_RE = LazyPattern(r"(?:^|\n|\\n)[ \t]*+(?P<head>[^\n\\]*+)\Z")


def plain_word(v: str) -> bool:
    """A word as prose writes it (``Handled``, ``required``), not a made-up value (``hunter2``, ``mySecret``)."""
    return v.isalpha() and (v.islower() or v.istitle() or v.isupper())


def phrase(text: str, vstart: int, *, who: tuple[str, str, str], spans: Spans) -> None:
    """``name: Handled at the gateway``: a plain word and more words on the line are judged as one
    value (prose is kept whole, ``correct horse battery staple`` is redacted whole), never by the
    first word alone."""
    kind, kwl, name = who
    m = _LINE_REST_RE.match(text, vstart)
    words = m.group().split() if m else []
    if words and words[0].istitle() and any(w.islower() for w in words[1:]):
        return  # sentence case (``Valid until Friday``): prose, where a passphrase is all one case
    if m:
        sub = secret_span(m.group(), kind, True, "", kwl, name)
        if sub:
            spans.append((vstart + sub[0], vstart + sub[1], sub[2]))


def declared(text: str, name_start: int, name: str) -> bool:
    """``const password = x``, ``String token = y``, ``this.secret = z``: a statement in code, whose
    value is a variable's name (a declaration word of secrets.toml before the name, or a dotted name)."""
    m = _HEAD_RE.search(text, max(0, name_start - 200), name_start)
    words = m.group("head").split() if m else []
    return "." in name or (bool(words) and words[-1] in data()["words"]["declarations"])


def phrase_follows(text: str, end: int) -> bool:
    """More words follow the value ending at ``end`` on its line."""
    return _PHRASE_RE.match(text, end) is not None
