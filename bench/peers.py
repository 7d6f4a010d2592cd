"""Peer baselines for the benchmarks, and the identifier score they are compared by.

The peers are what a user could do instead of scribed, at the same byte budget.

Each peer takes a session's text and a byte budget (scribed's entry size for that session) and
returns at most that many bytes of text:

- ``head``: the first lines that fit (cut at a line boundary);
- ``line_sample``: lines picked at evenly spaced positions over the whole session;
- ``lexrank``: sumy's LexRank over sumy's plaintext parser, best-rated sentences added until the
  budget is full. The ratings are sumy's own formulas (idf-modified cosine, threshold 0.1, power
  method); only its pairwise Python loop is replaced by the same sums in numpy, so a 300 KB
  session takes seconds instead of an hour. nltk's sentence tokenizer needs a data download, so
  sentences are split by a regular expression instead (after ``.``, ``!`` or ``?``).

The score (:func:`identifiers`, :func:`retention`, :func:`mid_token_cuts`) is one extractor
applied alike to a session and to every method's output.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from typing import Any

# One n×n float32 matrix: 8000 sentences ≈ 256 MB; more is reported as a failure, not attempted.
LEXRANK_MAX_SENTENCES = 8000


def head(text: str, budget: int) -> str:
    """The session's first whole lines within ``budget`` bytes (a first line too long for it is
    cut at a space, so the peer never gets an empty answer for one giant opening line)."""
    out: list[str] = []
    used = 0
    for line in text.splitlines():
        size = len(line.encode()) + 1
        if used + size > budget:
            break
        out.append(line)
        used += size
    if not out and text:
        first = text.splitlines()[0].encode()[: max(0, budget)].decode("utf-8", "ignore")
        return first.rsplit(" ", 1)[0] if " " in first else ""
    return "\n".join(out)


def _sample(lines: list[str], sizes: list[int], k: int) -> tuple[list[int], int]:
    n = len(lines)
    idx = sorted({min(n - 1, int((i + 0.5) * n / k)) for i in range(k)}) if k else []
    return idx, sum(sizes[i] for i in idx)


def line_sample(text: str, budget: int) -> str:
    """The largest set of evenly spaced non-blank lines that fits ``budget`` bytes."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return ""
    sizes = [len(ln.encode()) + 1 for ln in lines]
    lo, hi = 0, len(lines)
    while lo < hi:  # the biggest k whose sample fits (size grows with k, near enough)
        mid = (lo + hi + 1) // 2
        if _sample(lines, sizes, mid)[1] <= budget:
            lo = mid
        else:
            hi = mid - 1
    idx, size = _sample(lines, sizes, lo)
    while lo > 0 and size > budget:
        lo -= 1
        idx, size = _sample(lines, sizes, lo)
    return "\n".join(lines[i] for i in idx)


class RegexTokenizer:
    """sumy's tokenizer interface without nltk's punkt data."""

    language = "english"
    _SENT = re.compile(r"(?<=[.!?])\s+(?=\S)")
    _WORD = re.compile(r"[A-Za-z0-9_]+(?:'[A-Za-z]+)?")

    def to_sentences(self, paragraph: str) -> tuple[str, ...]:
        return tuple(s.strip() for s in self._SENT.split(paragraph) if s.strip())

    def to_words(self, sentence: str) -> tuple[str, ...]:
        return tuple(self._WORD.findall(sentence))


def _lexrank_ratings(summarizer: Any, sentences: tuple[Any, ...]) -> Any:
    """sumy's ``LexRankSummarizer`` ratings (tf·idf cosine > threshold, row-normalised, power
    method), with each pair's sum over shared terms accumulated per term in numpy."""
    import numpy as np

    rows = [summarizer._to_words_set(s) for s in sentences]
    n = len(rows)
    tf = summarizer._compute_tf(rows)
    df: Counter[str] = Counter()
    for r in rows:
        df.update(set(r))
    idf = {t: math.log(n / (1 + c)) for t, c in df.items()}
    postings: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for i, r in enumerate(rows):
        for term in set(r):
            postings[term].append((i, tf[i][term] * idf[term]))
    sim = np.zeros((n, n), dtype=np.float32)
    for post in postings.values():
        ix = np.fromiter((p[0] for p in post), dtype=np.intp, count=len(post))
        w = np.fromiter((p[1] for p in post), dtype=np.float32, count=len(post))
        for a in range(0, len(ix), 512):  # row blocks: temporaries stay small for common terms
            sim[np.ix_(ix[a : a + 512], ix)] += np.outer(w[a : a + 512], w)
    norm = np.sqrt(np.diag(sim).copy())
    norm[norm == 0] = np.inf  # cosine 0 where a sentence has no weighted term, as in sumy
    sim /= norm[:, None]
    sim /= norm[None, :]
    adj = sim > summarizer.threshold
    sim[...] = adj  # the 0/1 adjacency, in place
    del adj
    deg = sim.sum(axis=1)
    deg[deg == 0] = 1
    sim /= deg[:, None]
    # sumy's power method, with the vector in float32 so numpy does not copy the matrix to float64
    p = np.full(n, 1.0 / n, dtype=np.float32)
    delta = 1.0
    while delta > summarizer.epsilon:
        nxt = sim.T @ p
        nxt /= np.linalg.norm(nxt)
        delta = float(np.linalg.norm(nxt - p))
        p = nxt
    return p


