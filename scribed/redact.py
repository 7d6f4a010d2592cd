"""Secret redaction for transcripts, summaries, ledger rows and log events.

Everything scribed stores or logs passes through :func:`redact`, so it must be fast, must never
raise, and must be idempotent. Only the secret value is replaced (``password=[REDACTED_SECRET]``),
so summaries keep saying *which* credential was involved without containing it.

How it stays fast (≥ 50 MB/s on transcript text, see ``bench/redact_speed.py``): the text is
encoded once to ``latin-1``/``replace`` bytes (one byte per character, so offsets match the str)
and reversed. A handful of passes each start with one literal anchor (``= : - _ . A``), which the
regex engine finds at memchr-like speed; reversal turns "keyword before separator" and "prefix
before delimiter" into literals *after* the anchor, rejected in nanoseconds. Each hit is confirmed
in Python with small forward regexes at that position only. Quantifiers are bounded, possessive or
atomic, and a value already redacted is not re-scanned, so every input is handled in linear time.

Placeholder rules (what is *not* a secret even after ``password=``):

* Template and variable references: ``$TOKEN``, ``${PASSWORD}``, ``${{ secrets.X }}``,
  ``{{ vault_pw }}``, ``{token}``, ``%(pw)s``, ``$(cat file)``, ``<your password>``, ``[hidden]``.
* Masks and markers: ``***``, ``xxxx``, ``...``, ``[REDACTED_SECRET]`` (this is what keeps
  ``redact`` idempotent).
* Null-ish and type words: ``None``, ``null``, ``true``, ``""``, ``str``, ``SecretStr``, ``string``.
* Stock placeholder words: ``changeme``, ``password``, ``secret``, ``example``, ``your_...``. We
  keep these: they carry no secret and are common in docs and examples.
* Code references: calls, attribute access and variable names (``password=get_pw()``,
  ``token=self.token``, ``api_key=api_key``, ``password=db_password``).
* Paths (``PWD=/home/u``), URLs without credentials, e-mail addresses, prose.

Counts are not secrets: a number after a token/secret/key name (``token: 512``) is kept; a
number after a *password* name (``pin`` style, ``password=123456``) is redacted. Names are read
by their last component, so ``max_tokens``, ``token_count``, ``TOKEN_EXPIRY_SECONDS`` and
``password_min_length`` are not secret names at all. Weak names (``key``, ``auth``,
``credentials``, ``sig``) only redact values that look random (length ≥ 16, mixed character
classes, high Shannon entropy), never hex digests or UUIDs.
"""

from __future__ import annotations

import base64
import binascii
import functools
import math
import re
from collections import Counter
from typing import Any

__all__ = ["REDACTED", "count_secrets", "redact", "redact_obj"]

REDACTED = "[REDACTED_SECRET]"

# ---------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------

# Names whose value is a secret even when short: users really write ``password=hunter2``.
_PW_WORDS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "passcode"})
_STRONG_WORDS = frozenset({"secret", "token", "authorization"})
# Names that are often innocent (``key=lambda``, ``auth=None``): need a random-looking value.
_WEAK_WORDS = frozenset({"key", "auth", "credential", "credentials", "creds", "sig", "signature"})
# ``<modifier>_key`` names that always hold a secret.
_KEY_STRONG_MODS = (
    "api",
    "access",
    "secret",
    "private",
    "signing",
    "sign",
    "encryption",
    "encrypt",
    "crypt",
    "master",
    "account",
    "client",
    "admin",
    "service",
    "subscription",
    "storage",
    "deploy",
    "write",
    "ingest",
    "sdk",
    "consumer",
    "webhook",
    "hmac",
    "jwt",
    "session",
    "app",
    "aes",
    "shared",
    "root",
    "license",
    "pass",
    "auth",
    "bot",
)
_KEY_PUBLIC_MODS = ("public", "pub", "publishable", "verify", "verification")

_PLACEHOLDER_WORDS = frozenset(
    [
        "none",
        "null",
        "nil",
        "undefined",
        "nan",
        "true",
        "false",
        "yes",
        "no",
        "on",
        "off",
        "empty",
        "blank",
        "unset",
        "notset",
        "missing",
        "changeme",
        "change_me",
        "change-me",
        "changeit",
        "example",
        "sample",
        "placeholder",
        "dummy",
        "fake",
        "test",
        "testing",
        "password",
        "passwd",
        "pass",
        "pwd",
        "secret",
        "secrets",
        "token",
        "tokens",
        "key",
        "apikey",
        "api_key",
        "auth",
        "credentials",
        "creds",
        "redacted",
        "hidden",
        "masked",
        "omitted",
        "removed",
        "censored",
        "xxx",
        "xxxx",
        "todo",
        "tbd",
        "fixme",
        "na",
        "n/a",
        "str",
        "string",
        "int",
        "bytes",
        "bool",
        "any",
        "object",
        "secretstr",
        "secretbytes",
        "optional",
        "required",
        "default",
        "auto",
        "inherit",
        "include",
        "omit",
        "same-origin",
        "value",
        "values",
        "text",
        "env",
        "environ",
        "getenv",
        "bearer",
        "basic",
        "await",
        "async",
        "new",
        "function",
        "lambda",
        "self",
        "this",
        "cls",
        "typeof",
        "require",
        "return",
        "if",
        "not",
        "and",
        "or",
        "is",
        "the",
        "a",
        "an",
        "it",
        "its",
        "to",
        "of",
        "for",
        "in",
        "at",
        "by",
        "with",
        "from",
        "your",
        "our",
        "their",
        "my",
        "mine",
        "here",
        "there",
        "below",
        "above",
        "see",
        "set",
        "unset",
        "provided",
        "invalid",
        "expired",
        "revoked",
        "valid",
        "ok",
        "refreshed",
        "rotated",
        "used",
        "needed",
        "stored",
        "sent",
        "generated",
        "configured",
        "enabled",
        "disabled",
    ]
)
# Words that mark a quoted value as prose, not a passphrase.
_FUNCTION_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "must",
        "should",
        "will",
        "can",
        "cannot",
        "could",
        "would",
        "may",
        "might",
        "not",
        "your",
        "you",
        "we",
        "our",
        "it",
        "this",
        "that",
        "to",
        "of",
        "for",
        "in",
        "on",
        "at",
        "by",
        "with",
        "from",
        "and",
        "or",
        "if",
        "when",
        "please",
        "enter",
        "required",
        "invalid",
        "missing",
        "expired",
        "incorrect",
        "wrong",
        "field",
        "characters",
    ]
)

