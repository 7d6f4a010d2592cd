"""One session compacted at different points in two clones, with real git (two clones of one
repository, a bare remote): clone a compacts a session's first lines, the session goes on, a
compacts the rest; clone b holds the same transcript and compacts it whole (or only as far as a
did not). After the merge both clones must serve each part of the session once, keep what every
entry said, agree file for file, and do nothing more on a second run (:mod:`scribed.tiers.cold_overlap`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
from test_team_git import Clone, clone_pair, git

pytestmark = [
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.slow,  # real git and ~12 scribed processes a test
]

MEMORY = ".squad/memory"
SID = "6f1c2d3e-0000-4000-8000-00000000c0de"
FIRST = [
    ("user", "Fix the login flake in src/auth.py, issue #12"),
    ("assistant", "Decision: use an injected clock in src/auth.py instead of freeze_time."),
    ("user", "ok"),
    ("assistant", "Done: tests pass (5 passed)."),
]
THEN = [
    ("user", "Now port the retry helper in src/retry.py, issue #14"),
    ("assistant", "Decision: drop the sleep-based retry in src/retry.py."),
    ("user", "good"),
    ("assistant", "Done: retry tests pass (3 passed)."),
]


def _append(path: Path, turns: list[tuple[str, str]], hour: int) -> None:
    """Turns appended to a Claude Code transcript, left quiet (finished) since long ago."""
    lines = [
        json.dumps(
            {
                "type": role,
                "uuid": f"u{hour}-{i}",
                "parentUuid": None,
                "sessionId": SID,
                "timestamp": f"2026-11-10T{hour:02d}:{i:02d}:00.000Z",
                "cwd": "/repo",
                "message": {"role": role, "content": text},
            }
        )
        for i, (role, text) in enumerate(turns)
    ]
    with path.open("a") as fh:
        fh.write("\n".join(lines) + "\n")
    os.utime(path, (1_790_000_000, 1_790_000_000))


def _team(tmp_path: Path) -> tuple[Clone, Clone]:
    return clone_pair(tmp_path, driver=True)


def _split_and_whole(tmp_path: Path, *, b_compacts_all: bool = True) -> tuple[Clone, Clone]:
    """a compacts lines 1–4, the session goes on, a compacts 5–8 (only when ``b_compacts_all``:
    else a stops at 4); b, holding the whole transcript, compacts 1–8 in one go."""
    a, b = _team(tmp_path)
    src_a = a.sources["riker"] / f"{SID}.jsonl"
    _append(src_a, FIRST, 10)
    a.scribed("run-once")
    _append(src_a, THEN, 11)
    if b_compacts_all:
        a.scribed("run-once")
    dst = b.sources["riker"] / f"{SID}.jsonl"
    shutil.copy2(src_a, dst)
    if not b_compacts_all:  # a's copy is behind b's: a compacted only the first part
        src_a.write_text("".join(src_a.read_text().splitlines(keepends=True)[:4]))
        os.utime(src_a, (1_790_000_000, 1_790_000_000))
    b.scribed("run-once")
    a.commit()
    b.commit()
    return a, b


def _exchange(first: Clone, second: Clone) -> None:
    """``first`` pushes, ``second`` pulls, runs and pushes, ``first`` pulls and runs: both end on
    the same commit, each having run scribed on the merge."""
    first.push()
    second.pull("merge")
    second.scribed("run-once")
    second.commit()
    second.push()
    first.pull("merge")
    first.scribed("run-once")
    first.commit()
    first.push()
    second.pull("merge")
    second.scribed("run-once")


def _ids(c: Clone) -> list[str]:
    view = c.dir / MEMORY / "cold" / "riker.md"
    return re.findall(r"provenance: id=([a-z]-[0-9a-f]+)", view.read_text())


def _lines(c: Clone) -> list[str]:
    view = (c.dir / MEMORY / "cold" / "riker.md").read_text()
    return re.findall(r" · (lines \d+–\d+) · ", view)


def _store(c: Clone) -> dict[str, str]:
    folder = c.dir / MEMORY / "cold" / "riker"
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


def _resume(c: Clone) -> str:
    """The cold history ``scribed context --situation resume`` serves (the hot file shows the
    newest entry's decisions again, on purpose)."""
    out = c.scribed("context", "riker", "--situation", "resume", "--include-cold").stdout.decode()
    return out.partition("### Cold (summarized history)")[2]


def _settled(a: Clone, b: Clone) -> None:
    """Both clones on one tree, the same view, and a second run that changes nothing."""
    for c in (a, b):
        p = c.scribed("run-once", "--json")
        assert json.loads(p.stdout)["compacted"] == 0, (c.name, "a retired part was compacted again")
        assert git(c.dir, "status", "--porcelain").stdout.strip() == "", (
            c.name,
            "a second run changed files",
        )
    assert git(a.dir, "rev-parse", "HEAD:.squad").stdout == git(b.dir, "rev-parse", "HEAD:.squad").stdout
    assert _store(a) == _store(b)
    assert (a.dir / MEMORY / "cold" / "riker.md").read_text() == (
        b.dir / MEMORY / "cold" / "riker.md"
    ).read_text()
    for c in (a, b):
        doctor = c.scribed("doctor").stdout.decode()
        assert "told twice" not in doctor, doctor


def _told_once(c: Clone) -> None:
    """The session's two decisions once each in what a resuming spawn reads, both outcomes kept."""
    resume = _resume(c)
    for decision in ("use an injected clock in src/auth.py", "drop the sleep-based retry in src/retry.py"):
        assert resume.count(decision) == 1, (c.name, decision, resume)
    assert "tests pass (5 passed)" in resume and "retry tests pass (3 passed)" in resume


@pytest.mark.parametrize("first_push", ["a", "b"])
def test_a_session_cut_in_two_here_and_whole_there_is_served_once_as_its_two_parts(
    tmp_path: Path, first_push: str
) -> None:
    """The finer cut wins whichever clone pushes first: both clones keep a's two parts (each with
    its own goal, outcome and decisions), b's whole-session entry is retired with a ``retired.txt``
    line naming the parts, and each decision is served once."""
    a, b = _split_and_whole(tmp_path)
    parts, whole = _ids(a), _ids(b)
    assert len(parts) == 2 and len(whole) == 1
    first, second = (a, b) if first_push == "a" else (b, a)
    first.push()
    second.pull("merge")
    doctor = second.scribed("doctor").stdout.decode()
    assert "told twice" in doctor and SID in doctor, doctor  # seen before the run resolves it
    _exchange(first, second)

    for c in (a, b):
        assert _ids(c) == parts, (c.name, _ids(c))
        assert _lines(c) == ["lines 1–4", "lines 5–8"]
        _told_once(c)
        retired = (c.dir / MEMORY / "cold" / "riker" / "retired.txt").read_text()
        assert re.search(
            rf"^{whole[0]} \S+ covered by {parts[0]},{parts[1]} · session={SID} · lines 1–8$", retired, re.M
        ), retired
    _settled(a, b)


def test_a_session_one_clone_compacted_further_is_merged_into_one_entry_with_nothing_lost(
    tmp_path: Path,
) -> None:
    """a compacted only lines 1–4, b the whole session (1–8): no finer cut spans the session, so
    both clones make the same one entry of the two (lines 1–8, every decision and outcome of both,
    each once) and retire both; a's later compaction of lines 5–8 lands in that entry too."""
    a, b = _split_and_whole(tmp_path, b_compacts_all=False)
    assert _lines(a) == ["lines 1–4"] and _lines(b) == ["lines 1–8"]
    told = {*_ids(a), *_ids(b)}
    _exchange(a, b)

    for c in (a, b):
        (merged,) = _ids(c)
        assert merged not in told
        assert _lines(c) == ["lines 1–8"]
        view = (c.dir / MEMORY / "cold" / "riker.md").read_text()
        assert f"folded={','.join(sorted(told))}" in view or all(t in view for t in told), view
        _told_once(c)
    _settled(a, b)

    # a's transcript catches up: its part 5–8 is told by the merged entry already
    src_a = a.sources["riker"] / f"{SID}.jsonl"
    _append(src_a, THEN, 11)
    a.scribed("run-once")
    a.commit()
    a.push()
    b.pull("merge")
    b.scribed("run-once")
    b.commit()
    b.push()
    a.pull("merge")
    a.scribed("run-once")
    for c in (a, b):
        assert _lines(c) == ["lines 1–8"], (c.name, _lines(c))
        resume = _resume(c)
        assert resume.count("drop the sleep-based retry in src/retry.py") == 1, resume
    _settled(a, b)
