"""Compiler and checker diagnostics at a place in a file are errors (gcc, clang, mypy, javac, tsc,
MSVC, Go): before, only ``error:`` at a line's start was one, so a session whose build failed in
any of these kept no error and no fix (a helper's run of ``go build`` left its memory empty)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scribed.compress import anchors, error_fixes, errors, fix_report
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
    # a test runner's failing test (an exploratory tester's Vitest and Jest runs were no error)
    "FAIL  src/Table.test.tsx > Table > sorts by due date",  # Vitest's report
    "● Table › sorts by due date",  # Jest's
    "● InvoiceList › totals › rounds half up",
    "FAIL: test_roundtrip (tests.test_codec.CodecTest.test_roundtrip)",  # unittest
    "× sorts by due date 12ms",  # Vitest's result list (weak: see test_a_runners_report_...)
    "✕ sorts by due date (18 ms)",  # Jest's
    "✖ handles leap years (1.2ms)",  # node:test
    "✗ renders the empty state [0.41ms]",  # bun
    "× Expected a semicolon",  # SWC (Next.js) prints its diagnostics so (a real Aider session's)
    "FAIL src/components/Table.test.tsx",  # Jest's suite
    "Tests:       1 failed, 6 passed, 7 total",  # Jest's tally
    "Test Suites: 2 failed, 5 passed, 7 total",
    "Test Files  1 failed | 2 passed (3)",  # Vitest's
    "Tests  1 failed | 23 passed (24)",
    # an HTTP client's failure
    "could not create pull request: HTTP 401: Bad credentials (https://api.github.com/graphql)",  # gh
    "gh: Resource not accessible by integration (HTTP 403)",
    "HTTP/1.1 500 Internal Server Error",
    "< HTTP/1.1 502 Bad Gateway",  # curl -v
    "HTTP/2 404",  # curl -I
    "curl: (22) The requested URL returned error: 404",
    "curl: (7) Failed to connect to localhost port 8080 after 0 ms: Connection refused",
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
    # a passing test, a clean tally, a test runner's other marks
    "✓ sorts by due date",
    " ✓ src/utils/money.test.ts  (12 tests) 8ms",
    "Tests  12 passed (12)",
    "Test Files  3 passed (3)",
    "Tests:       24 passed, 24 total",
    "Tests:       0 failed, 24 passed, 24 total",
    "● Console",  # Jest's console block: no test's path
    "FAIL",  # go test's last line: names nothing (its --- FAIL: line does)
    "✖ 4 problems (3 errors, 1 warning)",  # ESLint's count of its findings (each is an error)
    "❯ ./gen.sh > out.txt",  # a shell prompt's ❯ (Vitest's tree is indented)
    "❯ src/a.test.ts > Table > sorts",  # at column 0: a prompt, not Vitest's tree
    # HTTP: a number in prose, a server's log of a request it answered, a success
    "the 401 page renders",
    "We got HTTP 401 from the staging API yesterday",  # prose: no client's status line
    "GET /api/invoices 401 12ms",  # a dev server's log: the answer it gave, often the one wanted
    '127.0.0.1 - - [07/Dec/2026:10:00:00 +0000] "GET /favicon.ico HTTP/1.1" 404 153',
    "HTTP/1.1 200 OK",
    "HTTP/1.1 301 Moved Permanently",
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
    assert fix_report.fix_sentences("I'll fix src/parse.c after lunch.") == []
    assert fix_report.fix_sentences("We need to fix the import in app/x.py.") == []
    told = "After making these changes, you can run the server again to see if the issue is resolved."
    assert fix_report.fix_sentences(told) == []
    doing = "Let's update the import statement in `server/server.js` to fix this issue."  # Aider, as it edits
    assert fix_report.fix_sentences(doing) == [doing]
    fixed = "Fixed by pinning pydantic so that the build will pass."
    assert fix_report.fix_sentences(fixed) == [fixed]  # a plan in a clause explaining the fix


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
    assert error_fixes.pair(turns) == [  # the edit's fix says what it wrote (exploratory test 44)
        "`./cmd/api/main.go:44:12: undefined: NewServer` → edited `/src/api/cmd/api/main.go`: `server.New(`"
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
        fix_report.fix_sentences("The name error is fixed; the Optional[Job] return-type error remains.")
        == []
    )
    assert fix_report.fix_sentences("The flaky import is fixed and the remaining tests pass.") == [
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


JEST = """FAIL src/components/Table.test.tsx
  Table
    ✓ renders rows (4 ms)
    ✕ sorts by due date (18 ms)

  ● Table › sorts by due date

    expect(received).toEqual(expected) // deep equality

