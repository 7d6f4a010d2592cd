"""Markdown transcripts as real tools write them: Aider histories, SpecStory exports, chat logs.

The fixtures are written here in our own words, mimicking the shapes of those files (two-space
hard breaks, ``> `` only on a tool message's first line, ``_**Agent (model)**_`` sections, …).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers import run_cli

from scribed import config, sources
from scribed.compress.entry import split_entries
from scribed.core.scribe import Scribe
from scribed.daemon.service import Daemon
from scribed.models import ParseResult
from scribed.sources import discover, match, parse_file
from scribed.sources.common import MAX_TURN_CHARS, clip_tool_output


def dt(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


# --------------------------------------------------------------------------- Aider


def aider_session(when: str, topic: str, n: int) -> str:
    """One aider run: banner, a multi-line user paste with a slash command, a reply, tool lines."""
    hb = "  "  # aider's markdown hard break
    return (
        f"\n# aider chat started at {when}\n\n"
        f"> /usr/local/bin/aider --model some-model{hb}\n"
        f"> Aider v0.70.0{hb}\n"
        f"> Model: some-model with diff edit format{hb}\n"
        f"> Git repo: .git with 12 files{hb}\n\n"
        f"#### /add src/{topic}.py{hb}\n\n"
        f"> Added src/{topic}.py to the chat{hb}\n\n"
        f"#### please make {topic} retry {n} times before giving up{hb}\n"
        f"#### and log each attempt{hb}\n\n"
        f"I will wrap the call in a loop that tries {n} times.\n\n"
        f"#### Plan\n\n"
        f"src/{topic}.py\n"
        "```python\n"
        "<<<<<<< SEARCH\n"
        "    return fetch()\n"
        "=======\n"
        f"    for attempt in range({n}):\n"
        "        log.info('attempt %d', attempt)\n"
        "        return fetch()\n"
        ">>>>>>> REPLACE\n"
        "```\n\n"
        f"> Tokens: 2.1k sent, 180 received.{hb}\n"
        f"> Applied edit to src/{topic}.py{hb}\n"
        f"> Commit 1a2b3c{n} feat: retry {topic}{hb}\n\n"
        f"#### /run pytest -q{hb}\n\n"
        f"> Running pytest -q{hb}\n"
        f"> 3 passed in 0.2s{hb}\n"
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def parse(path: Path, agent: str = "dev") -> ParseResult:
    return parse_file("markdown", path, agent)


def test_aider_history_is_many_dated_sessions(tmp_path: Path) -> None:
    text = aider_session("2025-03-01 09:00:00", "client", 3) + aider_session(
        "2025-03-02 10:30:00", "cache", 5
    )
    path = write(tmp_path / ".aider.chat.history.md", text)
    r = parse(path)
    assert not r.warnings
    assert [s.session_id for s in r.sessions] == [
        "aider.chat.history@2025-03-01T09:00:00Z",
        "aider.chat.history@2025-03-02T10:30:00Z",
    ]
    assert [s.start for s in r.sessions] == [dt("2025-03-01T09:00:00Z"), dt("2025-03-02T10:30:00Z")]
    assert [s.ended for s in r.sessions] == [True, False]
    s = r.sessions[0]
    kinds = [(t.role, t.kind, t.tool_name) for t in s.turns]
    assert kinds == [
        ("tool", "tool_result", "aider"),  # banner
        ("user", "message", None),  # /add
        ("system", "tool_result", "aider"),  # aider's own answer to it: a notice
        ("user", "message", None),  # two #### lines, one message
        ("assistant", "message", None),
        ("tool", "tool_result", "aider"),  # tokens
        ("assistant", "tool_call", "edit"),
        ("tool", "tool_result", "aider"),  # commit
        ("user", "tool_call", "shell"),  # /run, once: aider's "Running pytest -q" is that call
        ("tool", "tool_result", "aider"),
    ]
    texts = [t.text for t in s.turns]
    assert texts[1] == "/add src/client.py"
    assert texts[3] == "please make client retry 3 times before giving up\nand log each attempt"
    assert texts[0].startswith("/usr/local/bin/aider --model some-model\nAider v0.70.0")
    assert "#### Plan" in texts[4] and ">>>>>>> REPLACE" in texts[4]  # the model's heading is its own
    assert texts[6] == "edit src/client.py" and texts[8] == "shell pytest -q"
    assert texts[7] == "Commit 1a2b3c3 feat: retry client" and texts[9] == "3 passed in 0.2s"


def test_aider_multiline_tool_message_runs_to_the_hard_break(tmp_path: Path) -> None:
    hb = "  "
    text = (
        "# aider chat started at 2025-04-01 08:00:00\n\n"
        f"#### /settings{hb}\n"
        "> Command Line Args:   --model m\n"
        "\n"
        "Defaults:\n"
        "  --map-refresh:     auto\n"
        f"  - yes: None{hb}\n\n"
        f"> /usr/bin/aider --message fix the parser\n"
        "and add a test for it\n"
        f"--yes{hb}\n"
        f"> Aider v0.80.0{hb}\n\n"
        "Here is the change.\n\n"
        "> a quoted line the model wrote, without a hard break\n"
        "and more of the model's words.\n"
    )
    path = write(tmp_path / "h.md", text)
    s = parse(path).sessions[0]
    kinds = [(t.role, t.kind, t.line) for t in s.turns]
    assert kinds[:4] == [
        ("user", "message", 3),
        ("system", "tool_result", 4),  # aider's own answer to /settings: a notice
        ("tool", "tool_result", 10),
        ("assistant", "message", 15),
    ]
    assert s.turns[1].text.endswith("- yes: None") and "Defaults:" in s.turns[1].text
    assert (
        s.turns[2].text
        == "/usr/bin/aider --message fix the parser\nand add a test for it\n--yes\nAider v0.80.0"
    )
    # a `> ` line that never reaches a hard break is only itself; what follows is read normally
    assert s.turns[-1].role == "assistant" and s.turns[-1].text == "and more of the model's words."


def test_aider_offsets_and_lines_point_into_the_file(tmp_path: Path) -> None:
    text = aider_session("2025-03-01 09:00:00", "client", 3) + aider_session(
        "2025-03-02 10:30:00", "cache", 5
    )
    path = write(tmp_path / ".aider.chat.history.md", text)
    data = path.read_bytes()
    lines = data.decode().split("\n")
    r = parse(path)
    prev = 0
    for s in r.sessions:
        for t in s.turns:
            assert prev < t.end_offset <= len(data)
            prev = t.end_offset
            last = t.text.splitlines()[-1].split(" ", 1)[-1]
            assert data[: t.end_offset].decode().rstrip().endswith(last), t
    user = r.sessions[1].turns[3]
    assert lines[user.line - 1].startswith("#### please make cache retry")
    assert r.sessions[1].turns[0].line == text[: text.index("> /usr", text.index("10:30:00"))].count("\n") + 1


def test_aider_ids_are_stable_as_the_file_grows(tmp_path: Path) -> None:
    path = write(tmp_path / ".aider.chat.history.md", aider_session("2025-03-01 09:00:00", "a", 2))
    before = parse(path).sessions
    with path.open("a") as fh:
        fh.write(aider_session("2025-03-01 09:00:00", "b", 4))  # same second: a second run
        fh.write(aider_session("2025-03-03 12:00:00", "c", 6))
    after = parse(path).sessions
    assert [s.session_id for s in after] == [
        "aider.chat.history@2025-03-01T09:00:00Z",
        "aider.chat.history@2025-03-01T09:00:00Z-2",
        "aider.chat.history@2025-03-03T12:00:00Z",
    ]
    assert [(t.line, t.end_offset, t.text) for t in after[0].turns] == [
        (t.line, t.end_offset, t.text) for t in before[0].turns
    ]
    assert not before[0].ended and after[0].ended


def test_aider_without_hard_breaks_still_parses(tmp_path: Path) -> None:
    text = "\n".join(ln.rstrip() for ln in aider_session("2025-03-01 09:00:00", "x", 2).splitlines())
    s = parse(write(tmp_path / "h.md", text)).sessions[0]
    assert [t.role for t in s.turns][:4] == ["tool", "user", "system", "user"]
    assert s.turns[0].text.count("\n") == 3  # four banner lines, nothing swallowed


# --------------------------------------------------------------------------- SpecStory

SPECSTORY = """<!-- Generated by SpecStory, Markdown v2.0.0 -->

