"""Errors that are none and fixes that are none (exploratory test 43): a runner's progress line and
pytest's assertion introspection are no errors; a statement that the errors pre-exist, an issue
filed about them and the options for a fix are no fix; a tool's acknowledgement, a test run's
tally and a file read's line numbers are no key points."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scribed.compress import error_fixes, errors, tool_lines, units
from scribed.models import Turn

T0 = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)


def _turns(*spec: tuple[str, str] | tuple[str, str, str]) -> list[Turn]:
    out = []
    for i, t in enumerate(spec):
        role, text = t[0], t[1]
        kind = t[2] if len(t) > 2 else ("tool_result" if role == "tool" else "message")  # type: ignore[misc]
        turn = Turn(role, text, kind, T0 + timedelta(minutes=i), i + 1, (i + 1) * 100)  # type: ignore[arg-type]
        if kind == "tool_call":
            turn.tool_name = text.split(" ", 1)[0]
        out.append(turn)
    return out


def _call(command: str, tool: str = "Bash") -> tuple[str, str, str]:
    return ("assistant", f"{tool} {command}", "tool_call")


def test_a_progress_line_with_its_percentage_is_no_error() -> None:
    """Claude Code marks a failed run's output `error: `; pytest's first line is its progress,
    marks then `[100%]` (`error: F      [100%]` was promoted as "Known issue: error: F [100%]")."""
    for line in ("error: F" + " " * 70 + "[100%]", "error: .E........." + " " * 60 + "[100%]"):
        assert errors.error_in_line(line) is None, line
    out = "error: F     [100%]\nE       AssertionError: assert 2 == 1\n1 failed in 0.93s"
    assert errors.errors_in_turn(Turn("tool", out, "tool_result", T0, 1, 0)) == [
        "AssertionError: assert 2 == 1"
    ]


def test_pytests_introspection_under_an_assertion_is_no_error() -> None:
    """`E   assert 2 == 1` is the failure; `E    +  where 2 = <… object at 0x7f…>.calls` under it
    explains its operands (a diff's `-`/`+`/`?` lines likewise)."""
    out = (
        "E       assert 2 == 1\n"
        "E        +  where 2 = <tests.conftest.StripeStub object at 0x7f3a1c2b9fd0>.create_calls\n"
        "FAILED tests/test_w.py::test_once - assert 2 == 1"
    )
    got = errors.errors_in_turn(Turn("tool", out, "tool_result", T0, 1, 0))
    assert got == ["E       assert 2 == 1", "FAILED tests/test_w.py::test_once - assert 2 == 1"]


MYPY = 'src/ledger/worker.py:61: error: Module has no attribute "error"  [attr-defined]'


def _mypy(*after: tuple[str, str] | tuple[str, str, str]) -> list[Turn]:
    return _turns(_call("mypy src/ledger/worker.py"), ("tool", f"error: {MYPY}"), *after)


def test_a_statement_that_the_errors_were_there_before_is_no_fix() -> None:
    said = (
        "Neither is new from this change (they were there on main too, CI only runs mypy on "
        "`src/ledger/api/`), so I'd rather not mix them into the #231 fix."
    )
    assert error_fixes.pair(_mypy(("assistant", said))) == [f"`{MYPY}` → unresolved"]


def test_an_issue_filed_about_an_error_is_no_fix() -> None:
    """Filing an issue defers the failure: the command names it, but changes nothing it ran on."""
    err = 'sqlalchemy.exc.ProgrammingError: index "ix_jobs_locked_at" does not exist'
    turns = _turns(
        _call("alembic downgrade -1"),
        ("tool", err),
        _call("gh issue create --title 'alembic downgrade fails: ix_jobs_locked_at does not exist'"),
        ("tool", "https://github.com/acme/ledger/issues/247"),
    )
    assert error_fixes.pair(turns) == [f"`{err}` → unresolved"]


def test_the_options_for_a_fix_are_no_fix() -> None:
    """Clippy's failure restated with the two ways out ("so the fix is either … or …") is no fix."""
    err = "src/export.rs:23:17: error: this `map_or` can be simplified"
    said = (
        "Clippy fails on `unnecessary_map_or` in the date filters; `is_none_or` needs Rust 1.82 and our "
        "MSRV in Cargo.toml is 1.78, so the fix is either bumping MSRV or an `#[allow]`."
    )
    turns = _turns(_call("cargo clippy -- -D warnings"), ("tool", err), ("assistant", said))
    assert error_fixes.pair(turns) == [f"{err} → unresolved"]


def _pool(*spec: tuple[str, str] | tuple[str, str, str]) -> list[str]:
    return [u.text for u in units.split(_turns(*spec)).units]


def test_a_tools_acknowledgement_and_a_tally_are_no_key_points() -> None:
    """Claude Code's TodoWrite answers with boilerplate that names nothing of the work, and a test
    run's last line counts results it does not name: neither is a key point. A result line that
    names something stays one."""
    ack = (
        "Todos have been modified successfully. Ensure that you continue to use the todo list to "
        "track your progress. Please proceed with the current tasks if applicable"
    )
    got = _pool(
        ("user", "Fix the double charge in the worker."),
        _call('{"todos": [{"content": "Fix it", "status": "pending"}]}', "TodoWrite"),
        ("tool", ack),
        _call("python -m pytest tests/test_worker.py -q"),
        ("tool", "..........                    [100%]\n10 passed in 1.84s"),
        _call("pip install -q stripe==8.2.0"),
        ("tool", "Successfully installed stripe-8.2.0"),
    )
    assert not [g for g in got if "Todos have been" in g or "10 passed" in g], got
    assert "Successfully installed stripe-8.2.0" in got


def test_a_file_reads_line_numbers_are_not_its_text() -> None:
    """Claude Code's Read numbers each line (`    12\\tdown_revision = …`, as `cat -n`): the number
    is not the line's."""
    read = '     11\trevision = "4f1c2d9a7e03"\n     12\tdown_revision = "a8e2b7710c4d"\n'
    got = _pool(("user", "Add the migration."), _call('{"file_path": "/r/m.py"}', "Read"), ("tool", read))
    assert not [g for g in got if g[:1].isdigit()], got


def test_a_branch_named_fix_or_a_fix_said_of_another_issue_is_no_fix() -> None:
    """ "Where things stand on `fix/231-double-charge`:" holds no fix word (a branch's name), and
    "#302 fixed with a regression test" is issue #302's fix, not a later clippy failure's."""
    err = "src/export.rs:23:17: error: this `map_or` can be simplified"
    for said in (
        "Where things stand on `fix/231-double-charge` (commit 5be20c4):",
        "Pushed 8d03e6b to `fix/231-double-charge`.",
        "#302 fixed with a regression test (`tests/export_empty.rs`).",
    ):
        turns = _turns(_call("cargo clippy -- -D warnings"), ("tool", err), ("assistant", said))
        assert error_fixes.pair(turns) == [f"{err} → unresolved"], said
    # said of an issue, it waits for the check: the failing program clean again confirms it
    fixed = "Fixed #302 by returning early on an empty ledger."
    turns = _turns(_call("ll export"), ("tool", "Error: empty ledger"), ("assistant", fixed))
    assert error_fixes.pair(turns) == ["`Error: empty ledger` → unresolved"]
    turns += _turns(_call("ll export"), ("tool", "wrote 0 rows to out.csv"))
    assert error_fixes.pair(turns) == [f"`Error: empty ledger` → {fixed}"]


def test_held_out_phrasings() -> None:
    """Phrasings the rules above were not written from."""
    for line in ("error: ..F..s" + " " * 20 + "[ 45%]", "E         -  expected_total", "E         ?    ^"):
        assert errors.error_in_line(line) is None, line
    for line in ("error: EOF", "E   ValueError: bad date", "error: missing file"):
        assert errors.error_in_line(line) is not None, line
    for said in (
        "None of these come from this change, so I'm keeping them out of the #12 fix.",
        "The fix is either a retry around the call or a longer timeout.",
    ):
        assert error_fixes.pair(_mypy(("assistant", said))) == [f"`{MYPY}` → unresolved"], said
    for cmd in ("glab issue create -t 'worker.py attr-defined'", "jira issue comment LED-12 'worker.py'"):
        assert error_fixes.pair(_mypy(_call(cmd), ("tool", "ok"))) == [f"`{MYPY}` → unresolved"], cmd
    got = _pool(
        ("user", "Tidy the worker."),
        ("tool", "Task list updated. Remember to keep it current as you work through the items."),
        ("tool", "Found 2 errors in 1 file (checked 1 source file)"),
        ("tool", "3 files changed, 27 insertions(+), 4 deletions(-)"),
        ("tool", "File created successfully at: /r/tests/test_worker.py"),
        ("tool", "tests/search/test_shard.py ........F.......... [ 21%]"),
    )
    # a tally of errors is a result (a review's: "Found 3 errors in 2 files" was dropped)
    assert got == [
        "user: Tidy the worker.",
        "Found 2 errors in 1 file (checked 1 source file)",
        "File created successfully at: /r/tests/test_worker.py",
    ], got


def test_a_failure_back_after_a_clean_run_is_no_longer_gone() -> None:
    """A review's: a test failed, passed on a re-run, then failed again as the session's last run;
    the entry said it was "gone when … ran again" (and the hot file listed no blocker)."""
    fail = (
        "tool",
        "FAILED tests/test_worker.py::test_retry - AssertionError: assert 2 == 1\n1 failed in 0.4s",
    )
    turns = _turns(
        _call("pytest tests/test_worker.py"),
        fail,
        _call("pytest tests/test_worker.py"),
        ("tool", "3 passed in 0.4s"),
        _call("pytest tests/test_worker.py"),
        fail,
    )
    got = error_fixes.pair(turns)
    assert got and all(x.endswith("→ unresolved") for x in got), got


@pytest.mark.parametrize(
    ("said", "fixed"),
    [
        ("Fixed: either the currency or the locale was missing, so export.py now defaults both.", True),
        ("#302 fixed with a regression test.", False),
        ("The fix is either a default or a schema change.", False),
    ],
)
def test_an_either_in_a_claim_keeps_the_fix(said: str, fixed: bool) -> None:
    turns = _turns(
        _call("python export.py"),
        ("tool", "Traceback (most recent call last):\nKeyError: 'currency'"),
        ("assistant", said),
    )
    got = error_fixes.pair(turns)
    assert got == [f"`KeyError: 'currency'` → {said if fixed else 'unresolved'}"], got


@pytest.mark.parametrize(
    "line",
    [
        "Python 3.11.4",
        "HEAD is now at 3e9a0f1 build: bump stripe",
        "3 failed, 97 passed in 12.1s",
        "Found 3 errors in 2 files",
        "Collecting pydantic==2.7.4",
    ],
)
def test_a_version_a_hash_or_a_failed_tally_is_named_enough(line: str) -> None:
    """A review's: versions, commit hashes and tallies with failures were dropped as naming nothing
    (only an all-pass tally or an acknowledgement is the tool's own)."""
    assert tool_lines.names_something(line)
    assert not tool_lines.names_something("10 passed in 1.84s")
