"""A failing check run again clean settles the failure only when the re-run ran what failed: a
narrower, other selection (``pytest -k other``, another test file, ``go test -run TestOther``)
says nothing of it, so the error stays unresolved (a blocker for the next spawn), not "gone"."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scribed.compress import command_line, error_fixes
from scribed.models import Turn

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
PY_FAIL = (
    "============ FAILURES ============\n"
    "FAILED tests/test_invoices.py::test_rounding_half_even - AssertionError: assert 10.01 == 10.0\n"
    "1 failed, 41 passed in 2.10s"
)
GO_FAIL = "--- FAIL: TestLogin_ExpiredToken (0.00s)\n    auth_test.go:88: want 401, got 200\nFAIL\tgithub.com/acme/api/pkg/auth\t0.012s"


def _session(fail_cmd: str, fail_out: str, rerun: str, *, edit: bool = False) -> list[Turn]:
    spec: list[tuple[str, str, str, str | None]] = [
        ("user", "Fix the failing test please.", "message", None),
        ("assistant", f"Bash {fail_cmd}", "tool_call", "Bash"),
        ("tool", fail_out, "tool_result", None),
    ]
    if edit:
        spec += [
            ("assistant", 'Edit {"file_path": "src/util.py"}', "tool_call", "Edit"),
            ("tool", "The file src/util.py has been updated.", "tool_result", None),
        ]
    spec += [
        ("assistant", f"Bash {rerun}", "tool_call", "Bash"),
        ("tool", "12 passed in 0.40s", "tool_result", None),
    ]
    return [
        Turn(role, text, kind, T0 + timedelta(minutes=i), i + 1, (i + 1) * 100, tool)  # type: ignore[arg-type]
        for i, (role, text, kind, tool) in enumerate(spec)
    ]


@pytest.mark.parametrize(
    ("fail_cmd", "fail_out", "rerun"),
    [
        ("pytest", PY_FAIL, "pytest -k test_parse_dates"),
        ("pytest tests/", PY_FAIL, "pytest tests/test_customers.py"),
        ("python -m pytest -q", PY_FAIL, "python -m pytest -q -m smoke"),
        ("go test ./...", GO_FAIL, "go test ./... -run TestRefresh"),
        ("go test ./pkg/auth", GO_FAIL, "go test ./pkg/billing"),
        ("npx vitest run", PY_FAIL, "npx vitest run src/dates.test.ts"),
    ],
)
def test_a_narrower_other_rerun_leaves_the_failure_unresolved(
    fail_cmd: str, fail_out: str, rerun: str
) -> None:
    pairs = error_fixes.pair(_session(fail_cmd, fail_out, rerun))
    assert pairs and all(p.endswith("→ unresolved") for p in pairs), pairs
    # nor is an edit naming nothing of it confirmed as its fix by that run
    pairs = error_fixes.pair(_session(fail_cmd, fail_out, rerun, edit=True))
    assert pairs and all(p.endswith("→ unresolved") for p in pairs), pairs


@pytest.mark.parametrize(
    ("fail_cmd", "fail_out", "rerun"),
    [
        ("pytest -k rounding", PY_FAIL, "pytest"),  # everything
        ("pytest", PY_FAIL, "pytest -q --maxfail 1"),  # options, no selection
        ("pytest", PY_FAIL, "pytest tests/test_invoices.py"),  # the file that failed
        ("pytest", PY_FAIL, "pytest tests/test_invoices.py::test_rounding_half_even -x"),
        ("pytest", PY_FAIL, "pytest -k rounding_half_even"),  # the test by its name
        ("go test ./pkg/auth", GO_FAIL, "go test ./..."),
        ("go test ./...", GO_FAIL, "go test ./pkg/auth -run TestLogin_ExpiredToken"),
        ("cd api && go test ./...", GO_FAIL, "cd api && go test ./..."),  # the same command
    ],
)
def test_a_rerun_covering_what_failed_settles_it(fail_cmd: str, fail_out: str, rerun: str) -> None:
    pairs = error_fixes.pair(_session(fail_cmd, fail_out, rerun))
    assert pairs and all("gone when" in p for p in pairs), pairs
    pairs = error_fixes.pair(_session(fail_cmd, fail_out, rerun, edit=True))
    assert pairs and all(p.endswith("→ edited `src/util.py`") for p in pairs), pairs


@pytest.mark.parametrize(
    ("command", "picked"),
    [
        ("pytest", set()),
        ("pytest -q -x --maxfail=2", set()),
        ("pytest -k 'not slow'", {"not slow"}),
        ("pytest tests/test_a.py::test_b | tail -20", {"tests/test_a.py::test_b"}),
        ("bash -lc 'cd svc && go test ./... -run=TestX'", {"testx"}),
        ("go test .", set()),
        ("uv run pytest tests/unit 2>&1", {"tests/unit"}),
        ("pnpm exec vitest run --testNamePattern 'sorts by date'", {"sorts by date"}),
        ("cargo test --package core", {"core"}),
    ],
)
def test_what_a_command_selects(command: str, picked: set[str]) -> None:
    assert command_line.selection(command) == picked


@pytest.mark.parametrize(
    ("fail_cmd", "fail_out", "rerun"),
    [  # a review's: runs that leave the failing test out, or select a part that is not it
        ("pytest", PY_FAIL, "pytest -k 'not test_rounding_half_even'"),
        ("pytest", PY_FAIL, "pytest --deselect tests/test_invoices.py::test_rounding_half_even"),
        ("pytest tests/test_invoices.py tests/test_parse.py", PY_FAIL, "pytest tests/test_parse.py"),
        ("go test ./...", GO_FAIL, "go test ./pkg/billing/..."),
        (
            "cargo test",
            "error[E0308]: mismatched types\n --> crates/auth/src/lib.rs:3:5",
            "cargo test -p billing",
        ),
        ("tox -e py311", PY_FAIL, "tox -e lint"),
    ],
)
def test_a_run_leaving_the_failure_out_settles_nothing(fail_cmd: str, fail_out: str, rerun: str) -> None:
    pairs = error_fixes.pair(_session(fail_cmd, fail_out, rerun))
    assert pairs and all(p.endswith("→ unresolved") for p in pairs), pairs


def test_a_narrower_rerun_settles_the_failure_it_ran_and_not_the_other() -> None:
    two = (
        "FAILED tests/test_rounding.py::test_half_even - AssertionError: assert 10.01 == 10.0\n"
        "FAILED tests/test_dates.py::test_parse_tz - ValueError: bad tz\n2 failed, 40 passed"
    )
    pairs = error_fixes.pair(_session("pytest", two, "pytest tests/test_rounding.py", edit=True))
    assert pairs == [
        "`FAILED tests/test_rounding.py::test_half_even - AssertionError: assert 10.01 == 10.0` → edited `src/util.py`",
        "`FAILED tests/test_dates.py::test_parse_tz - ValueError: bad tz` → unresolved",
    ]
    # a wider run than the failing one, leaving nothing out, covers it
    assert command_line.covers("pytest tests/a.py tests/b.py", "pytest tests/a.py", "FAILED tests/a.py::t")
    assert command_line.covers("go test ./pkg/auth/...", "go test ./...", GO_FAIL)