# 2025-12-04 22:30:17Z

<!-- Claude Code Session 0b7e2c1a-4d5f-4e6a-9b8c-1d2e3f405162 (2025-12-04_22-30-17Z) -->

_**User (2025-12-04 22:30:20Z)**_

The export button crashes when the list is empty. Can you fix it?

---

_**Agent (some-model 2025-12-04 22:30:25Z)**_

<think><details><summary>Thought Process</summary>
Probably an index into an empty list in exporter.py.
</details></think>

_**Agent (some-model 2025-12-04 22:30:26Z)**_

<tool-use data-tool-type="read" data-tool-name="Read"><details>
<summary>Tool use: **Read**</summary>
 `./src/exporter.py`
```
     1→def export(rows):
     2→    first = rows[0]
```
</details></tool-use>

_**Agent (some-model) (sidechain)**_

A helper agent looked at the tests.

_**Agent (some-model 2025-12-04 22:31:00Z)**_

<tool-use data-tool-type="bash" data-tool-name="Bash"><details>
<summary>Tool use: **Bash**</summary>
 Run the tests

`pytest -q tests/test_exporter.py`
```
Exit code 1
E   IndexError: list index out of range
1 failed in 0.1s
```
</details></tool-use>

_**Agent (some-model 2025-12-04 22:31:05Z)**_

