"""The key-point pool: what tool output contributes, and that skipping work never changes it."""

from __future__ import annotations

from scribed.compress import units
from scribed.models import Turn


def _read(text: str, line: int) -> Turn:
    return Turn(role="tool", text=text, kind="tool_result", line=line)


def test_a_tool_line_read_twice_is_one_unit() -> None:
    """A file read twice gives its lines once: the copy could add nothing the first one lacks."""
    body = "def merge_ledger(session: str) -> None:\n    ledger_1 = self.fetch_bucket(index, limit=339)\n"
    pool = units.split(
        [_read(body, 1), Turn(role="user", text="why merge_ledger twice?", line=2), _read(body, 3)]
    )
    tool = [u.text for u in pool.units if u.kind == "tool"]
    assert len(tool) == 2 and len(set(tool)) == 2, tool
    assert [u.pos for u in pool.units] == list(range(len(pool.units)))


def test_a_repeated_error_line_still_counts_where_it_recurs() -> None:
    """Only plain tool lines are folded: an error seen again is a recurrence, kept as a unit."""
    err = "ValueError: bad ledger id 42\n"
    pool = units.split([_read(err, 1), _read(err, 2)])
    assert [u.kind for u in pool.units] == ["error", "error"]


def test_middle_lines_are_skipped_only_when_nothing_there_is_an_error() -> None:
    """Lines between head and tail are not read when the output holds nothing error-shaped, but an
    error in the middle is still found."""
    n = units.TOOL_HEAD_LINES + units.TOOL_TAIL_LINES + 40
    lines = [f"row_{i} = value_{i} + offset_{i}" for i in range(n)]
    plain = units.split([_read("\n".join(lines), 1)])
    assert len(plain.units) == units.TOOL_HEAD_LINES + units.TOOL_TAIL_LINES
    lines[units.TOOL_HEAD_LINES + 20] = "KeyError: 'missing_ledger_key'"
    found = units.split([_read("\n".join(lines), 1)])
    assert [u.text for u in found.units if u.kind == "error"] == ["KeyError: 'missing_ledger_key'"]


def test_a_tools_elision_note_is_no_unit_and_read_line_numbers_go() -> None:
    """ "[8033 lines truncated] ..." says nothing a reader needs; "   57→ return x" is the line, not
    its number (Claude Code's Read output, also inlined by SpecStory exports)."""
    body = "    57→    return shard_total(rows)\n[8033 lines truncated] ...\n... 12 more lines\n"
    texts = [u.text for u in units.split([_read(body, 1)]).units]
    assert texts == ["return shard_total(rows)"], texts
