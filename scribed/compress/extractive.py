"""The offline extractive compressor: no model, no network, deterministic.

It is the embedded default and the fallback when an LLM endpoint fails. Instead of keeping
the first N bytes (what truncation does), it ranks lines by signal — decisions, outcomes,
errors and their fixes, paths, commands, identifiers, open items, user directives — and
drops tool dumps and chatter, which are most of a transcript's bytes and least of its value.
"""

from __future__ import annotations

import re

from scribed.compress.base import CompressResult
from scribed.models import Anchor, Session, Summary, Turn

_FIX = re.compile(
    r"\b(?:fix(?:ed|es)?|resolv(?:ed|es)|root cause|the cause|caused by|solution|workaround|patched)\b", re.I
)
_OUTCOME = re.compile(
    r"\b(?:done|finished|completed|all tests pass|tests? pass(?:es|ed)?|merged|shipped|opened (?:a )?pr|"
    r"landed|works now|is fixed|green|released|deployed|outcome)\b",
    re.I,
)
_KNOWLEDGE = re.compile(
    r"\b(?:learned|lesson|turns out|gotcha|note that|remember|root cause|because|the trick|caveat|"
    r"convention|pattern|always|never|prefer|avoid|requires?|must)\b",
    re.I,
)
_CHATTER = re.compile(
    r"^(?:ok(?:ay)?|sure|thanks?|thank you|great|sounds good|let me|i'll|i will|now i|alright|got it|perfect)\b",
    re.I,
)
_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`#(])")


_CODEISH = re.compile(
    r"^(?:diff --git|index [0-9a-f]|@@|\+\+\+|---|[+-]\s|\d+\s{2}|def |class |import |from \S+ import|"
    r"[{}\[\]]|</?\w+>|\$ )"
)
_MARKERS = re.compile(r"\b(?:decision|decided|todo|fixme|open item)\b\s*(?:\([^)]*\))?\s*:", re.I)


def _prose(line: str) -> bool:
    """Whether a line reads as prose rather than code, a diff or a log dump."""
    if _CODEISH.match(line):
        return False
    letters = sum(c.isalpha() or c == " " for c in line)
    return letters >= 0.6 * len(line)


_ASSIGN = re.compile(r"^[\w.\[\]'\"]+\s*[:+*/-]?=\s*\S")


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    fence = diff = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("```"):
            fence = not fence
            continue
        if line.startswith("diff --git"):
            diff = True
        elif diff and not line:
            diff = False
        if fence or diff or raw.startswith(("    ", "\t")) or _ASSIGN.match(line):
            continue
        if len(line) < 4 or line.startswith("|") or not _prose(line):
            continue
        line = line.lstrip("#>*- ").strip()
        out.extend(s.strip() for s in _SENT_SPLIT.split(line) if len(s.strip()) >= 4)
    return out


def score(sentence: str) -> float:
    """Signal score of one sentence (higher = keep)."""
    s = 0.0
    if _OUTCOME.search(sentence):
        s += 2
    if _FIX.search(sentence):
        s += 2
    if _KNOWLEDGE.search(sentence):
        s += 1
    if "`" in sentence or "/" in sentence:
        s += 0.5
    if re.search(r"#\d+|\d+(?:\.\d+)?\s?(?:ms|s|%|MB|KB|x)\b", sentence):
        s += 0.5
    if _CHATTER.match(sentence):
        s -= 2
    if len(sentence) > 300:
        s -= 1
    return s


def _first_user_request(turns: list[Turn]) -> str:
    for t in turns[:4]:
        m = re.search(r"^\s*[-*]?\s*\**Current task:?\**:?\s*(\S.+)$", t.text, re.M | re.I)
        if m and t.role != "user":
            return m.group(1).strip()
    for t in turns:
        if t.role == "user" and t.kind == "message":
            for sent in _sentences(t.text):
                if len(sent.split()) >= 3:
                    return sent
    for t in turns:
        if t.kind in ("message", "summary"):
            for sent in _sentences(t.text):
                return sent
    return ""


def _outcome(turns: list[Turn]) -> str:
    """The last assistant message's strongest sentences."""
    for t in reversed(turns):
        if t.role == "assistant" and t.kind == "message" and t.text.strip():
            sents = _sentences(t.text)
            if not sents:
                continue
            ranked = sorted(range(len(sents)), key=lambda i: (-score(sents[i]), i))[:2]
            return " ".join(sents[i] for i in sorted(ranked))
    return ""


def _error_fix(anchor: Anchor, turns: list[Turn]) -> str:
    """Pair an error with the first later assistant sentence that says how it was fixed."""
    for t in turns:
        if t.line < anchor.line or t.role != "assistant" or t.kind != "message":
            continue
        for sent in _sentences(t.text):
            if _FIX.search(sent) and anchor.text not in sent:
                return f"`{anchor.text}` → {sent}"
    return f"`{anchor.text}`"


def _group(items: list[str], sep: str = ", ", width: int = 200) -> list[str]:
    out: list[str] = []
    cur = ""
    for it in items:
        if cur and len(cur) + len(sep) + len(it) > width:
            out.append(cur)
            cur = it
        else:
            cur = f"{cur}{sep}{it}" if cur else it
    if cur:
        out.append(cur)
    return out


class ExtractiveCompressor:
    """Rank-and-select summarizer; see the module docstring."""

    name = "extractive"

    def compress(self, session: Session, anchors: list[Anchor], budget: int) -> CompressResult:
        turns = session.turns
        by_type: dict[str, list[Anchor]] = {}
        for a in anchors:
            by_type.setdefault(a.type, []).append(a)

        summary = Summary(goal=_first_user_request(turns), outcome=_outcome(turns))
        summary.decisions = [
            a.text + (f" (supersedes: {a.superseded})" if a.superseded else "")
            for a in by_type.get("decision", [])
        ]
        summary.files = _group([f"`{a.text}`" for a in by_type.get("path", [])])
        summary.errors = [_error_fix(a, turns) for a in by_type.get("error", [])]
        summary.open_items = [a.text for a in by_type.get("todo", [])]

        used = {summary.goal, *_sentences(summary.outcome), *(e.split(" → ", 1)[-1] for e in summary.errors)}
        knowledge: list[tuple[float, int, str]] = []
        for t in turns:
            if t.kind != "message" or t.role != "assistant":
                continue
            for sent in _sentences(t.text):
                sc = score(sent)
                if sc >= 2 and sent not in used and len(sent) <= 300 and not _MARKERS.search(sent):
                    knowledge.append((sc, t.line, sent))
        knowledge.sort(key=lambda k: (-k[0], k[1]))
        summary.knowledge = [k[2] for k in sorted(knowledge[:4], key=lambda k: k[1])]

        facts: list[str] = []
        issues = [a.text for a in by_type.get("issue", [])]
        if issues:
            facts.append("issues: " + ", ".join(issues))
        facts += [f"command: `{a.text}`" for a in by_type.get("command", [])]
        facts += [f"user: {a.text}" for a in by_type.get("directive", [])]
        idents = [f"`{a.text}`" for a in by_type.get("identifier", [])]
        facts += [f"identifiers: {g}" for g in _group(idents)]
        summary.key_facts = facts
        return CompressResult(summary=summary, compressor=self.name)