_LEXRANK: list[Any] = []


def _summarizer() -> Any:
    if not _LEXRANK:
        from sumy.nlp.stemmers import Stemmer  # type: ignore[import-untyped]
        from sumy.summarizers.lex_rank import LexRankSummarizer  # type: ignore[import-untyped]
        from sumy.utils import get_stop_words  # type: ignore[import-untyped]

        s = LexRankSummarizer(Stemmer("english"))
        s.stop_words = get_stop_words("english")
        _LEXRANK.append(s)
    return _LEXRANK[0]


def lexrank(text: str, budget: int) -> str:
    """Best-rated sentences, added in rating order while they fit, printed in document order.

    Raises ``ValueError`` for a session with more sentences than :data:`LEXRANK_MAX_SENTENCES`.
    """
    from sumy.parsers.plaintext import PlaintextParser  # type: ignore[import-untyped]

    doc = PlaintextParser.from_string(text, RegexTokenizer()).document
    sentences = doc.sentences
    if not sentences:
        return ""
    if len(sentences) > LEXRANK_MAX_SENTENCES:
        raise ValueError(f"{len(sentences)} sentences > {LEXRANK_MAX_SENTENCES} (memory bound)")
    rates = _lexrank_ratings(_summarizer(), sentences)
    order = sorted(range(len(sentences)), key=lambda i: (-float(rates[i]), i))
    chosen: list[int] = []
    used = 0
    for i in order:
        size = len(str(sentences[i]).encode()) + 1
        if used + size <= budget:
            chosen.append(i)
            used += size
        if budget - used < 16:
            break
    return "\n".join(str(sentences[i]) for i in sorted(chosen))


PEERS = {"head": head, "sample": line_sample, "lexrank": lexrank}


# --- the identifier score ------------------------------------------------------------------------------

_EXT = (
    r"(?i:py|pyi|ipynb|js|mjs|cjs|ts|tsx|jsx|json|jsonl|md|mdx|rst|txt|toml|ya?ml|ini|cfg|conf|env|lock|"
    r"sh|bash|zsh|ps1|bat|cmd|c|h|cc|cpp|hpp|cs|go|rs|java|kt|kts|swift|rb|php|pl|lua|dart|scala|sql|"
    r"html?|css|scss|sass|less|vue|svelte|astro|xml|csv|tsv|log|gradle|proto|graphql|tf|svg|png|jpe?g|"
    r"gif|ico|pdf|zip|gz|tgz|tar|whl|so|dll|exe|db|sqlite|pem|mod|sum|dockerfile|plist|gitignore)"
)
_HAS_EXT = re.compile(rf"\.{_EXT}$")
_TRAIL = ".,:;!?)]}>'\"*"


def _slash_path(tok: str) -> str | None:
    tok = tok.rstrip(_TRAIL)
    if not re.search(r"[A-Za-z]", tok):
        return None
    strong = tok.startswith(("/", "./", "../", "~/")) or tok.endswith("/") or tok.count("/") >= 2
    return tok if strong or _HAS_EXT.search(tok) else None


def _dotted(tok: str) -> str | None:
    return None if all(len(p) == 1 for p in tok.split(".")) else tok


def _snake(tok: str) -> str | None:
    inner = re.search(r"[A-Za-z0-9]_+[A-Za-z0-9]", tok) or re.fullmatch(r"__\w+__", tok)
    return tok if inner and re.fullmatch(r"_*[A-Za-z]\w*", tok) else None


