"""What the extractive compressor keeps: its budget spent on facts, errors paired with their own fixes,
the real request as the goal, files and commands without duplicates, nothing cut mid-token."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from scribed.compress import (
    anchor_text,
    anchors,
    command_line,
    entry,
    entry_fit,
    entry_guard,
    error_fixes,
    tool_lines,
    units,
)
from scribed.compress.extractive import ExtractiveCompressor
from scribed.config import CompressCfg
from scribed.core.budget import entry_budget
from scribed.models import Session, Summary, Turn

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _turns(*spec: tuple[str, str, str] | tuple[str, str]) -> list[Turn]:
    out = []
    for i, t in enumerate(spec):
        role, text = t[0], t[1]
        kind = t[2] if len(t) > 2 else ("tool_result" if role == "tool" else "message")  # type: ignore[misc]
        out.append(Turn(role, text, kind, T0 + timedelta(minutes=i), i + 1, (i + 1) * 100))  # type: ignore[arg-type]
    return out


def _session(turns: list[Turn]) -> Session:
    return Session(agent="kim", session_id="s1", source=Path("/x.md"), kind="markdown", turns=turns)


def _render(s: Session, bytes_in: int) -> tuple[str, float]:
    found = anchors.extract(s)
    budget = entry_budget(CompressCfg(), bytes_in, found)
    res = ExtractiveCompressor().compress(s, found, budget)
    meta = entry.EntryMeta(
        "e-0123456789ab",
        "kim",
        "s1",
        "x.md",
        "markdown",
        T0,
        1,
        len(s.turns),
        len(s.turns),
        "0" * 64,
        "extractive",
        bytes_in,
    )
    summ = entry_fit.fit_with_room(res.summary, found, meta, budget, int(budget * 1.15))
    summ, rec = entry_guard.guard(summ, found, meta, int(budget * 1.15))
    return entry.render(summ, meta), rec


def test_two_errors_two_fixes_pair_each_with_its_own() -> None:
    turns = _turns(
        ("user", "Make the importer tests pass on CI."),
        ("assistant", "pytest tests/test_importer.py", "tool_call"),
        ("tool", "E   KeyError: 'encoding'\n=== 1 failed, 4 passed in 0.3s ==="),
        (
            "assistant",
            "The loader read a missing key; fixed by defaulting encoding to utf-8 in importer/load.py.",
        ),
        ("assistant", "npm run build", "tool_call"),
        ("tool", "error TS2304: nothing here\nerror: Cannot find module 'left-pad'"),
        ("assistant", "Added left-pad to package.json dependencies, which resolved the missing module."),
    )
    pairs = error_fixes.pair(turns)
    joined = "\n".join(pairs)
    assert any("KeyError: 'encoding'" in p and "defaulting encoding to utf-8" in p for p in pairs), joined
    assert any("Cannot find module 'left-pad'" in p and "Added left-pad" in p for p in pairs), joined
    assert not any("KeyError" in p and "left-pad" in p.split("→")[1] for p in pairs), joined


def _call(command: str, tool: str = "Bash") -> tuple[str, str, str]:
    return ("assistant", f"{tool} {command}", "tool_call")


def _named(turns: list[Turn]) -> list[Turn]:
    """Tool calls carry their tool's name, as the adapters give it (the first word of the text)."""
    for t in turns:
        if t.kind == "tool_call":
            t.tool_name = t.text.split(" ", 1)[0]
    return turns


def _traceback(path: str, module: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/runpy.py", line 88, in _run_code\n    exec(code, run_globals)\n'
        f'  File "/srv/tally/{path}", line 3, in <module>\n    import {module}\n'
        f"ModuleNotFoundError: No module named '{module}'"
    )


def _pip(pkg: str, version: str) -> str:
    return (
        f"Collecting {pkg}\n  Downloading {pkg}-{version}-py3-none-any.whl (64 kB)\n"
        f"Installing collected packages: {pkg}\nSuccessfully installed {pkg}-{version}"
    )


def _two_module_errors() -> list[Turn]:
    """Issue 30's shape: two different errors of one exception type, fixed by two different changes
    (a command, then an edit), the failing program run again between them."""
    return _named(
        _turns(
            (
                "user",
                "The CLI crashes on startup after the dependency bump; get `tally report` working again.",
            ),
            ("assistant", "Let me reproduce it first."),
            _call("python -m tally report --month 2026-10"),
            ("tool", _traceback("tally/cli.py", "yaml")),
            ("assistant", "The config loader imports PyYAML, which the bump dropped from the lock file."),
            _call("pip install pyyaml"),
            ("tool", _pip("PyYAML", "6.0.2")),
            _call("python -m tally report --month 2026-10"),
            ("tool", _traceback("tally/report.py", "requests")),
            (
                "assistant",
                "Now the report module fails on `requests`, a transitive dependency of the old httpx pin.",
            ),
            _call('{"file_path": "/srv/tally/pyproject.toml", "new_string": "requests>=2.32"}', "Edit"),
            ("tool", "The file /srv/tally/pyproject.toml has been updated."),
            _call("pip install -e ."),
            ("tool", _pip("requests", "2.32.3")),
            _call("python -m tally report --month 2026-10"),
            ("tool", "Report written to out/report-2026-10.csv (42 rows)"),
            (
                "assistant",
                "Both modules are installed and `requests` is declared; `tally report` runs again.",
            ),
        )
    )


def test_two_errors_of_one_type_each_keep_their_own_fix_in_the_entry() -> None:
    """Before issue 30 the second error was taken for the first one recurring (the quoted module
    name was normalised away), so the entry listed one error, and a command was never a fix."""
    turns = _two_module_errors()
    assert error_fixes.pair(turns) == [
        "`ModuleNotFoundError: No module named 'yaml'` → ran `pip install pyyaml`",
        # the edit's fix says what it wrote (exploratory test 44)
        "`ModuleNotFoundError: No module named 'requests'` → edited `/srv/tally/pyproject.toml`: `requests>=2.32`",
    ]
    text, _ = _render(_session(turns), 6_000)  # a small session: its entry's budget is tight
    section = text.split("#### Errors → fixes\n", 1)[1].split("\n####", 1)[0]
    assert "'yaml'` → ran `pip install pyyaml`" in section, text
    assert "'requests'` → edited `/srv/tally/pyproject.toml`" in section, text


def test_each_error_of_one_failure_takes_the_change_that_names_it() -> None:
    """Two failures in one test run, fixed by two edits in the opposite order: each edit goes to
    the error whose names it carries, not both to whichever came first."""
    turns = _named(
        _turns(
            ("user", "CI is red on the billing branch."),
            _call("pytest -q tests/billing"),
            (
                "tool",
                "FAILED tests/billing/test_invoice.py::test_totals - KeyError: 'currency'\n"
                "FAILED tests/billing/test_refund.py::test_partial - TypeError: unsupported operand type(s)\n"
                "=== 2 failed, 31 passed in 1.92s ===",
            ),
            (
                "assistant",
                "The partial refund adds a Decimal to a float in refund.py; I cast it in `partial_amount`.",
            ),
            ("assistant", "The invoice fixture lacked a currency, so I added `currency` to conftest.py."),
            _call("pytest -q tests/billing"),
            ("tool", "33 passed in 1.80s"),
        )
    )
    pairs = error_fixes.pair(turns)
    assert len(pairs) == 2, pairs
    assert (
        pairs[0].startswith("`FAILED tests/billing/test_invoice.py::test_totals")
        and "conftest.py" in pairs[0]
    )
    assert (
        pairs[1].startswith("`FAILED tests/billing/test_refund.py::test_partial")
        and "partial_amount" in pairs[1]
    )


