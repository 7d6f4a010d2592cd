"""Compiler and checker diagnostics at a place in a file are errors (gcc, clang, mypy, javac, tsc,
MSVC, Go): before, only ``error:`` at a line's start was one, so a session whose build failed in
any of these kept no error and no fix (a helper's run of ``go build`` left its memory empty)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scribed.compress import anchors, error_fixes, errors
from scribed.models import Session, Turn
from scribed.sources import common

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)

DIAGNOSTICS = [
    "main.c:3:5: error: expected ';' before '}' token",
    "src/lib/parse.cpp:120:17: fatal error: 'yaml.h' file not found",
    "./cmd/api/main.go:44:12: undefined: NewServer",
    'internal/store/db.go:10:2: "database/sql" imported and not used',
    'app/models.py:12: error: Incompatible return value type (got "int", expected "str")  [return-value]',
    "src/main/java/Foo.java:5: error: cannot find symbol",
    "src/ui/form.ts(12,5): error TS2345: Argument of type 'string' is not assignable to parameter",
    "src/ui/form.ts:12:5 - error TS2345: Argument of type 'string' is not assignable to parameter",
    r"C:\work\app\a.cpp(10): error C2065: 'count': undeclared identifier",
    "foo.cpp(12,5): fatal error C1083: Cannot open include file: 'x.h'",
    "main.go:10:2: Foo declared and not used",
]

NOT_ERRORS = [
    "src/main.rs:4:5: warning: unused variable: `x`",
    "app/models.py:12: note: See https://mypy.readthedocs.io/en/stable/",
    "main.go:12:3:\treturn nil, err",  # ripgrep --vimgrep: code after the column
    "main.go:12: found 3 matches",  # a line number without a column
    "the file docs.go:1:2: looks fine",  # not at the line's start
    "Found 0 errors in 12 files (checked 40 source files)",
    "- main.go:3:1: undefined: Foo",  # a bullet of a doc `cat` printed (an exploratory tester's)
    "main.go:12:5: ineffectual assignment to err (ineffassign)",  # linters' findings (a review's)
    "main.go:12:2: should replace loop with copy (S1001)",
    "go build gives ./main.go:44:12: undefined: Config",  # Go's has no severity: only at a line's start
]


@pytest.mark.parametrize("line", DIAGNOSTICS)
def test_a_located_diagnostic_is_an_error_with_its_place(line: str) -> None:
    assert errors.error_in_line(line) == line
    assert errors.may_hold_error(line)  # the prefilter lets it through
    assert list(common._error_lines(f"head\n{line}\ntail")) == [line]  # a clipped output keeps it


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (
            "CI says app.py:12: error: Incompatible return value type",
            "app.py:12: error: Incompatible return value type",
        ),
        (
            "Then mypy reported `app/models.py:12: error: Name x is not defined`.",
            "app/models.py:12: error: Name x is not defined",
        ),
        (
            "see src/x.ts:12:5 - error TS2345: Argument of type",
            "src/x.ts:12:5 - error TS2345: Argument of type",
        ),
        (
            "[ERROR] /app/src/main/java/App.java:[7,9] cannot find symbol",
            "/app/src/main/java/App.java:[7,9] cannot find symbol",
        ),
    ],
)
def test_a_diagnostic_quoted_in_a_sentence_is_an_error(line: str, error: str) -> None:
    """A user pasting CI's line or the agent quoting mypy: the diagnostic, from its place on."""
    assert errors.error_in_line(line) == error
    assert list(common._error_lines(f"head\n{line}\ntail")) == [line]  # a clipped output keeps it
    if not line.startswith("[ERROR]"):
        assert errors.error_in_line(line, strict=True) == error  # the agent's prose quotes it too


def test_a_planned_fix_is_no_fix() -> None:
    assert error_fixes.fix_sentences("I'll fix src/parse.c after lunch.") == []
    assert error_fixes.fix_sentences("We need to fix the import in app/x.py.") == []
    told = "After making these changes, you can run the server again to see if the issue is resolved."
    assert error_fixes.fix_sentences(told) == []
    doing = "Let's update the import statement in `server/server.js` to fix this issue."  # Aider, as it edits
    assert error_fixes.fix_sentences(doing) == [doing]
    fixed = "Fixed by pinning pydantic so that the build will pass."
    assert error_fixes.fix_sentences(fixed) == [fixed]  # a plan in a clause explaining the fix


