"""Which wiki topics a spawn needs: the ones its hot file and cold entries talk about.

A spawn that asks for the wiki without naming topics (``--include-wiki`` alone, or a situation
such as ``post-incident``) gets the index and the topics relevant to what the agent is doing. What
it is doing is in its hot file (current task, active decisions, last actions, blockers) and its
cold entries (goal, outcome, decisions, errors): their values, never the files' own labels
("Active decisions:", "#### Decisions"), which would match a topic named ``decisions`` for every
agent. A topic is relevant by its name, its headings, and above all by a block the agent's memory
names: a decision, convention or pattern whose content words the hot and cold text mostly hold.
Loaded only when a spawn asks for the wiki (a hot-only spawn never imports it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

MAX_RELEVANT = 5
MIN_TOPIC_SCORE = 2  # one shared name word, or two shared heading words
NAMED_BLOCK = 4  # a block the memory names weighs as much as two name words
BLOCK_MIN_WORDS = 3  # a block this short is too generic to be "named"
BLOCK_SHARE = 0.6  # of a block's content words the memory must hold
HEAD_LINES = 60
_PLURAL_MIN = 5  # shorter words keep a trailing 's' ("bus", "this")
_STOP = {
    "the", "and", "for", "with", "this", "that", "from", "into", "onto", "are", "was", "were", "will",
    "not", "now", "all", "any", "can", "our", "you", "your", "please", "add", "fix", "make", "use",
    "see", "issue", "task", "current", "todo", "new", "get", "set", "then", "when", "also",
}  # fmt: skip
# A memory file's own structure: labels ("Current task:"), headings, provenance and notices.
_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?[A-Z][A-Za-z /&→-]{1,40}:(?:\*\*|__)?(?:\s|$)")
_PLACEHOLDER = re.compile(r"^\s*\([^)]*\)\s*$")  # "(none)", "(no session running; …)"
_SKIP_LINE = re.compile(r"^\s*(?:#{1,6}\s|<!--|- provenance:|\*Source:\*|---\s*$|[\w-]+:\s*\S*\s*$)")


def words(text: str) -> set[str]:
    """Content words, lightly stemmed (a trailing plural 's' dropped) for overlap scoring."""
    out = set()
    for w in re.findall(r"[a-z0-9]{3,}", text.lower()):
        if w in _STOP:
            continue
        out.add(w[:-1] if len(w) >= _PLURAL_MIN and w.endswith("s") and not w.endswith("ss") else w)
    return out


def memory_text(hot: str, cold: Iterable[str] = ()) -> str:
    """What the agent's hot file and cold entries say, without their labels and headings."""
    out: list[str] = []
    for text in (hot, *cold):
        for line in text.splitlines():
            if _SKIP_LINE.match(line) and not _LABEL.match(line):
                continue
            m = _LABEL.match(line)
            value = line[m.end() :] if m else line
            value = value.strip().removeprefix("- ").strip()
            if value and not _PLACEHOLDER.match(value):
                out.append(value)
    return "\n".join(out)


def _blocks(text: str) -> list[str]:
    """A wiki page's blocks: each ``### `` heading with the lines under it, provenance dropped."""
    blocks: list[list[str]] = []
    for line in text.splitlines():
        if line.startswith("### "):
            blocks.append([line[4:]])
        elif blocks and not line.startswith(("## ", "*Source:*", "*Status:*")):
            blocks[-1].append(line)
    return ["\n".join(b) for b in blocks]


def score(topic: str, text: str, want: set[str]) -> int:
    """How relevant a topic's page is to the memory's words ``want``."""
    name_words = words(topic.replace("-", " ").replace("_", " "))
    heads = " ".join(ln for ln in text.splitlines()[:HEAD_LINES] if ln.lstrip().startswith("#"))
    s = 2 * len(want & name_words) + len(want & words(heads))
    for block in _blocks(text):
        bw = words(block)
        if len(bw) >= BLOCK_MIN_WORDS and len(bw & want) >= max(BLOCK_MIN_WORDS, BLOCK_SHARE * len(bw)):
            s += NAMED_BLOCK
    return s


def relevant_topics(memory: str, pages: dict[str, Path], read: Callable[[Path], str]) -> list[str]:
    """Topics (not the index) scoring at least MIN_TOPIC_SCORE against ``memory``, best first."""
    want = words(memory)
    if not want:
        return []
    scored: list[tuple[int, str]] = []
    for topic, path in pages.items():
        if topic == "index":
            continue
        s = score(topic, read(path), want)
        if s >= MIN_TOPIC_SCORE:
            scored.append((s, topic))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [t for _, t in scored[:MAX_RELEVANT]]
