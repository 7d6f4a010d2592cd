"""Whether an anchor survives in an entry's text: both sides with whitespace runs as one space.

Fitting an entry tests every anchor against the same text several times, so the text is
normalised once per text and a short anchor's form is remembered.
"""

from __future__ import annotations

import functools
import re

from scribed.models import Anchor


def present(anchor: Anchor, text: str) -> bool:
    """Whether an anchor's exact text survives in ``text`` (whitespace-insensitive)."""
    return _norm_anchor(anchor.text) in _norm_text(text)


# The last text normalised: callers test every anchor against the same entry text, which is
# normalised once instead of once per anchor. (A tuple swap: safe to share between threads.)
_last_norm: tuple[str, str] = ("", "")


def _norm(s: str) -> str:
    r"""Whitespace runs as one space, ends included: ``re.sub(r"\s+", " ", s)`` by ``str.split`` in C
    (the same whitespace, 3.7x faster on generated transcript text)."""
    parts = s.split()
    if not parts:
        return " " if s else ""
    out = " ".join(parts)
    if s[0].isspace():
        out = " " + out
    return out + " " if s[-1].isspace() else out


_norm_cached = functools.lru_cache(maxsize=4096)(_norm)
_NORM_CACHED_CHARS = 1000


def _norm_anchor(s: str) -> str:
    """An anchor's text normalised, remembered when short: it is tested against an entry several
    times while the entry is fitted (a cache entry pins its text, so long ones are not kept)."""
    return _norm_cached(s) if len(s) <= _NORM_CACHED_CHARS else _norm(s)


def _norm_text(text: str) -> str:
    global _last_norm
    last = _last_norm
    if last[0] is text or last[0] == text:
        return last[1]
    norm = _norm(text)
    _last_norm = (text, norm)
    return norm


def recall(anchors: list[Anchor], text: str) -> float:
    if not anchors:
        return 1.0
    norm = _norm_text(text)
    return sum(1 for a in anchors if _norm_anchor(a.text) in norm) / len(anchors)


def format_anchor(a: Anchor) -> str:
    """How a restored anchor is written under Key facts."""
    if a.type == "decision":
        return f"decision: {a.text}" + (f" (supersedes: {a.superseded})" if a.superseded else "")
    if a.type in ("path", "identifier", "command", "error"):
        return f"{a.type}: `{a.text}`" if "`" not in a.text else f"{a.type}: {a.text}"
    if a.type == "todo":
        return f"open: {a.text}"
    return f"{a.type}: {a.text}"


MAX_ANCHOR_CHARS = 220
_SENTENCE_END = re.compile(r"[.!?](?=\s)")


def clean(s: str, limit: int = MAX_ANCHOR_CHARS) -> str:
    """An anchor's text: one line, marks and stray backticks off, within ``limit`` (never cut
    inside a token; a longer limit, an open item's, keeps whole sentences)."""
    s = _unmarked(s.strip())
    if s.count("`") % 2 == 1:
        s = s.strip("`").strip()
    s = " ".join(s.split())  # stripped above: the same as re.sub(r"\s+", " ", s)
    if len(s) > limit:
        ends = [m.end() for m in _SENTENCE_END.finditer(s, 0, limit + 1)]
        if limit > MAX_ANCHOR_CHARS and ends:  # an item keeps its whole sentences
            return _ended(s[: ends[-1]])
        cut = s[:limit]
        if s[limit] != " ":  # never end inside a token (a URL or path cut short is another one)
            cut = cut.rsplit(" ", 1)[0] if " " in cut else s.split(" ", 1)[0][:2000]
        s = cut
    return _ended(s)


def _unmarked(s: str) -> str:
    """``s`` without the emphasis marks around it: as many stars off each end as both ends have
    (``**Decision**``, ``*note*``), and a run before a blank (the close of a bold label the
    decision followed: ``** use X``); a glob's star (``nats_ingest_*``), ``*args`` and a bold word
    inside (``**bold** text``) stay."""
    lead = len(s) - len(s.lstrip("*"))
    trail = len(s) - len(s.rstrip("*"))
    both = min(lead, trail) if len(s) > lead else 0  # a text of stars alone is not marked up
    if both:
        return s[both : len(s) - both].strip()
    return s[lead:].strip() if lead and s[lead : lead + 1].isspace() else s


def _ended(s: str) -> str:
    """``s`` without the punctuation ending a sentence; dots that are a path or a word of their own
    stay (``./...``, Go's every package, and ``cd ..``: ``go build ./`` and ``cd`` are other
    commands)."""
    t = s.rstrip(" .;,")
    tail = s[len(t) :]
    if "." in tail and (t.endswith("/") or tail.startswith(" .")):
        return s.rstrip(" ;,")
    return t