def test_the_failing_test_line_under_an_error_shares_its_fix_not_a_later_unrelated_change() -> None:
    """The errors one turn shows are one failure: the failing-test line under a KeyError takes the
    fix that names the KeyError, not the next change the session makes about something else (the
    demo paired `FAILED …::test_burst` with "The config also had a key in .env.example, which I
    replaced")."""
    turns = _named(
        _turns(
            ("user", "Rate limiting breaks the burst test."),
            _call("pytest tests/test_ratelimit.py -x"),
            (
                "tool",
                "E   KeyError: 'X-Api-Key' header missing in RateLimiter.check\n"
                "FAILED tests/test_ratelimit.py::test_burst",
            ),
            (
                "assistant",
                "The failure `KeyError: 'X-Api-Key'` in RateLimiter.check was fixed by falling back to "
                "the client IP. The sample config also had a real token in .env.example, which I replaced "
                "with a placeholder.",
            ),
        )
    )
    pairs = error_fixes.pair(turns)
    assert len(pairs) == 2, pairs
    assert all("client IP" in p and ".env.example" not in p for p in pairs), pairs


def test_a_command_that_names_nothing_is_a_fix_once_the_failing_program_runs_clean() -> None:
    turns = _named(
        _turns(
            ("user", "The API won't start locally."),
            _call("uvicorn app.main:app"),
            ("tool", 'ERROR: relation "accounts" does not exist'),
            _call("grep -rn accounts app/models.py"),
            ("tool", "12:class Account(Base):"),
            _call("alembic upgrade head"),
            ("tool", "INFO  [alembic.runtime.migration] Running upgrade  -> 4f1c, create accounts"),
            _call("uvicorn app.main:app"),
            ("tool", "Application startup complete."),
        )
    )
    assert error_fixes.pair(turns) == [
        '`ERROR: relation "accounts" does not exist` → ran `alembic upgrade head`'
    ]


def test_n_distinct_errors_give_n_lines_and_a_read_is_never_a_fix() -> None:
    modules = ["yaml", "requests", "rich", "httpx", "attrs"]
    spec: list[tuple[str, str] | tuple[str, str, str]] = [("user", "Get the CLI running.")]
    for m in modules:
        spec += [
            _call("python -m tally"),
            ("tool", _traceback("tally/cli.py", m)),
            _call(f"grep -rn {m} tally"),
        ]
        spec += [("tool", f"tally/cli.py:3:import {m}")]
    turns = _named(_turns(*spec))
    pairs = error_fixes.pair(turns)
    assert [p.split("'")[1] for p in pairs] == modules, pairs
    assert all(p.endswith("→ unresolved") for p in pairs), pairs


def test_an_error_nothing_fixed_is_marked_unresolved() -> None:
    turns = _turns(
        ("user", "Run the migration."),
        ("tool", 'Traceback (most recent call last):\n  File "m.py", line 3\nRuntimeError: lock timeout'),
        ("assistant", "I could not get past it today."),
    )
    assert error_fixes.pair(turns) == ["`RuntimeError: lock timeout` → unresolved"]


def test_text_that_only_mentions_errors_is_not_an_error() -> None:
    lorem = "Lorem ipsum dolor sit amet, error consectetur adipiscing elit, sed do eiusmod tempor."
    turns = _turns(
        ("user", "Improve the error handling in the parser, errors should be clearer."),
        ("assistant", "Error handling now reports the line. There were no errors in the last run."),
        ("assistant", lorem),
        (
            "tool",
            "============================= test session starts ==============================\n"
            "platform linux -- Python 3.11.7, pytest-8.3.2\ncollected 12 items",
        ),
        (
            "tool",
            "2026-11-02 09:00:01 INFO error_budget=0 request served\n"
            "[INFO] Reporting errors: 0\nINFO: error rate 0.0%",
        ),
        ("tool", "12 passed in 0.41s"),
    )
    assert error_fixes.pair(turns) == []
    assert not [a for a in anchors.extract(_session(turns)) if a.type == "error"]


def test_a_shell_tools_error_none_is_no_error_and_an_edit_keeps_its_absolute_path() -> None:
    """Gemini CLI's shell tool reports "Error: (none)" on success; an edit of an absolute path is
    named with its leading slash (both seen in a real SpecStory export)."""
    turns = _turns(
        ("user", "Build the widget."),
        ("tool", "BUILD SUCCESSFUL in 6s\nError: (none)\nExit Code: 0\nSignal: 0"),
        ("tool", "ERROR: /home/ana/app/res/widget.xml:11: AAPT: error: resource drawable/icon not found"),
        ("assistant", "Edit\n/home/ana/app/res/widget.xml", "tool_call"),
    )
    turns[-1].tool_name = "Edit"
    pairs = error_fixes.pair(turns)
    assert len(pairs) == 1 and "(none)" not in pairs[0], pairs
    assert pairs[0].endswith("→ edited `/home/ana/app/res/widget.xml`"), pairs


def test_a_small_session_keeps_its_error_by_cutting_its_long_goal() -> None:
    """A 2 KB session that is mostly one long request (an Aider history's shape): its goal and a
    long provenance line fill the entry, and the unresolved error after it (the agent's only
    blocker) must still be kept, with the goal cut shorter, not dropped at the hard cap."""
    ask = "Write ONLY src/main/java/frc/robot/subsystems/Shooter.java. " + " ".join(
        f"Rule {i}: keep tuning value {i} in the constants with units and range." for i in range(30)
    )
    turns = _turns(
        ("user", ask),
        ("tool", "Constants.java\nAdd file to the chat? (Y)es/(N)o [Yes]: y"),
        ("assistant", "To implement"),
        (
            "tool",
            'Traceback (most recent call last):\n  File "coder.py", line 9\nBrokenPipeError: [Errno 32] Broken pipe',
        ),
    )
    s = _session(turns)
    found = anchors.extract(s)
    budget = entry_budget(CompressCfg(), 2307, found)
    res = ExtractiveCompressor().compress(s, found, budget)
    meta = entry.EntryMeta(
        "e-64ce26281875", "frc", "aider.chat.history@2026-03-17T00:39:54Z",
        "../projects/robot-data/frc/.aider.chat.history.md", "markdown", T0, 3747, 3776, 5, "0" * 64,
        "extractive", 2307,
    )  # fmt: skip
    summ = entry_fit.fit_with_room(res.summary, found, meta, budget, int(budget * 1.15))
    summ, rec = entry_guard.guard(summ, found, meta, int(budget * 1.15))
    text = entry.render(summ, meta)
    assert "BrokenPipeError: [Errno 32] Broken pipe" in text, text
    assert rec == 1.0 and len(text.encode()) <= int(budget * 1.15), text


