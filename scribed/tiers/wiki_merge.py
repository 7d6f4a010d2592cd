"""A wiki page's versions merged block by block. Kept apart from :mod:`scribed.tiers.git_merge`
(which merge a tier file takes, the merge driver, the repair of a file left with conflict markers)
because a page is the one tier file with a structure of its own (sections, a block's ``*Status:*``
mark, its provenance line), and most of the merge's rules are about that structure.

Blocks are keyed by section and title, the section a block's own mark says
(:mod:`scribed.tiers.wiki_mark`: its ``*Status:*`` line, not where a text merge left it), a
retired block by the entry that wrote it too (a fact and its reversal, both retired, are two).
With the base, each block merges three ways by the rules of :mod:`scribed.tiers.git_merge`, and
further: a block added current on one side and retired on the other (the same fact,
:func:`_stale`) is the retired one; a block one side deprecated or reversed (its status line
added, the block moved under ``## Superseded``) stays there with the other side's change to it
merged in; a block changed on both sides is merged line by line, its status lines both taken
(:func:`_status_both`) and its provenance line the sources of both (:func:`_block_both`). The
merged page is laid out by those marks (:func:`placed`: current blocks above ``## Superseded``,
retired ones under it, so a fact one side added never lands under a section the other side
created), one blank line between blocks.

Without any base (the wiki sync's write-backs): the blocks of both, one per key; two versions of
one block merged as an add/add (both statements kept); a block one side retired wins over the
other's active copy of it (one that shares no source with it is a new fact that reversed it under
the same title: kept).
"""

from __future__ import annotations

import re
from typing import TypeVar

from scribed.compress.entry import fence_step
from scribed.tiers import wiki_mark
from scribed.tiers.text_merge import (
    Hunk,
    Merged,
    Part,
    conflicted,
    decide,
    marked,
    merge_text,
    ours_side,
    plain,
    union,
)

SUPERSEDED = wiki_mark.SUPERSEDED
_BLOCK = re.compile(r"^#{2,3} ")
_SOURCE = "*Source:* "
_TRAILING_BLANKS = re.compile(r"(?:\n[ \t]*)+\Z")


def chunks(text: str) -> tuple[str, list[tuple[str, str, str]]]:
    """A wiki page's head and its blocks as (section heading, block title line, block text)."""
    head: list[str] = []
    blocks: list[tuple[str, str, list[str]]] = []
    section = ""
    fence = ""
    for line in text.splitlines(keepends=True):
        was = fence
        fence = fence_step(line.rstrip("\r\n"), fence)
        if not was and not fence and _BLOCK.match(line):
            if line.startswith("## "):
                section = line.strip()
                blocks.append((section, "", [line]))
            else:
                blocks.append((section, line.strip(), [line]))
            continue
        (blocks[-1][2] if blocks else head).append(line)
    return "".join(head), [(s, t, "".join(lines)) for s, t, lines in blocks]


def _tidy(text: str) -> str:
    """A block's text without its trailing blank lines: where it sat (last or not) is no change."""
    return _TRAILING_BLANKS.sub("", text.rstrip("\n")) + "\n" if text.strip() else ""


def _page(head: str, blocks: list[str]) -> str:
    """Head and blocks with exactly one blank line between them."""
    body = "\n".join(_tidy(x) for x in blocks if x.strip())
    if not head.strip():
        return body
    return _tidy(head) + ("\n" + body if body else "")


def merge_wiki(ours: str, theirs: str, base: str | None = None) -> str:
    return merged(ours, theirs, base).text


_Key = tuple[str, str, str]


def _wiki_key(s: str, t: str, text: str) -> _Key:
    """A block's key: the section its mark puts it in (:func:`_zone`), its title line, and for a
    retired block the fact it records (:func:`_fact`: a fact reversed, then its reversal retired
    too, leaves two retired blocks of one title, two facts); a section heading's, the heading and
    what follows it."""
    zone = _zone(s, t, text)
    fact = _fact(text) if zone == SUPERSEDED and t.startswith("### ") else ""
    return (zone, t or text.strip(), fact)


def _fact(block: str) -> str:
    """Which fact a block records: its first source's entry id, the one that wrote it (sources
    merged in come after it); "" when it names none."""
    for line in block.splitlines():
        if line.startswith((_SOURCE, "- source:")):
            m = _ENTRY.search(line)
            if m:
                return m.group(1)
    return ""


def block_keys(text: str) -> list[_Key]:
    """The keys of a page's blocks, in order: one twice is a block a text merge doubled (a fact
    and the one that reversed it under the same title are two keys)."""
    return [_wiki_key(s, t, x) for s, t, x in chunks(text)[1] if t]


