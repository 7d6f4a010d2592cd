"""The key-point pool: what tool output contributes, and that skipping work never changes it."""

from __future__ import annotations

from scribed.compress import tool_lines, units
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
    n = tool_lines.TOOL_HEAD_LINES + tool_lines.TOOL_TAIL_LINES + 40
    names = ["".join("abcdefghij"[int(d)] for d in f"{i:03d}") for i in range(n)]  # no digits: no listing
    lines = [f"row_{x} = fetch_{x}(limit) + {x}_{'offset' * (i % 3 + 1)}" for i, x in enumerate(names)]
    plain = units.split([_read("\n".join(lines), 1)])
    assert len(plain.units) == tool_lines.TOOL_HEAD_LINES + tool_lines.TOOL_TAIL_LINES
    lines[tool_lines.TOOL_HEAD_LINES + 20] = "KeyError: 'missing_ledger_key'"
    found = units.split([_read("\n".join(lines), 1)])
    assert [u.text for u in found.units if u.kind == "error"] == ["KeyError: 'missing_ledger_key'"]


def test_a_tools_elision_note_is_no_unit_and_read_line_numbers_go() -> None:
    """ "[8033 lines truncated] ..." says nothing a reader needs; "   57→ return x" is the line, not
    its number (Claude Code's Read output, also inlined by SpecStory exports)."""
    body = "    57→    return shard_total(rows)\n[8033 lines truncated] ...\n... 12 more lines\n"
    texts = [u.text for u in units.split([_read(body, 1)]).units]
    assert texts == ["return shard_total(rows)"], texts


def test_a_listing_in_tool_output_gives_one_line_for_all_its_lines() -> None:
    """Numbered code lines, a progress log: lines of one shape once their numbered words are masked
    (padded columns too) are a listing, and its first line stands for the rest, across outputs as
    well; other lines of the output that name something are kept (a tally, "collected 40 items",
    "40 passed in 4.74s", names nothing: tests/test_error_junk.py). A test runner's PASSED lines
    and its header ("rootdir: /srv/app") are no units at all (exploratory test 44:
    tests/test_tool_junk.py)."""
    run = "\n".join(
        [
            "============================= test session starts ==============================",
            "platform linux -- Python 3.12.1, pytest-8.0.0, pluggy-1.4.0",
            "rootdir: /srv/app",
            "collected 40 items",
            *(
                f"tests/test_{m}.py::test_case_{i:03d} PASSED{' ' * (i % 7 + 3)}[ {i * 2:2d}%]"
                for i, m in zip(range(40), ["auth", "models", "server", "users"] * 10, strict=True)
            ),
            *(
                f"Running upgrade {i:03d} -> {i + 1:03d}{' ' * (i % 3 + 1)}in alembic/versions/{i:03d}_ledger.py"
                for i in range(6)
            ),
            "============================== 40 passed in 4.74s ===============================",
        ]
    )
    again = "\n".join(
        [
            *(
                f"Running upgrade {i:03d} -> {i + 1:03d} in alembic/versions/{i:03d}_ledger.py"
                for i in range(6, 9)
            ),
            "5 passed",
        ]
    )
    texts = [u.text for u in units.split([_read(run, 1), _read(again, 2)]).units]
    upgrades = [t for t in texts if "upgrade" in t]
    assert upgrades == ["Running upgrade 000 -> 001 in alembic/versions/000_ledger.py"], texts
    assert not [t for t in texts if "PASSED" in t or "rootdir" in t or "platform" in t], texts
    assert not any("40 passed" in t or "collected" in t for t in texts), texts
    # two lines of a shape are no listing: both kept
    two = "\n".join(["retry 1 of 3: ledger_sync timed out", "retry 2 of 3: ledger_sync timed out"])
    assert len(units.split([_read(two, 1)]).units) == 2


def test_a_listing_pasted_in_a_message_gives_one_line_for_all_its_lines() -> None:
    """An assistant message pasting a diff without a fence (the demo's riker entry had 46 of 51 key
    points of hunk headers and `return legacy_response(value_N)` lines): the lines of one shape are
    a listing there too; a message's other sentences stay."""
    hunks = "\n".join(
        f"@@ -{i * 10 + 1},7 +{i * 10 + 1},8 @@ def handler_{i}(request):\n"
        f"     value_0 = compute(request, {i})\n"
        f"-    return legacy_response(value_{i})\n"
        f"+    return Response(value_{i}, status=200)"
        for i in range(12)
    )
    text = f"The rate limiter now falls back to the client IP in src/app/ratelimit.py.\n\n{hunks}"
    texts = [u.text for u in units.split([Turn(role="assistant", text=text, line=1)]).units]
    assert any("client IP" in t for t in texts), texts
    assert sum("legacy_response" in t for t in texts) <= 1, texts
    assert sum("handler_" in t for t in texts) <= 1, texts
