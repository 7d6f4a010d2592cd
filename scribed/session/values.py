"""How a value a rule found is judged: its ``entropy``, its ``allow`` lists (regexes of
``secrets.toml`` that the whole value matches: a placeholder, a path, a count, prose), and its
``value`` class, the judgements a regex cannot make: ``secret`` (not code naming a variable:
``self.token``, ``userPassword``; in a statement, ``const password = confirmPassword``, any
identifier), ``random`` (machine-made, not a word, a name or a version), ``base64`` (a valid blob,
a Kubernetes ``data:`` value) and ``basic`` (base64 of ``user:password``). Thresholds: ``[values]``."""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter

from scribed.session.rules import ALLOW, PATTERNS, VALUES, Rule, compiled_str

_DIGITS, _UPPER = frozenset("0123456789"), frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


@functools.cache
def _p(name: str) -> re.Pattern[str]:
    return compiled_str(PATTERNS[name])


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def mixed(s: str) -> bool:
    """At least two of lower/upper/digit: random bodies have them, hyphenated words do not."""
    chars = set(s)
    return sum(not chars.isdisjoint(c) for c in (_LOWER, _UPPER, _DIGITS)) >= 2  # noqa: PLR2004


def looks_random(v: str) -> bool:
    """True for machine-generated strings (keys, tokens), false for words, names and versions."""
    if len(v) < VALUES["random_min_chars"] or not v.isprintable() or " " in v or not mixed(v):
        return False
    alnum = _p("not_alnum").sub("", v)
    if len(alnum) < VALUES["random_min_alnum"] or _p("word_shape").fullmatch(alnum):
        return False
    # Words, versions and dates change character class rarely; random strings change often.
    classes = ["d" if c in _DIGITS else ("u" if c in _UPPER else "l") for c in alnum]
    changes = sum(a != b for a, b in itertools.pairwise(classes)) / len(alnum)
    return changes >= VALUES["random_min_changes"] and entropy(v) >= VALUES["random_min_entropy"]


def _class(c: str) -> str:
    return (
        "d" if c in _DIGITS else "u" if c in _UPPER else "h" if c in "abcdef" else "l" if c in _LOWER else "o"
    )


def same_alphabet(head: str, tail: str) -> bool:
    """Whether ``tail`` can be the rest of a random ``head``: a character class (digit, upper, hex
    letter, other lower, symbol) of the head is missing from the tail by chance with probability
    ``(1 - share) ** len(tail)``; below ``same_alphabet_p`` the tail is another string (a commit sha
    on the line after a whole mixed-case token)."""
    shares, seen = Counter(map(_class, head)), set(map(_class, tail))
    p = math.prod((1 - n / len(head)) ** len(tail) for c, n in shares.items() if c not in seen)
    return p >= VALUES["same_alphabet_p"]


def _b64(v: str) -> bytes | None:
    import base64  # here: few texts reach it, and a spawn need not load it

    try:
        return base64.b64decode(v, validate=True)
    except ValueError:  # binascii.Error is one
        return None


def _basic(v: str) -> bool:
    """Base64 of ``user:password`` (HTTP Basic, docker ``auth``)."""
    if not _p("base64").fullmatch(v) or (_DIGITS.isdisjoint(v) and _UPPER.isdisjoint(v)):
        return False
    text = (_b64(v + "=" * (-len(v) % 4)) or b"").decode("utf-8", "replace")
    user, sep, pw = text.partition(":")
    return bool(sep and user and pw and text.isprintable() and " " not in user and "\ufffd" not in text)


def code_ref(v: str, quoted: bool, code: bool) -> bool:
    """Variable names and attribute access: code that *refers* to a secret. ``code``: the assignment
    is a statement (``const x = y``, ``x := y``, ``this.x = y``), so an identifier is a name."""
    no_digit = _DIGITS.isdisjoint(v)
    if _p("dotted").fullmatch(v) and no_digit:
        return not quoted or _p("secret_word").search(v) is not None
    if not _p("identifier").fullmatch(v):
        return False
    literal = len(v) >= VALUES["literal_min_chars"] and entropy(v) >= VALUES["literal_min_entropy"]
    if literal and (quoted or (not code and no_digit)):
        return False  # a string literal, or a config value of letters only: not code
    wordish = "_" in v or _p("camel").search(v) is not None
    digits = sum(c in _DIGITS for c in v)
    # ``authToken2`` names a variable; ``mySuperSecretJwtKey2024`` and ``SuperSecret1`` are made up
    made_up = digits >= VALUES["made_up_digits"] or _p("password_end").search(v) is not None
    if _p("secret_word").search(v) and (digits == 0 or (wordish and not made_up)):
        return True
    return not quoted and wordish and no_digit and not looks_random(v)


@functools.cache
def _allow(entries: tuple[str, ...]) -> re.Pattern[str]:
    """A rule's allow lists as one regex: ``[allow]`` lists by name, or the rule's own regexes."""
    return compiled_str("|".join(f"(?:{x})" for e in entries for x in ALLOW.get(e, [e])), re.DOTALL)


@functools.lru_cache(maxsize=4096)  # the same assignments recur across a transcript
def secret(rule: Rule, v: str, quoted: bool = True, code: bool = False) -> bool:
    """Whether ``v`` (found by ``rule``, stripped) is a secret: its entropy, allow lists and class."""
    if (
        not v
        or (rule.entropy and entropy(v) < rule.entropy)
        or (rule.allow and _allow(rule.allow).fullmatch(v))
    ):
        return False
    if rule.value == "secret":
        return not code_ref(v, quoted, code)
    if rule.value == "random":
        return looks_random(v) and not code_ref(v, quoted, True)
    if rule.value == "base64":
        return len(v) % 4 == 0 and mixed(v) and _b64(v) is not None
    return rule.value != "basic" or _basic(v)


def shaped(rule: Rule, v: str) -> bool:
    """A named rule's value: the vendor's shape, random enough, no placeholder."""
    floor = max(rule.entropy, VALUES["named_min_entropy"])
    shape = compiled_str(rule.shape, re.IGNORECASE).fullmatch(v)
    return bool(shape) and entropy(v) >= floor and not _allow(("placeholder",)).fullmatch(v)