def test_the_guard_never_trades_a_fact_nor_leaves_a_bare_ellipsis() -> None:
    """Cutting the goal to make room must not cut away an anchor only the goal held, and a cut
    that would leave "…" (inside a long backtick span) is no cut (both found by review)."""
    from scribed.models import Summary

    s = Summary(
        goal="`./gradlew :robot:deploy --offline -PteamNumber=1234 " + "--flag " * 40 + "`", outcome=""
    )
    assert not entry_fit.shorter_prose(s, 30) and s.goal.startswith("`./gradlew")
    rules = " ".join(f"Rule {i}: keep tuning value {i} in the constants." for i in range(2))
    ask = (
        f"Write ONLY src/main/java/frc/robot/subsystems/Shooter.java. {rules} "
        "Never use the 2023 command-based syntax in this file."
    )
    error = (
        'Traceback (most recent call last):\n  File "c.py", line 9\nBrokenPipeError: [Errno 32] Broken pipe'
    )
    turns = _turns(
        ("user", ask),
        ("tool", "Constants.java\nAdd file to the chat? (Y)es/(N)o [Yes]: y"),
        ("assistant", "To implement"),
        ("tool", error),
    )
    sess = _session(turns)
    found = anchors.extract(sess)
    budget = entry_budget(CompressCfg(), 2307, found)
    meta = entry.EntryMeta(
        "e-64ce26281875", "frc", "aider.chat.history@2026-03-17T00:39:54Z",
        "../projects/robot-data/frc/.aider.chat.history.md", "markdown", T0, 1, 2, 2, "0" * 64,
        "extractive", 2307,
    )  # fmt: skip
    summ = entry_fit.fit_with_room(
        ExtractiveCompressor().compress(sess, found, budget).summary, found, meta, budget
    )
    held = [a for a in found if anchors.present(a, entry.render(summ, meta))]
    summ, _ = entry_guard.guard(summ, found, meta, int(budget * 1.15))
    text = entry.render(summ, meta)
    assert all(anchors.present(a, text) for a in held), [a for a in held if not anchors.present(a, text)]
    assert len(text.encode()) <= int(budget * 1.15)


def test_goal_is_the_real_request_not_continue_and_a_pivot_adds_one() -> None:
    turns = _turns(
        ("user", "hi"),
        ("user", "Port the rate limiter in api/limits.py to a token bucket with a 50 req/s burst."),
        ("assistant", "Working on it."),
        ("user", "continue"),
        ("user", "ok, go on"),
        ("user", "/add api/limits.py"),
        ("user", "Separately, write a CHANGELOG entry for the 2.4.0 release notes."),
        ("user", "thanks"),
    )
    res = ExtractiveCompressor().compress(_session(turns), [], 4000)
    assert res.summary.goal.startswith("Port the rate limiter in api/limits.py")
    assert "CHANGELOG entry for the 2.4.0" in res.summary.goal
    assert "continue" not in res.summary.goal.lower()


def _big_session() -> tuple[Session, int]:
    """A ~40 KB session: a request, work with facts spread through it, tool dumps, a result."""
    facts = [
        f"Moved the retry policy for worker_{i} into `jobs/retry_{i}.py` after the p95 hit {100 + i} ms."
        for i in range(40)
    ]
    dump = "\n".join(f"{n:5d} DEBUG heartbeat ok shard={n % 7} lag=0" for n in range(300))
    spec: list[tuple[str, str] | tuple[str, str, str]] = [
        ("user", "Rework the job retry policies so the queue drains under load (#4312)."),
    ]
    for i, f in enumerate(facts):
        spec.append(("assistant", f"{f} Checked it against the staging replay number {i}."))
        if i % 8 == 0:
            spec.append(("assistant", "journalctl -u jobs --since today", "tool_call"))
            spec.append(("tool", dump))
    spec.append(("assistant", "All 40 workers now drain the queue within 90 s; the replay passes."))
    turns = _turns(*spec)
    size = sum(len(t.text.encode()) for t in turns)
    return _session(turns), size


def test_a_big_session_spends_about_a_tenth_on_whole_units() -> None:
    s, size = _big_session()
    assert size >= 16_384
    text, rec = _render(s, size)
    ratio = len(text.encode()) / size
    assert 0.07 <= ratio <= 0.13, ratio
    assert rec == 1.0
    # Most of the facts survive (head truncation to the same size would keep only the first few).
    kept = sum(1 for i in range(40) if f"jobs/retry_{i}.py" in text)
    assert kept >= 30, kept
    # Every key point is a whole unit of the session: nothing cut mid-token.
    source = "\n".join(" ".join(t.text.split()) for t in s.turns)
    body = text.split("#### Key points\n", 1)[1].split("\n#### ", 1)[0]
    for item in body.splitlines():
        unit = item.removeprefix("- ").removeprefix("user: ").strip("`")
        assert unit in source, item
    assert "heartbeat ok shard" not in text


def test_files_once_relative_and_commands_counted() -> None:
    turns = _turns(
        ("user", "Fix the flaky test in src/app/cache.py please."),
        ("assistant", "Reading ./src/app/cache.py and /home/dev/proj/src/app/cache.py first."),
        ("assistant", "pytest tests/test_cache.py -x", "tool_call"),
        ("tool", "1 passed"),
        ("assistant", "pytest tests/test_cache.py -x", "tool_call"),
        ("assistant", "pytest tests/test_cache.py -x", "tool_call"),
    )
    for t in turns:
        if t.kind == "tool_call":
            t.tool_name = "bash"
    text, _ = _render(_session(turns), 3000)
    files = text.split("#### Files & artifacts\n", 1)[1].split("\n#### ", 1)[0].splitlines()
    assert files == ["- `src/app/cache.py`", "- `tests/test_cache.py`"], files
    cmds = text.split("#### Commands\n", 1)[1].split("\n#### ", 1)[0]
    assert cmds.strip() == "- `pytest tests/test_cache.py -x` (×3)", cmds
    assert not re.search(r"^- .*…$", text, re.M)


def test_an_actually_reversal_supersedes_and_the_old_form_is_no_key_point() -> None:
    turns = _turns(
        ("user", "Pick a store for the sync worker and wire it in."),
        ("assistant", "Decision: use SQLite for the sync worker store."),
        ("assistant", "Actually, after the load test it is clear: use Postgres for the sync worker store."),
        ("assistant", "Wired Postgres in sync/store.py and the worker tests pass."),
    )
    s = _session(turns)
    found = [a for a in anchors.extract(s) if a.type == "decision"]
    assert [(a.text, a.superseded) for a in found] == [
        ("use Postgres for the sync worker store", "use SQLite for the sync worker store")
    ]
    text, _ = _render(s, 20_000)
    live = text.replace("(supersedes: use SQLite for the sync worker store)", "")
    assert "use SQLite for the sync worker store" not in live


def test_a_clipped_line_never_cuts_a_backtick_span_or_a_token() -> None:
    assert entry.one_line("fix `src/very/long/path/name.py` and more words here", 30) == "fix…"
    assert entry.one_line("see https://example.invalid/" + "a" * 80, 40) == "see…"
    assert entry.one_line("short enough", 40) == "short enough"


