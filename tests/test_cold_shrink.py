"""A digest is trimmed to its budget by keeping its size as items go (issue 15's fixed cost: the
whole text measured again per trimmed item made each fold quadratic). These tests hold the kept
size to the old way: the same items trimmed, the same text, whatever the summary and budget."""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from scribed.compress.entry import (
    ENTRY_HEADING,
    Entry,
    _mk,
    fence_step,
    join_entries,
    one_line,
    split_entries,
)
from scribed.models import SECTIONS, Summary
from scribed.tiers import cold


def _measured_each_time(s: Summary, head: Callable[[Summary], str], budget: int) -> str:
    """The trimming as it was: build the whole text, measure it, trim one item, again."""

    def build(x: Summary) -> str:
        return head(x) + cold._sections_text(x) + "\n"

    text = build(s)
    while len(text.encode()) > budget:
        for key in cold._DIGEST_TRIM_ORDER:
            v = getattr(s, key)
            if isinstance(v, list) and v:
                v.pop()
                break
            if isinstance(v, str) and len(v) > cold._DIGEST_TEXT_MIN:
                setattr(s, key, one_line(v, len(v) // 2))
                break
        else:
            break
        text = build(s)
    return text


_word = st.text(alphabet="ab é→`🙂\n-#", min_size=1, max_size=12)
_item = st.lists(_word, min_size=1, max_size=8).map(" ".join)
_items = st.lists(_item, max_size=25)


@st.composite
def _summaries(draw: st.DrawFn) -> Summary:
    lists = {key: draw(_items) for key, _ in SECTIONS[2:]}
    return Summary(goal=draw(_item), outcome=draw(st.lists(_item, max_size=30).map("; ".join)), **lists)


def _head(total: int) -> Callable[[Summary], str]:
    def head(s: Summary) -> str:
        kept = sum(len(getattr(s, k)) for k, _ in SECTIONS[2:])
        note = f" · trimmed={total - kept} items" if kept < total else ""
        return f"### 2026-01-01T00:00:00Z: {s.goal}\n- provenance: id=d-1{note}\n\n"

    return head


@settings(max_examples=200, deadline=None)
@given(_summaries(), st.integers(min_value=0, max_value=3000))
def test_kept_size_trims_as_measuring_did(summary: Summary, budget: int) -> None:
    total = sum(len(getattr(summary, k)) for k, _ in SECTIONS[2:])
    a, b = summary.model_copy(deep=True), summary.model_copy(deep=True)
    assert cold._shrink(a, _head(total), budget) == _measured_each_time(b, _head(total), budget)
    assert a == b


def test_block_size_is_the_blocks_bytes() -> None:
    s = Summary(goal="g", outcome="ö" * 7, decisions=["a", "→b"], files=[])
    text = cold._sections_text(s)
    sizes = [cold._block_size(t, getattr(s, k)) for k, t in SECTIONS]
    filled = [n for n in sizes if n]
    assert sum(filled) + len(filled) - 1 == len(text.encode())


_line = st.text(alphabet="ab é→`\n#", max_size=30)


@st.composite
def _entries(draw: st.DrawFn) -> list[Entry]:
    out: list[Entry] = []
    for i in range(draw(st.integers(min_value=0, max_value=6))):
        tail = draw(st.sampled_from(["", "\n", "\n\n", "\n\n\n"]))
        out.append(
            Entry(f"### 2026-01-0{i + 1}: t", "2026", "t", f"### 2026-01-0{i + 1}: t\n{draw(_line)}{tail}")
        )
    if draw(st.booleans()) and out:
        out.append(
            Entry("### x", "x", "x", draw(st.sampled_from(["", "\n", "\n\n"])))
        )  # blank: joined instead
    return out


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["", "\n", "  \n", "# Cold\n", "# Cold\n\n\n", "x"]), _entries())
def test_file_size_is_the_joined_files(pre: str, entries: list[Entry]) -> None:
    """An append measures the file from its entries' remembered sizes: exactly the joined file's."""
    sizes = [cold._part_bytes(e.text) for e in entries]
    assert cold._file_bytes(pre, entries, sizes) == len(join_entries(pre, entries).encode())


