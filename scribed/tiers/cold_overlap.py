"""One session told twice: entries of a session whose line ranges overlap, made one.

Two clones compacting one transcript write one file when they cut it at the same points (an entry's
id is made from the turns it holds). Cut at different points (clone a compacted lines 1–4, the
session went on, a compacted 5–8; clone b, holding the same transcript, compacted 1–8 in one go),
they write different entries of the same history, and after a merge every decision is served
twice. Entries of one session (the same agent, source kind and session id) from one transcript
file whose ``lines a–b`` overlap, each two that overlap compacted from different paths (two
machines' transcripts folders), are that history told twice, and :func:`plan` makes them one, by
what the entries carry alone, so every clone that syncs the same entries reaches the same files, in
any merge order. The file is known by its name in ``source=`` (each clone reads its own transcripts
folder, so the folder differs; the name does not): a resumed or forked transcript copying old
records keeps the old session id and line numbers with other turns, and entries of one session from
two files (or from a path cut short, whose name is unknown) are both kept, a possible duplicate
rather than a loss. Overlapping entries compacted from one path are one machine's own history of
the file (an Aider history edited in place, compacted again where it changed): its ledger's, left
as they are; so are two clones' entries when both read the transcript at the same path.

- when the session's entries there hold a finer cut, two or more entries one after the other that
  span every line the overlapping entries span, those are kept and the others retired ("covered
  by" them). The finer cut keeps the most for a reader: each part was compacted with its own
  budget (a budget grows slower than the session, and every part gets its anchors' floor), so
  the parts hold at least what the whole does, each with its own goal and outcome; it is also
  what either clone would have written had it pulled before compacting. The parts must follow one
  another with no entry's first or last line between them (a line there is a turn no part holds),
  and a part that ends on an overlapping entry's last line must end at the same time (the same
  last turn): else the entries are not taken for the same history, and are merged as below;
- otherwise (a partial overlap, lines 1–6 and 5–8; or one clone compacted further than the other,
  lines 1–4 and 1–8) no kept entry tells every line, and they are merged into one entry spanning
  their lines: every section's items of all of them, each once, in line order (an item both
  told, as the same turns give the same words, is served once), every goal and outcome, the
  provenance of the one that ends last; its id is a hash of theirs, ``folded=`` names them;
- an entry a merged one already folds (one that came back) is retired into it.

Retired entries leave the store through ``retired.txt`` (:mod:`scribed.core.cold_sync`), each line
naming its session and line range, so no ledger compacts that part of the session again.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from scribed.compress.entry import TITLE_CHARS, Entry, one_line
from scribed.models import SECTIONS

_PROV = re.compile(r"^- provenance: (?P<p>.*)$", re.M)
_LINES = re.compile(r"^lines (\d+)\D+(\d+)$")
_KIND = re.compile(r"\((?P<kind>[a-z0-9_-]+)\)$")
_SOURCE = re.compile(r"^`(?P<path>[^`]*)`")
_TITLES = [title for _, title in SECTIONS]
_FACTS = dict(SECTIONS)["key_facts"]
_RESTORED = re.compile(r"^- [a-z_]+: (?P<v>.+?)(?: \(supersedes: .*\))?$")  # an anchor the guard restored


@dataclass(frozen=True, slots=True)
class Span:
    """A session entry's place: its session (agent, source kind, session id), its transcript's file
    name, and line range."""

    key: str
    session: tuple[str, str, str]
    first: int
    last: int
    entry: Entry
    file: str = ""
    origin: str = ""  # ``source=``'s whole path: where, on which machine, it was compacted

    def overlaps(self, other: Span) -> bool:
        return self.first <= other.last and other.first <= self.last


def span(e: Entry) -> Span | None:
    """Where ``e`` sits in its session, from its provenance line; None for an entry that names no
    session and line range (a digest, an import's ``i-`` unit, an entry written by hand)."""
    key = e.entry_id or ""
    m = _PROV.search(e.text)
    if not key.startswith("e-") or m is None:
        return None
    fields: dict[str, str] = {}
    lines = (0, 0)
    kind = ""
    for part in m.group("p").split(" · "):
        k, sep, v = part.partition("=")
        lm = _LINES.match(part.strip())
        if lm:
            lines = (int(lm.group(1)), int(lm.group(2)))
        elif sep and re.fullmatch(r"[a-z_]+", k.strip()):
            fields[k.strip()] = v.strip()
            km = _KIND.search(v.strip()) if k.strip() == "source" else None
            kind = km.group("kind") if km else kind
    first, last = lines
    session = fields.get("session", "")
    if not session or first < 1 or last < first:
        return None
    source = fields.get("source", "")
    file = _file_name(source) or "\0" + key  # unknown: the same as no other's
    return Span(key, (fields.get("agent", ""), kind, session), first, last, e, file, source)


def _file_name(source: str) -> str:
    """The transcript's file name in a ``source=`` value (`` `path` (kind) ``): the same in every
    clone, as the folder is not; "" when the path was cut short (``…``) or is not there."""
    m = _SOURCE.match(source)
    path = m.group("path") if m else ""
    name = re.split(r"[/\\]", path)[-1]
    return "" if not name or path.endswith("…") else name


@dataclass(frozen=True, slots=True)
class Overlap:
    """Entries of one session that overlap, and what :func:`plan` does with them."""

    session: str
    spans: tuple[tuple[str, int, int], ...]  # (key, first line, last line), in line order
    kept: tuple[str, ...]  # the finer cut kept, or the one merged entry made of them all
    merged: bool


@dataclass(slots=True)
class Plan:
    """The agent's entries with no session told twice, and what left: key → ``retired.txt``
    reason (no date: the caller's)."""

    entries: list[Entry]
    retired: dict[str, str] = field(default_factory=dict)
    made: list[Entry] = field(default_factory=list)
    overlaps: list[Overlap] = field(default_factory=list)


def plan(agent: str, entries: Iterable[Entry]) -> Plan:
    """``entries`` (one agent's) with every session told twice made one (module docstring). Depends
    only on the entries given, not their order: every clone makes the same files."""
    given = list(entries)
    spans = {s.key: s for s in map(span, given) if s is not None}
    out = Plan([])
    holders: dict[str, str] = {}  # key → the merged entry that folds it (the least key of two)
    for o in spans.values():
        for k in _folds(o):
            holders[k] = min(holders.get(k, o.key), o.key)
    for s in spans.values():  # a merged entry folds it already: it came back
        if s.key in holders:
            out.retired[s.key] = f"folded into {holders[s.key]}{_where(s)}"
    by_session: dict[tuple[tuple[str, str, str], str], list[Span]] = {}
    for s in spans.values():  # one session of one transcript file
        if s.key not in out.retired:
            by_session.setdefault((s.session, s.file), []).append(s)
    for group in by_session.values():
        ends = {n for s in group for n in (s.first, s.last)}
        for comp in _components(group):
            if len(comp) > 1 and _across_clones(comp):
                _resolve(agent, comp, ends, out)
    out.entries = [e for e in given if (e.entry_id or "") not in out.retired] + out.made
    return out


def _across_clones(comp: list[Span]) -> bool:
    """Whether every two overlapping entries of ``comp`` were compacted from different paths (two
    clones, each reading its own transcripts folder). Two that overlap from one path are this
    machine's own history of the file (a history edited in place and compacted again where it
    changed, a rewritten file): the ledger's to supersede, never taken for a telling twice."""
    return all(a.origin != b.origin for i, a in enumerate(comp) for b in comp[i + 1 :] if a.overlaps(b))


def _folds(s: Span) -> set[str]:
    return s.entry.ids - {s.key}


def _where(s: Span) -> str:
    """A ``retired.txt`` line's tail: the session and range, which a rebuilt ledger reads."""
    session = re.sub(r"\s+", "_", s.session[2])
    return f" · session={session} · lines {s.first}–{s.last}"


def _components(group: list[Span]) -> list[list[Span]]:
    """The session's entries in runs of overlapping ranges, each in line order."""
    out: list[list[Span]] = []
    reach = 0
    for s in sorted(group, key=lambda s: (s.first, s.last, s.key)):
        if out and s.first <= reach:
            out[-1].append(s)
            reach = max(reach, s.last)
        else:
            out.append([s])
            reach = s.last
    return out


def _resolve(agent: str, comp: list[Span], ends: set[int], out: Plan) -> None:
    """One run of overlapping entries made one: the finer cut kept, else all merged."""
    parts = _finer_cut(comp, ends)
    rows = tuple((s.key, s.first, s.last) for s in comp)
    session = comp[0].session[2]
    if parts:
        names = ",".join(p.key for p in parts)
        for s in comp:
            if s not in parts:
                out.retired[s.key] = f"covered by {names}{_where(s)}"
        out.overlaps.append(Overlap(session, rows, tuple(p.key for p in parts), merged=False))
        return
    made = merge(agent, comp)
    key = made.entry_id or ""
    for s in comp:
        out.retired[s.key] = f"merged into {key}{_where(s)}"
    out.made.append(made)
    out.overlaps.append(Overlap(session, rows, (key,), merged=True))


def _finer_cut(comp: list[Span], ends: set[int]) -> list[Span] | None:
    """Two or more entries of ``comp`` one after the other from its first line to its last, with
    no entry's first or last line between two of them; the most entries, then the earliest cuts.
    None when there is none, or when an entry left out ends where a part ends at another time."""
    lo, hi = comp[0].first, max(s.last for s in comp)
    best: dict[str, tuple[Span, ...]] = {}  # key → the best cut from ``lo`` ending with it
    for s in comp:  # in line order: every entry that can precede ``s`` comes before it
        if s.first == lo:
            best[s.key] = (s,)
            continue
        options: list[tuple[Span, ...]] = [
            best[p.key] + (s,)
            for p in comp
            if p.key in best and p.last < s.first and not any(p.last < n < s.first for n in ends)
        ]
        if options:
            best[s.key] = min(options, key=_rank)
    cuts = [c for c in best.values() if c[-1].last == hi and len(c) > 1]
    if not cuts:
        return None
    chosen: tuple[Span, ...] = min(cuts, key=_rank)
    cut = list(chosen)
    for s in comp:
        if s not in cut and any(p.last == s.last and p.entry.when != s.entry.when for p in cut):
            return None  # the same last line at another time: not the same turns
    return cut


def _rank(cut: tuple[Span, ...]) -> tuple[int, tuple[tuple[int, int, str], ...]]:
    return -len(cut), tuple((s.first, s.last, s.key) for s in cut)


def merge(agent: str, comp: list[Span]) -> Entry:
    """One entry for the overlapping entries ``comp`` (in line order): the first one's title (the
    session's goal), every goal, outcome and section item of them all, each once, in line order; the
    provenance of the one that ends last, with their lines and ``folded=`` their ids (and those they
    folded). Its id is a hash of their keys: the same entries give the same entry on every clone."""
    keys = sorted(s.key for s in comp)
    new = "e-" + hashlib.sha256(("scribed-merged-1\0" + "\0".join(keys)).encode()).hexdigest()[:12]
    last = max(comp, key=lambda s: (s.last, s.last - s.first, s.key))
    folded = keys + sorted({i for s in comp for i in _folds(s)} - set(keys) - {new})
    goals: list[str] = []
    blocks: dict[str, list[str]] = {}
    for s in comp:
        head, parts = _sections(s.entry)
        _add(goals, parts.pop("Goal", []) or [s.entry.title])
        for title, lines in [("", head), *parts.items()]:
            _add(blocks.setdefault(title, []), lines)
    title = one_line(goals[0], TITLE_CHARS) or "session"
    if len(goals) > 1 or title != goals[0]:
        blocks["Goal"] = goals
    if blocks.get(_FACTS):
        blocks[_FACTS] = _restated(blocks, title)
    prov = _provenance(last.entry, new, agent, (comp[0].first, last.last), folded)
    body = [f"### {last.entry.date}: {title}", prov]
    body += [""] + blocks[""] if blocks.get("") else []
    order = [t for t in _TITLES if blocks.get(t)] + [
        t for t in blocks if t and t not in _TITLES and blocks[t]
    ]
    if order:
        body.append("")
    for t in order:
        body += [f"#### {t}", *blocks[t]]
    text = "\n".join(body) + "\n"
    return Entry(body[0], last.entry.date, title, text)


def _restated(blocks: dict[str, list[str]], title: str) -> list[str]:
    """The Key facts items left when the merged entry says them elsewhere: a part's retention guard
    lists an anchor its own sections lacked there (``decision: …``, ``issue: #14``), and another
    part may hold that anchor in its sections; listed again, it would be told twice."""
    rest = "\n".join([title, *(ln for t, lines in blocks.items() if t != _FACTS for ln in lines)])
    out = []
    for line in blocks[_FACTS]:
        m = _RESTORED.match(line)
        said = m.group("v").strip("`") if m else ""
        if not said or not re.search(rf"(?<![\w#/.-]){re.escape(said)}(?![\w/]|\.\w)", rest):
            out.append(line)  # not said elsewhere as a whole (``#1`` is not said by ``#14``)
    return out


def _add(into: list[str], lines: Iterable[str]) -> None:
    """``lines`` appended to a section's, each item once (a list item or a line of text; a code
    fence's lines are kept as they are)."""
    fenced = False
    for line in lines:
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            into.append(line)
        elif fenced or line not in into:
            into.append(line)


def _sections(e: Entry) -> tuple[list[str], dict[str, list[str]]]:
    """An entry's text after its provenance line: what stands before its first ``####`` section
    (blank lines dropped), and each section's lines by title, blank lines dropped."""
    lines = e.text.splitlines()[1:]
    at = next((i for i, ln in enumerate(lines) if ln.startswith("- provenance: ")), -1)
    head: list[str] = []
    parts: dict[str, list[str]] = {}
    cur: list[str] = head
    for ln in lines[at + 1 :]:
        if ln.startswith("#### "):
            cur = parts.setdefault(ln[5:].strip(), [])
        elif ln.strip():
            cur.append(ln)
    return head, parts


def _provenance(e: Entry, new: str, agent: str, lines: tuple[int, int], folded: list[str]) -> str:
    """``e``'s provenance line as the merged entry's: its session, source, digest and compressor,
    with the new id, the range of them all and ``folded=`` their ids (``e``'s size figures, of
    ``e`` alone, dropped)."""
    m = _PROV.search(e.text)
    got: dict[str, str] = {}
    for p in m.group("p").split(" · ") if m else []:
        k = p.partition("=")[0].strip()
        if k in ("session", "source", "sha256", "compressor"):
            got.setdefault(k, p)
    fields = [f"id={new}", f"agent={agent}", got.get("session", ""), got.get("source", "")]
    fields += [
        f"lines {lines[0]}–{lines[1]}",
        got.get("sha256", ""),
        got.get("compressor", ""),
        f"folded={','.join(folded)}",
    ]
    return "- provenance: " + " · ".join(f for f in fields if f)