def test_a_long_anchor_is_never_cut_inside_a_token() -> None:
    url = "https://example.invalid/report?pdf_url=https%3A%2F%2Fdocs.example.invalid%2Fmedia%2F" + "z" * 200
    assert anchor_text.clean(url) == url
    assert anchor_text.clean("fetch " + url) == "fetch"
    words = " ".join(["word"] * 60)
    assert anchor_text.clean(words).split()[-1] == "word"


def test_a_long_goal_with_a_pivot_is_clipped_between_words() -> None:
    url = "https://example.invalid/api?pdf_url=https%3A%2F%2Fdocs.example.invalid%2Fmedia%2Freport-2023.pdf"
    turns = _turns(
        (
            "user",
            "here are the API docs: curl -X POST " + " ".join([url] * 6) + " -H 'accept: application/json'",
        ),
        (
            "user",
            "Separately, here is an example response so the parser handles every field of it correctly.",
        ),
    )
    goal = ExtractiveCompressor().compress(_session(turns), [], 4000).summary.goal
    assert "elided" not in goal and len(goal) <= 400
    for tok in goal.split():
        if "example.invalid" in tok:
            assert tok.rstrip("…") == url, tok


def _reported(*report: str) -> list[Turn]:
    """A failing test, a change that names nothing of it, then the assistant's ``report``."""
    return _named(
        _turns(
            ("user", "Please fix the failing date test."),
            _call("pytest tests/test_parser.py -k test_dates"),
            ("tool", "FAILED tests/test_parser.py::test_dates - ValueError: invalid date '2026-02-30'"),
            ("assistant", "Decision: keep the regex out of it."),
            *(("assistant", r) for r in report),
        )
    )


def test_a_report_that_the_check_is_clean_now_settles_the_failure() -> None:
    """The agent said the failing test passes now: the error is not shown unresolved (nor as a
    blocker in the next spawn), and its fix is the report when nothing said since names it. Phrasings
    other than the one the rule was written from, each with "now" and a verb of a clean run."""
    for report in (
        "Done: the test passes now.",
        "Now all 12 tests pass.",
        "It works now.",
        "The build is green now.",
        "It now compiles without warnings.",
        "ok, tests are passing now",
        "The build is green again.",
        "It passes again after the change.",
    ):
        pairs = error_fixes.pair(_reported(report))
        assert pairs == [
            f"`FAILED tests/test_parser.py::test_dates - ValueError: invalid date '2026-02-30'` → {report}"
        ]


def test_a_hedged_question_or_failing_report_settles_nothing() -> None:
    for report in (
        "The tests should pass now.",
        "Let me check whether it works now.",
        "Does it pass now?",
        "It still fails now.",
        "Now I will run the tests to see if they pass.",
        "It passes now, but the lint step fails.",
        "The suite passes.",  # no "now": a state, not a change
        # a review's phrasings: a noun ("work", "build"), a plan, a negation, a "but"
        "Working on it now.",
        "Now I'll look at the build log.",
        "Next, I'll make the build green again.",
        "Nothing passes now.",
        "None of the tests pass now.",
        "Now the tests pass locally but CI is red.",
        "The import works now but the server crashes on start.",
        "The test is flaky: it passes now and then.",
        "Looking at the date parsing work now.",
    ):
        assert error_fixes.pair(_reported(report))[0].endswith("→ unresolved"), report


def test_a_clean_report_settles_the_latest_failure_only() -> None:
    turns = _named(
        _turns(
            _call("make migrate"),
            ("tool", "Error: relation accounts does not exist"),
            _call("pytest tests/test_parser.py"),
            ("tool", "FAILED tests/test_parser.py::test_dates - ValueError: invalid date"),
            ("assistant", "The parser tests pass now."),
        )
    )
    assert error_fixes.pair(turns) == [
        "`Error: relation accounts does not exist` → unresolved",
        "`FAILED tests/test_parser.py::test_dates - ValueError: invalid date` → The parser tests pass now.",
    ]


def test_a_settled_failure_takes_the_sentence_that_names_it_over_the_report() -> None:
    turns = _reported("The date check uses fromisoformat for the parser dates.", "Done: it passes now.")
    assert error_fixes.pair(turns) == [
        "`FAILED tests/test_parser.py::test_dates - ValueError: invalid date '2026-02-30'` → "
        "The date check uses fromisoformat for the parser dates."
    ]


def test_a_sentence_saying_the_fix_did_not_work_is_no_fix() -> None:
    """A fix word in a sentence that says the failure goes on ("did not work", "still fails",
    "nothing helped") leaves the error unresolved; a fix sentence holding "not" or "no longer"
    for another reason is still one."""
    for said in (
        "The fix did not work, the test still fails.",
        "That fix didn't help: test_dates still fails with the same ValueError.",
        "Nothing I tried fixed it.",
        "I could not fix the flaky date test.",
        "Replaced the regex; neither approach worked.",
        "Updated the parser but the build is still failing on arm64.",
        "Pinning the date parser failed to fix it.",
        "I changed the timeout but the error persists.",
        "Updated the config but test_dates keeps failing.",
        "Replaced the parser, same error.",
    ):
        assert error_fixes.pair(_reported(said))[0].endswith("→ unresolved"), said
    for said in (
        "Fixed it by not caching the parsed dates.",
        "Resolved: the parser no longer crashes on dates.",
        # the negation explains the bug, in a clause of its own
        "The root cause was that the parser did not pass the locale to fromisoformat.",
        "I replaced the date regex because it did not work for leap years.",
        "Fixed the bug where the parser would still crash on empty dates.",
    ):
        assert error_fixes.pair(_reported(said))[0].endswith(f"→ {said}"), said


def test_a_command_or_name_keeps_its_own_dots_and_stars() -> None:
    """Sentence ends and emphasis come off an anchor; a path's dots and a glob's star are the
    command ("go build ./" builds one package, not every one)."""
    cases = {
        "go build ./...": "go build ./...",
        "go test ./ingest/...;": "go test ./ingest/...",
        "read from nats_ingest_*": "read from nats_ingest_*",
        "glob src/*": "glob src/*",
        "**Decision**": "Decision",
        "*note*": "note",
        "cd ..": "cd ..",
        "**bold** text": "**bold** text",
        "*args and **kwargs": "*args and **kwargs",
        "** store timestamps as UTC": "store timestamps as UTC",  # after "**Decision:**"
        "use Redis for the cache.": "use Redis for the cache",
        "see the docs...": "see the docs",
    }
    assert {k: anchor_text.clean(k) for k in cases} == cases
    s = _session(
        _named(_turns(_call("go test ./ingest/..."), ("user", "TODO: point the panel at nats_ingest_*")))
    )
    found = {(a.type, a.text) for a in anchors.extract(s)}
    assert ("command", "go test ./ingest/...") in found and (
        "todo",
        "point the panel at nats_ingest_*",
    ) in found


def test_a_go_test_failure_is_an_error_until_it_passes() -> None:
    """`go test` reports a failing test as `--- FAIL: TestX (0.01s)`: an error (it was none, so
    the session's hot seed had no blocker while the test still failed)."""
    turns = _named(
        _turns(
            _call("go test ./replay/..."),
            (
                "tool",
                "--- FAIL: TestReplay (0.01s)\n    replay_test.go:42: got 1187, want 1200\nFAIL\texample.com/replay\t0.1s",
            ),
            ("assistant", "The replay count is off by the dropped duplicates; looking at the dedup window."),
        )
    )
    assert error_fixes.pair(turns) == ["`--- FAIL: TestReplay (0.01s)` → unresolved"]
    turns += _named(_turns(("assistant", "TestReplay passes again with the window at 5 minutes.")))[-1:]
    assert error_fixes.pair(turns)[0].endswith("→ TestReplay passes again with the window at 5 minutes.")


