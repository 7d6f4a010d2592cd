"""The spawn context: what a coordinator pastes into an agent's prompt (``scribed context AGENT``).

Squad loads an agent's whole history at every spawn; the tiered model loads the hot file always,
cold history and wiki pages only when the situation calls for them. The block is::

    <!-- scribed:context -->            (the stable marker: scribed strips its own output from
    ## Memory Context                     transcripts before compressing them)
    ### Hot (current session)
    ### Cold (summarized history)   (when included: newest entries first)
    ### Wiki (durable reference)    (when included: the named topics, or the index + relevant topics)
    <!-- /scribed:context -->

Fitting ``max_bytes``: hot is always kept; then cold entries newest first until one does not fit;
then wiki pages one by one. A part that does not fit is left out whole and a one-line note says
how many were left out. Only the live-hot front matter is stripped. Everything is redacted.
Files reached through a symlink that leads outside the squad root are not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from scribed.names import normalize_name
from scribed.session.door import redacted
from scribed.tiers.layout import Layout

if TYPE_CHECKING:  # records builds its result dataclasses at import (~10 ms a spawn does not need)
    from scribed.tiers.records import Json

# A spawn runs this module at every agent start, so it imports only what a hot-only block needs:
# the cold entry parser, the front-matter reader and the search index load when a block uses them,
# and the two markers of :func:`scribed.sources.injected.mark` are repeated here (importing
# ``scribed.sources`` loads every transcript parser); tests/test_context.py keeps them equal.
MARK_OPEN = "<!-- scribed:context -->"
MARK_CLOSE = "<!-- /scribed:context -->"
LIVE_MARKER = "scribed-live"  # = scribed.tiers.live.MARKER, the live hot file's front-matter key

# situation -> (cold, wiki); hot is always in.
SITUATIONS: dict[str, tuple[bool, bool]] = {
    "new-task": (False, False),
    "resume": (True, False),
    "debug": (True, False),
    "spec": (False, True),
    "onboarding": (False, True),
    "post-incident": (True, True),
}
HEAD = "## Memory Context\n"
HOT_TITLE = "### Hot (current session)"
COLD_TITLE = "### Cold (summarized history)"
WIKI_TITLE = "### Wiki (durable reference)"
INDEX = "index"

_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?[A-Z][A-Za-z /-]{1,40}:(?:\*\*|__)?(?:\s|$)")
_TASK = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?current task:?(?:\*\*|__)?:?\s*(?P<v>.*)$", re.IGNORECASE)


class ContextError(ValueError):
    """A bad request (agent name, situation, topic); the message is one line."""


class Context:
    """One built context block and its parts (as printed, redacted). A plain class with a
    dataclass's ``__eq__`` and ``__repr__``: a spawn does not import dataclasses (~40 M instructions)."""

    __slots__ = ("agent", "cold", "hot", "left_out", "situation", "text", "wiki")
    _FIELDS = ("agent", "situation", "hot", "cold", "wiki", "left_out", "text")

    def __init__(  # noqa: PLR0917 (the dataclass's fields, in order)
        self,
        agent: str,
        situation: str | None,
        hot: str,
        cold: list[str] | None = None,
        wiki: dict[str, str] | None = None,
        left_out: dict[str, int] | None = None,
        text: str = "",
    ) -> None:
        self.agent, self.situation, self.hot, self.text = agent, situation, hot, text
        self.cold: list[str] = [] if cold is None else cold
        self.wiki: dict[str, str] = {} if wiki is None else wiki
        self.left_out: dict[str, int] = {} if left_out is None else left_out

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Context):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable and compared by value, as the dataclass was

    def __repr__(self) -> str:
        return "Context(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS) + ")"

    @property
    def bytes(self) -> int:
        return len(self.text.encode())

    def public(self) -> Json:
        return {
            "agent": self.agent,
            "situation": self.situation,
            "parts": {"hot": self.hot, "cold": self.cold, "wiki": self.wiki},
            "left_out": self.left_out,
            "bytes": self.bytes,
            "text": self.text,
        }


def check_agent(raw: str) -> str:
    name = normalize_name(raw)
    if name is None:
        raise ContextError(
            f"invalid agent name {raw!r}: use lowercase letters, digits, '-' and '_' (e.g. 'picard')"
        )
    return name


def check_situation(raw: str | None) -> str | None:
    if raw is None:
        return None
    name = raw.strip().lower()
    if name not in SITUATIONS:
        raise ContextError(f"unknown situation {raw!r}; expected one of: {', '.join(SITUATIONS)}")
    return name