def _zone(s: str, t: str, text: str) -> str:
    """The section a block belongs in: ``## Superseded`` when its text marks it retired
    (:mod:`scribed.tiers.wiki_mark`), else the one it sits in, or the page's top when a text merge
    left it under ``## Superseded`` unmarked."""
    if not t.startswith("### "):
        return s
    if wiki_mark.retired(text):
        return SUPERSEDED
    return "" if s == SUPERSEDED else s


def merged(ours: str, theirs: str, base: str | None, *, derived: bool = False) -> Merged:
    """Two versions of a page merged, three ways given ``base`` (None: the rules without one);
    ``derived`` (the index, rewritten by the next run): this side's text where they conflict."""
    head, mine = chunks(ours)
    head2, other = chunks(theirs)
    if base is None:
        return plain(_wiki2(head if head.strip() else head2, mine, other))
    head_b, old = chunks(base)
    o, t, b = _keyed_blocks(mine), _keyed_blocks(other), _keyed_blocks(old)
    order = _order(list(o), list(t), b)
    moved = {  # an active block one side moved under Superseded: the move wins, with the other's change
        k: r
        for k in b
        if k[1].startswith("### ") and k[0] != SUPERSEDED
        for r in [(SUPERSEDED, k[1], _fact(b[k]))]
        if r not in b and (r in o or r in t)
    }
    moves = {new: old for old, new in moved.items()}
    stale = _stale(o, t, b)
    pieces: list[tuple[_Key, list[Part]]] = []
    got = decide(_tidy(head_b), _tidy(head), _tidy(head2), both=lambda x, y, z: merge_text(x or "", y, z))
    pieces.append((("", "page head", ""), got or []))
    for k in order:
        if k in stale:
            continue
        if k in moved:  # a side that also holds a new block of that title above (a reversal) keeps it
            pieces += [(k, [x[k]]) for x in (o, t) if k in x and moved[k] in x]
            continue
        was = moves.get(k, k)
        got = decide(
            b.get(was),
            o.get(k, o.get(was) if was != k else None),
            t.get(k, t.get(was) if was != k else None),
            both=_block_both,
        )
        if got is not None:
            pieces.append((k, got))
    if derived:
        text = _page(ours_side(pieces[0][1]), [ours_side(p) for _, p in pieces[1:]])
        return plain(text)
    heading: list[Part] = [SUPERSEDED + "\n"]
    head_part = pieces[0][1]
    blocks = _arranged([(k[0], k[1], union(p), p) for k, p in pieces[1:]], heading)[0]
    names = tuple(_name(k) for k, p in pieces if conflicted(p))
    text = _page(union(head_part), [union(p) for p in blocks])
    if not names:
        return plain(text)
    return Merged(text, _page(marked(head_part), [marked(p) for p in blocks]), names)


def _stale(o: dict[_Key, str], t: dict[_Key, str], b: dict[_Key, str]) -> set[_Key]:
    """Active blocks one side added while the other added the same fact retired (an add/add, the
    base holding neither: a page both clones made, one deprecating before the first push): the
    active copy goes, as without a base (:func:`_wiki2`); a reversal (another source) stays."""
    out: set[_Key] = set()
    for x, y in ((o, t), (t, o)):
        retired: dict[str, list[str]] = {}
        for r, text in y.items():
            if r[0] == SUPERSEDED and r[1].startswith("### ") and r not in b:
                retired.setdefault(r[1], []).append(text)
        out |= {
            k
            for k, text in x.items()
            if k[0] != SUPERSEDED and k not in b and k not in y
            and any(_same_fact(text, r) for r in retired.get(k[1], ()))
        }  # fmt: skip
    return out


def _name(k: _Key) -> str:
    return f"block {k[1]!r}" if k[1].startswith("### ") else f"section {k[1]!r}" if k[0] else k[1]


_T = TypeVar("_T")


def _arranged(items: list[tuple[str, str, str, _T]], heading: _T) -> tuple[list[_T], list[str]]:
    """A page's blocks and section headings (section, title, text, item) laid out by what each
    block records of its state, whatever a text merge made of their places: current blocks above
    ``## Superseded`` (one moved up goes after the others), retired ones under it, each group in
    its order (``heading``: that section's heading, when a retired block needs one and none is
    there; a second bare one goes). Returns the items and the titles of the blocks moved."""
    top: list[_T] = []
    under: list[_T] = []
    anchor: list[_T] = []
    moved: list[str] = []
    for s, t, text, item in items:
        if not t.startswith("### "):
            if s != SUPERSEDED:
                top.append(item)
            elif not anchor:
                anchor.append(item)
            elif _tidy(text).strip() != SUPERSEDED:
                under.append(item)
            continue
        retired = wiki_mark.retired(text)
        (under if retired else top).append(item)
        if retired != (s == SUPERSEDED):
            moved.append(t)
    if under and not anchor:
        anchor = [heading]
    return [*top, *anchor, *under], moved