def test_a_progress_run_is_no_key_point() -> None:
    """pytest's progress (`FFssFsFsFs..ssFF [ 45%]`: CamelCase-looking and rare, so it won key
    points) and rules of `=` are no units; a tool line naming something is one."""
    from scribed.compress import units

    lines = [
        "FFssFsFsFs..ssFF [ 45%]",
        "..ssFFss..FsFs.. [ 90%]",
        "=" * 30,
        "100 200 300",
        "FAILED tests/x.py::t",
    ]
    out = "\n".join([*lines, "ok  example.com/ingest 0.2s"])
    pool = units.split(_turns(("user", "Run the suite."), ("tool", out)))
    texts = [u.text for u in pool.units]
    assert "ok example.com/ingest 0.2s" in texts
    assert not any("FFss" in t or "ssFF" in t or "====" in t or t == "100 200 300" for t in texts), texts


def test_a_reversal_naming_the_call_it_reverses_replaces_it() -> None:
    """ "OK — reversing the earlier call: messages will be JSON …, not Avro" stated no decision, so
    the reversed Avro one stayed current (in the entry, the hot seed, the wiki)."""
    for said in (
        "OK — reversing the earlier call: messages on NATS will be JSON with a schema_version field, not Avro.",
        "Overriding my previous decision - messages on NATS carry JSON with a schema_version field.",
        "We revert our earlier choice: JSON messages on NATS, no Avro schema.",
    ):
        s = _session(
            _turns(
                (
                    "assistant",
                    "Decision: keep the Avro schema for messages on NATS so consumers don't change.",
                ),
                ("user", "Actually, drop Avro. The consumers are being rewritten anyway."),
                ("assistant", said),
            )
        )
        got = [(a.text, a.superseded) for a in anchors.extract(s) if a.type == "decision"]
        # the user's "drop Avro" is a decision (stop 43) that takes out the Avro one; the call reverses it
        assert got == [(got[0][0], "drop Avro")] and "JSON" in got[0][0], (said, got)


def test_a_fix_still_to_make_is_no_fix() -> None:
    for said in (
        "TODO: fix the date parsing in src/parser/dates.py.",
        "The date parsing needs to be fixed in src/parser/dates.py.",
    ):
        assert error_fixes.pair(_reported(said))[0].endswith("→ unresolved"), said


def _unnamed_edit(*after: tuple[str, str] | tuple[str, str, str]) -> list[Turn]:
    """A migration fails on a grant; the agent edits a file that names nothing of the error."""
    return _named(
        _turns(
            _call("alembic upgrade head"),
            ("tool", "sqlalchemy.exc.ProgrammingError: permission denied for schema billing"),
            ("assistant", "The migration needs a grant from the DBA; I can't fix it from here."),
            _call(
                '{"file_path": "/repo/services/billing/queue.py", "old_string": "5.0", "new_string": "2.0"}',
                "Edit",
            ),
            ("tool", "The file /repo/services/billing/queue.py has been updated."),
            *after,
        )
    )


def test_an_edit_naming_nothing_of_an_error_is_its_fix_only_once_the_check_is_clean() -> None:
    """An exploratory tester's session: the agent could not fix a migration's grant and went on
    with other work; its next edit was shown as the fix (and promoted to the wiki as one)."""
    err = "`sqlalchemy.exc.ProgrammingError: permission denied for schema billing`"
    assert error_fixes.pair(_unnamed_edit()) == [f"{err} → unresolved"]
    # another program's clean run confirms nothing of it
    other = _unnamed_edit(_call("pytest tests/billing -q"), ("tool", "5 passed in 1.02s"))
    assert error_fixes.pair(other) == [f"{err} → unresolved"]
    # the failing program clean again, or the agent's report that it is: the edit was its fix
    again = _unnamed_edit(_call("alembic upgrade head"), ("tool", "INFO  [alembic] Running upgrade -> 7f3a"))
    assert error_fixes.pair(again) == [f"{err} → edited `/repo/services/billing/queue.py`"]
    said = _unnamed_edit(("assistant", "The migration runs clean now."))
    assert error_fixes.pair(said) == [f"{err} → edited `/repo/services/billing/queue.py`"]
    # a change said without saying it fixed anything waits the same way; a fix said is one
    assert error_fixes.pair(_unnamed_edit(("assistant", "Updated the CHANGELOG for the release."))) == [
        f"{err} → unresolved"
    ]
    fixed = "Fixed it by running the migration as the schema's owner."
    assert error_fixes.pair(_unnamed_edit(("assistant", fixed))) == [f"{err} → {fixed}"]


def test_a_change_said_negated_is_no_change() -> None:
    """A real Aider session: "Wait, the user hasn't added the settings.json …" became an install
    error's fix once the install ran clean."""
    err = "`sqlalchemy.exc.ProgrammingError: permission denied for schema billing`"
    turns = _unnamed_edit(
        ("assistant", "Wait, the user hasn't added the settings.json or hosts file to the chat."),
        ("assistant", "The migration runs clean now."),
    )
    assert error_fixes.pair(turns) == [f"{err} → edited `/repo/services/billing/queue.py`"]


def test_a_command_only_named_in_a_message_is_no_run_when_the_transcript_records_runs() -> None:
    """An exploratory tester's Codex session: Commands listed `yarn test --ci` (×2), which the agent
    only named ("The red build is `yarn test --ci`") and patched out of a workflow, never ran.
    In a chat that records no shell runs (Aider, markdown) a command in backticks is kept."""
    said = ("assistant", "The red build is `yarn test --ci`: Vitest doesn't know `--ci`.")
    runs = _turns(
        ("user", "Why is the web build red?"),
        said,
        ("assistant", "vitest run --reporter dot", "tool_call"),
        ("tool", "12 passed"),
    )
    for t in runs:
        if t.kind == "tool_call":
            t.tool_name = "bash"
    cmds = [a.text for a in anchors.extract(_session(runs)) if a.type == "command"]
    assert "yarn test --ci" not in cmds, cmds
    chat = _turns(("user", "Why is the web build red?"), said)
    assert [a.text for a in anchors.extract(_session(chat)) if a.type == "command"] == ["yarn test --ci"]


@pytest.mark.parametrize(
    ("raw", "kept"),
    [
        ("pip install 'psycopg[binary]==3.1.18'", "pip install 'psycopg[binary]==3.1.18'"),  # a tester's
        ('git commit -m "fix: dedupe events"', 'git commit -m "fix: dedupe events"'),
        ("'pytest -x'", "pytest -x"),
        ("bash -lc 'npm test'", "npm test"),
    ],
)
def test_a_command_keeps_the_quote_that_ends_it(raw: str, kept: str) -> None:
    assert anchors._command(raw) == kept