<tool-use data-tool-type="generic" data-tool-name="TodoWrite"><details>
**Agent task list:**
- [X] guard the empty list
</details></tool-use>
```
Todos have been modified successfully.
```

_**Agent (some-model 2025-12-04 22:31:10Z)**_

<tool-use data-tool-type="shell" data-tool-name="run_shell_command"><details><summary>Tool use: **Shell**</summary>

```bash
cat notes/old-chat.md
```

Result:
```text
_**User**_
this line is quoted output, not a new section
Exit Code: 0
```
</details></tool-use>

Fixed: `export()` now returns early on an empty list.

---

_**User (2025-12-04 22:33:00Z)**_

thanks
"""


def test_specstory_sections_thinking_and_tools(tmp_path: Path) -> None:
    path = write(tmp_path / ".specstory/history/2025-12-04_22-30-17Z-export-crash.md", SPECSTORY)
    r = parse(path)
    assert not r.warnings
    (s,) = r.sessions
    assert s.session_id == "0b7e2c1a-4d5f-4e6a-9b8c-1d2e3f405162"
    assert s.start == dt("2025-12-04T22:30:17Z") and s.end == dt("2025-12-04T22:33:00Z")
    got = [(t.role, t.kind, t.tool_name) for t in s.turns]
    assert got == [
        ("user", "message", None),
        ("assistant", "thinking", None),
        ("assistant", "tool_call", "Read"),
        ("tool", "tool_result", "Read"),
        ("assistant", "message", None),  # sidechain
        ("assistant", "tool_call", "shell"),
        ("tool", "tool_result", "shell"),
        ("assistant", "tool_call", "TodoWrite"),
        ("tool", "tool_result", "TodoWrite"),  # the fence after </tool-use>
        ("assistant", "tool_call", "shell"),
        ("tool", "tool_result", "shell"),
        ("assistant", "message", None),
        ("user", "message", None),
    ]
    t = s.turns
    assert t[0].text.startswith("The export button crashes") and t[0].ts == dt("2025-12-04T22:30:20Z")
    assert t[1].text == "Probably an index into an empty list in exporter.py."
    assert t[2].text == "Read\n`./src/exporter.py`" and "rows[0]" in t[3].text
    assert t[4].ts is None and t[4].text == "A helper agent looked at the tests."
    assert t[5].text == "shell pytest -q tests/test_exporter.py\nRun the tests"
    assert t[6].text.startswith("Exit code 1\nE   IndexError")
    assert t[8].text == "Todos have been modified successfully."
    assert t[9].text == "shell cat notes/old-chat.md"
    assert "_**User**_\nthis line is quoted output" in t[10].text  # inside a fence: no new section
    assert t[11].text == "Fixed: `export()` now returns early on an empty list."  # no `---`
    assert t[12].text == "thanks" and not any(x.text == "---" for x in t)
    offsets = [x.end_offset for x in t]
    assert offsets == sorted(offsets) and offsets[-1] == len(path.read_bytes())


def test_specstory_without_header_dates_from_file_name(tmp_path: Path) -> None:
    text = "_**User**_\n\nhello there\n\n---\n\n_**Assistant**_\n\nhi, what are we fixing?\n"
    r = parse(write(tmp_path / "2025-11-02_08-15-00Z-hello.md", text))
    (s,) = r.sessions
    assert s.session_id == "2025-11-02_08-15-00Z-hello" and s.start == dt("2025-11-02T08:15:00Z")
    assert [(t.role, t.text) for t in s.turns] == [
        ("user", "hello there"),
        ("assistant", "hi, what are we fixing?"),
    ]


# --------------------------------------------------------------------------- speaker lines, plain text


def test_named_speakers_with_timestamps(tmp_path: Path) -> None:
    text = (
        "# Standup chat\n\n"
        "**Dana** (2025-01-03 10:15):\nThe nightly build fails on the arm runner.\n\n"
        "**Claude** (2025-01-03 10:16): It is the cache key; it ignores the architecture.\n\n"
        "**Note**: bold labels inside an answer are not speakers.\n\n"
        "**Dana** (10:20): ship the fix today\n"
    )
    r = parse(write(tmp_path / "standup.md", text))
    (s,) = r.sessions
    assert s.turns[0].role == "system" and s.turns[0].text == "# Standup chat"  # before any speaker
    assert [(t.role, t.ts) for t in s.turns[1:]] == [
        ("user", dt("2025-01-03T10:15:00Z")),
        ("assistant", dt("2025-01-03T10:16:00Z")),
        ("user", dt("2025-01-03T10:20:00Z")),
    ]
    assert "**Note**: bold labels" in s.turns[2].text
    assert s.start == dt("2025-01-03T10:15:00Z") and s.end == dt("2025-01-03T10:20:00Z")


@pytest.mark.parametrize(
    ("line", "when"),
    [
        ("**Bot** (2026-11-10T10:01:35.000Z): Please fix the retry.", "2026-11-10T10:01:35Z"),
        ("**Assistant** (2026-11-10 10:01): Please fix the retry.", "2026-11-10T10:01:00Z"),
        ("**User** [2026-11-10T10:01:35Z] Please fix the retry.", "2026-11-10T10:01:35Z"),
        ("__Agent__ (10:01:35) — Please fix the retry.", "2026-11-10T10:01:35Z"),
        ("**Claude** (10:01 am): Please fix the retry.", "2026-11-10T10:01:00Z"),
        ("**AI** [2026-11-10]: Please fix the retry.", "2026-11-10T00:00:00Z"),
    ],
)
def test_a_role_words_timestamp_is_the_turns_time_never_its_text(
    tmp_path: Path, line: str, when: str
) -> None:
    """Issue 30: "**Bot** (2026-…): text" kept "(2026-…): " in the turn's text, so the cold
    entry's heading and outcome began with the timestamp."""
    text = f"## 2026-11-10\n\n**User**: what is wrong with the retry?\n\n{line}\n"
    s = parse(write(tmp_path / "chat.md", text)).sessions[0]
    last = s.turns[-1]
    assert last.text == "Please fix the retry.", last.text
    assert last.ts == dt(when)