def placed(text: str) -> tuple[str, list[str]]:
    """A wiki page whose blocks git merged as text (no driver, or ``merge=union``) laid out by their
    marks (:func:`_arranged`), and the titles of the blocks moved (none: the page as it was)."""
    if "### " not in text:
        return text, []
    head, blocks = chunks(text)
    got, moved = _arranged([(s, t, x, x) for s, t, x in blocks], SUPERSEDED + "\n")
    return (_page(head, got), moved) if moved else (text, [])


def _order(mine: list[_Key], other: list[_Key], base: dict[_Key, str]) -> list[_Key]:
    """This side's blocks in its order, each block only the other side has placed after the block
    it follows there (after what this side added at that place too): where its author put it."""
    out = list(mine)
    have, theirs = set(out), set(other)
    for i, k in enumerate(other):
        if k in have:
            continue
        prev = next((other[j] for j in range(i - 1, -1, -1) if other[j] in have), None)
        at = 0 if prev is None else out.index(prev) + 1
        while at < len(out) and out[at] not in base and out[at][0] == k[0] and out[at] not in theirs:
            at += 1
        out.insert(at, k)
        have.add(k)
    return out


def _keyed_blocks(blocks: list[tuple[str, str, str]]) -> dict[_Key, str]:
    """Blocks by key, tidied; a key a text merge left twice on one side is kept once (:func:`_twice`)."""
    out: dict[_Key, str] = {}
    for s, t, text in blocks:
        k, x = _wiki_key(s, t, text), _tidy(text)
        out[k] = _twice(out[k], x) if k in out else x
    return out


def _twice(x: str, y: str) -> str:
    """Two versions of one block with no base between them (added on both sides, or left twice by a
    text merge): merged as the driver merges an add/add, the lines both share once, each side's own
    kept, the sources of both; never the one dropped for the other."""
    if x == y:
        return x
    return _tidy(union(_block_both(None, *sorted((x, y)))))


def _wiki2(head: str, mine: list[tuple[str, str, str]], other: list[tuple[str, str, str]]) -> str:
    """Two versions without their base: the blocks of both, one per key (two versions of one: both,
    :func:`_twice`); an active copy of a block retired on the other side goes (:func:`_same_fact`)."""
    retired: dict[str, list[str]] = {}
    for s, t, text in [*mine, *other]:
        if t.startswith("### ") and _wiki_key(s, t, text)[0] == SUPERSEDED:
            retired.setdefault(t, []).append(text)
    out: list[tuple[str, str, str]] = []
    index: dict[_Key, int] = {}
    for s, t, text in [*mine, *other]:
        k = _wiki_key(s, t, text)
        if k[0] != SUPERSEDED and any(_same_fact(text, x) for x in retired.get(t, ())):
            continue  # reversed or deprecated on one side: its active copy goes
        text = _tidy(text)
        if k in index:
            i = index[k]
            out[i] = (k[0], t, _twice(out[i][2], text))
            continue
        index[k] = len(out)
        if not t:
            out.append((k[0], t, text))
            continue
        # after the last block of its section, so a block stays under its heading
        at = max((i for i, (s2, _, _) in enumerate(out) if s2 == k[0]), default=len(out) - 1) + 1
        out.insert(at, (k[0], t, text))
        index = {_wiki_key(s3, t3, x3): i for i, (s3, t3, x3) in enumerate(out)}
    return _page(head, _arranged([(s, t, x, x) for s, t, x in out], SUPERSEDED + "\n")[0])


_ENTRY = re.compile(r"\bentry=([^\s·;|]+)")


def _same_fact(active: str, retired: str) -> bool:
    """Whether an active block and a retired one of the same title are one fact (the retired its
    later state), not a new fact that reversed it under the same title: they share a source, or
    one of them names none."""
    a, r = _refs(active), _refs(retired)
    return not (a and r) or bool(a & r)


def _refs(block: str) -> set[str]:
    return {
        m.group(1)
        for line in block.splitlines()
        if line.startswith((_SOURCE, "- source:"))
        for m in _ENTRY.finditer(line)
    }