def _camel(tok: str) -> str | None:
    if len(tok) > 40 or sum(c.isdigit() for c in tok) * 3 > len(tok) or re.fullmatch(r"[A-Z]+s", tok):
        return None
    return tok if re.search(r"[a-z]", tok) and re.search(r"[A-Z]", tok[1:]) else None


def _backtick(tok: str) -> str | None:
    tok = tok.strip()
    return tok if len(tok) >= 2 and re.search(r"[A-Za-z0-9]", tok) else None


def _strip(tok: str) -> str | None:
    tok = tok.rstrip(_TRAIL)
    return tok if len(tok) > 2 else None


# (kind, pattern, cleaner): the first kind that finds a string names it.
_PATTERNS: list[tuple[str, re.Pattern[str], Callable[[str], str | None]]] = [
    ("path", re.compile(r"https?://[^\s<>()\[\]{}`'\"]+"), _strip),
    ("path", re.compile(r"(?<!\w)[A-Za-z]:\\[^\s`'\"<>|*?]+"), _strip),
    ("path", re.compile(r"(?<![\w.~/\\:@-])(?:~|\.{1,2})?/?(?:[\w@.+-]+/)+[\w@.+-]*"), _slash_path),
    ("path", re.compile(rf"(?<![\w/\\.@-])[\w+-]+(?:\.[\w+-]+)*\.{_EXT}(?![\w/\\-]|\.\w)"), _strip),
    ("path", re.compile(r"(?<![\w/\\.~)\]}-])\.[A-Za-z][\w-]*(?:\.[\w-]+)*\*?"), _strip),
    ("backtick", re.compile(r"(?<!`)`([^`\n]{2,100})`(?!`)"), _backtick),
    ("issue", re.compile(r"(?<![\w&#/])#\d{1,5}(?!\w)"), lambda t: t),
    ("error", re.compile(r"\b[A-Za-z_]\w*(?:Error|Exception)\b"), lambda t: t),
    ("code", re.compile(r"(?<![\w-])--[A-Za-z][\w-]*"), lambda t: t.rstrip("-")),
    ("code", re.compile(r"(?<![\w.@/\\-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+"), _dotted),
    ("code", re.compile(r"(?<![\w-])\w*_\w*"), _snake),
    ("code", re.compile(r"\b[A-Za-z][A-Za-z0-9]*[A-Z][A-Za-z0-9]*\b"), _camel),
]
_WS = re.compile(r"\s+")


def norm(text: str) -> str:
    return _WS.sub(" ", text)


def identifiers(text: str) -> dict[str, str]:
    """The distinct identifiers of ``text`` (whitespace collapsed), each with its kind: path,
    backtick, issue, error or code. One function for the session and for every method's output."""
    out: dict[str, str] = {}
    for kind, pattern, clean in _PATTERNS:
        for m in pattern.finditer(text):
            tok = clean(m.group(m.lastindex or 0))
            if tok:
                out.setdefault(norm(tok), kind)
    return out


def _word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def present(ident: str, text: str) -> bool:
    """``ident`` occurs in ``text`` verbatim and whole: not glued to a letter, digit or ``_`` at
    an end that is itself one (``#12`` is not in ``#123``, ``foo`` not in ``foo_bar``)."""
    start = 0
    while (i := text.find(ident, start)) >= 0:
        j = i + len(ident)
        left_ok = not (_word(ident[0]) and i > 0 and _word(text[i - 1]))
        right_ok = not (_word(ident[-1]) and j < len(text) and _word(text[j]))
        if left_ok and right_ok:
            return True
        start = i + 1
    return False


def retention(idents: dict[str, str], output: str) -> float | None:
    """The share of ``idents`` present in ``output``; None when the session has none."""
    if not idents:
        return None
    text = norm(output)
    return sum(present(i, text) for i in idents) / len(idents)


def mid_token_cuts(output: str, source: str, src_idents: dict[str, str]) -> list[str]:
    """Identifiers ``output`` cut short: a token shaped like one (or written just before "…") that
    is not in ``source`` but is a strict prefix of one that is; and lines that end in "…" inside
    an open backtick span."""
    src = norm(source)
    cands = set(identifiers(output)) | {m.group(1).lstrip("`'\"([{") for m in re.finditer(r"(\S+)…", output)}
    found = sorted(
        t for t in cands if t and not present(t, src) and any(s != t and s.startswith(t) for s in src_idents)
    )
    for line in output.splitlines():
        body = line.rstrip()
        if body.endswith("…") and body.count("`") % 2 == 1:
            found.append(body[-60:])
    return found