def test_plain_name_lines_need_a_real_dialogue(tmp_path: Path) -> None:
    chat = (
        "Ana: can you rename the flag?\n\nBo: renamed to --dry-run\n\nAna: thanks, merge it\n\nBo: merged\n"
    )
    s = parse(write(tmp_path / "2025-02-01-chat.md", chat)).sessions[0]
    assert [t.role for t in s.turns] == ["user", "assistant", "user", "assistant"]
    assert s.turns[1].text == "renamed to --dry-run"
    prose = "Summary: the flag was renamed.\n\nReason: clarity.\n\nSummary: done.\n\nReason: none.\n"
    s = parse(write(tmp_path / "2025-02-01-notes.md", prose)).sessions[0]
    assert all(t.role == "assistant" for t in s.turns) and s.turns[0].text.startswith("Summary:")


def test_end_marker_mid_file_starts_a_new_session(tmp_path: Path) -> None:
    text = (
        "User: first task at 2025-05-01T09:00:00Z\n\nAssistant: done\n\n<!-- session: end -->\n\n"
        "User: second task at 2025-05-02T09:00:00Z\n\nAssistant: on it\n"
    )
    r = parse(write(tmp_path / "log.md", text))
    assert [(s.session_id, s.ended, s.start) for s in r.sessions] == [
        ("log", True, dt("2025-05-01T09:00:00Z")),
        ("log@2025-05-02T09:00:00Z", False, dt("2025-05-02T09:00:00Z")),
    ]
    assert not r.ended


