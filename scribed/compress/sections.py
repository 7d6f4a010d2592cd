"""The fixed sections of an extractive entry: goal, outcome, files, commands, reusable knowledge.

The goal is the session's substantive request, never an acknowledgement, a go-ahead or a bare slash
command (what a message adds decides, see ``request.py``); a later request about something else (a
pivot) adds a second goal, unless it hands something over (a message with an offer or an FYI in
it, "the CI token got rotated btw, new one: … — set it in the repo secrets": the thing handed over
serves the work, it is no new line of it). Files are one per line; commands are deduplicated with a count.
"""

from __future__ import annotations

import re

from scribed.compress.clause import OFFERS, request_text
from scribed.compress.entry import one_line
from scribed.compress.outcome import conclusion
from scribed.compress.request import ASK, REPORT, STATE, kinds, request, sentence_rank, substantive
from scribed.compress.tokens import tokens
from scribed.models import Anchor, Turn

_META = re.compile(r"^(?:current task|goal|task)\s*:\s*", re.I)
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(#])")
GOAL_CHARS = 240  # with a pivot's half, within the Summary's 400-char goal
MAX_GOALS = 2
PIVOT_WORDS = 6  # a later request this long about new things is a second goal
PIVOT_OVERLAP = 0.2


def _sentences(text: str, limit: int) -> str:
    """The sentences of ``text`` within ``limit`` chars, in their order: all when they fit; else
    those that ask (an order, a question, a wish: :func:`request.sentence_rank`), then those that
    state how things are, then those that report what happened, each kind from its first while they
    fit. So a request that opens with its context keeps what it asks ("Finish WEB-884. … Keep Jest
    29.7.0 …, and get the Table date-sort test green." after a long reason), and a report of what
    someone did ("Priya looked at the migration this morning.") gives way first. When the first
    sentence that asks (else the first) is longer than ``limit`` alone, it is cut between words."""
    text = " ".join(text.split())
    sents = _SENT_END.split(text)
    if len(text) <= limit or len(sents) == 1:
        return one_line(text, limit)
    ranks = [sentence_rank(x) for x in sents]
    first = next((k for k in range(len(sents)) if ranks[k] == ASK), 0)
    if len(sents[first]) > limit:  # the request itself is too long: it, cut between words
        return one_line(" ".join(sents[first:]), limit)
    keep: set[int] = set()
    size = -1
    for rank in (ASK, STATE, REPORT):
        for k in (k for k in range(len(sents)) if ranks[k] == rank):
            if size + 1 + len(sents[k]) > limit:
                break
            keep.add(k)
            size += 1 + len(sents[k])
    return " ".join(sents[k] for k in sorted(keep))


def goal(turns: list[Turn]) -> str:
    """The substantive request(s) of the session; a pivot adds a second one."""
    goals: list[str] = []
    seen: frozenset[str] = frozenset()
    for t in turns:
        body = request(t.text) if t.role == "user" and t.kind == "message" else ""
        if not body:
            continue
        toks = tokens(body)
        if not goals:
            goals.append(_sentences(body, GOAL_CHARS))
            seen = toks
            continue
        overlap = len(toks & seen) / max(1, len(toks))
        new = len(body.split()) >= PIVOT_WORDS and overlap < PIVOT_OVERLAP
        if new and len(goals) < MAX_GOALS and OFFERS not in kinds(t.text):
            goals.append(_sentences(body, GOAL_CHARS // 2))
        seen = seen | toks
    if goals:
        return " · then: ".join(goals)
    for t in turns[:4]:
        for line in t.text.splitlines():
            if _META.match(line.strip("-* ")) and t.role != "user":
                return _sentences(_META.sub("", line.strip("-* ")), GOAL_CHARS)
    said = [(t, body) for t in turns if t.kind in ("message", "summary") and (body := _unheaded(t.text))]
    if said:  # the user's first words, else anyone's
        return _sentences(min(said, key=lambda tb: tb[0].role != "user")[1], GOAL_CHARS)
    return ""


def _unheaded(text: str) -> str:
    """A message without its markdown headings: a transcript's "# Session" title or a notes file's
    "# Current work" is no goal (a tiny session's entry was titled "# Session")."""
    return "\n".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("#")).strip()


def outcome(turns: list[Turn]) -> str:
    """The session's conclusion in whole sentences (see ``outcome.py``)."""
    return conclusion(turns)


def files(paths: list[Anchor]) -> list[str]:
    """One line per file, in first-seen order."""
    return [f"`{a.text}`" if "`" not in a.text else a.text for a in paths]


def commands(cmds: list[Anchor], turns: list[Turn]) -> list[str]:
    """Commands deduplicated (numbers ignored), each with how often it ran."""
    if not cmds:
        return []
    shapes = {re.sub(r"\d+", "0", a.text): a for a in cmds}
    counts = dict.fromkeys(shapes, 0)
    for t in turns:
        if t.kind == "thinking":
            continue
        text = t.text if t.kind == "tool_call" else ""
        if t.kind == "message":
            text = "\n".join(ln for ln in t.text.splitlines() if ln.lstrip().startswith("$ ") or "`" in ln)
        if not text:
            continue
        norm = re.sub(r"\d+", "0", text)
        for sh in shapes:
            if sh in norm:
                counts[sh] += 1
    out = []
    for sh, a in shapes.items():
        body = f"`{a.text}`" if "`" not in a.text else a.text
        n = counts[sh]
        out.append(f"{body} (×{n})" if n > 1 else body)
    return out


__all__ = ["commands", "files", "goal", "outcome", "request_text", "substantive"]