# ---------------------------------------------------------------------------------------------
# The reversed scanner
# ---------------------------------------------------------------------------------------------


def _trie(words: list[str]) -> str:
    """An alternation of literal words laid out as a trie.

    Every branch then starts with a literal, which the regex engine skips in about a nanosecond,
    so a keyword list costs a handful of comparisons per anchor instead of one per word.
    """
    root: dict[str, Any] = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        alts = [re.escape(ch) + emit(node[ch]) for ch in sorted(k for k in node if k)]
        if "" in node:
            alts.append("")  # last, so longer words win
        return alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"

    return emit(root)


def _rev_variants(words: list[str]) -> list[str]:
    """Reversed lower, UPPER and Title spellings (``password``, ``PASSWORD``, ``dbPassword``)."""
    out: set[str] = set()
    for w in words:
        out.update(v[::-1] for v in (w.lower(), w.upper(), w[:1].upper() + w[1:].lower()))
    return sorted(out)


_ASG_KEYWORDS = [
    "authorization",
    "passphrase",
    "passcode",
    "password",
    "passwd",
    "pwd",
    "pass",
    "secret",
    "token",
    "key",
    "auth",
    "credentials",
    "credential",
    "creds",
    "signature",
    "sig",
]
# Reversed: separator, then spaces/closing quotes/brackets/markdown (one class: one engine op),
# a one-character gate, and the keyword trie. Python re-checks the exact shape forwards.
_ASG_WORDS = _rev_variants(_ASG_KEYWORDS)
_ASG_REV = (
    r"[ \t\]\"'`*\\]{0,40}+(?=["
    + "".join(sorted({w[0] for w in _ASG_WORDS}))
    + "])(?P<kw>"
    + _trie(_ASG_WORDS)
    + ")"
)

# Token prefixes by the delimiter that follows them (``sk-``, ``ghp_``, ``ya29.``).
_DASH_PREFIXES = [
    "sk",
    "glpat",
    "gldt",
    "glrt",
    "glptt",
    "glsoat",
    "glcbt",
    "xoxb",
    "xoxp",
    "xoxa",
    "xoxr",
    "xoxs",
    "xoxe",
    "xapp",
    "key",
    "pypi",
    "xai",
    "pplx",
    "tvly",
    "sq0atp",
    "sq0csp",
    "xkeysib",
    "AGE",
]
_UNDERSCORE_PREFIXES = [
    "ghp",
    "gho",
    "ghu",
    "ghs",
    "ghr",
    "github",
    "npm",
    "hf",
    "sk",
    "rk",
    "pk",
    "whsec",
    "gsk",
    "r8",
    "shpat",
    "shpss",
    "shpca",
    "shppa",
    "dop",
    "dor",
    "doo",
    "lsv2",
    "glc",
    "lin",
    "figd",
    "sntrys",
    "sntryu",
]
_DOT_PREFIXES = ["SG", "ya29", "hooks", "discord", "discordapp", "dp"]
_CLI_KEYWORDS = ["password", "passwd", "passphrase", "pass", "token", "secret", "key", "auth"]
# Reversed: the character before the prefix is not alphanumeric, or it ends a JSON escape
# (``\nghp_...`` inside a JSON string starts a new line).
_NB = r"(?:(?![A-Za-z0-9])|(?=[nrt]\\))"


def _rev_trie(prefixes: list[str]) -> str:
    return _trie([p[::-1] for p in prefixes])


# One pass per anchor character: a pattern that starts with a single literal is searched at
# memchr-like speed, which beats one big alternation anchored on a character class. Patterns
# are bytes: the text is scanned as ``latin-1``/``replace`` bytes, one byte per character.
def _bytes_re(pattern: str) -> re.Pattern[bytes]:
    return re.compile(pattern.encode("ascii"))