# --------------------------------------------------------------------------- clipping


def test_messages_stay_whole_and_tool_errors_survive_clipping(tmp_path: Path) -> None:
    big = "word " * 40_000  # 200 KB of user text
    noise = "".join(f"compiling module {i}\n" for i in range(5000))
    out = noise + "Traceback (most recent call last):\nKeyError: 'sig'\nerror[E0599]: no method\n" + noise
    cut = clip_tool_output(out)
    assert "KeyError: 'sig'" in cut and "error[E0599]: no method" in cut and "Traceback" in cut
    assert "chars elided, 3 error lines kept" in cut and len(cut) < 5_000
    assert "compiling module 4999" not in cut.split("[…]")[0]  # the middle is gone
    assert clip_tool_output("short") == "short"
    text = f"User: {big}\n\nTool: {out}\n"
    s = parse(write(tmp_path / "2025-01-01-big.md", text)).sessions[0]
    assert s.turns[0].text == big.strip() and len(s.turns[0].text) < MAX_TURN_CHARS
    assert "KeyError: 'sig'" in s.turns[1].text and len(s.turns[1].text) < 5_000


# --------------------------------------------------------------------------- discovery


NEAR_MISSES = [
    "a.md",
    ".aider.chat.history.md",
    "proj/.aider.chat.history.md",
    "proj/.aider.chat.history.md.swp",
    "proj/.aider.chat.history.md~",
    "proj/.aider.input.history",
    "proj/aider.chat.history.md",
    "proj/.#notes.md",
    "proj/#notes.md#",
    "proj/notes.md.tmp",
    "proj/notes.md.part",
    "proj/.scribed-tmp-abc.md",
    "proj/.hidden.md",
    "proj/.git/COMMIT_EDITMSG.md",
    "proj/.git/x/.aider.chat.history.md",
    "proj/.specstory/history/2025-12-01_10-00-00Z-a.md",
    "proj/.specstory/history/.2025-12-01.md",
    "proj/.specstory/history/sub/b.md",
    "proj/.specstory/c.md",
    ".specstory/history/d.md",
    "x/y/z.markdown",
    "x/y/z.txt",
    "x/y/z.json",
]


def test_discovery_obeys_globs_and_skips_temp_files(tmp_path: Path) -> None:
    src = tmp_path / "src"
    for rel in NEAR_MISSES:
        write(src / rel, "x\n")
    (src / "link").symlink_to(src / "proj", target_is_directory=True)

    def found(glob: str = "") -> list[str]:
        return [p.relative_to(src).as_posix() for p in discover("markdown", src, glob)]

    assert found() == [
        ".aider.chat.history.md",
        ".specstory/history/d.md",
        "a.md",
        "proj/.aider.chat.history.md",
        "proj/.specstory/history/2025-12-01_10-00-00Z-a.md",
        "proj/aider.chat.history.md",
        "x/y/z.markdown",
        "x/y/z.txt",
    ]
    assert found(".specstory/history/*.md") == [".specstory/history/d.md"]
    assert found("*/.specstory/history/*.md") == ["proj/.specstory/history/2025-12-01_10-00-00Z-a.md"]
    assert found("**/.aider.chat.history.md") == [".aider.chat.history.md", "proj/.aider.chat.history.md"]
    assert found(".*.md") == [".aider.chat.history.md"]
    assert found("proj/.*") == ["proj/.aider.chat.history.md", "proj/.aider.input.history", "proj/.hidden.md"]
    assert found("**/*.md") == ["a.md", "proj/aider.chat.history.md"]