def test_a_long_command_is_cut_between_words() -> None:
    """A real SpecStory session's `git add` of many files was cut inside a path at 160 characters."""
    raw = "git add " + " ".join(f"app/src/main/java/ai/dcar/caldatewidget/File{i}.kt" for i in range(8))
    cmd = anchors._command(raw)
    assert cmd is not None and cmd.endswith(".kt …"), cmd
    assert raw.startswith(cmd.removesuffix(" …"))


def test_a_member_chain_is_no_file_and_a_tools_data_no_key_point() -> None:
    """An exploratory tester's entries listed `process.env`, `-process.env` (from a patch's
    `process.env.TZ`) under Files, and `Edit {"file_path": …}` / `apply_patch *** Begin Patch` as
    key points; every real Aider entry of a React app listed `process.env` too."""
    turns = _named(
        _turns(
            ("user", "Pin the test timezone in apps/web/src/setupTests.ts."),
            _call(
                '{"file_path": "/repo/apps/web/src/setupTests.ts", "new_string": "process.env.TZ"}', "Edit"
            ),
            _call(
                "*** Begin Patch\n*** Update File: apps/web/.env.test\n+TZ=UTC\n*** End Patch", "apply_patch"
            ),
            (
                "assistant",
                "Set `process.env.TZ = 'UTC'` in setupTests.ts and read config.json.load() nowhere.",
            ),
        )
    )
    found = anchors.extract(_session(turns))
    paths = {a.text for a in found if a.type == "path"}
    assert "process.env" not in paths and "-process.env" not in paths, paths
    assert "apps/web/src/setupTests.ts" in paths and "config.json" not in paths, paths
    pool = [u.text for u in units.split(turns).units]
    assert not [u for u in pool if "file_path" in u or "Begin Patch" in u], pool


def _codex(command: str) -> tuple[str, str, str]:
    """A Codex shell call: every command runs through ``bash -lc``."""
    return _call(f"bash -lc {command}", "shell")


JEST_FAIL = (
    "exit 1\nFAIL src/components/Table.test.tsx\n  Table\n    ✕ sorts by due date (18 ms)\n\n"
    "  ● Table › sorts by due date\n\n    expect(received).toEqual(expected) // deep equality\n\n"
    "Tests:       1 failed, 6 passed, 7 total"
)


def test_a_jest_failure_takes_its_edit_once_jest_passes_and_a_pr_refused_stays_open() -> None:
    """An exploratory tester's Codex session (W2): the Jest failure fixed by flipping a comparator and
    a ``gh pr create`` refused with HTTP 401 gave no error at all; with every command one program
    (``bash``), the ``grep`` between them was taken for Jest's clean re-run."""
    turns = _named(
        _turns(
            ("user", "Get the Table date-sort test green, then open the PR."),
            _codex("cd apps/web && TZ=UTC yarn jest src/components/Table.test.tsx"),
            ("tool", JEST_FAIL),
            _codex("grep -n 'sort' apps/web/src/components/Table.tsx"),
            ("tool", "27:  const rows = [...props.rows].sort((a, b) => b.due.localeCompare(a.due));"),
            ("assistant", "Found it: the comparator sorts descending while the header says ascending."),
            _call(
                "*** Begin Patch\n*** Update File: apps/web/src/components/Table.tsx\n*** End Patch",
                "apply_patch",
            ),
            ("tool", "Success. Updated the following files:\nM apps/web/src/components/Table.tsx"),
            _codex("cd apps/web && yarn jest"),
            ("tool", "PASS src/components/Table.test.tsx\n\nTests:       24 passed, 24 total"),
            _codex("gh pr create --fill --base main"),
            (
                "tool",
                "exit 1\ncould not create pull request: HTTP 401: Bad credentials (https://api.github.com/graphql)\n"
                "Try authenticating with:  gh auth login",
            ),
            ("assistant", "gh isn't logged in here; please open the PR yourself."),
        )
    )
    assert error_fixes.pair(turns) == [
        "`● Table › sorts by due date` → edited `apps/web/src/components/Table.tsx`",
        "`could not create pull request: HTTP 401: Bad credentials (https://api.github.com/graphql)` → unresolved",
    ]


def test_a_test_failing_after_each_change_stays_unresolved() -> None:
    """An exploratory tester's Codex session (W1): a Vitest failure run three times, a change
    between each run, never fixed. A change the failure outlived is no fix, and an install run clean
    after it confirms nothing (it is another program than Vitest)."""
    fail = (
        "exit 1\n ❯ src/components/Table.test.tsx  (7 tests | 1 failed) 61ms\n"
        "   ❯ src/components/Table.test.tsx > Table > sorts by due date\n"
        "     → expected [ '2026-01-03', '2026-01-01' ] to deeply equal [ '2026-01-01', '2026-01-03' ]\n\n"
        " Test Files  1 failed | 2 passed (3)\n      Tests  1 failed | 23 passed (24)"
    )
    spec: list[tuple[str, str] | tuple[str, str, str]] = [("user", "Move the tests to Vitest.")]
    for path in ("apps/web/src/setupTests.ts", "apps/web/vite.config.ts"):
        spec += [
            _codex("cd apps/web && pnpm exec vitest run"),
            ("tool", fail),
            _call(f"*** Begin Patch\n*** Update File: {path}\n*** End Patch", "apply_patch"),
            ("tool", f"Success. Updated the following files:\nM {path}"),
        ]
    spec += [
        _codex("cd apps/web && pnpm exec vitest run"),
        ("tool", fail),
        ("assistant", "Same failure. I don't have a fix for the date-sort test yet."),
        _codex("cd apps/web && rm -rf node_modules pnpm-lock.yaml && yarn install"),
        ("tool", "yarn install v1.22.19\nsuccess Saved lockfile.\nDone in 31.20s."),
    ]
    assert error_fixes.pair(_named(_turns(*spec))) == [
        "`❯ src/components/Table.test.tsx > Table > sorts by due date` → unresolved"
    ]
    # the run clean at last with no change since the failure came back: the change before it is no fix
    flaky = _named(
        _turns(*spec[:7], _codex("cd apps/web && pnpm exec vitest run"), ("tool", " Tests  24 passed (24)"))
    )
    assert error_fixes.pair(flaky) == [
        "`❯ src/components/Table.test.tsx > Table > sorts by due date` → unresolved (gone when "
        "`bash -lc cd apps/web && pnpm exec vitest run` ran again)"
    ]


@pytest.mark.parametrize(
    ("command", "program"),
    [
        ("bash -lc cd apps/web && TZ=UTC yarn jest src/components/Table.test.tsx", "yarn jest"),
        ("bash -lc cd apps/web && pnpm exec vitest run", "vitest"),  # what `vitest` runs
        ("python -m pytest tests/test_calc.py -q", "pytest"),  # a review's: a re-run spelled otherwise
        ("npx vitest run", "vitest"),
        ("bash -lc grep -n 'sort' apps/web/src/components/Table.tsx", "grep"),
        ("sh -c 'npm run build'", "npm build"),
        ("cd services/api && go test ./...", "go test"),
        ("FOO=1 BAR=2 pytest -x", "pytest"),
        ("uv run pytest tests", "pytest"),
        ("make -j4", "make"),
    ],
)
def test_a_commands_program_is_read_past_its_shell_its_cd_and_its_variables(
    command: str, program: str
) -> None:
    assert command_line.program(command) == program