_PASSES: tuple[re.Pattern[bytes], ...] = tuple(
    _bytes_re(p)
    for p in (
        "=[:?]?" + _ASG_REV,  # also ``:=`` and ``?=`` (reversed ``=:``, ``=?``)
        # ':' also anchors URL credentials: reversed ``@pass:user//:`` seen from the user's colon.
        ":(?:" + _ASG_REV + r"|(?=[^\s/@:\[\]]*+//:)(?P<url>))",
        "-(?:----(?P<pem>(?:KCOLB )?YEK ETAVIRP)"
        + "|(?P<tok>"
        + _rev_trie(_DASH_PREFIXES)
        + ")"
        + _NB
        + "|(?<=[ptska]-)(?:"
        + "|".join(f"(?<=[ \\t]{re.escape(k[::-1])}-)" for k in _CLI_KEYWORDS)
        + ")(?P<cli>)"
        + r"|(?<=u-)(?:(?<=[ \t]u-)|(?<=[ \t=]resu-)-)(?![^\s\"'])(?P<curl>))",
        "_(?P<tok>" + _rev_trie(_UNDERSCORE_PREFIXES) + ")" + _NB,
        r"\.(?:(?P<tok>" + _rev_trie(_DOT_PREFIXES) + ")" + _NB + r"|(?<=Jye\.)(?P<jwt>))",
        "A(?:(?:IKA|ISA|PGA|DIA|ORA|PIA|PNA|VNA|IBA|CCA)" + _NB + "(?P<aws>)|(?<=azIA)" + _NB + "(?P<goog>))",
    )
)
# Rare anchors get a pass only when a cheap substring test says they can matter.
# ``<password>value</password>``: found forwards from the closing tag (``</`` is rare in text).
_XML_CLOSE_RE = re.compile(
    (r"</(?P<name>[A-Za-z0-9_.:\-]{0,64}?" + _trie(sorted({v[::-1] for v in _ASG_WORDS})) + ")>").encode(
        "ascii"
    )
)
_TWILIO_PASS = _bytes_re("KS" + _NB + "(?P<twilio>)")

# ---------------------------------------------------------------------------------------------
# Forward confirmers (run only at hit positions)
# ---------------------------------------------------------------------------------------------

