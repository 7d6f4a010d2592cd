"""Tool boilerplate is no key point, a tool call's JSON is no "last action", one failure is one
error (exploratory test 44).

A test runner's header names its environment (interpreter, versions, root, config), not the work; a
tool's confirmation of a call names only what the call named; a passing test's line is the run's
progress; a shell call's key point is its command, not the tool's name. The live hot file's last
actions summarise a call whose arguments are JSON by its tool and file (or its plan), and a shell
call by its command and the run's result. A failing test's summary line restating the assertion
above it is the same error, listed once, and an edit's fix says the line it wrote. Held-out cases
are phrasings and tools the fix was not written from; the misses are ``xfail`` with the reason.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scribed.compress import error_fixes, errors, units
from scribed.models import Session, Turn
from scribed.session.door import redact_session
from scribed.tiers import live

T0 = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)


def _turns(*spec: tuple[str, str] | tuple[str, str, str]) -> list[Turn]:
    out = []
    for i, t in enumerate(spec):
        role, text = t[0], t[1]
        kind = t[2] if len(t) > 2 else ("tool_result" if role == "tool" else "message")  # type: ignore[misc]
        turn = Turn(role, text, kind, T0 + timedelta(minutes=i), i + 1, (i + 1) * 100)  # type: ignore[arg-type]
        if kind in ("tool_call", "tool_result"):
            turn.tool_name = (
                text.split(" ", 1)[0] if kind == "tool_call" else (out[-1].tool_name if out else None)
            )
        out.append(turn)
    return out


def _call(args: str, tool: str = "Bash") -> tuple[str, str, str]:
    return ("assistant", f"{tool} {args}", "tool_call")


def _pool(*spec: tuple[str, str] | tuple[str, str, str]) -> list[str]:
    return [u.text for u in units.split(_turns(*spec)).units]


PYTEST = """============================= test session starts ==============================
platform linux -- Python 3.12.4, pytest-8.3.2, pluggy-1.5.0
rootdir: /home/dana/src/kelpie
configfile: pyproject.toml
collected 312 items

tests/test_accessions.py ........................................... [ 13%]
tests/test_export.py .......F................................ [ 26%]

=================================== FAILURES ===================================
___________________________ test_viability_rounding ____________________________
    def test_viability_rounding():
>       assert export_row(ACC)["viability_pct"] == "87.50"
E       AssertionError: assert '87.5' == '87.50'