Tests:       1 failed, 6 passed, 7 total
"""

VITEST = """ RUN  v1.3.1 /repo/apps/web

 ✓ src/utils/money.test.ts  (12 tests) 8ms
 ❯ src/components/Table.test.tsx  (7 tests | 1 failed) 63ms
   × sorts by due date
     → expected [ '2026-01-03', '2026-01-01' ] to deeply equal [ '2026-01-01', '2026-01-03' ]

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/components/Table.test.tsx > Table > sorts by due date
AssertionError: expected [ '2026-01-03', '2026-01-01' ] to deeply equal [ '2026-01-01', '2026-01-03' ]
 ❯ src/components/Table.test.tsx:42:23

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 18 passed (19)
"""

# An exploratory tester's Vitest run (W1): the failing test named in the tree, no report under it.
VITEST_TREE = """ RUN  v1.3.1 /repo/apps/web

 ❯ src/components/Table.test.tsx  (7 tests | 1 failed) 61ms
   ❯ src/components/Table.test.tsx > Table > sorts by due date
     → expected [ '2026-01-03', '2026-01-01' ] to deeply equal [ '2026-01-01', '2026-01-03' ]

 Test Files  1 failed | 2 passed (3)
      Tests  1 failed | 23 passed (24)
"""


@pytest.mark.parametrize(
    ("out", "want"),
    [
        (JEST, ["● Table › sorts by due date"]),
        (
            VITEST,
            [
                "FAIL  src/components/Table.test.tsx > Table > sorts by due date",
                "AssertionError: expected [ '2026-01-03', '2026-01-01' ] to deeply equal [ '2026-01-01', "
                "'2026-01-03' ]",
            ],
        ),
        (VITEST_TREE, ["❯ src/components/Table.test.tsx > Table > sorts by due date"]),
        # the tail of a run: its tally is all it says
        (
            " Test Files  1 failed | 2 passed (3)\n      Tests  1 failed | 23 passed (24)\n",
            [
                "Test Files  1 failed | 2 passed (3)",
                "Tests  1 failed | 23 passed (24)",
            ],
        ),
        (
            "--- FAIL: TestBurst (0.00s)\n    x_test.go:38: got 21, want 20\nFAIL\nFAIL\tacme/api\t0.01s\n",
            ["--- FAIL: TestBurst (0.00s)"],
        ),
        ("E   KeyError: 'x'\n=== 1 failed, 4 passed in 0.3s ===", ["KeyError: 'x'"]),
        # the exception under its module: the module stays, pytest's "E" goes
        (
            'E       psycopg.errors.UndefinedTable: relation "users" does not exist\n=== 1 failed ===',
            ['psycopg.errors.UndefinedTable: relation "users" does not exist'],
        ),
        # an error line shaped like a tally is no tally
        (
            "Error: 2 failed uploads\n  ● Upload › retries\n",
            ["Error: 2 failed uploads", "● Upload › retries"],
        ),
    ],
)
def test_a_runners_report_names_the_failing_test_and_its_tally_adds_nothing(
    out: str, want: list[str]
) -> None:
    """A test runner's failure is the line naming the failing test (its report's header, else its
    result list's cross), and an assertion shaped as an exception; its suite's ``FAIL`` line and
    its tally are errors only where the output states nothing more (a run cut to its last lines)."""
    assert errors.errors_in_turn(_turn(0, "tool", out, "tool_result")) == want
    clipped = "\n".join(["x"] * 50 + [out] + ["y"] * 50)  # a long output keeps the lines in its middle
    kept = list(common._error_lines(clipped))
    assert all(any(w in k for k in kept) for w in want), kept


def test_a_long_run_of_test_marks_is_read_in_linear_time() -> None:
    """Each new pattern is bounded: a line of 50,000 test-path separators or status marks costs
    no more than its length."""
    import time

    for line in ("FAIL  a.test.ts" + " > x" * 25_000, "● a" + " › b" * 25_000, "x: " * 30_000 + "HTTP 401"):
        t = time.process_time()
        errors.error_in_line(line)
        assert time.process_time() - t < 0.5, line[:40]


@pytest.mark.parametrize(
    ("out", "want"),
    [
        (
            "---- s3_it::uploads stdout ----\nthread 's3_it::uploads' panicked at tests/s3_it.rs:88:5:\n"
            'assertion `left == right` failed\n  left: "text/plain"\n',
            "tests/s3_it.rs:88:5: panicked: assertion `left == right` failed",
        ),
        (
            "thread 'main' panicked at src/export.rs:20:24:\nindex out of bounds: the len is 0 but the index is 0\n",
            "src/export.rs:20:24: panicked: index out of bounds: the len is 0 but the index is 0",
        ),
        (
            "thread 'main' panicked at 'called `Option::unwrap()` on a `None` value', src/main.rs:4:37\n",
            "panicked at 'called `Option::unwrap()` on a `None` value', src/main.rs:4:37",
        ),
    ],
)
def test_a_rust_panic_is_an_error_with_its_place_and_message(out: str, want: str) -> None:
    """An exploratory tester's Codex session: a failing integration test's panic was no error (only
    cargo's "error: test failed, to rerun …" was)."""
    assert errors.errors_in_turn(_turn(0, "tool", out, "tool_result"))[0] == want
