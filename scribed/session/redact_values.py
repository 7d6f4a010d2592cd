"""How a value is judged: whether a string found after a secret-ish name (or by a named rule) is a
secret, with the vocabulary of ``secrets.toml``'s ``[words]`` (:mod:`scribed.session.rules`). What is *not* a secret even after ``password=``: template and variable references (``$TOKEN``,
``${{ secrets.X }}``, ``{{ vault_pw }}``, ``%(pw)s``, ``$(cat f)``, ``<your password>``), masks
and markers (``***``, ``xxxx``, ``[REDACTED_SECRET]``, which keeps redaction idempotent),
null-ish, type and stock words (``None``, ``str``, ``changeme``), code references
(``get_pw()``, ``self.token``, ``api_key=api_key``), paths, URLs without credentials, e-mail
addresses and prose. A number after a token/secret/key name is a count; after a password name
it is a PIN. Names are read by their last component (``max_tokens`` is no secret name); weak
names (``key``, ``auth``, ``sig``) need a random-looking value, never a digest or a UUID, unless
a compound ``*_KEY`` name holds a long hex value.
"""

from __future__ import annotations

import functools
import itertools
import math
import re
from collections import Counter

from scribed.session.lazy_pattern import LazyPattern as LazyPattern  # where it was defined first
from scribed.session.rules import (
    FUNCTION_WORDS,
    KEY_PLAIN_MODS,
    KEY_PUBLIC_MODS,
    KEY_STRONG_MODS,
    LITERAL_MIN_CHARS,
    LITERAL_MIN_ENTROPY,
    PASS_TOOLS,
    PLACEHOLDER_WORDS,
    PW,
    REDACTED,
    RULES,
    STRONG,
    WEAK,
    Rule,
    Span,
    Spans,
)

# Thresholds of the value judges below (tuned on tests/secrets_corpus.py and its look-alikes).
MIXED_CLASSES = 2  # character classes a token mixes
RANDOM_MIN_CHARS = 16
RANDOM_MIN_ALNUM = 12
RANDOM_MIN_CHANGES = 0.15  # share of class changes between neighbouring characters
RANDOM_MIN_ENTROPY = 3.0
PROSE_WORDS = (2, 8)  # a value of this many words may be a phrase, not a password
PROSE_SENTENCE_WORDS = 3
PW_DIGITS = 4
CODE_REF_DIGITS = 3  # a name with this many digits is a value made up to look like one
HEX_KEY_CHARS = 32
MIN_VALUE = 3
CLI_WORD_MAX = 20
SAME_ALPHABET_P = 1e-3  # a wrapped token's tail missing the head's character classes by chance


# Named rules by their vendor keyword (found in an assignment's name, lowercased).
_NAMED_KW: dict[str, list[Rule]] = {}
for _r in RULES:
    for _k in _r.keywords if _r.kind == "named" else ():
        _NAMED_KW.setdefault(_k, []).append(_r)


@functools.cache
def _named_re() -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, sorted(_NAMED_KW, key=len, reverse=True))))


def named_span(name: str, value: str, vstart: int, spans: Spans) -> bool:
    """Named rules: a vendor keyword in the assignment's name and a value of the vendor's shape."""
    if not value or is_placeholder(value):
        return False
    for km in _named_re().finditer(name.lower()):
        for rule in _NAMED_KW[km.group()]:
            assert rule.value is not None
            if rule.value.fullmatch(value) and entropy(value) >= max(rule.entropy, 2.5):
                spans.append((vstart, vstart + len(value), rule.id))
                return True
    return False


# ---------------------------------------------------------------------------------------------
# Value heuristics
# ---------------------------------------------------------------------------------------------