tests/test_export.py:41: AssertionError
=========================== short test summary info ============================
FAILED tests/test_export.py::test_viability_rounding - AssertionError: assert '87.5' == '87.50'
======================== 1 failed, 311 passed in 4.87s ========================="""


def _without(got: list[str], *starts: str) -> list[str]:
    return [g for g in got if g.startswith(starts)]


# --- A. a test runner's header ------------------------------------------------------------------
def test_a_test_runners_header_is_no_key_point() -> None:
    got = _pool(("user", "Add the CSV export."), _call("pytest -q tests/"), ("tool", PYTEST))
    assert not _without(got, "platform", "rootdir", "configfile"), got
    assert any("test_viability_rounding" in g for g in got), got  # the body stays


HELD_OUT_HEADERS = {
    "pytest -v, other plugins": (
        "============ test session starts ============\n"
        "platform darwin -- Python 3.11.9, pytest-7.4.4, pluggy-1.3.0 -- /usr/local/bin/python3\n"
        "cachedir: .pytest_cache\n"
        "rootdir: /Users/ola/work/quarry\n"
        "plugins: anyio-4.4.0, cov-5.0.0, xdist-3.6.1\n"
        "collecting ... collected 48 items\n\n"
        + "\n".join(f"quarry/tests/test_dig_{n}.py::test_dig FAILED" for n in ("sand", "clay", "rock"))
        + "\nquarry/tests/test_survey.py:88: KeyError\n"
        "=========== 3 failed, 45 passed in 2.10s ==========="
    ),
    "npm run test (jest)": (
        "> quarry-web@2.4.1 test\n> jest --ci\n\n"
        " FAIL  src/survey.test.js\n  ● survey › maps the grid\n\n"
        "    expect(received).toEqual(expected)\n\n"
        "Tests:       1 failed, 14 passed, 15 total\nTime:        2.345 s"
    ),
}


@pytest.mark.parametrize("name", sorted(HELD_OUT_HEADERS))
def test_held_out_runner_headers_are_no_key_points(name: str) -> None:
    got = _pool(("user", "Run the tests."), _call("make test"), ("tool", HELD_OUT_HEADERS[name]))
    header = ("platform", "cachedir", "rootdir", "plugins", "> quarry-web")
    assert not _without(got, *header), got
    assert any("survey" in g or "test_dig" in g for g in got), got


@pytest.mark.parametrize(
    "output",
    [
        pytest.param(
            "go: downloading github.com/stretchr/testify v1.9.0\n"
            "go: downloading gopkg.in/yaml.v3 v3.0.1\n"
            "--- FAIL: TestSurveyGrid (0.00s)\n    survey_test.go:41: got 87.5, want 87.50\nFAIL",
            id="go test: module downloads",
        ),
        pytest.param(
            "   Compiling quarry v0.3.0 (/home/ola/src/quarry)\n"
            "    Finished `test` profile [unoptimized + debuginfo] target(s) in 3.42s\n"
            "     Running unittests src/lib.rs (target/debug/deps/quarry-3f2a1b0c9d8e7f6a)\n"
            "running 3 tests\ntest survey::tests::grid ... FAILED\n"
            "test result: FAILED. 2 passed; 1 failed; 0 ignored",
            id="cargo test: compiling and running",
            marks=pytest.mark.xfail(
                reason="cargo's progress verbs name the crate's root and its test binary: a line of "
                "the work's own paths, not told from the run's results by what it carries",
                strict=True,
            ),
        ),
    ],
)
def test_held_out_build_progress_is_no_key_point(output: str) -> None:
    got = _pool(("user", "Run the tests."), _call("make test"), ("tool", output))
    assert not _without(got, "go: downloading", "Compiling", "Running unittests"), got


def test_a_version_alone_and_a_status_listing_stay() -> None:
    """What the rule must not take: ``python --version``'s answer (the whole output, no body after
    it), and ``git status``'s modified files (not at the head of the output)."""
    got = _pool(
        ("user", "Which Python is this?"),
        _call("python --version"),
        ("tool", "Python 3.11.4"),
        _call("git status"),
        ("tool", "On branch main\nChanges not staged for commit:\n\tmodified:   src/quarry/survey.py\n"),
    )
    assert "Python 3.11.4" in got, got
    assert any("src/quarry/survey.py" in g for g in got), got


# --- A. a tool's confirmation, a passing test's line, the shell tool's name ----------------------
def test_a_tools_confirmation_of_its_call_is_no_key_point() -> None:
    got = _pool(
        ("user", "Add the CSV export."),
        _call('{"file_path":"/home/dana/src/kelpie/tests/test_export.py","content":"x = 1\\n"}', "Write"),
        ("tool", "File created successfully at: /home/dana/src/kelpie/tests/test_export.py"),
        _call(
            '{"file_path":"/home/dana/src/kelpie/kelpie/cli.py","old_string":"a","new_string":"b"}', "Edit"
        ),
        ("tool", "The file /home/dana/src/kelpie/kelpie/cli.py has been updated."),
    )
    assert not [g for g in got if "successfully" in g or "has been updated" in g], got


@pytest.mark.parametrize(
    ("call", "output"),
    [
        (
            _call(
                "*** Begin Patch\n*** Update File: src/quarry/survey.py\n@@\n-a\n+b\n*** End Patch",
                "apply_patch",
            ),
            "Success. Updated the following files:\nM src/quarry/survey.py",
        ),
        (
            _call('{"target_file":"src/quarry/grid.ts","code_edit":"export const N = 4;"}', "edit_file"),
            "Successfully edited src/quarry/grid.ts",
        ),
        (_call("git checkout -b feat/survey-grid"), "Switched to a new branch 'feat/survey-grid'"),
        (
            _call('{"path":"docs/survey.md","content":"# Survey"}', "create_file"),
            "Wrote 1 line to docs/survey.md",
        ),
    ],
)
def test_held_out_confirmations_are_no_key_points(call: tuple[str, str, str], output: str) -> None:
    got = _pool(("user", "Map the survey grid."), call, ("tool", output))
    assert not [g for g in got if g.startswith(("Success", "Switched", "Wrote", "M src"))], got


