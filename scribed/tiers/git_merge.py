"""Merging two versions of a tier file entry by entry: what ``scribed git merge-file`` (a git merge
driver) and the repair of a file left with conflict markers both do.

- a cold entry file (``cold/{agent}/*.md``): the entries of both, one per key, the version every
  clone picks (:func:`scribed.tiers.cold_store.pick`);
- ``retired.txt``: the union of its lines;
- a wiki topic: the blocks of both, one per title and section; a block that one side moved under
  ``## Superseded`` (a reversal, a deprecation) wins over the other side's active one.

Each is idempotent (merging a result with either side again changes nothing) and never writes a
conflict marker.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from scribed.compress.entry import Entry, fence_step, join_entries, split_entries
from scribed.tiers import cold_store

SUPERSEDED = "## Superseded"
_BLOCK = re.compile(r"^#{2,3} ")


def merge_entries(ours: str, theirs: str) -> str:
    pre, mine = split_entries(ours)
    pre2, other = split_entries(theirs)
    by_key: dict[str, list[Entry]] = {}
    for e in map(cold_store.canonical, [*mine, *other]):
        by_key.setdefault(cold_store.key(e), []).append(e)
    kept = cold_store.order([cold_store.pick(v) for v in by_key.values()])
    return join_entries(pre if pre.strip() else pre2, kept)


def merge_lines(ours: str, theirs: str) -> str:
    rows = cold_store.read_retired(ours)
    for k, v in cold_store.read_retired(theirs).items():
        rows.setdefault(k, v)
    return cold_store.render_retired(rows)


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


def merge_wiki(ours: str, theirs: str) -> str:
    head, mine = chunks(ours)
    head2, other = chunks(theirs)
    superseded = {t for s, t, _ in [*mine, *other] if t and s == SUPERSEDED}
    out: list[tuple[str, str, str]] = []
    index: dict[tuple[str, str], int] = {}
    for s, t, text in [*mine, *other]:
        if t and t in superseded and s != SUPERSEDED:
            continue  # reversed or deprecated on one side: its active copy goes
        k = (s, t or text.strip())
        if k in index:
            i = index[k]
            old = out[i][2]
            out[i] = (s, t, max(old, text, key=lambda x: (len(x), x)))
            continue
        index[k] = len(out)
        if not t:
            out.append((s, t, text))
            continue
        # after the last block of its section, so a block stays under its heading
        at = max((i for i, (s2, _, _) in enumerate(out) if s2 == s), default=len(out) - 1) + 1
        out.insert(at, (s, t, text))
        index = {(s3, t3 or x3.strip()): i for i, (s3, t3, x3) in enumerate(out)}
    body = "".join(x if x.endswith("\n") else x + "\n" for _, _, x in out)
    return (head if head.strip() else head2) + body


def kind_of(path: str) -> str:
    """Which merge a tier file takes, from its path: entries, lines, wiki, or "" (none of ours)."""
    parts = PurePosixPath(path.replace("\\", "/")).parts
    if "memory" not in parts:
        return ""
    rest = parts[parts.index("memory") + 1 :]
    if len(rest) == 3 and rest[0] == "cold" and rest[2] == cold_store.RETIRED:  # noqa: PLR2004
        return "lines"
    if len(rest) == 3 and rest[0] == "cold" and rest[2].endswith(".md"):  # noqa: PLR2004
        return "entries"
    if len(rest) >= 2 and rest[0] == "wiki" and rest[-1].endswith(".md"):  # noqa: PLR2004
        return "wiki"
    return ""


def merge(kind: str, ours: str, theirs: str) -> str:
    if kind == "entries":
        return merge_entries(ours, theirs)
    if kind == "lines":
        return merge_lines(ours, theirs)
    return merge_wiki(ours, theirs)


def repair(kind: str, text: str) -> str | None:
    """A file git left with conflict markers, merged entry by entry (None: it has none)."""
    both = cold_store.sides(text)
    return None if both is None else merge(kind, *both)


_FRONT = re.compile(r"^---\n(?=scribed-live: )", re.M)


def readable(path: str, text: str) -> str:
    """What a reader (a spawn's context, search) is given of a tier file a merge left with conflict
    markers or two front matters (a hot file under ``merge=union``): never the file as it is.
    Cold views and wiki pages are merged entry by entry in memory; a hot file keeps this machine's
    side, or its last front matter and what follows it. The next run writes the same repair."""
    rel = path.replace("\\", "/")
    hot = "/hot/" in rel
    if "<<<<<<<" in text:
        both = cold_store.sides(text)
        if both is not None:
            kind = "wiki" if "/wiki/" in rel else ("hot" if hot else "entries")
            text = both[0] if kind == "hot" else merge(kind, *both)
    if hot:
        starts = [m.start() for m in _FRONT.finditer(text)]
        if len(starts) > 1:
            text = text[starts[-1] :]
    return text