@pytest.mark.parametrize("line", NOT_ERRORS)
def test_warnings_notes_and_code_lines_are_not_errors(line: str) -> None:
    assert errors.error_in_line(line) is None


def test_two_places_of_one_diagnostic_are_one_error() -> None:
    a, b = "pkg/a.go:10:2: undefined: Foo", "pkg/a.go:31:9: undefined: Foo"
    assert errors.shape(a) == errors.shape(b)


def _turn(i: int, role: str, text: str, kind: str, tool: str | None = None) -> Turn:
    t = Turn(role, text, kind, T0 + timedelta(minutes=i), i + 1, (i + 1) * 100)  # type: ignore[arg-type]
    t.tool_name = tool
    return t


def test_a_go_build_failure_and_its_fix_reach_the_entry() -> None:
    turns = [
        _turn(0, "user", "Wire the new HTTP server into cmd/api so it starts with the worker.", "message"),
        _turn(1, "assistant", "Bash go build ./...", "tool_call", "Bash"),
        _turn(
            2,
            "tool",
            "# example.com/api/cmd/api\n./cmd/api/main.go:44:12: undefined: NewServer",
            "tool_result",
        ),
        _turn(
            3,
            "assistant",
            'Edit {"file_path": "/src/api/cmd/api/main.go", "old_string": "NewServer(", "new_string": "server.New("}',
            "tool_call",
            "Edit",
        ),
        _turn(4, "tool", "The file /src/api/cmd/api/main.go has been updated.", "tool_result"),
        _turn(5, "assistant", "Bash go build ./...", "tool_call", "Bash"),
        _turn(6, "tool", "", "tool_result"),
        _turn(
            7,
            "assistant",
            "The build is clean now: main.go calls server.New from the server package.",
            "message",
        ),
    ]
    s = Session(agent="kim", session_id="s1", source=Path("/x.jsonl"), kind="claude", turns=turns)
    found = anchors.extract(s)
    errs = [a.text for a in found if a.type == "error"]
    assert any("main.go:44:12: undefined: NewServer" in e for e in errs), errs
    assert error_fixes.pair(turns) == [
        "`./cmd/api/main.go:44:12: undefined: NewServer` → edited `/src/api/cmd/api/main.go`"
    ]


def test_a_quoted_diagnostic_ends_with_its_sentence_and_code_strings_are_none() -> None:
    """A second exploratory round's: the sentence after a diagnostic quoted in prose was kept as
    part of the error (its fix inside it, so the error stayed unresolved); a test's string holding a
    diagnostic was an error."""
    said = (
        "The build failed with src/render.c:201:3: error: too few arguments to function 'draw_quad'. "
        "Added the missing alpha argument in src/render.c; it compiles."
    )
    want = "src/render.c:201:3: error: too few arguments to function 'draw_quad'."
    assert errors.error_in_line(said) == want
    assert errors.error_in_line(said, strict=True) == want
    for code in (
        '    assert parse("main.c:3:5: error: expected ; before } token")',
        "x = 'a.py:1: error: bad'",
    ):
        assert errors.error_in_line(code) is None, code
        assert errors.error_in_line(code, strict=True) is None, code


ESLINT = """
> app@1.0.0 lint
> eslint src

/home/u/app/src/index.js
  3:10  error    'foo' is defined but never used  no-unused-vars
  5:1   warning  Unexpected console statement      no-console
  9:3   error    Parsing error: Unexpected token }

/home/u/app/src/b.ts
  1:1  error  Missing return type on function  @typescript-eslint/explicit-function-return-type

✖ 4 problems (3 errors, 1 warning)
"""

RUSTC = """   Compiling demo v0.1.0 (/src/demo)
error[E0425]: cannot find value `count` in this scope
  --> src/main.rs:3:5
   |
3  |     count + 1
   |     ^^^^^ not found in this scope

warning: unused import: `std::fmt`
 --> src/lib.rs:1:5

error: could not compile `demo` (bin "demo") due to 1 previous error
"""