_TOKEN_FAMILIES: list[tuple[str, str]] = [
    ("anthropic", r"sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_\-]{20,400}"),
    ("openai", r"sk-(?:proj-|svcacct-|admin-|None-|or-v1-)?[A-Za-z0-9_\-]{20,400}"),
    ("github", r"gh[pousr]_[A-Za-z0-9]{36,251}"),
    ("github_pat", r"github_pat_[A-Za-z0-9_]{22,255}"),
    ("gitlab", r"gl(?:pat|dt|rt|ptt|soat|cbt)-[A-Za-z0-9_\-]{20,255}"),
    ("slack", r"xox[baprse]-[A-Za-z0-9\-]{10,255}"),
    ("slack_app", r"xapp-[A-Za-z0-9\-]{20,255}"),
    (
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<v_slack>[A-Za-z0-9_/+\-]{20,255})",
    ),
    (
        "discord_webhook",
        r"discord(?:app)?\.com/api/webhooks/(?P<v_discord>\d{5,30}/[A-Za-z0-9_\-]{20,255})",
    ),
    ("mailgun", r"key-[0-9a-zA-Z]{32,64}"),
    ("pypi", r"pypi-AgE[A-Za-z0-9_\-]{50,400}"),
    ("xai", r"xai-[A-Za-z0-9]{40,255}"),
    ("perplexity", r"pplx-[A-Za-z0-9]{40,255}"),
    ("tavily", r"tvly-(?:dev-|prod-)?[A-Za-z0-9]{20,255}"),
    ("square", r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,255}"),
    ("brevo", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ("age", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    ("npm", r"npm_[A-Za-z0-9]{36,64}"),
    ("huggingface", r"hf_[A-Za-z0-9]{30,64}"),
    ("stripe", r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,255}"),
    ("stripe_webhook", r"whsec_[A-Za-z0-9]{24,255}"),
    ("groq", r"gsk_[A-Za-z0-9]{40,255}"),
    ("replicate", r"r8_[A-Za-z0-9]{30,255}"),
    ("shopify", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"),
    ("digitalocean", r"do[opr]_v1_[a-f0-9]{64}"),
    ("langsmith", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"),
    ("grafana", r"glc_[A-Za-z0-9+/]{32,400}={0,2}"),
    ("linear", r"lin_api_[A-Za-z0-9]{40,64}"),
    ("figma", r"figd_[A-Za-z0-9_\-]{30,255}"),
    ("sentry", r"sntry[us]_[A-Za-z0-9+/=_\-]{40,400}"),
    ("sendgrid", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{16,64}"),
    ("google_oauth", r"ya29\.[A-Za-z0-9_\-]{20,2048}"),
    ("doppler", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,255}"),
]
_TOKEN_RE = re.compile("|".join(f"(?P<{name}>{pat})" for name, pat in _TOKEN_FAMILIES))
# Families whose body is generic enough that a look-alike word could match (``sk-learn-...``).
_TOKEN_NEEDS_MIX = frozenset(
    {
        "anthropic",
        "openai",
        "github",
        "gitlab",
        "slack",
        "slack_app",
        "mailgun",
        "xai",
        "perplexity",
        "tavily",
        "npm",
        "huggingface",
        "stripe",
        "stripe_webhook",
        "groq",
        "replicate",
        "figma",
        "sendgrid",
        "google_oauth",
        "square",
        "doppler",
        "linear",
    }
)
_JWT_RE = re.compile(r"eyJ[A-Za-z0-9_\-]{8,8192}\.eyJ[A-Za-z0-9_\-]{8,65536}\.[A-Za-z0-9_\-+/=]{0,8192}")
_B64URL_BACK_RE = re.compile(rb"[A-Za-z0-9_\-]{0,8192}")  # reversed bytes
_AUTHORITY_RE = re.compile(r"[^\s/?#\"'<>`\\]++")
_AWS_ID_RE = re.compile(r"(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])")
_AWS_SECRET_NEAR_RE = re.compile(r"[\s,;:|\"'=]{1,8}+([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])")
_GOOGLE_KEY_RE = re.compile(r"AIza[0-9A-Za-z_\-]{35}")
_TWILIO_RE = re.compile(r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])")

_PEM_HEAD_RE = re.compile(r"-----BEGIN (?:[A-Z0-9]{1,16} ){0,4}PRIVATE KEY(?: BLOCK)?-----")
_PEM_SEP = r"(?:\\{1,4}[rn]|[ \t\r\n])++[\-+>#*|]?"
_PEM_BODY_RE = re.compile(
    r"(?:" + _PEM_SEP + r"(?:(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset|MessageID):[^\r\n\\]{0,200}+"
    r"|[A-Za-z0-9+/=]{16,}+"
    r"|[A-Za-z0-9+/=]{1,15}+(?=\\{1,4}[rn]|[\r\n\"'`]|\Z|[ \t]++-----END))){0,4000}"
)
_PEM_END_RE = re.compile(r"(?:\\{1,4}[rn]|[ \t\r\n]){0,64}+[\-+>#*|]?-----END [A-Z0-9 ]{0,60}-----")

_NAME_BACK_RE = re.compile(rb"[A-Za-z0-9_.\-]{0,80}")  # run on the reversed bytes
_SEP_FWD = r"[ \t]{0,4}+[\]\"'`*\\]{0,6}+[ \t]{0,32}+(?P<sep>:=|=>|\?=|[:=>])"
_UV_MAX = 512
_QV_MAX = 4096
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
# An unquoted value ends at the next query parameter (``?token=abc&page=2``), not at any '&'.
_QUERY_CUT_RE = re.compile(r"&[A-Za-z_][\w.\-]{0,64}=")
_UV_RUN_RE = re.compile(r"[^\s\"'`,;()\[\]{}<>\\]*+")
# Separator and value in one match: one regex call per assignment hit.
_SEP_VALUE_RE = re.compile(_SEP_FWD + "(?:" + _VALUE + ")?")
_VALUE_RE = re.compile(_VALUE)
_AUTH_VALUE_RE = re.compile(
    r"[ \t]{0,64}+(?:[rbfuRBFU]{1,2}(?=[\"']))?\\{0,3}+[\"'`]?[ \t]{0,8}+"
    r"(?:(?i:bearer|basic|token|bot|apikey|api-key|sso-key|key|jwt|otp|negotiate|ntlm)[ \t]{1,8}+)?"
    r"(?P<cred>[^\s\"'`\\,;<>{}$()]{1,4096}+)"
)
_UV_TAIL_RE = re.compile(r"[^\s\"'`,;\\]{0,512}+")
_CLI_KW_RE = re.compile(r"(?i:password|passwd|passphrase|pass|token|secret|key|auth)(?=[ \t])")
_USERPASS_RE = re.compile(r"[ \t=]{1,8}+[\"']?([^\s:\"'@/\\\[\]]{1,128}+):([^\s\"'\\/][^\s\"'\\]{0,255}+)")
_FLAG_BACK_RE = re.compile(rb"[A-Za-z0-9_\-]{0,80}")  # reversed bytes

_PLACEHOLDER_RE = re.compile(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?"
    r"|\$?\{\{?.*\}?\}"
    r"|%\(?\w*\)?[sd]"
    r"|<[^<>]*>"
    r"|\$\(.*\)"
    r"|\[[^\[\]]*\]"
    r"|\(?(?:hidden|redacted|masked|omitted|not shown|see above|see below)\)?",
    re.IGNORECASE | re.DOTALL,
)
_MASK_CHARS = frozenset("*.•…#· ")
_MASK_RE = re.compile(r"[xX]{3,}|[?\-_]{3,}")
_NUM_RE = re.compile(r"[+-]?\d+(?:[.,_:]\d+)*(?:[eE][+-]?\d+)?[a-zA-Z%]{0,3}")
_IDENT_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_DOTTED_RE = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|::|->)[A-Za-z_$][A-Za-z0-9_$]*)+[!?]?")
_CAMEL_RE = re.compile(r"[a-z][A-Z]")
_SECRET_WORD_RE = re.compile(r"(?i)password|passwd|pwd|pass|secret|token|key|auth|cred")
_PATH_RE = re.compile(r"(?:~|\.{1,2})?/[^\s]*|~|[A-Za-z]:\\[^\s]*")
_URL_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")
_EMAIL_RE = re.compile(r"[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)+")
_HEX_RE = re.compile(r"[0-9a-fA-F]+")
_UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Atomic per word: a plain ``(...)+`` here backtracks exponentially on long capital runs.
_WORDS_SHAPE_RE = re.compile(r"(?>[A-Z][a-z]++|[a-z]{2,}+|[A-Z]{2,}(?![a-z])|\d{1,4}+)++")
_USERPASS_VALUE_RE = re.compile(r"([^\s:]{1,64}):(\S{3,})")
_B64_RE = re.compile(r"[A-Za-z0-9+/]{8,}={0,2}")
_WS_RE = re.compile(r"\s")
_NONALNUM_RE = re.compile(r"[^A-Za-z0-9]+")
_DELIM_RE = re.compile(r"[\-_.]")
_TOKEN_RUN_RE = re.compile(r"[A-Za-z0-9_\-]*+")

_DIGITS = frozenset("0123456789")
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_COMPARE_BEFORE = frozenset("!<>=+-/%&|^~")

# ---------------------------------------------------------------------------------------------
# Value heuristics
# ---------------------------------------------------------------------------------------------


def _entropy(s: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(s)
    return -sum(c / n * math.log2(c / n) for c in Counter(s).values())


def _looks_random(v: str) -> bool:
    """True for machine-generated strings (keys, tokens), false for words, names and versions."""
    if len(v) < 16 or _WS_RE.search(v):
        return False
    chars = set(v)
    digit = not chars.isdisjoint(_DIGITS)
    upper = not chars.isdisjoint(_UPPER)
    lower = not chars.isdisjoint(_LOWER)
    if not ((digit and (upper or lower)) or (upper and lower)):
        return False
    alnum = _NONALNUM_RE.sub("", v)
    if len(alnum) < 12 or _WORDS_SHAPE_RE.fullmatch(alnum):
        return False
    # Words, versions and dates change character class rarely; random strings change often.
    changes = 0
    prev = ""
    for ch in alnum:
        cls = "d" if ch in _DIGITS else ("u" if ch in _UPPER else "l")
        if prev and cls != prev:
            changes += 1
        prev = cls
    if changes / len(alnum) < 0.15:
        return False
    return _entropy(v) >= 3.0


def _is_placeholder(v: str) -> bool:
    """Template references, masks, markers and stock words that carry no secret."""
    s = v.strip()
    if not s or REDACTED in s:
        return True
    low = s.lower()
    if low in _PLACEHOLDER_WORDS or set(s) <= _MASK_CHARS or _MASK_RE.fullmatch(s):
        return True
    if low.startswith(("your", "<", "{{", "${", "$(", "%(", "insert", "replace", "enter_", "enter-")):
        return True
    return _PLACEHOLDER_RE.fullmatch(s) is not None


def _no_digit(v: str) -> bool:
    """True when no ASCII digit occurs (cheap set test)."""
    return set(v).isdisjoint(_DIGITS)


def _is_code_ref(v: str, quoted: bool, follow: str) -> bool:
    """Variable names, attribute access and calls: code that *refers* to a secret."""
    if not quoted and follow and follow in "([":
        return True
    if _DOTTED_RE.fullmatch(v) and _no_digit(v):
        return not quoted or _SECRET_WORD_RE.search(v) is not None
    if _IDENT_RE.fullmatch(v):
        wordish = "_" in v or _CAMEL_RE.search(v) is not None
        if _SECRET_WORD_RE.search(v) and (wordish or _no_digit(v)):
            return True
        if not quoted and wordish and _no_digit(v) and not _looks_random(v):
            return True
    return False


def _is_prose(v: str) -> bool:
    """Error messages and sentences stored under a password-ish key are not passwords."""
    words = v.split()
    if len(words) < 2:
        return False
    if len(words) > 8:
        return True
    hits = sum(1 for w in words if w.lower().strip(".,:;!?") in _FUNCTION_WORDS)
    return hits >= 1 and (len(words) >= 3 or v.rstrip().endswith((".", "!", "?")))


def _basic_userpass(v: str) -> bool:
    """True when ``v`` is base64 of ``user:password`` (HTTP Basic, docker ``auth``)."""
    if not _B64_RE.fullmatch(v) or (_no_digit(v) and set(v).isdisjoint(_UPPER)):
        return False
    try:
        raw = base64.b64decode(v + "=" * (-len(v) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    user, sep, pw = text.partition(":")
    return bool(sep and user and pw and text.isprintable() and " " not in user)


@functools.lru_cache(maxsize=4096)
def _secret_span(v: str, kind: str, quoted: bool, follow: str, kw: str, name: str) -> tuple[int, int] | None:
    """Decide whether a value found after a secret-ish name is a secret.

    Returns the (start, end) offsets inside ``v`` to redact, or None to keep it. Cached: the
    same assignment lines recur across a transcript (and in adversarial repetitive input).
    """
    s = v.strip()
    if not s:
        return None
    lead = len(v) - len(v.lstrip())
    full = (lead, lead + len(s))
    if _is_placeholder(s):
        return None
    low = s.lower()
    if low in (kw, name.lower(), name.lower().lstrip("-_$.")):
        return None
    if _URL_RE.match(s) or _EMAIL_RE.fullmatch(s):
        return None
    if _PATH_RE.fullmatch(s) and not _looks_random(s):
        return None
    if _NUM_RE.fullmatch(s):
        return full if kind == "pw" and sum(c in _DIGITS for c in s) >= 4 else None
    if kind == "weak":
        if kw in ("auth", "credential", "credentials", "creds"):
            m = _USERPASS_VALUE_RE.fullmatch(s)
            if m and not _is_placeholder(m.group(2)) and not _NUM_RE.fullmatch(m.group(2)):
                return (lead + m.start(2), lead + m.end(2))
            if _basic_userpass(s):
                return full
        if not _looks_random(s) or _is_code_ref(s, quoted, follow):
            return None
        if kw not in ("sig", "signature") and (_HEX_RE.fullmatch(s) or _UUID_RE.fullmatch(s)):
            return None  # digests, ids and cache keys
        return full
    if _is_code_ref(s, quoted, follow):
        return None
    if len(s) < 3 or (len(s) <= 3 and s.isalpha()):
        return None
    if _is_prose(s):
        return None
    if kind == "cli":
        # ``--password X`` in prose ("use the --password flag"): want a non-word value.
        chars = set(s)
        wordy = s.isalpha() and (s.islower() or s.istitle() or s.isupper())
        if wordy and len(s) < 20 and chars.isdisjoint(_DIGITS):
            return None
    return full


# ---------------------------------------------------------------------------------------------
# Name analysis
# ---------------------------------------------------------------------------------------------


def _name_kind(prefix: str, kw: str, boundary: bool) -> str | None:
    """Classify a name by its last component: 'pw', 'strong', 'weak' or None (not secret)."""
    kw = kw.lower()
    if kw in ("pass", "sig") and not boundary:
        return None  # bypass, compass, consig
    if kw in _PW_WORDS:
        return "pw"
    if kw in _STRONG_WORDS:
        return "strong"
    if kw == "key":
        prev = prefix.lower().rstrip("_-. $")
        if prev.endswith(_KEY_PUBLIC_MODS):
            return None
        return "strong" if prev.endswith(_KEY_STRONG_MODS) else "weak"
    if kw in _WEAK_WORDS:
        return "weak"
    return None


_TRAILING_KW_RE = re.compile(
    r"(?i)(authorization|passphrase|passcode|password|passwd|credentials|credential|creds|"
    r"secret|token|signature|pass|pwd|key|auth|sig)[^A-Za-z0-9]{0,3}$"
)


def _key_kind(key: str) -> tuple[str, str] | None:
    """Kind and keyword of a dict key like ``db_password`` or ``apiKey`` (for redact_obj)."""
    m = _TRAILING_KW_RE.search(key)
    if not m:
        return None
    start = m.start(1)
    boundary = (
        start == 0
        or not key[start - 1].isalnum()
        or ((key[start - 1].islower() or key[start - 1].isdigit()) and key[start].isupper())
    )
    kind = _name_kind(key[:start], m.group(1), boundary)
    return (kind, m.group(1).lower()) if kind else None


# ---------------------------------------------------------------------------------------------
# Hit handlers (forward positions)
# ---------------------------------------------------------------------------------------------

_Spans = list[tuple[int, int]]


def _skip_escape(text: str, start: int, limit: int) -> int:
    """Move ``start`` past the letter of a JSON escape (``\\n``, ``\\r``, ``\\t``) it begins with."""
    if 0 < start < limit and text[start - 1] == "\\" and text[start] in "nrt":
        return start + 1
    return start


def _mixed(s: str) -> bool:
    """At least two of lower/upper/digit: random bodies have them, hyphenated words do not."""
    chars = set(s)
    return (
        (not chars.isdisjoint(_LOWER)) + (not chars.isdisjoint(_UPPER)) + (not chars.isdisjoint(_DIGITS))
    ) >= 2


def _on_token(text: str, start: int, spans: _Spans) -> None:
    m = _TOKEN_RE.match(text, start)
    if not m:
        return
    family = m.lastgroup or ""
    if family == "slack_webhook":
        spans.append(m.span("v_slack"))
        return
    if family == "discord_webhook":
        spans.append(m.span("v_discord"))
        return
    if family in _TOKEN_NEEDS_MIX:
        token = m.group()
        delim = _DELIM_RE.search(token)
        body = token[delim.end() :] if delim else token
        if not _mixed(body) or len(_NONALNUM_RE.sub("", body)) < 16:
            return
    # A token glued to more token characters (``ghp_...ghp_...``) takes the whole run with it.
    run = _TOKEN_RUN_RE.match(text, m.end())
    spans.append((m.start(), run.end() if run else m.end()))


def _on_jwt(text: str, rtext: bytes, n: int, rpos: int, spans: _Spans) -> None:
    dot = n - 1 - rpos
    back = _B64URL_BACK_RE.match(rtext, rpos + 1)
    run_len = back.end() - (rpos + 1) if back else 0
    start = text.find("eyJ", dot - run_len, dot)
    if start < 0:
        return
    m = _JWT_RE.match(text, start)
    if m:
        spans.append(m.span())


def _on_url(text: str, colon: int, spans: _Spans) -> None:
    """``scheme://user:password@host``: redact the password (the anchor is the user's colon)."""
    rest = _AUTHORITY_RE.match(text, colon + 1)
    if not rest:
        return
    at = rest.group().rfind("@")
    if at <= 0:
        return  # host:port, or an empty password
    pw = rest.group()[:at]
    if _is_placeholder(pw) or pw.lower() in ("password", "pass", "secret", "pwd"):
        return
    spans.append((colon + 1, colon + 1 + at))


def _on_pem(text: str, private_pos: int, spans: _Spans) -> None:
    head = text.rfind("-----BEGIN ", max(0, private_pos - 80), private_pos)
    if head < 0:
        return
    m = _PEM_HEAD_RE.match(text, head)
    if not m:
        return
    end = m.end()
    body = _PEM_BODY_RE.match(text, end)
    if body:
        end = body.end()
    tail = _PEM_END_RE.match(text, end)
    if tail:
        end = tail.end()
    spans.append((head, end))


def _on_aws(text: str, a4: int, spans: _Spans) -> None:
    m = _AWS_ID_RE.match(text, a4 - 3)
    if not m:
        return
    spans.append(m.span())
    near = _AWS_SECRET_NEAR_RE.match(text, m.end())
    if near and _mixed(near.group(1)) and not _HEX_RE.fullmatch(near.group(1)):
        spans.append(near.span(1))


def _on_google(text: str, start: int, spans: _Spans) -> None:
    m = _GOOGLE_KEY_RE.match(text, start)
    if m and _mixed(m.group()[4:]):
        spans.append(m.span())


def _on_twilio(text: str, start: int, spans: _Spans) -> None:
    m = _TWILIO_RE.match(text, start)
    if m and "twilio" in text[max(0, start - 300) : start + 334].lower():
        spans.append(m.span())


def _on_assignment(
    text: str, rtext: bytes, n: int, kw_start: int, kw_end: int, spans: _Spans
) -> tuple[int, int] | None:
    """``name<sep>value`` around a secret-ish keyword.

    Returns the span of a redacted *unquoted* value, so later keywords deep inside it can be
    skipped (``password=password=...`` must stay linear), else None.
    """
    back = _NAME_BACK_RE.match(rtext, n - kw_start)
    name_start = kw_start - (back.end() - (n - kw_start) if back else 0)
    before = text[name_start - 1] if name_start > 0 else ""
    if before == "\\":
        name_start = _skip_escape(text, name_start, kw_start)
        before = text[name_start - 1]
        if before == "\\" and text[name_start - 2 : name_start] != "\\\\":
            before = "\n"  # the name follows a JSON escape such as \n
    if before == "/" or before == "\\":
        return None  # a path component: /etc/passwd: ...
    prefix = text[name_start:kw_start]
    kw = text[kw_start:kw_end]
    if before == "[" and (prefix + kw).upper() == "REDACTED_SECRET":
        return None  # our own marker followed by ':' or '='
    boundary = kw_start == name_start or not text[kw_start - 1].isalnum()
    if not boundary:
        p = text[kw_start - 1]
        boundary = (p.islower() or p.isdigit()) and kw[0].isupper()
    kind = _name_kind(prefix, kw, boundary)
    if kind is None:
        return None
    m = _SEP_VALUE_RE.match(text, kw_end)
    if not m:
        return None
    sep = m.group("sep")
    sep_start, sep_end = m.span("sep")
    nxt = text[sep_end : sep_end + 2]
    if sep == "=":
        if nxt[:1] in ("=", "~") or (sep_start > 0 and text[sep_start - 1] in _COMPARE_BEFORE):
            return None  # ==, =~, !=, <=, >=, +=, ...
    elif sep == ">":
        if before != "<" or nxt[:1] == "=":
            return None
    elif sep == ":" and (nxt[:1] == ":" or nxt == "//"):
        return None
    name = text[name_start:kw_end]
    kwl = kw.lower()
    if kwl == "authorization":
        am = _AUTH_VALUE_RE.match(text, sep_end)
        if am:
            follow = text[am.end() : am.end() + 1]
            sub = _secret_span(am.group("cred"), "strong", False, follow, kwl, name)
            if sub:
                spans.append((am.start("cred") + sub[0], am.start("cred") + sub[1]))
        return None
    group = m.lastgroup
    if group is None or group == "sep" or group == "ph":
        return None
    v = m.group(group)
    vstart, vend = m.span(group)
    if group != "uv":
        sub = _secret_span(v, kind, True, text[vend : vend + 1], kwl, name)
        if sub:
            spans.append((vstart + sub[0], vstart + sub[1]))
        return None
    cut = _QUERY_CUT_RE.search(v)
    if cut:
        v = v[: cut.start()]
        vend = vstart + cut.start()
    if not v:
        return None
    capped = len(v) >= _UV_MAX and not cut
    follow = text[vend : vend + 1]
    if follow and follow in "([" and not capped:
        if _IDENT_RE.fullmatch(v) or _DOTTED_RE.fullmatch(v):
            return None  # a call or subscript: code, not a literal
        tail = _UV_TAIL_RE.match(text, vend)
        if tail:
            vend = tail.end()  # P@ss(w0rd): the parenthesis is part of it
            v = text[vstart:vend]
        follow = ""
    sub = _secret_span(v, kind, False, follow, kwl, name)
    if not sub:
        return None
    start = vstart + sub[0]
    end = _run_end(text, vend) if capped else vstart + sub[1]
    spans.append((start, end))
    return (start, end)


def _run_end(text: str, pos: int) -> int:
    """End of an unquoted run that hit the length cap: it is redacted whole.

    Judging only the first part keeps each hit bounded; redacting the whole run lets later
    keywords inside it be skipped, so keyword floods stay linear.
    """
    run = _UV_RUN_RE.match(text, pos)
    end = run.end() if run else pos
    cut = _QUERY_CUT_RE.search(text, pos, end)
    return cut.start() if cut else end


def _on_xml(text: str, close: int, name: str, spans: _Spans) -> None:
    """``<password>value</password>``: judge the element text with the tag as its name."""
    kk = _key_kind(name)
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
    sub = _secret_span(v, kk[0], True, "", kk[1], name)
    if sub:
        spans.append((vstart + sub[0], vstart + sub[1]))


def _on_curl(text: str, dash: int, spans: _Spans) -> None:
    """``curl -u user:pass`` / ``--user user:pass``: redact the password part."""
    after = dash + (5 if text.startswith("user", dash + 1) else 2)
    m = _USERPASS_RE.match(text, after)
    if m:
        pw = m.group(2)
        if not _is_placeholder(pw) and not _NUM_RE.fullmatch(pw) and not _PLACEHOLDER_RE.match(pw):
            spans.append(m.span(2))


def _on_cli(text: str, rtext: bytes, n: int, dash: int, spans: _Spans) -> None:
    """``--password VALUE`` style flags (the ``--password=VALUE`` form is an assignment)."""
    km = _CLI_KW_RE.match(text, dash + 1)
    if not km:
        return
    back = _FLAG_BACK_RE.match(rtext, n - 1 - dash)
    flag_start = _skip_escape(text, dash + 1 - ((back.end() - (n - 1 - dash)) if back else 1), dash)
    if not text.startswith("--", flag_start) or (flag_start > 0 and text[flag_start - 1] not in " \t\"'(\\"):
        return
    flag = text[flag_start : km.end()]
    kind = _name_kind(text[flag_start + 2 : dash + 1], km.group(), True)
    if kind is None:
        return
    vm = _VALUE_RE.match(text, km.end())
    if not vm or vm.group("ph") is not None:
        return
    for group in ("dq", "sq", "bq", "uv"):
        v = vm.group(group)
        if v is not None:
            break
    else:  # pragma: no cover - the regex always sets one group
        return
    if group == "uv":
        if v.startswith("-"):
            return
        cut = _QUERY_CUT_RE.search(v)
        if cut:
            v = v[: cut.start()]
    follow = text[vm.end() : vm.end() + 1]
    tier = "weak" if kind == "weak" else "cli"
    sub = _secret_span(v, tier, group != "uv", follow, km.group().lower(), flag)
    if sub:
        spans.append((vm.start(group) + sub[0], vm.start(group) + sub[1]))


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------


def _dispatch(text: str, rtext: bytes, n: int, m: re.Match[bytes], spans: _Spans) -> None:
    """Confirm one anchor hit; reversed index ``r`` is forward index ``n - 1 - r``."""
    kind = m.lastgroup
    rs = m.start()
    if kind == "tok":
        _on_token(text, n - m.end(), spans)
    elif kind == "url":
        _on_url(text, n - 1 - rs, spans)
    elif kind == "jwt":
        _on_jwt(text, rtext, n, rs, spans)
    elif kind == "pem":
        _on_pem(text, n - m.end(), spans)
    elif kind == "cli":
        _on_cli(text, rtext, n, n - 1 - rs, spans)
    elif kind == "curl":
        _on_curl(text, n - 1 - rs, spans)
    elif kind == "aws":
        _on_aws(text, n - 1 - rs, spans)
    elif kind == "goog":
        _on_google(text, n - m.end(), spans)
    elif kind == "twilio":
        _on_twilio(text, n - m.end(), spans)


def _find_spans(text: str) -> _Spans:
    """All secret spans in ``text``, sorted and merged (touching spans become one)."""
    spans: _Spans = []
    n = len(text)
    if n < 6:
        return spans
    # One byte per character (non-latin-1 becomes '?'), so byte offsets are str offsets, and
    # the scan runs over compact bytes even when the str holds emoji (4 bytes per character).
    data = text.encode("latin-1", "replace")
    rdata = data[::-1]
    passes: list[re.Pattern[bytes]] = list(_PASSES)
    if b"wilio" in data or b"WILIO" in data:
        passes.append(_TWILIO_PASS)
    keywords: list[tuple[int, int]] = []
    for rx in passes:
        for m in rx.finditer(rdata):
            if m.lastgroup == "kw":
                ks, ke = m.span("kw")
                keywords.append((n - ke, n - ks))
            else:
                _dispatch(text, rdata, n, m, spans)
    if b"</" in data:
        for m in _XML_CLOSE_RE.finditer(data):
            _on_xml(text, m.start(), m.group("name").decode("latin-1"), spans)
    # Assignments in text order, skipping keywords inside a value that was already redacted.
    keywords.sort()
    cov_start = cov_end = -1
    for kw_start, kw_end in keywords:
        # Deep inside a redacted unquoted run, this keyword's separator and value are inside
        # the run too (no quote or space can occur there), so its value is already covered.
        if cov_start <= kw_start and kw_end + 8 < cov_end:
            continue
        cov = _on_assignment(text, rdata, n, kw_start, kw_end, spans)
        if cov is not None and cov[1] > cov_end:
            cov_start, cov_end = cov
    if not spans:
        return spans
    spans.sort()
    merged: _Spans = []
    cs, ce = spans[0]
    for s, e in spans[1:]:
        if s <= ce:
            ce = max(ce, e)
        else:
            if ce > cs:
                merged.append((cs, ce))
            cs, ce = s, e
    if ce > cs:
        merged.append((cs, ce))
    return merged


def redact(text: str) -> str:
    """Replace every secret value in ``text`` with :data:`REDACTED`; idempotent, never raises."""
    spans = _find_spans(text)
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
    return len(_find_spans(text))


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
            if isinstance(k, str) and isinstance(v, str):
                out_d[nk] = _redact_named(k, v)
            else:
                out_d[nk] = _redact_obj(v, memo)
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
    kk = _key_kind(key)
    if kk is not None:
        kind, kw = kk
        if kw == "authorization":
            am = _AUTH_VALUE_RE.match(value)
            sub = None
            if am:
                s = _secret_span(am.group("cred"), "strong", True, "", kw, key)
                if s:
                    sub = (am.start("cred") + s[0], am.start("cred") + s[1])
        else:
            sub = _secret_span(value, kind, True, "", kw, key)
        if sub:
            value = value[: sub[0]] + REDACTED + value[sub[1] :]
    return redact(value)