def test_a_check_said_clean_now_settles_it() -> None:
    """ "tsc is clean now." (W1, after the clean run printed nothing, so no result was recorded)."""
    for report in ("tsc is clean now.", "The types are clean again.", "mypy comes back clean now."):
        pairs = error_fixes.pair(_reported(report))
        assert pairs[0].endswith(f"→ {report}"), (report, pairs)


def test_fitting_never_drops_an_error_nothing_fixed() -> None:
    """An exploratory tester's Aider session (D1): its entry's budget was tight, fitting dropped its
    errors from the last (the failing test nobody fixed first) and the guard had room for a fixed
    one only: no Errors section, and a next spawn with no blocker. Fixed errors go first now; an
    unresolved one stays, as an open item does."""
    errs = [
        "`api/ratelimit.go:44:12: undefined: buckets` → edited `api/ratelimit.go`",
        "`api/ratelimit.go:51:3: undefined: rate` → edited `api/ratelimit.go`",
        "`--- FAIL: TestBurst (0.00s)` → unresolved",
        "`make: *** [Makefile:9: test] Error 1` → unresolved (gone when `make test` ran again)",
    ]
    summary = Summary(
        goal="Replace the fixed-window limiter with a token bucket.", outcome="TestBurst still fails."
    )
    summary.errors = list(errs)
    summary.open_items = ["Prometheus counter `gateway_ratelimit_rejected_total`"]
    meta = entry.EntryMeta(
        "e-0123456789ab", "data", "s1", "x.md", "markdown", T0, 1, 9, 9, "0" * 64, "extractive", 4000
    )
    fitted = entry_fit.fit(summary, meta, 300)
    assert fitted.errors == ["`--- FAIL: TestBurst (0.00s)` → unresolved"], fitted.errors
    roomy = entry_fit.fit(summary, meta, 5000)
    assert roomy.errors == errs


def test_a_fix_by_file_name_is_a_whole_segment_and_is_taken_back_by_a_named_one() -> None:
    """A review's: a file name matched inside another path ("main.py" in "app/domain.py") gave an
    error its fix for good, and a re-run spelled `python -m pytest` was no re-run of `pytest` (the
    test path it names then made it the "fix")."""
    err = "app/main.py:12: error: Missing return statement  [return]"
    turns = _named(
        _turns(
            _call("mypy app"),
            ("tool", err),
            _call('{"file_path": "/repo/app/domain.py", "new_string": "x"}', "Edit"),
            ("tool", "The file /repo/app/domain.py has been updated."),
            _call('{"file_path": "/repo/app/main.py", "new_string": "return x"}', "Edit"),
            ("tool", "The file /repo/app/main.py has been updated."),
            _call("mypy app"),
            ("tool", "Success: no issues found in 4 source files"),
        )
    )
    assert error_fixes.pair(turns) == [f"`{err}` → edited `/repo/app/main.py`: `return x`"]
    calc = _named(
        _turns(
            _call("pytest tests/test_calc.py"),
            ("tool", "FAILED tests/test_calc.py::test_add - AssertionError: assert 3 == 4"),
            _call('{"file_path": "/repo/src/calc.py", "new_string": "a + b"}', "Edit"),
            ("tool", "The file /repo/src/calc.py has been updated."),
            _call("python -m pytest tests/test_calc.py -q"),
            ("tool", "1 passed in 0.01s"),
        )
    )
    assert error_fixes.pair(calc) == [
        "`FAILED tests/test_calc.py::test_add - AssertionError: assert 3 == 4` → edited `/repo/src/calc.py`"
    ]


def test_a_negated_reason_keeps_a_named_fix_and_a_purpose_is_no_claim() -> None:
    """A review's: "Changed parse_port so it doesn't call int() on the raw 'abc' …" names the error
    but was dropped as negated; "Updated the README so that the new flag is documented." became
    the fix of a grant the agent could not fix ("so that" was taken for a claim)."""
    bad = "ValueError: invalid literal for int() with base 10: 'abc'"
    said = "Changed parse_port so it doesn't call int() on the raw 'abc' header value."
    turns = _named(_turns(_call("python app.py"), ("tool", bad), ("assistant", said)))
    assert error_fixes.pair(turns) == [f"`{bad}` → {said}"]
    readme = _unnamed_edit(("assistant", "Updated the README so that the new flag is documented."))
    assert error_fixes.pair(readme)[0].endswith("→ unresolved")
    reason = "I changed the role because the grant was missing."
    assert error_fixes.pair(_unnamed_edit(("assistant", reason)))[0].endswith(f"→ {reason}")


def test_a_command_cut_at_a_space_is_marked_and_a_shell_test_is_a_command() -> None:
    """A review's: a long command cut where a space followed showed as if whole; `[ -f .env ] && …`
    (a shell's test) was taken for a tool's JSON arguments."""
    raw = "git add " + " ".join(f"src/components/widget_{i:02d}/index.tsx" for i in range(10))
    cut = anchors._command(raw)
    assert cut is not None and cut.endswith(" …") and raw.startswith(cut.removesuffix(" …")), cut
    assert not tool_lines.data_call("[ -f .env ] && source .env", None)
    assert tool_lines.data_call('Read {"file_path": "/x"}', "Read")


def test_a_change_negated_after_an_interjection_is_no_change() -> None:
    turns = _unnamed_edit(
        ("assistant", "Wait, the user hasn't added the settings.json or hosts file to the chat."),
        ("assistant", "The migration runs clean now."),
    )
    assert error_fixes.pair(turns)[0].endswith("→ edited `/repo/services/billing/queue.py`")


def test_a_shell_variables_path_and_a_call_on_a_name_are_no_files() -> None:
    """An exploratory tester's Codex session listed `OUT/postings.ndjson` (from `$OUT/postings.ndjson`)
    and `opts.json` (Rust's `if opts.json {`) under Files; `resp.json()` is a call."""
    turns = _named(
        _turns(
            ("user", "Write the export to $OUT/postings.ndjson and keep src/export.rs small."),
            (
                "assistant",
                "Added `if opts.json {` in src/export.rs; the client reads `resp.json()` from the bucket. "
                "The schema is in schemas/posting.json and config.json is unchanged.",
            ),
        )
    )
    paths = {a.text for a in anchors.extract(_session(turns)) if a.type == "path"}
    assert "OUT/postings.ndjson" not in paths and "opts.json" not in paths and "resp.json" not in paths, paths
    assert {"src/export.rs", "schemas/posting.json", "config.json", "$OUT/postings.ndjson"} <= paths, paths
    # a review's: the file under a variable is there, not at the root ("${HOME}/.config/app.toml")
    for text, want in (
        ("edit ${HOME}/.config/app.toml", "${HOME}/.config/app.toml"),
        ("ls $(pwd)/src/app.py", "$(pwd)/src/app.py"),
    ):
        assert [m.group("p") for m in anchors._PATH.finditer(text)] == [want]