def test_a_confirmation_naming_something_new_stays() -> None:
    got = _pool(
        ("user", "Commit it."),
        _call("git commit -am 'Add the survey grid'"),
        ("tool", "[feat/survey-grid 3e1f0a2] Add the survey grid\n 2 files changed, 40 insertions(+)"),
    )
    assert any("3e1f0a2" in g for g in got), got


def test_a_passing_tests_line_is_no_key_point() -> None:
    out = PYTEST.replace(
        "tests/test_accessions.py ........................................... [ 13%]",
        "tests/test_accessions.py::test_accessions_case_000 PASSED [ 0%]",
    )
    got = _pool(("user", "Add the CSV export."), _call("pytest -v tests/"), ("tool", out))
    assert not [g for g in got if "PASSED" in g], got


_NO_PASS_MARK = pytest.mark.xfail(
    reason="only pytest's lines end in the share of the run done, which the pool's existing '%]' "
    "prefilter finds; checking every tool line's end for another runner's pass mark cost 1-2% of "
    "the unit pool's time (the throughput benchmark's hot loop)",
    strict=True,
)


@pytest.mark.parametrize(
    "output",
    [
        pytest.param(
            "=== RUN   TestSurveyGrid\n--- PASS: TestSurveyGrid (0.00s)\n=== RUN   TestDig\n"
            "--- FAIL: TestDig (0.01s)\nFAIL",
            id="go test -v",
            marks=_NO_PASS_MARK,
        ),
        pytest.param(
            "running 2 tests\ntest survey::tests::grid_maps_cells ... ok\ntest dig::tests::depth ... FAILED\n",
            id="cargo test",
            marks=_NO_PASS_MARK,
        ),
        pytest.param(
            "PASS src/survey.test.js\n  ✓ maps the grid cells (5 ms)\n  ✕ digs to depth (3 ms)\n", id="jest"
        ),
        pytest.param(
            "test_grid_maps_cells (quarry.tests.test_survey.SurveyTest) ... ok\n"
            "test_depth (quarry.tests.test_dig.DigTest) ... FAIL\n",
            id="unittest -v",
            marks=_NO_PASS_MARK,
        ),
        pytest.param(
            "============ test session starts ============\n"
            "quarry/tests/test_survey.py::test_grid_maps_cells PASSED          [ 50%]\n"
            "quarry/tests/test_dig.py::test_depth FAILED                       [100%]\n",
            id="pytest -v, other tests",
        ),
    ],
)
def test_held_out_passing_test_lines_are_no_key_points(output: str) -> None:
    got = _pool(("user", "Run the tests."), _call("make test"), ("tool", output))
    assert not [
        g for g in got if "PASSED" in g or "PASS:" in g or g.endswith(("... ok", "ok`")) or "✓" in g
    ], got


def test_a_shell_calls_key_point_is_its_command() -> None:
    got = _pool(("user", "Run the tests."), _call('pytest -q tests/\n{"description":"Run the suite"}'))
    assert "`pytest -q tests/`" in got and not [g for g in got if "Bash" in g], got


def test_held_out_shell_tool_names() -> None:
    got = _pool(
        ("user", "Run the tests."),
        _call("bash -lc 'cargo test -p quarry'", "shell"),
        _call("npm run lint", "run_terminal_cmd"),
    )
    assert not [g for g in got if g.startswith(("`shell", "`run_terminal_cmd"))], got


# --- B. the live hot file's last actions ---------------------------------------------------------
def _actions(*spec: tuple[str, str] | tuple[str, str, str]) -> list[str]:
    s = Session(agent="juno", session_id="s-1", source=Path("/x/a.jsonl"), kind="claude", turns=_turns(*spec))
    text = live.render_live(redact_session(s), "claude")
    return text.split("Last actions:")[1].split("Blockers:")[0].strip().splitlines()