@pytest.mark.parametrize(
    "glob", ["", ".specstory/history/*.md", "**/.aider.chat.history.md", "proj/.*", "**/*", "**", "/abs/*.md"]
)
def test_daemon_resolve_agrees_with_discover(tmp_path: Path, glob: str) -> None:
    root = tmp_path / "root"
    (root / ".squad").mkdir(parents=True)
    src = tmp_path / "src"
    for rel in NEAR_MISSES:
        write(src / rel, "x\n")
    cfg = config.from_dict(
        {"root": str(root), "sources": [{"kind": "markdown", "path": str(src), "agent": "dev", "glob": glob}]}
    )
    d = Daemon(cfg, scheduler_factory=lambda: None, notify=lambda _m: False)
    try:
        listed = set(discover("markdown", src, glob))
        every = [p for p in src.rglob("*") if p.is_file()]
        resolved = {p for p in every if d.resolve(p) is not None}
        matched = {p for p in every if match("markdown", src, glob, p)}
        assert resolved == matched == listed
        for p in every:  # the event filter must let every discoverable file through
            assert d.on_path_event(str(p)) == (p in listed)
    finally:
        d.scribe.close()


def test_match_follows_the_codex_fallback(tmp_path: Path) -> None:
    other = write(tmp_path / "2026/01/02/other.jsonl", "{}\n")
    assert match("codex", tmp_path, "", other) and list(discover("codex", tmp_path)) == [other]
    roll = write(tmp_path / "2026/01/02/rollout-x.jsonl", "{}\n")
    assert not match("codex", tmp_path, "", other) and match("codex", tmp_path, "", roll)
    assert sources.is_temp(".#x.md") and sources.is_temp("x.md.swp") and not sources.is_temp(".aider.md")


# --------------------------------------------------------------------------- end to end


def scribe_for(root: Path, src: Path, now: list[datetime]) -> Scribe:
    cfg = config.from_dict(
        {
            "root": str(root),
            "compress": {"backend": "extractive"},
            "session": {"quiet_seconds": 600},
            "sources": [{"kind": "markdown", "path": str(src), "agent": "dev"}],
        }
    )
    return Scribe(cfg, clock=lambda: now[0])


def cold_entries(root: Path) -> list[str]:
    path = root / ".squad/memory/cold/dev.md"
    if not path.exists():
        return []
    _, entries = split_entries(path.read_text())
    return [e.date for e in entries]


def run(root: Path, src: Path, now: list[datetime]) -> int:
    s = scribe_for(root, src, now)
    try:
        report = s.run_once()
    finally:
        s.close()
    assert report.failed == 0, report.failures
    return report.compacted


def test_aider_history_gives_one_entry_per_session_never_twice(tmp_path: Path) -> None:
    root, src = tmp_path / "root", tmp_path / "repo"
    (root / ".squad").mkdir(parents=True)
    days = [f"2025-06-0{d} 1{d}:00:00" for d in range(1, 7)]
    topics = ["auth", "cache", "queue", "billing", "search", "export"]
    hist = write(
        src / ".aider.chat.history.md", "".join(aider_session(days[k], topics[k], k + 2) for k in range(5))
    )
    now = [datetime.now(UTC)]

    # While aider is still writing (not quiet), the four sessions followed by a header are done.
    assert run(root, src, now) == 4
    assert cold_entries(root) == [f"2025-06-0{d}T1{d}:00:00Z" for d in range(1, 5)]
    assert run(root, src, now) == 0

    now[0] += timedelta(hours=1)  # quiet: the last session is finished too
    assert run(root, src, now) == 1
    assert cold_entries(root) == [f"2025-06-0{d}T1{d}:00:00Z" for d in range(1, 6)]
    assert run(root, src, now) == 0

    with hist.open("a") as fh:
        fh.write(aider_session(days[5], topics[5], 7))
    later = now[0].timestamp() + 60
    os.utime(hist, (later, later))
    now[0] += timedelta(hours=2)
    assert run(root, src, now) == 1
    dates = cold_entries(root)
    assert dates == [f"2025-06-0{d}T1{d}:00:00Z" for d in range(1, 7)]
    assert run(root, src, now) == 0
    text = (root / ".squad/memory/cold/dev.md").read_text()
    assert "session=aider.chat.history@2025-06-06T16:00:00Z" in text
    assert "src/export.py" in text


def test_a_session_of_only_tool_banner_gives_no_entry(tmp_path: Path) -> None:
    """aider started and quit at once: a header and its banner lines are nothing to remember."""
    root, src = tmp_path / "root", tmp_path / "repo"
    (root / ".squad").mkdir(parents=True)
    banner = (
        "\n# aider chat started at 2025-06-01 09:00:00\n\n"
        "> Aider v0.86.2  \n> Model: some-model with whole edit format  \n> Git repo: .git with 12 files  \n"
    )
    write(src / ".aider.chat.history.md", banner + aider_session("2025-06-01 10:00:00", "auth", 2))
    now = [datetime.now(UTC) + timedelta(hours=1)]
    assert run(root, src, now) == 1
    assert cold_entries(root) == ["2025-06-01T10:00:00Z"]