def read_safe(layout: Layout, path: Path) -> str:
    """A regular file's text, or "" when missing or a symlink leading outside the root."""
    try:
        if not path.is_file():
            return ""
        if path.is_symlink():
            root = layout.root.resolve()
            if root not in path.resolve().parents:
                return ""
        text = path.read_bytes().decode("utf-8", "replace")
    except OSError:
        return ""
    if "<<<<<<<" in text or text.count("\nscribed-live: ") + text.startswith("---\nscribed-live: ") > 1:
        from scribed.tiers.git_merge import readable  # a merge's leftovers: rare, so loaded only then

        return readable(str(path), text)
    return text


def mark(text: str) -> str:
    """``text`` between the markers; the same as :func:`scribed.sources.injected.mark`."""
    return f"{MARK_OPEN}\n{text.rstrip(chr(10))}\n{MARK_CLOSE}\n"


def strip_live(text: str) -> str:
    """Drop scribed's live-hot front matter and notice (live view or seed); an agent's own front
    matter stays."""
    if LIVE_MARKER not in text.lower():  # front-matter keys are lowercased: no key, nothing to strip
        return text
    from scribed.sources.markdown import front_matter, split_lines
    from scribed.tiers.live import MARKER, NOTICE, SEED_NOTICE

    lines = split_lines(text.encode())
    fields, skip = front_matter(lines)
    if MARKER not in fields:
        return text
    body = [ln.text for ln in lines[skip:] if ln.text.strip() not in (NOTICE, SEED_NOTICE)]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(body)).strip("\n") + "\n"


def hot_text(layout: Layout, agent: str) -> str:
    return strip_live(read_safe(layout, layout.hot_file(agent)))


def current_task(hot: str) -> str:
    """The value of the hot file's ``Current task:`` field (its continuation lines too)."""
    out: list[str] = []
    taking = False
    for line in hot.splitlines():
        m = _TASK.match(line)
        if m and not taking:
            taking = True
            out.append(m.group("v"))
            continue
        if taking:
            if not line.strip() or line.lstrip().startswith("#") or _LABEL.match(line):
                break
            out.append(line)
    return " ".join(s.strip() for s in out).strip()


def wiki_pages(layout: Layout) -> dict[str, Path]:
    """Topic -> page, ``.squad/memory/wiki/`` first, ``.squad/wiki/`` as the fallback location."""
    pages: dict[str, Path] = {}
    for folder in (layout.wiki, layout.squad / "wiki"):
        try:
            found = sorted(folder.glob("*.md")) if folder.is_dir() else []
        except OSError:
            found = []
        for p in found:
            name = normalize_name(p.stem)
            if name is not None and name not in pages and not p.name.startswith("."):
                pages[name] = p
    return pages


def _generated_index(pages: dict[str, Path]) -> str:
    topics = [t for t in pages if t != INDEX]
    return "Topics: " + ", ".join(topics) + "\n" if topics else ""


def cold_entries(layout: Layout, agent: str) -> list[str]:
    """The agent's cold entries, newest first (undated ones last, and so are those dated past the
    clock: a wrong clock's, see :mod:`scribed.session.dates`), the open items a later entry did
    struck (:mod:`scribed.recall.closed`)."""
    from datetime import UTC, datetime  # here: a hot-only spawn reads no dates

    from scribed.compress.entry import split_entries
    from scribed.recall.closed import strike_done
    from scribed.session.dates import believed, utcnow

    _, entries = split_entries(read_safe(layout, layout.cold_file(agent)))
    floor, now = datetime.min.replace(tzinfo=UTC), utcnow()
    order = sorted(
        enumerate(entries), key=lambda ie: (believed(ie[1].when, now) or floor, ie[0]), reverse=True
    )
    struck = strike_done([(e.text, e.date) for _, e in order])  # open items a later session did
    return [struck[e.text] for _, e in order]


def _fit_cold(
    entries: Sequence[str], cold: list[str], fits: Callable[[list[str], dict[str, str]], bool],
    notes: dict[str, str], limit: int,
) -> int:  # fmt: skip
    """Fill ``cold`` newest first; how many entries were left out. An entry too big whole (a long
    session's) comes without its key points (its facts stay), and older entries that fit still
    come after it, so one big entry never hides the rest."""
    left = 0
    for i, e in enumerate(entries):
        worst = left + len(entries) - i - 1
        trial = dict(notes, cold=_note(worst, "older cold entry", limit)) if worst and limit else notes
        for form in (e, _brief(e), _headline(e)):
            if form and fits([*cold, form], trial):
                cold.append(form)
                break
        else:
            left += 1
    return left


_KEY_POINTS = "#### Key points\n"