def test_a_todo_a_sentence_talks_of_is_no_open_item() -> None:
    """An exploratory tester's Aider session: "put a TODO in the readme under Tooling so we don't
    forget." became the open item "in the readme under Tooling so we don't forget. …"."""
    turns = _named(
        _turns(
            (
                "user",
                "put a TODO in the readme under Tooling so we don't forget. and the CI timeout is still a problem.",
            ),
            ("assistant", "Added the note to README.md.\nTODO: check that the node_modules cache hits in CI"),
        )
    )
    todos = [a.text for a in anchors.extract(_session(turns)) if a.type == "todo"]
    assert todos == ["check that the node_modules cache hits in CI"], todos


def test_an_open_item_said_twice_in_two_cases_is_one() -> None:
    """An exploratory tester's Codex session listed "Backfill seed_lots from legacy/lots.csv" (its
    plan) and "backfill seed_lots from legacy/lots.csv" (its closing TODO) as two open items."""
    turns = _named(
        _turns(
            ("user", "Add the seed_lots migration."),
            ("assistant", "Plan:\n- [x] Write migration 0042\n- [ ] Backfill seed_lots from legacy/lots.csv"),
            ("assistant", "Migration applied.\nTODO: backfill seed_lots from legacy/lots.csv."),
        )
    )
    todos = [a.text for a in anchors.extract(_session(turns)) if a.type == "todo"]
    assert [t.lower().rstrip(".") for t in todos] == ["backfill seed_lots from legacy/lots.csv"], todos


def test_work_committed_after_the_last_message_is_the_outcome() -> None:
    """An exploratory tester's Aider sessions: the outcome was the assistant's options question
    ("Options: add @storybook/addon-actions … or upgrade to Storybook 8") after which the user said
    to leave it and committed; and a side remark ("Heads-up: the token is in this chat history").
    The commits made after the last message are where the session ended."""
    from scribed.compress import sections

    options = (
        "Storybook 7's vite preset imports `@storybook/addon-actions/preview` without declaring it.\n"
        "Options: add `@storybook/addon-actions` as a devDependency, or upgrade to Storybook 8.\n\n"
        "Want me to add the devDependency?"
    )
    turns = _turns(
        ("user", "move us from yarn 1 to pnpm"),
        ("assistant", options),
        ("user", "no, leave storybook for now. commit what we have, the app build and tests work."),
        ("user", "/commit"),
        (
            "tool",
            "> Commit 3e9a0f1 build: switch from yarn 1 to pnpm 9, hoist react-dom\n> You can use /undo",
        ),
    )
    assert (
        sections.outcome(turns) == "Committed 3e9a0f1: build: switch from yarn 1 to pnpm 9, hoist react-dom."
    )
    # Aider's auto-commit right after the message it made: the message stands, the commit after it
    auto = _turns(
        ("user", "add a retry to the fetch in src/api.ts"),
        ("assistant", "Added a retry with backoff to `fetchOrders` in src/api.ts."),
        ("tool", "> Commit 4dfe363 fix: retry fetchOrders with backoff"),
        ("user", "thanks"),
    )
    assert sections.outcome(auto) == (
        "Added a retry with backoff to `fetchOrders` in src/api.ts. Committed 4dfe363: fix: retry fetchOrders with backoff."
    )
    # a shell commit the agent ran (its hash from git's output), after its last note
    shell = _named(
        _turns(
            ("user", "fix the flaky test"),
            ("assistant", "The flake was a shared tmp dir; each test gets its own now."),
            _call('git commit -am "test: isolate tmp dirs"'),
            ("tool", "[main 5be20c4] test: isolate tmp dirs\n 1 file changed"),
        )
    )
    assert sections.outcome(shell).endswith("Committed 5be20c4: test: isolate tmp dirs.")
    # a review's: a conclusion that states a failure stays, the commit the user asked for after it
    failed = _named(
        _turns(
            ("user", "fix the importer"),
            ("assistant", "I could not fix it: tests/test_importer.py still fails with KeyError 'sku'."),
            ("user", "ok, commit the logging you added anyway"),
            _call('git commit -am "chore: log the raw feed rows"'),
            ("tool", "[main 77aa1bc] chore: log the raw feed rows\n 1 file changed"),
        )
    )
    assert sections.outcome(failed) == (
        "I could not fix it: tests/test_importer.py still fails with KeyError 'sku'. "
        "Committed 77aa1bc: chore: log the raw feed rows."
    )


@pytest.mark.parametrize(
    ("call", "output", "want"),
    [
        # Claude Code's usual heredoc: git's subject
        (
            "git commit -am \"$(cat <<'EOF'\nfix: isolate tmp dirs\nEOF\n)\"",
            "[main 5be20c4] fix: isolate tmp dirs",
            "5be20c4: fix: isolate tmp dirs",
        ),
        # a quote inside the message cut the typed one: git's subject
        (
            'git commit -am "fix: don\'t share tmp dirs"',
            "[main 5be20c4] fix: don't share tmp dirs",
            "5be20c4: fix: don't share tmp dirs",
        ),
        (
            'git commit -am "test: isolate tmp dirs"',
            "On branch main\nnothing to commit, working tree clean",
            "",
        ),
        ('git commit -am "test: isolate"', "black....Failed\n- files were modified by this hook", ""),
        ("echo 'run: git commit -m \"feat: x y z\"' >> docs/hooks.md", "", ""),
    ],
)
def test_a_commit_is_what_git_says_it_made(call: str, output: str, want: str) -> None:
    """A review's: a heredoc message, a quote in the message, "nothing to commit", a hook's failure
    and an echo of a commit command gave outcomes naming commits that were not made or garbled."""
    from scribed.compress import sections

    turns = _named(
        _turns(
            ("user", "fix the flaky test"),
            ("assistant", "The tmp dirs are per test now."),
            _call(call),
            ("tool", output),
        )
    )
    got = sections.outcome(turns)
    assert got == "The tmp dirs are per test now." + (f" Committed {want}." if want else ""), got


def test_a_commit_line_in_a_file_a_command_read_is_none() -> None:
    """A review's: `cat NOTES.md` showing "Commit 1a2b3c4 reverted the cache key" named a commit."""
    from scribed.compress import sections

    turns = _named(
        _turns(
            ("user", "what did we try?"),
            ("assistant", "The cache key change was reverted before; see the notes."),
            _call("cat NOTES.md"),
            ("tool", "Commit 1a2b3c4 reverted the cache key change\nCommit 9f8e7d6 tried a TTL"),
        )
    )
    assert "Committed" not in sections.outcome(turns)


@pytest.mark.parametrize(
    ("line", "item"),
    [
        (
            "I added a FIXME: the cache key in src/cache.py ignores the locale.",
            "the cache key in src/cache.py",
        ),
        ("There is a TODO: remove the en-US shim after v2 ships.", "remove the en-US shim after v2 ships"),
        ("Fix this TODO: handle nulls in the importer", "handle nulls in the importer"),
        ("put a TODO in the readme under Tooling", None),
        ("the TODO list is long", None),
    ],
)
def test_a_todo_with_its_colon_is_an_item_whatever_comes_before(line: str, item: str | None) -> None:
    """A review's: the determiner rule dropped "I added a FIXME: …" and "There is a TODO: …"."""
    m = anchors._TODO_OPEN.search(line)
    assert (m.group("t") if m else None) == item or (item and m and m.group("t").startswith(item)), m
