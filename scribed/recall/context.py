"""The spawn context: what a coordinator pastes into an agent's prompt (``scribed context AGENT``).

Squad loads an agent's whole history at every spawn; the tiered model loads the hot file always,
cold history and wiki pages only when the situation calls for them. The block is::

    <!-- scribed:context -->            (the stable marker: scribed strips its own output from
    ## Memory Context                     transcripts before compressing them)
    ### Hot (current session)
    ### Cold (summarized history)   (when included: newest entries first)
    ### Wiki (durable reference)    (when included: the named topics, or the index + relevant topics)
    <!-- /scribed:context -->

Fitting: hot is always kept whole. Without ``max_bytes`` a spawn gets at most ``COLD_BUDGET`` bytes
of cold and ``WIKI_BUDGET`` of wiki (the 8-12 KB docs/memory.md promises: a 10-session backlog of
long sessions is ~170 KB of cold, too much to paste into every spawn); ``max_bytes`` N fits the whole
block in N instead, 0 lifts every limit. Cold entries go newest first (``debug`` and
``post-incident`` take the entries that met errors first) until one does not fit; then wiki pages one
by one. A part that does not fit is left out whole and a one-line note says how many were left out
and how to get them. Only the live-hot front matter is stripped. Everything is redacted.
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
COLD_BUDGET = 12288  # bytes of cold a spawn loads by default (docs/memory.md: 8-12 KB)
WIKI_BUDGET = 8192  # bytes of wiki pages a spawn loads by default
ERRORS_FIRST = ("debug", "post-incident")  # situations that want the sessions that met errors
_ERRORS = re.compile(r"^#### Errors\b", re.MULTILINE)  # the entry's errors section (models.SECTIONS)

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
            if name is None:
                from scribed.log import misnamed  # here: logging is no import a spawn pays for

                misnamed(p, "topic")
            elif name not in pages and not p.name.startswith("."):
                pages[name] = p
    return pages


def _generated_index(pages: dict[str, Path]) -> str:
    topics = [t for t in pages if t != INDEX]
    return "Topics: " + ", ".join(topics) + "\n" if topics else ""


def cold_entries(layout: Layout, agent: str) -> list[str]:
    """The agent's cold entries, newest first (undated ones last, and so are those dated past the
    clock: a wrong clock's, see :mod:`scribed.dates`; after them all, imported sections dated only
    by their file, which say nothing of when the work was done), the open items a later entry did
    struck (:mod:`scribed.recall.closed`)."""
    from datetime import UTC, datetime  # here: a hot-only spawn reads no dates

    from scribed.compress.entry import dated_by_file, split_entries
    from scribed.dates import believed, utcnow
    from scribed.recall.closed import strike_done

    _, entries = split_entries(read_safe(layout, layout.cold_file(agent)))
    floor, now = datetime.min.replace(tzinfo=UTC), utcnow()
    order = sorted(
        enumerate(entries),
        key=lambda ie: (not dated_by_file(ie[1].text), believed(ie[1].when, now) or floor, ie[0]),
        reverse=True,
    )
    struck = strike_done([(e.text, e.date) for _, e in order])  # open items a later session did
    return [struck[e.text] for _, e in order]


def _fit_cold(
    entries: Sequence[str], offered: tuple[Sequence[int], str], fits: Callable[[list[str], dict[str, str]], bool],
    notes: dict[str, str], budget: tuple[str, str] | None,
) -> tuple[list[str], int]:  # fmt: skip
    """The entries that fit, taken in ``order`` (``what`` names one in the note) and given back in the entries' own order (newest
    first), and how many were left out. An entry too big whole (a long session's) comes without
    its key points (its facts stay), and entries that fit still come after it, so one big entry
    never hides the rest."""
    order, what = offered
    kept: list[tuple[int, str]] = []
    left = 0
    for n, i in enumerate(order):
        worst = left + len(order) - n - 1
        trial = dict(notes, cold=_note(worst, what, budget)) if worst and budget else notes
        e = entries[i]
        for form in (e, _brief(e), _headline(e)):
            if form and fits([*(f for _, f in kept), form], trial):
                kept.append((i, form))
                break
        else:
            left += 1
    return [f for _, f in sorted(kept)], left


def _cold_order(entries: Sequence[str], situation: str | None) -> list[int]:
    """The order entries are offered to the budget: newest first; for ``debug`` and
    ``post-incident`` the entries with an errors section before the others."""
    order = list(range(len(entries)))
    if situation in ERRORS_FIRST:
        order.sort(key=lambda i: _ERRORS.search(entries[i]) is None)
    return order


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


def _note(n: int, what: str, budget: tuple[str, str] | None) -> str:
    """``budget`` = (what was fitted, how to get what was left out, with ``{it}`` for the pronoun)."""
    noun = what if n == 1 else what[:-1] + "ies" if what.endswith("y") else what + "s"
    fitted, how = budget or ("", "")
    return f"_({n} {noun} left out to fit {fitted}; {how.format(it='it' if n == 1 else 'them')})_\n"


def _budgets(agent: str, max_bytes: int | None) -> dict[str, tuple[str, str]]:
    """Per tier: the words of its left-out note (none when nothing is limited)."""
    if max_bytes == 0:
        return {}
    cold_how = f"find {{it}} with `scribed search WORDS --agent {agent} --tier cold` (MCP: `search`)"
    wiki_how = "load a page by name with `--include-wiki TOPIC` (MCP: `wiki_topics`)"
    if max_bytes is None:
        more = "or load more with `--max-bytes N` (MCP: `max_bytes`)"
        cold, wiki = (
            f"the default {COLD_BUDGET}-byte cold budget",
            f"the default {WIKI_BUDGET}-byte wiki budget",
        )
    else:
        more = "or give a larger `--max-bytes`"
        cold = wiki = f"{max_bytes} bytes"
    return {"cold": (cold, f"{cold_how}, {more}"), "wiki": (wiki, f"{wiki_how}, {more}")}


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
    max_bytes: int | None = None,
    query: str = "",
) -> Context:
    """Assemble the context block. ``max_bytes`` None: the default budgets (``COLD_BUDGET``,
    ``WIKI_BUDGET``); N > 0: the whole block in N bytes; 0: no limit. Raises ContextError.

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
    limit = max_bytes if max_bytes and max_bytes > 0 else 0
    budgets = _budgets(name, None if max_bytes is None else max(0, max_bytes))

    hot = redacted(hot_text(layout, name))  # file reads pass the door
    ctx = Context(agent=name, situation=sit, hot=hot.strip("\n") + "\n" if hot.strip() else "")
    notes: dict[str, str] = {}
    cold: list[str] | None = [] if want_cold else None
    wiki: dict[str, str] | None = {} if want_wiki else None
    bare = _size(render("", None, None, {}))

    def fits(c: list[str] | None, w: dict[str, str] | None, n: dict[str, str]) -> bool:
        if limit:
            return _size(render(ctx.hot, c, w, n)) <= limit
        if max_bytes is not None:  # 0: no limit
            return True
        return (  # the default: each tier's own budget, its title and notes included
            _size(render("", c, None, n)) - bare <= COLD_BUDGET
            and _size(render("", None, w, n)) - bare <= WIKI_BUDGET
        )

    matched = _matches(layout, name, query, cold is not None, wiki is not None) if query.strip() else None
    notes.update(_unmatched(matched, cold is not None, wiki is not None and not topics))
    if cold is not None:
        entries = [redacted(e) for e in (matched[0] if matched else cold_entries(layout, name))]
        order = list(range(len(entries))) if matched else _cold_order(entries, sit)
        budget = budgets.get("cold")
        what = "older cold entry" if order == sorted(order) else "cold entry"
        cold[:], left = _fit_cold(entries, (order, what), lambda c, n: fits(c, wiki, n), notes, budget)
        if left:
            ctx.left_out["cold"] = left
            notes["cold"] = _note(left, what, budget)

    if wiki is not None:
        _fit_wiki(layout, ctx, (cold, wiki), (matched, topics), notes, (fits, budgets.get("wiki")))

    ctx.cold = cold or []
    ctx.wiki = wiki or {}
    ctx.text = redacted(render(ctx.hot, cold, wiki, notes))
    return ctx


def _fit_wiki(  # noqa: PLR0917 (the tiers, the request, the notes and the fitting, each as built)
    layout: Layout,
    ctx: Context,
    tiers: tuple[list[str] | None, dict[str, str]],
    asked: tuple[tuple[list[str], list[tuple[str, str]]] | None, list[str]],
    notes: dict[str, str],
    fitting: tuple[
        Callable[[list[str] | None, dict[str, str], dict[str, str]], bool], tuple[str, str] | None
    ],
) -> None:
    """Fill ``wiki`` (the second of ``tiers``) page by page: the query's facts, the named topics,
    or the index and the topics hot and cold talk about; a page that does not fit is left out whole."""
    cold, wiki = tiers
    matched, topics = asked
    fits, budget = fitting
    missing: list[str] = []
    if matched and not topics:
        chosen = matched[1]
    else:
        chosen, missing = _wiki_choice(layout, ctx.agent, topics, ctx.hot, cold)
    left = 0
    for i, (topic, body) in enumerate(chosen):
        body = redacted(body)
        worst = left + len(chosen) - i - 1
        trial = dict(notes, wiki=_note(worst, "wiki page", budget)) if worst and budget else notes
        if fits(cold, {**wiki, topic: body}, trial):
            wiki[topic] = body
        else:
            left += 1
    if left:
        ctx.left_out["wiki"] = left
        notes["wiki"] = _note(left, "wiki page", budget)
    if missing:
        notes["wiki"] = notes.get("wiki", "") + "".join(f"_(no wiki page named '{t}')_\n" for t in missing)


def over_limit(ctx: Context, max_bytes: int | None) -> str | None:
    """Why the block is larger than ``--max-bytes`` (the hot file is given whole), or None."""
    size = len(ctx.text.encode())
    if not max_bytes or max_bytes < 0 or size <= max_bytes:
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