def _brief(entry: str) -> str:
    """``entry`` without its Key points section ("" when it has none): the ranked excerpts go,
    the goal, decisions, errors, files, commands, open items and key facts stay."""
    at = entry.find(_KEY_POINTS)
    if at < 0:
        return ""
    end = entry.find("\n#### ", at + len(_KEY_POINTS))
    tail = entry[end + 1 :] if end >= 0 else ""
    return entry[:at] + "_(key points left out to fit)_\n" + tail


_KEPT_IN_HEADLINE = ("#### Outcome\n", "#### Decisions\n", "#### Open items\n")


def _headline(entry: str) -> str:
    """``entry`` as its heading, provenance, outcome, decisions and open items: what a spawn with
    little room needs most of a session it cannot load whole ("" when that is the brief form)."""
    head, _, body = entry.partition("\n#### ")
    if not body:
        return ""
    parts = [head + "\n"]
    for sec in ("#### " + body).split("\n#### "):
        sec = sec if sec.startswith("#### ") else "#### " + sec
        if sec.startswith(_KEPT_IN_HEADLINE):
            parts.append(sec.rstrip("\n") + "\n")
    parts.append("_(other sections left out to fit)_\n")
    return "".join(parts)


def _note(n: int, what: str, max_bytes: int) -> str:
    noun = what if n == 1 else what[:-1] + "ies" if what.endswith("y") else what + "s"
    return f"_({n} {noun} left out to fit {max_bytes} bytes)_\n"


NO_MATCH = "_(no {what} matches the query)_\n"


def _unmatched(
    matched: tuple[list[str], list[tuple[str, str]]] | None, cold: bool, wiki: bool
) -> dict[str, str]:
    """The notes of the tiers a query found nothing in (not "no wiki pages yet": none matched)."""
    if matched is None:
        return {}
    out = {}
    if cold and not matched[0]:
        out["cold"] = NO_MATCH.format(what="cold entry")
    if wiki and not matched[1]:
        out["wiki"] = NO_MATCH.format(what="wiki fact")
    return out


def render(
    hot: str,
    cold: list[str] | None,
    wiki: dict[str, str] | None,
    notes: dict[str, str],
) -> str:
    """The markdown block between scribed's markers (so a transcript that quotes it back is not
    compressed again, see :mod:`scribed.sources.injected`); ``None`` for a tier means it was not asked for."""
    parts = [HEAD, "\n", HOT_TITLE, "\n", hot.strip("\n") + "\n" if hot.strip() else "_(empty)_\n"]
    if cold is not None:
        parts += ["\n", COLD_TITLE, "\n"]
        if cold:
            parts.append("\n".join(e.strip("\n") + "\n" for e in cold))
        elif not notes.get("cold"):
            parts.append("_(no cold entries yet)_\n")
        parts.append(notes.get("cold", ""))
    if wiki is not None:
        parts += ["\n", WIKI_TITLE, "\n"]
        if wiki:
            parts.append("\n".join(f"#### {t}\n{body.strip(chr(10))}\n" for t, body in wiki.items()))
        elif not notes.get("wiki"):
            parts.append("_(no wiki pages yet)_\n")
        parts.append(notes.get("wiki", ""))
    return mark("".join(parts))


def _size(text: str) -> int:
    return len(text.encode())