TODOS = (
    '{"todos":[{"content":"Rewrite export_csv() with csv.DictWriter","status":"completed",'
    '"activeForm":"Rewriting"},{"content":"Remove pandas from requirements-lambda.txt","status":"in_progress",'
    '"activeForm":"Removing"},{"content":"Add an XLSX export","status":"pending","activeForm":"Adding"}]}'
)


def test_last_actions_summarise_json_calls_by_tool_and_file() -> None:
    got = _actions(
        ("user", "Switch the export to csv."),
        _call(TODOS, "TodoWrite"),
        ("tool", "Todos have been modified successfully."),
        _call(
            '{"file_path":"/home/dana/src/kelpie/docs/cli.md","old_string":"## export","new_string":"x"}',
            "Edit",
        ),
        ("tool", "The file /home/dana/src/kelpie/docs/cli.md has been updated."),
        _call('pytest -q tests/\n{"description":"Run the suite"}'),
        ("tool", "......\n312 passed in 4.66s"),
    )
    assert not [a for a in got if "{" in a or '"' in a], got
    assert any("docs/cli.md" in a and "Edit" in a for a in got), got
    assert any("Remove pandas from requirements-lambda.txt" in a and "1 of 3" in a for a in got), got
    assert any("ran pytest -q tests/" in a and "312 passed" in a for a in got), got
    assert not [a for a in got if "ran Bash" in a], got


@pytest.mark.parametrize(
    ("call", "shows"),
    [
        (_call('{"pattern":"def export_","path":"src/quarry","glob":"*.py"}', "Grep"), "def export_"),
        (
            _call(
                '{"target_file":"src/quarry/grid.ts","code_edit":"export const N = 4;\\n// ..."}', "edit_file"
            ),
            "src/quarry/grid.ts",
        ),
        (
            _call(
                '{"plan":[{"step":"Map the grid","status":"completed"},{"step":"Dig","status":"in_progress"}]}',
                "update_plan",
            ),
            "Dig",
        ),
        (
            _call(
                "*** Begin Patch\n*** Update File: src/quarry/survey.py\n@@\n-a\n+b\n*** End Patch",
                "apply_patch",
            ),
            "src/quarry/survey.py",
        ),
        (
            _call(
                '{"notebook_path":"/w/quarry/analysis.ipynb","cell_id":"c3","new_source":"df.plot()"}',
                "NotebookEdit",
            ),
            "analysis.ipynb",
        ),
        (
            _call(
                '{"url":"https://docs.rs/serde/latest/serde/","prompt":"How do I derive Serialize for an enum with data?"}',
                "WebFetch",
            ),
            "docs.rs/serde",
        ),
    ],
    ids=["Grep", "Cursor edit_file", "Codex update_plan", "Codex apply_patch", "NotebookEdit", "WebFetch"],
)
def test_held_out_json_calls_read_as_actions(call: tuple[str, str, str], shows: str) -> None:
    got = _actions(("user", "Map the survey grid."), call)
    assert got and shows in got[0] and '{"' not in got[0] and "***" not in got[0], got


# --- C. one failure, one error ---------------------------------------------------------------------
def test_a_summary_line_restating_the_assertion_is_one_error() -> None:
    turns = _turns(
        ("user", "Add the CSV export."),
        _call("pytest -q tests/"),
        ("tool", PYTEST),
        _call(
            '{"file_path":"/home/dana/src/kelpie/kelpie/export.py","old_string":"a","new_string":"b"}', "Edit"
        ),
        _call("pytest -q tests/"),
        ("tool", "312 passed in 4.66s"),
    )
    got = error_fixes.pair(turns)
    assert len(got) == 1 and "test_viability_rounding" in got[0], got


@pytest.mark.parametrize(
    "output",
    [
        "E   ModuleNotFoundError: No module named 'yaml'\n"
        "=========================== short test summary info ============================\n"
        "ERROR tests/test_config.py - ModuleNotFoundError: No module named 'yaml'\n"
        "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
        "E       KeyError: 'depth'\n\nquarry/survey.py:88: KeyError\n"
        "FAILED quarry/tests/test_survey.py::test_grid[sand] - KeyError: 'depth'\n"
        "========= 1 failed, 12 passed in 0.40s =========",
    ],
    ids=["pytest collection error", "pytest parametrized KeyError"],
)
def test_held_out_restated_errors_are_one(output: str) -> None:
    got = errors.errors_in_turn(_turns(("tool", output, "tool_result"))[0])
    restated = [e for e in got if any(e != o and errors.shape(e) in errors.shape(o) for o in got)]
    assert not restated, got


