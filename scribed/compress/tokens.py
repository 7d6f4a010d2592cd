"""A session's tokens: the informative words of a text, lowercased, each judged once per process,
interned as int ids per session (:class:`Vocab`), and what each is worth on its own
(:func:`token_weight`). The unit pool (:mod:`scribed.compress.units`) and the selection read them.

Not :mod:`scribed.compress.terms`' terms, which split an identifier to compare its spellings: here
it stays whole (``src/auth.py``, ``--force``, ``#123``), weighs more than a word and names a tool
line.

A unit holds a tuple of ids, not a frozenset of strings (issue 32: on a 64 MB session the pool's
159,412 frozensets took 80.5 MB).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from scribed.compress.stopwords import STOP as _STOP

TOKEN = re.compile(
    r"#\d+|--?[A-Za-z][\w-]*|[A-Za-z_$~.][\w$]*(?:(?:[./:\\@-]|::)[\w$]+)*(?:\(\))?|\d[\d.,:/-]*[A-Za-z%]*"
)


MIN_TOKEN_CHARS = 3


WORD_CHARS = 4  # a plain word this long carries some meaning


def tokens(text: str) -> frozenset[str]:
    """Informative tokens, lowercased for coverage.

    ASCII text is lowercased once, before the scan: the token pattern treats both cases alike, so
    the tokens are the same (elsewhere ``lower()`` may change lengths). Each raw token is judged
    once per process (:data:`ACCEPTED`), and a token repeated in the text once.
    """
    return frozenset(ordered(text))


def ordered(text: str) -> Iterable[str]:
    """:func:`tokens` in the order of their first occurrence, each once."""
    if text.isascii():
        found = dict.fromkeys(map(ACCEPTED.__getitem__, TOKEN.findall(text.lower())))
    else:  # scanned as it is, each raw token judged once (and not kept: the cache is ASCII's)
        found = dict.fromkeys(map(accepted, dict.fromkeys(TOKEN.findall(text))))
    found.pop(None, None)  # None: not a token (an accepted one is never empty)
    return found  # type: ignore[return-value]  # no None key left


def accepted(raw: str) -> str | None:
    """The token a raw one counts as, lowercased, its ends (:data:`EDGE`) stripped; None when it is
    too short (but a figure or a ``#123``) or a stop word."""
    t = raw.strip(EDGE)
    if len(t) < MIN_TOKEN_CHARS and not t[:1].isdigit() and t[:1] != "#":
        return None
    low = t.lower()
    return None if low in _STOP else low


class Vocab:
    """A session's tokens, each given an int id the first time it is met (``words[id]`` is the
    token). Units hold tuples of ids: a small tuple instead of a hash table of strings per unit, and
    ids index flat lists (weights, document counts) in the selection."""

    __slots__ = ("ids", "named", "words")

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.words: list[str] = []
        # ``named[id]``: the token names something (:func:`names_id`), judged once when it is
        # interned, so a tool line's check is ``any(map(named.__getitem__, ids))``, in C
        self.named: list[bool] = []

    def intern(self, word: str) -> int:
        """``word``'s id, given the next one the first time."""
        i = self.ids.get(word)
        if i is None:
            i = self.ids[word] = len(self.words)
            self.words.append(word)
            self.named.append(names_id(word))
        return i

    def of(self, text: str) -> tuple[int, ...]:
        """The ids of :func:`tokens` of ``text``, in first-occurrence order: looked up in C, a new
        token given the next id."""
        found: Iterable[str]
        if text.isascii():  # :func:`ordered`'s ASCII path inline: a call less per unit
            raw = dict.fromkeys(map(ACCEPTED.__getitem__, TOKEN.findall(text.lower())))
            raw.pop(None, None)  # None: not a token
            found = raw  # type: ignore[assignment]  # no None key left
        else:
            found = ordered(text)
        got = list(map(self.ids.get, found))
        if None in got:
            ids, words, named = self.ids, self.words, self.named
            for k, (tok, i) in enumerate(zip(found, got, strict=True)):
                if i is None:  # ``found`` holds each token once
                    got[k] = ids[tok] = len(words)
                    words.append(tok)
                    named.append(names_id(tok))
        return tuple(got)  # type: ignore[arg-type]  # every None replaced


class _Accepted(dict[str, str | None]):
    """A raw ASCII token, lowercased, → the token it counts as (:func:`accepted`): looked up in
    C, judged in Python only the first time. Bounded: emptied when full (a daemon meets new names
    for ever)."""

    def __missing__(self, raw: str) -> str | None:
        got = accepted(raw)
        if len(raw) <= ACCEPTED_CHARS:  # a long one (a pasted blob) is judged anew, not kept
            if len(self) >= ACCEPTED_MAX:
                self.clear()
            self[raw] = got
        return got


ACCEPTED_MAX = 1 << 15


ACCEPTED_CHARS = 64  # full of 64-char tokens the cache holds 8.3 MB (review: 64 MB of blobs before)


ACCEPTED = _Accepted()


EDGE = ".:-/\\"  # stripped from a token's ends


_IDENT_CHARS = frozenset("_./:\\@()$")


_ASCII_DIGITS = frozenset("0123456789")


def token_weight(tok: str) -> float:
    """How much a term is worth on its own: identifiers and figures above plain words.

    The character checks are set operations in C; an ASCII token has no digits but 0-9 (other
    text keeps the per-character ``isdigit``, which knows every script's digits)."""
    if tok.startswith(("#", "-")) or not _IDENT_CHARS.isdisjoint(tok):
        return 3.0
    if tok[:1].isdigit():
        return 1.5
    if not _ASCII_DIGITS.isdisjoint(tok) if tok.isascii() else any(c.isdigit() for c in tok):
        return 2.0
    return 0.6 if len(tok) >= WORD_CHARS else 0.2


def names_id(tok: str) -> bool:
    """Whether a token names something in a tool line (:func:`names_something`): a path, a code
    name, a flag, a ``#123``, not a figure."""
    return not tok[:1].isdigit() and token_weight(tok) >= NAMED_TOOL_WEIGHT


NAMED_TOOL_WEIGHT = 3.0