_PLACEHOLDER_RE = LazyPattern(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\$?\{\{?.*\}?\}|%\(?\w*\)?[sd]|%[A-Za-z_][A-Za-z0-9_]*%|<[^<>]*>"
    r"|\$\(.*\)|\[[^\[\]]*\]|\(?(?:hidden|redacted|masked|omitted|not shown|see above|see below)\)?",
    re.IGNORECASE | re.DOTALL,
)
_MASK_CHARS = frozenset("*.•…#· ")
_MASK_RE = LazyPattern(r"[xX]{3,}|[?\-_]{3,}")
NUM_RE = LazyPattern(r"[+-]?\d+(?:[.,_:]\d+)*(?:[eE][+-]?\d+)?[a-zA-Z%]{0,3}")
IDENT_RE = LazyPattern(r"[A-Za-z_$][A-Za-z0-9_$]*")
DOTTED_RE = LazyPattern(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)+[!?]?")
_CAMEL_RE = LazyPattern(r"[a-z][A-Z]")
_SECRET_WORD_RE = LazyPattern(r"(?i)password|passwd|pwd|pass|secret|token|key|auth|cred")
# How a password ends and a variable's name does not: two digits after a letter (mySecretPass99) that
# are no version (tokenV22) or size (keyBase64, tokenUtf16), or a digit after a word when it starts
# like a sentence (SuperSecret1; not authToken2, TokenV2, OAuth2Token).
_PW_END_RE = LazyPattern(r"(?<=[A-Za-z])(?<![Vv])(?!(?:8|16|32|64|128|256|512)$)\d\d+$|^[A-Z][a-z].*[a-z]\d$")
_PATH_RE = LazyPattern(r"(?:~|\.{1,2})?/[^\s]*|~|[A-Za-z]:\\[^\s]*")
_NODE_ID_RE = LazyPattern(r"(?:[\w.-]+/)+[\w.-]+\.(?:py|[cm]?[jt]sx?|java|kt|go|rb|rs)(?:::[\w\[\].-]+)*")
_URL_RE = LazyPattern(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_EMAIL_RE = LazyPattern(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+")
HEX_RE = LazyPattern(r"[0-9a-fA-F]+")
_UUID_RE = LazyPattern(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Atomic per word: a plain ``(...)+`` here backtracks exponentially on long capital runs.
_WORDS_SHAPE_RE = LazyPattern(r"(?>[A-Z][a-z]++|[a-z]{2,}+|[A-Z]{2,}(?![a-z])|\d{1,4}+)++")
_USERPASS_VALUE_RE = LazyPattern(r"([^\s:]{1,64}):(\S{3,})")
_B64_RE = re.compile(r"[A-Za-z0-9+/]{8,}={0,2}")
_NONALNUM_RE = LazyPattern(r"[^A-Za-z0-9]+")
_COMPONENT_RE = LazyPattern(r"[_\-.\s]|(?<=[a-z0-9])(?=[A-Z])")
_DIGITS = frozenset("0123456789")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")


def entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values()) if n else 0.0


def mixed(s: str) -> bool:
    """At least two of lower/upper/digit: random bodies have them, hyphenated words do not."""
    chars = set(s)
    return (not chars.isdisjoint(_LOWER)) + (not chars.isdisjoint(_UPPER)) + (
        not chars.isdisjoint(_DIGITS)
    ) >= MIXED_CLASSES


def looks_random(v: str) -> bool:
    """True for machine-generated strings (keys, tokens), false for words, names and versions."""
    if len(v) < RANDOM_MIN_CHARS or not v.isprintable() or " " in v or not mixed(v):
        return False
    alnum = _NONALNUM_RE.sub("", v)
    if len(alnum) < RANDOM_MIN_ALNUM or _WORDS_SHAPE_RE.fullmatch(alnum):
        return False
    # Words, versions and dates change character class rarely; random strings change often.
    classes = ["d" if c in _DIGITS else ("u" if c in _UPPER else "l") for c in alnum]
    changes = sum(a != b for a, b in itertools.pairwise(classes))
    return changes / len(alnum) >= RANDOM_MIN_CHANGES and entropy(v) >= RANDOM_MIN_ENTROPY


def _char_class(c: str) -> str:
    return (
        "d" if c in _DIGITS else "u" if c in _UPPER else "h" if c in "abcdef" else "l" if c in _LOWER else "o"
    )


def same_alphabet(head: str, tail: str) -> bool:
    """Whether ``tail`` can be the rest of a random ``head``: a character class (digit, upper, hex
    letter, other lower, symbol) of the head is missing from the tail by chance with probability
    ``(1 - share) ** len(tail)``; below :data:`SAME_ALPHABET_P` the tail is another string (a commit
    sha on the line after a whole mixed-case token)."""
    shares = Counter(map(_char_class, head))
    seen = set(map(_char_class, tail))
    p = math.prod((1 - n / len(head)) ** len(tail) for cls, n in shares.items() if cls not in seen)
    return p >= SAME_ALPHABET_P


def is_placeholder(v: str) -> bool:
    """Template references, masks, markers and stock words that carry no secret."""
    s = v.strip()
    if not s or REDACTED in s:
        return True
    low = s.lower()
    if low in PLACEHOLDER_WORDS or set(s) <= _MASK_CHARS or _MASK_RE.fullmatch(s):
        return True
    if low.startswith(("your", "<", "{{", "${", "$(", "%(", "insert", "replace", "enter_", "enter-")):
        return True
    return _PLACEHOLDER_RE.fullmatch(s) is not None


def is_base64_blob(v: str) -> bool:
    """Random-looking, valid base64 (a Kubernetes ``data:`` value), not a word."""
    if len(v) % 4 or not mixed(v):
        return False
    import base64  # here: few texts reach it, and a spawn need not load it

    try:
        base64.b64decode(v, validate=True)
    except ValueError:  # binascii.Error is one
        return False
    return True


def _no_digit(v: str) -> bool:
    return set(v).isdisjoint(_DIGITS)


def is_literal(v: str) -> bool:
    """Long and varied enough to be a made-up secret of any alphabet (``SunflowerMeadowTwilight``),
    not a variable (``userPassword``): the floors are ``[values]`` of secrets.toml."""
    return len(v) >= LITERAL_MIN_CHARS and entropy(v) >= LITERAL_MIN_ENTROPY


def _is_code_ref(v: str, quoted: bool, follow: str, code: bool) -> bool:
    """Variable names, attribute access and calls: code that *refers* to a secret. ``code``: the
    assignment is a statement (``const x = y``, ``x := y``, ``x = y;``), so an identifier is a name."""
    if not quoted and follow and follow in "([":
        return True
    if DOTTED_RE.fullmatch(v) and _no_digit(v):
        return not quoted or _SECRET_WORD_RE.search(v) is not None
    if IDENT_RE.fullmatch(v):
        if is_literal(v) and (quoted or (not code and _no_digit(v))):
            return False  # a string literal, or a config value of letters only: not code
        wordish = "_" in v or _CAMEL_RE.search(v) is not None
        digits = sum(c in _DIGITS for c in v)
        # ``authToken2`` names a variable; ``mySuperSecretJwtKey2024`` and ``SuperSecret1`` are made up
        made_up = digits >= CODE_REF_DIGITS or _PW_END_RE.search(v) is not None
        if _SECRET_WORD_RE.search(v) and (digits == 0 or (wordish and not made_up)):
            return True
        if not quoted and wordish and _no_digit(v) and not looks_random(v):
            return True
    return False


def _is_prose(v: str) -> bool:
    """Error messages and sentences stored under a password-ish key are not passwords."""
    words = v.split()
    if len(words) < PROSE_WORDS[0]:
        return False
    if len(words) > PROSE_WORDS[1]:
        return True
    hits = sum(1 for w in words if w.lower().strip(".,:;!?") in FUNCTION_WORDS)
    return hits >= 1 and (len(words) >= PROSE_SENTENCE_WORDS or v.rstrip().endswith((".", "!", "?")))


def _passed_what(v: str, follow: str, name: str) -> bool:
    """After ``pass`` (the verb), what passed: a test file in a folder, or a backticked command (a
    path or build tool, then arguments) with no digit in any word. A passphrase stays a secret."""
    words = v.split() if name.lower() == "pass" else []
    if len(words) == 1 and _NODE_ID_RE.fullmatch(v):
        return True
    tool = len(words) > 1 and ("/" in words[0] or words[0] in PASS_TOOLS)
    return tool and follow == "`" and all(_no_digit(w) and not looks_random(w) for w in words)


def _basic_userpass(v: str) -> bool:
    """True when ``v`` is base64 of ``user:password`` (HTTP Basic, docker ``auth``)."""
    if not _B64_RE.fullmatch(v) or (_no_digit(v) and set(v).isdisjoint(_UPPER)):
        return False
    import base64

    try:
        text = base64.b64decode(v + "=" * (-len(v) % 4), validate=True).decode("utf-8")
    except ValueError:  # binascii.Error and UnicodeDecodeError are ones
        return False
    user, sep, pw = text.partition(":")
    return bool(sep and user and pw and text.isprintable() and " " not in user)


def _plain_key(name: str, kw: str) -> bool:
    """A bare ``key`` or a digest-ish ``cache_key``: its long hex value is an id, not a secret."""
    prefix = name[: len(name) - len(kw)].rstrip("_-. $\"'")
    last = _COMPONENT_RE.split(prefix)[-1].lower() if prefix else ""
    return not last or last in KEY_PLAIN_MODS


def _weak_span(s: str, full: Span, *, quoted: bool, follow: str, kw: str, name: str) -> Span | None:
    """A value after a weak name (``auth``, ``key``, ``sig``): a secret only if it looks like one."""
    lead = full[0]
    if kw in ("auth", "credential", "credentials", "creds"):
        m = _USERPASS_VALUE_RE.fullmatch(s)
        if m and not is_placeholder(m.group(2)) and not NUM_RE.fullmatch(m.group(2)):
            return (lead + m.start(2), lead + m.end(2), full[2])
        if _basic_userpass(s):
            return full
    if kw == "key" and HEX_RE.fullmatch(s) and len(s) >= HEX_KEY_CHARS and not _plain_key(name, kw):
        return (full[0], full[1], "generic-high-entropy-key")
    if not looks_random(s) or _is_code_ref(s, quoted, follow, True):
        return None
    if kw not in ("sig", "signature") and (HEX_RE.fullmatch(s) or _UUID_RE.fullmatch(s)):
        return None  # digests, ids and cache keys
    return full


@functools.lru_cache(maxsize=4096)
def secret_span(  # noqa: PLR0917 - an lru_cache key, called positionally on the hot path
    v: str, kind: str, quoted: bool, follow: str, kw: str, name: str, code: bool = False
) -> Span | None:
    """Decide whether a value found after a secret-ish name is a secret.

    Returns the offsets inside ``v`` to redact and the rule id, or None to keep it (``code``: the
    assignment is a statement in code). Cached: the same assignment lines recur across a
    transcript (and in adversarial repetitive input).
    """
    s = v.strip()
    if not s or is_placeholder(s):
        return None
    lead = len(v) - len(v.lstrip())
    full = (lead, lead + len(s), "generic-secret-assignment")
    low = s.lower()
    if low in (kw, name.lower(), name.lower().lstrip("-_$.")) or _URL_RE.match(s) or _EMAIL_RE.fullmatch(s):
        return None
    if (_PATH_RE.fullmatch(s) and not looks_random(s)) or _passed_what(s, follow, name):
        return None
    if NUM_RE.fullmatch(s):
        return full if kind == "pw" and sum(c in _DIGITS for c in s) >= PW_DIGITS else None
    if kind == "weak":
        return _weak_span(s, full, quoted=quoted, follow=follow, kw=kw, name=name)
    if (
        _is_code_ref(s, quoted, follow, code)
        or len(s) < MIN_VALUE
        or (len(s) <= MIN_VALUE and s.isalpha())
        or _is_prose(s)
    ):
        return None
    if (
        kind == "cli"
        and s.isalpha()
        and (s.islower() or s.istitle() or s.isupper())
        and len(s) < CLI_WORD_MAX
    ):
        return None  # ``--password X`` in prose ("use the --password flag"): want a non-word value
    return full


# ---------------------------------------------------------------------------------------------
# Names
# ---------------------------------------------------------------------------------------------


def name_kind(prefix: str, kw: str, boundary: bool) -> str | None:
    """Classify a name by its last component: 'pw', 'strong', 'weak', 'cookie' or None."""
    kw = kw.lower()
    if kw in ("pass", "sig") and not boundary:
        return None  # bypass, compass, consig
    if kw in PW:
        return "pw"
    if kw in STRONG:
        return "strong"
    if kw == "cookie":
        return "cookie"
    if kw == "key":
        prev = prefix.lower().rstrip("_-. $")
        if prev.endswith(KEY_PUBLIC_MODS):
            return None
        return "strong" if prev.endswith(KEY_STRONG_MODS) else "weak"
    return "weak" if kw in WEAK else None


_TRAILING_KW_RE = LazyPattern(
    r"(?i)(authorization|passphrase|passcode|password|passwd|credentials|credential|creds|"
    r"secret|token|signature|pass|pwd|key|auth|sig)[^A-Za-z0-9]{0,3}$"
)


def key_kind(key: str) -> tuple[str, str] | None:
    """Kind and keyword of a dict key like ``db_password`` or ``apiKey`` (for redact_obj)."""
    m = _TRAILING_KW_RE.search(key)
    if not m:
        return None
    start = m.start(1)
    p = key[start - 1] if start else ""
    boundary = not p or not p.isalnum() or ((p.islower() or p.isdigit()) and key[start].isupper())
    kind = name_kind(key[:start], m.group(1), boundary)
    return (kind, m.group(1).lower()) if kind and kind != "cookie" else None