def build(
    layout: Layout,
    agent: str,
    *,
    situation: str | None = None,
    include_cold: bool = False,
    include_wiki: bool = False,
    wiki_topics: Sequence[str] = (),
    max_bytes: int = 0,
    query: str = "",
) -> Context:
    """Assemble the context block. ``max_bytes`` ≤ 0 means no limit. Raises ContextError.

    With ``query``, the cold and wiki tiers hold the best-matching whole entries and active wiki
    facts (bm25, see :mod:`scribed.recall.search`), best first, instead of the newest entries and the index.
    """
    name = check_agent(agent)
    sit = check_situation(situation)
    want_cold, want_wiki = SITUATIONS[sit] if sit else (False, False)
    want_cold = want_cold or include_cold
    topics = _topics(wiki_topics)
    want_wiki = want_wiki or include_wiki or bool(topics)
    if query.strip() and not (want_cold or want_wiki):
        want_cold = want_wiki = True  # a query with no tier named searches both
    limit = max_bytes if max_bytes > 0 else 0

    hot = redacted(hot_text(layout, name))  # file reads pass the door
    ctx = Context(agent=name, situation=sit, hot=hot.strip("\n") + "\n" if hot.strip() else "")
    notes: dict[str, str] = {}
    cold: list[str] | None = [] if want_cold else None
    wiki: dict[str, str] | None = {} if want_wiki else None

    def fits(c: list[str] | None, w: dict[str, str] | None, n: dict[str, str]) -> bool:
        return not limit or _size(render(ctx.hot, c, w, n)) <= limit

    matched = _matches(layout, name, query, cold is not None, wiki is not None) if query.strip() else None
    notes.update(_unmatched(matched, cold is not None, wiki is not None and not topics))
    if cold is not None:
        entries = [redacted(e) for e in (matched[0] if matched else cold_entries(layout, name))]
        left = _fit_cold(entries, cold, lambda c, n: fits(c, wiki, n), notes, limit)
        if left:
            ctx.left_out["cold"] = left
            notes["cold"] = _note(left, "older cold entry", limit)

    if wiki is not None:
        missing: list[str] = []
        if matched and not topics:
            chosen = matched[1]
        else:
            chosen, missing = _wiki_choice(layout, name, topics, hot, cold)
        left = 0
        for i, (topic, body) in enumerate(chosen):
            body = redacted(body)
            worst = left + len(chosen) - i - 1
            trial = dict(notes, wiki=_note(worst, "wiki page", limit)) if worst and limit else notes
            if fits(cold, {**wiki, topic: body}, trial):
                wiki[topic] = body
            else:
                left += 1
        if left:
            ctx.left_out["wiki"] = left
            notes["wiki"] = _note(left, "wiki page", limit)
        if missing:
            notes["wiki"] = notes.get("wiki", "") + "".join(
                f"_(no wiki page named '{t}')_\n" for t in missing
            )

    ctx.cold = cold or []
    ctx.wiki = wiki or {}
    ctx.text = redacted(render(ctx.hot, cold, wiki, notes))
    return ctx


def over_limit(ctx: Context, max_bytes: int) -> str | None:
    """Why the block is larger than ``--max-bytes`` (the hot file is given whole), or None."""
    size = len(ctx.text.encode())
    if max_bytes <= 0 or size <= max_bytes:
        return None
    return f"the block is {size} bytes, over --max-bytes {max_bytes}: the hot file is always given whole"


def _matches(
    layout: Layout, agent: str, query: str, want_cold: bool, want_wiki: bool
) -> tuple[list[str], list[tuple[str, str]]]:
    """(cold entries, wiki facts as (label, body)) matching ``query``, best first."""
    from scribed.recall.search import Index, SearchError

    cold: list[str] = []
    wiki: list[tuple[str, str]] = []
    try:
        with Index(layout) as index:
            index.refresh(tiers=("cold", "wiki"))  # a spawn never waits on indexing transcripts
            if want_cold:
                cold = [h.text for h in index.search(query, agent=agent, tiers=("cold",), limit=50)]
            if want_wiki:
                wiki = [
                    (f"{h.topic}: {h.heading}", h.text.split("\n", 1)[-1])
                    for h in index.search(query, tiers=("wiki",), limit=50)
                    if h.status == "active"
                ]
    except SearchError as exc:
        raise ContextError(f"--query: {exc}") from exc
    return cold, wiki


def _topics(raw: Iterable[str]) -> list[str]:
    """Named topics: repeatable and comma-separated; '.md' tolerated; bad names are an error."""
    out: list[str] = []
    for item in raw:
        for part in item.split(","):
            part = part.strip()
            if not part:
                continue
            if part.lower().endswith(".md"):
                part = part[:-3]
            name = normalize_name(part)
            if name is None:
                raise ContextError(
                    f"invalid wiki topic {part!r}: use lowercase letters, digits, '-' and '_' (e.g. 'decisions')"
                )
            if name not in out:
                out.append(name)
    return out


def _wiki_choice(
    layout: Layout, agent: str, topics: list[str], hot: str, cold: list[str] | None
) -> tuple[list[tuple[str, str]], list[str]]:
    """(pages to include in order, named topics that have no page). Without named topics: the
    index, then the topics the hot file and cold entries talk about (the entries in the block, or
    the newest one when the block holds none; see :mod:`scribed.recall.relevance`)."""
    pages = wiki_pages(layout)
    if topics:
        chosen = [(t, read_safe(layout, pages[t])) for t in topics if t in pages]
        return chosen, [t for t in topics if t not in pages]
    from scribed.recall import relevance

    index = read_safe(layout, pages[INDEX]) if INDEX in pages else _generated_index(pages)
    chosen = [(INDEX, index)] if index.strip() else []
    entries = cold if cold else cold_entries(layout, agent)[:1]
    memory = relevance.memory_text(hot, entries)
    for t in relevance.relevant_topics(memory, pages, lambda p: read_safe(layout, p)):
        chosen.append((t, read_safe(layout, pages[t])))
    return chosen, []