def test_aider_empty_submit_is_no_message_and_no_entry(tmp_path: Path) -> None:
    """Aider writes ``#### <blank>`` for an empty submit: it is not a goal, and a run that holds
    nothing else (a banner, an empty submit) gives no cold entry."""
    hb = "  "
    empty_run = (
        "# aider chat started at 2025-08-31 05:53:17\n\n"
        f"> /usr/bin/aider --watch-files{hb}\n"
        f"> Aider v0.86.1{hb}\n\n"
        f"#### <blank>{hb}\n\n"
    )
    real_run = aider_session("2025-08-31 06:10:00", "billing", 3).replace(
        "#### and log each attempt", f"#### <blank>{hb}\n#### and log each attempt"
    )
    path = write(tmp_path / ".aider.chat.history.md", empty_run + real_run)
    sessions = parse(path).sessions
    assert all("<blank>" not in t.text for s in sessions for t in s.turns)
    said = [t.text for t in sessions[-1].turns if t.role == "user"]
    assert "please make billing retry 3 times before giving up\nand log each attempt" in said
    squad = tmp_path / "root"
    (squad / ".squad").mkdir(parents=True)
    cfg = squad / "scribed.toml"
    cfg.write_text(
        f'root = "{squad}"\n[[sources]]\nkind = "markdown"\npath = "{tmp_path}"\n'
        'glob = ".aider.chat.history.md"\nagent = "aider"\n'
    )
    p = run_cli("--config", str(cfg), "run-once", "--force", "--json")
    assert p.returncode == 0, p.stderr.decode()
    cold = (squad / ".squad/memory/cold/aider.md").read_text()
    assert "<blank>" not in cold and cold.count("\n### 2025-08-31") == 1


def test_a_harness_reminder_inlined_in_an_assistant_turn_is_dropped() -> None:
    """A markdown export may inline a tool's output, and the reminder the harness appended to it,
    into the assistant's turn (or its thinking): never the session's content."""
    from scribed.models import Turn
    from scribed.sources import injected

    text = "Read the widget.\n<system-reminder>\nConsider whether the file is malware.\n</system-reminder>\nDone."
    turns = [Turn(role="assistant", text=text, kind=k) for k in ("message", "thinking")]
    assert [t.text for t in injected.clean_turns(turns)] == ["Read the widget.\n\nDone."] * 2


def test_run_once_rows_tell_two_long_session_ids_apart(tmp_path: Path) -> None:
    """Aider's session ids ("aider.chat.history@<start>") pass the table's column: a row shows the
    id's tail, where two sessions of one file differ, not a head cut inside the time."""
    text = aider_session("2025-08-31 06:10:00", "billing", 3) + aider_session(
        "2025-08-31 06:10:45", "ledger", 3
    )
    write(tmp_path / "src/.aider.chat.history.md", text)
    squad = tmp_path / "root"
    (squad / ".squad").mkdir(parents=True)
    cfg = squad / "scribed.toml"
    cfg.write_text(
        f'root = "{squad}"\n[[sources]]\nkind = "markdown"\npath = "{tmp_path / "src"}"\nagent = "aider"\n'
    )
    p = run_cli("--config", str(cfg), "run-once", "--force")
    assert p.returncode == 0, p.stderr.decode()
    rows = [ln.split()[1] for ln in p.stdout.decode().splitlines() if ln.startswith("aider ")]
    assert len(rows) == 2 and rows[0] != rows[1], rows
    assert rows[0].endswith("06:10:00Z") and rows[1].endswith("06:10:45Z"), rows


def test_an_assistant_naming_the_reminder_tag_in_prose_keeps_its_words() -> None:
    """Outside tool output a reminder is dropped only on lines of its own (found by review)."""
    from scribed.models import Turn
    from scribed.sources import injected

    text = "The harness wraps hints in <system-reminder>x</system-reminder> in the test."
    assert injected.clean_turns([Turn(role="assistant", text=text)])[0].text == text