def test_eslint_findings_are_errors_at_their_file() -> None:
    """ESLint's default report names the file once above its findings: each error keeps it (a
    warning is none), and a clipped long output keeps the finding's line."""
    tool = _turn(0, "tool", ESLINT, "tool_result")
    assert errors.errors_in_turn(tool) == [
        "/home/u/app/src/index.js:3:10: error: 'foo' is defined but never used (no-unused-vars)",
        "/home/u/app/src/index.js:9:3: error: Parsing error: Unexpected token }",
        "/home/u/app/src/b.ts:1:1: error: Missing return type on function"
        " (@typescript-eslint/explicit-function-return-type)",
    ]
    assert list(common._error_lines("x\n  12:4  error  Unexpected any  no-explicit-any\ny")) == [
        "12:4  error  Unexpected any  no-explicit-any"
    ]
    # a finding whose block has lost its file line (a blank line above it) stays without one
    assert errors.errors_in_turn(
        _turn(0, "tool", "src/a.js\n\n  2:1  error  Bad thing here  rule-x", "tool_result")
    ) == ["2:1: error: Bad thing here (rule-x)"]


def test_a_rustc_error_keeps_the_place_printed_under_it() -> None:
    tool = _turn(0, "tool", RUSTC, "tool_result")
    assert errors.errors_in_turn(tool) == [
        "src/main.rs:3:5: error[E0425]: cannot find value `count` in this scope",
        'error: could not compile `demo` (bin "demo") due to 1 previous error',
    ]
    crlf = _turn(0, "tool", RUSTC.replace("\n", "\r\n"), "tool_result")
    assert errors.errors_in_turn(crlf) == errors.errors_in_turn(tool)


def test_a_failed_runs_progress_marks_are_no_error() -> None:
    """Claude Code marks a failed command's output as an error (``error: `` before its first line):
    pytest's progress line became the errors ``error: EEE`` and ``error: ....F.`` (an exploratory
    tester's; promoted to the wiki as known issues). The errors under it stay."""
    out = "error: EEE\n=== ERRORS ===\nE   ConnectionError: connection refused\nFAILED tests/t.py::x - boom"
    assert errors.errors_in_turn(_turn(0, "tool", out, "tool_result")) == [
        "ConnectionError: connection refused",
        "FAILED tests/t.py::x - boom",
    ]
    for line in ("error: ....F.", "error: FFsF", "error: ...."):
        assert errors.error_in_line(line) is None, line
    for line in ("error: ENOENT", "error: 404", "error: EACCES", "error: missing file"):
        assert errors.error_in_line(line) == line, line


def test_a_marked_failure_and_a_quoted_diagnostic_are_the_diagnostic_alone() -> None:
    """An exploratory tester's entry: Claude Code's failed-tool marker doubled mypy's line
    (`error: services/billing/queue.py:19: error: …`), a diagnostic the agent quoted in backticks
    took the sentence after its quote ("… is still unresolved."), and "the name error is fixed;
    the Optional[Job] error remains" was taken as the Optional[Job] error's fix."""
    diag = 'services/billing/queue.py:19: error: Name "Job" is not defined  [name-defined]'
    assert errors.error_in_line(f"error: {diag}") == diag
    quoted = f"The `{diag}` is still unresolved."
    assert errors.error_in_line(quoted, strict=True) == diag
    assert (
        error_fixes.fix_sentences("The name error is fixed; the Optional[Job] return-type error remains.")
        == []
    )
    assert error_fixes.fix_sentences("The flaky import is fixed and the remaining tests pass.") == [
        "The flaky import is fixed and the remaining tests pass."
    ]


def test_markers_pasted_many_times_are_bounded_and_one_word_errors_stay() -> None:
    """A review's: a line of 1,200 `error: ` markers raised RecursionError (the whole file was
    skipped on every run), and 40 of them took 16.9 s; `Error: EOF` was taken for progress marks."""
    import time

    t0 = time.process_time()
    turn = _turn(0, "user", "\n".join(["error: " * 1200] * 40), "message")
    errors.errors_in_turn(turn)
    assert time.process_time() - t0 < 2.0
    for line in ("Error: EOF", "Error: null", "error: EIO"):
        assert errors.error_in_line(line) == line