EDIT_FIX = (
    '{"file_path":"/home/dana/src/kelpie/kelpie/export.py","old_string":"df.to_csv(path, index=False)",'
    '"new_string":"df.to_csv(path, index=False, float_format=\'%.2f\')"}'
)


def test_an_edits_fix_says_what_it_wrote() -> None:
    turns = _turns(
        ("user", "Add the CSV export."),
        _call("pytest -q tests/"),
        ("tool", PYTEST),
        _call(EDIT_FIX, "Edit"),
        _call("pytest -q tests/"),
        ("tool", "312 passed in 4.66s"),
    )
    got = error_fixes.pair(turns)
    assert got and "`df.to_csv(path, index=False, float_format='%.2f')`" in got[0], got


@pytest.mark.parametrize(
    ("call", "wrote"),
    [
        (
            _call(
                "*** Begin Patch\n*** Update File: quarry/survey.py\n@@ def depth(row):\n"
                "-    return row['depth']\n+    return row.get('depth', 0)\n*** End Patch",
                "apply_patch",
            ),
            "return row.get('depth', 0)",
        ),
        (
            _call(
                '{"file_path":"quarry/survey.py","edits":[{"old_string":"row[\'depth\']",'
                '"new_string":"row.get(\'depth\', 0)"}]}',
                "MultiEdit",
            ),
            "row.get('depth', 0)",
        ),
        (
            _call(
                '{"path":"quarry/survey.py","old_str":"row[\'depth\']","new_str":"row.get(\'depth\', 0)"}',
                "str_replace",
            ),
            "row.get('depth', 0)",
        ),
        pytest.param(
            _call(
                '{"target_file":"quarry/survey.py","code_edit":"// ... existing code ...\\n'
                "    return row.get('depth', 0)\\n// ... existing code ...\"}",
                "edit_file",
            ),
            "return row.get('depth', 0)",
            marks=pytest.mark.xfail(
                reason="Cursor's code_edit is the new text with the old elided by comments: no old text "
                "to tell the written line from, and its first line is the elision marker",
                strict=True,
            ),
        ),
    ],
    ids=["Codex apply_patch", "MultiEdit", "str_replace", "Cursor edit_file"],
)
def test_held_out_edit_fixes_say_what_they_wrote(call: tuple[str, str, str], wrote: str) -> None:
    turns = _turns(
        ("user", "Fix the survey."),
        _call("pytest -q"),
        (
            "tool",
            "E       KeyError: 'depth'\nquarry/survey.py:88: KeyError\n==== 1 failed, 12 passed in 0.40s ====",
        ),
        call,
        _call("pytest -q"),
        ("tool", "13 passed in 0.38s"),
    )
    got = error_fixes.pair(turns)
    assert got and wrote in got[0], got


def test_a_tools_own_banner_is_no_key_point_but_a_version_asked_for_is() -> None:
    """On the real-data set 34 Aider entries' first key point was "Aider v0.57.1", the banner
    Aider prints after its start-up prompts (mid-output, so no runner's header); the line naming
    the tool by its own name and a version is none. A shell's answer to `python --version` is."""
    banner = (
        "Open documentation url for more info? (Y)es/(N)o/(D)on't ask again [Yes]: y\nAider v0.84.0\n"
        "Model: qwen3-235b-a22b with editor-diff edit format\nGit repo: ../.git with 154 files"
    )
    turn = Turn("tool", banner, "tool_result", T0, 1, 100, "aider")
    assert not any("Aider v0.84.0" in u.text for u in units.split([turn]).units)
    asked = Turn("tool", "Python 3.12.4 (main, Jun  6 2024)", "tool_result", T0, 2, 200, "Bash")
    assert any("Python 3.12.4" in u.text for u in units.split([asked]).units)