@given(_entries(), st.sampled_from(["\n", "\n\n"]))
def test_an_entry_ended_as_written(entries: list[Entry], end: str) -> None:
    for e in entries:
        got = cold._ended(e, end)
        assert got.text == e.text.rstrip("\n") + end
        assert (got is e) == (got.text == e.text)
        assert cold._part_bytes(got.text) == cold._part_bytes(e.text)  # an append keeps the size it had


def _merged_by_lists(folded: list[Entry]) -> dict[str, list[str]]:
    """The merge as it was: a list membership test per item."""
    merged: dict[str, list[str]] = {k: [] for k, _ in SECTIONS}
    superseded: set[str] = set()
    for e in folded:
        sec = cold.sections(e.text)
        for key, items in sec.items():
            if key in ("goal", "outcome"):
                continue
            for it in items:
                if it not in merged[key]:
                    merged[key].append(it)
        for d in sec.get("decisions", []):
            m = re.search(r"\(supersedes: (.+)\)\s*$", d)
            if m:
                superseded.add(m.group(1).strip())
    merged["decisions"] = [d for d in merged["decisions"] if d not in superseded]
    return merged


_sections_drawn = st.lists(
    st.tuples(
        st.sampled_from([t for _, t in SECTIONS]),
        st.lists(st.sampled_from(["a", "b", "c", "a (supersedes: b)", "d (supersedes: a)"]), max_size=5),
    ),
    max_size=5,
)


@given(st.lists(_sections_drawn, min_size=1, max_size=4))
def test_merged_sections_as_the_list_merge_did(drawn: list[list[tuple[str, list[str]]]]) -> None:
    folded = []
    for i, secs in enumerate(drawn):
        body = "".join(f"#### {title}\n" + "".join(f"- {x}\n" for x in items) for title, items in secs)
        folded.append(Entry(f"### 2026-01-0{i + 1}: t", "2026", "t", f"### 2026-01-0{i + 1}: t\n{body}"))
    assert cold._merged_sections(folded) == _merged_by_lists(folded)


def _split_line_by_line(text: str) -> tuple[str, list[Entry]]:
    """``split_entries`` as it was: the fence rule and the heading pattern on every line."""
    pre: list[str] = []
    entries: list[Entry] = []
    cur: list[str] | None = None
    head: re.Match[str] | None = None
    fence = ""
    for line in text.splitlines(keepends=True):
        was = fence
        fence = fence_step(line.rstrip("\r\n"), fence)
        m = None if (was or fence) else ENTRY_HEADING.match(line.rstrip("\n"))
        if m:
            if cur is not None and head is not None:
                entries.append(_mk(head, cur))
            cur, head = [line], m
        elif cur is None:
            pre.append(line)
        else:
            cur.append(line)
    if cur is not None and head is not None:
        entries.append(_mk(head, cur))
    return "".join(pre), entries


_cold_lines = st.lists(
    st.sampled_from([
        "# Cold memory: kim", "### 2026-01-02T03:04:05Z: fix", "### 2026-01-03: b", "###  2026-01-03: no",
        "```", "```py", "~~~", "````", "   ```", "    ```", "``` `x`", "- provenance: id=e-0123456789ab",
        "text", "", "#### Goal", "\t### 2026-01-04: tab", "~~", "``",
    ]),
    max_size=25,
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(_cold_lines, st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_split_entries_as_line_by_line(lines: list[str], nl: str, trailing: bool) -> None:
    """The fence rule is skipped for a text that cannot open a fence, and the heading pattern for
    lines that cannot be one: the split is the same."""
    text = nl.join(lines) + (nl if trailing else "")
    assert split_entries(text) == _split_line_by_line(text)
    fence = ""
    for line in text.splitlines():
        fence = fence_step(line.rstrip("\r\n"), fence)
    assert cold._balanced(text) == (not fence)