def _block_both(b: str | None, o: str, t: str) -> list[Part]:
    """A block both sides changed (or both added): its title line, its ``*Status:*`` line (a
    deprecation or a reversal on one side, the statement edited on the other: both taken, where as
    text the new line next to the edited one would conflict), its statement merged line by line,
    and its one provenance line as the sources of both (two clones each adding evidence to one fact
    is the common case, and as text that line would conflict)."""
    sides = [_split_status(x) for x in (b or "", o, t)]
    titles = {x[0] for x in sides if x[0]}
    if len(titles) != 1 or (b and not sides[0][0]):
        return _statement_both(b, o, t)
    (title,), ((_, sb, rb), (_, so, ro), (_, st, rt)) = titles, sides
    status = decide(sb, so, st, both=_status_both) or []
    return [title, *status, *_statement_both(rb if b else None, ro, rt)]


def _status_both(b: str | None, o: str, t: str) -> list[Part]:
    """A block's ``*Status:*`` line both sides set differently. Two retirements (two clones each
    deprecating one fact, on different days or for different reasons; one deprecating it, the
    other superseding it) agree that the fact is retired: one line holds both, a supersession
    first (it names the fact that replaced this one), in a fixed order so every clone writes the
    same; one already holding the other is taken whole. Anything else is a conflict: both
    versions kept."""
    so, st = (x.removeprefix(wiki_mark.STATUS_LINE).strip() for x in (o, t))
    if not (so and st and wiki_mark.state(so) != "active" and wiki_mark.state(st) != "active"):
        return [Hunk(o, b or "", t)]
    if st in so or so in st:
        return [o if len(so) >= len(st) else t]
    return [f"{wiki_mark.STATUS_LINE}{wiki_mark.joined(so, st)}\n"]  # its successor first


def _split_status(text: str) -> tuple[str, str | None, str]:
    """A block's title line, its ``*Status:*`` line (None: none), and the rest."""
    title, nl, rest = text.partition("\n")
    if not title.startswith("### ") or not nl:
        return "", None, text
    line, nl2, after = rest.partition("\n")
    if line.startswith(wiki_mark.STATUS_LINE):
        return title + "\n", line + nl2, after
    return title + "\n", None, rest


def _statement_both(b: str | None, o: str, t: str) -> list[Part]:
    """A block's statement and provenance line, both sides changed (:func:`_block_both`)."""
    base = b or ""
    mb, pb = _split_provenance(base)
    mo, po = _split_provenance(o)
    mt, pt = _split_provenance(t)
    if po is not None and pt is not None and (pb is not None or not base):
        line = _merge_provenance(pb, po, pt)
        if line is not None:
            return [*merge_text(mb, mo, mt), line + "\n"]
    return merge_text(base, o, t)


def _split_provenance(text: str) -> tuple[str, str | None]:
    """A block's text (its title and status line taken off) and its provenance line, if last."""
    lines = text.rstrip("\n").split("\n")
    if lines[-1].startswith(_SOURCE):  # a fact whose title is its statement: the line alone
        return "".join(f"{x}\n" for x in lines[:-1]), lines[-1]
    return text, None


def _merge_provenance(pb: str | None, po: str, pt: str) -> str | None:
    """The provenance line with the sources both sides kept and those either added; None when a
    line is not one scribed writes or the two changed what it replaces two ways."""
    if pt in (po, pb):
        return po
    if pb == po:
        return pt
    sides = [_read_provenance(x) for x in ("" if pb is None else pb, po, pt)]
    if None in sides[1:] or (pb is not None and sides[0] is None):
        return None
    (sb, rb), (so, ro), (st, rt) = (x or ([], "") for x in sides)
    replaces = decide(rb, ro, rt, both=lambda *_: [])
    if replaces is not None and len(replaces) != 1:
        return None
    gone = (set(sb) - set(so)) | (set(sb) - set(st))
    kept = [x for x in dict.fromkeys(sb) if x not in gone]
    added = sorted({x for x in [*so, *st] if x not in sb}, key=lambda x: (x[:10], x))
    return _provenance([*kept, *added], str(replaces[0]) if replaces else "")


def _read_provenance(line: str) -> tuple[list[str], str] | None:
    srcs, sep, more = line.removeprefix(_SOURCE).partition(" | confidence: ")
    _, sep2, replaces = more.partition(" | replaces: ")
    items = [x for x in srcs.split("; ") if x.strip()]
    got = (items, replaces if sep2 else "")
    return got if sep and line.startswith(_SOURCE) and _provenance(*got) == line else None


def _provenance(items: list[str], replaces: str) -> str:
    from scribed.tiers.wiki_block import Block, Source  # loaded only when two sides add sources

    confidence = Block(date="", title="", sources=[Source.parse(x) for x in items]).confidence()
    return f"{_SOURCE}{'; '.join(items)} | confidence: {confidence}" + (
        f" | replaces: {replaces}" if replaces else ""
    )
