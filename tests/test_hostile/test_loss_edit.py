"""A transcript edited in place after it was compacted (a line removed, its tail cut) is the same
session: it gets no second entry. One rewritten with a session that goes on past the entry's end
is compacted again (what an entry holds is then no longer what the file says)."""

from __future__ import annotations

import os
from pathlib import Path

from lossy_kit import OLD, make_root, memory_entries, run_once, write_session


def _lines(f: Path) -> list[str]:
    return f.read_text().splitlines(keepends=True)


def test_a_line_removed_in_the_middle_adds_no_entry(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-e.jsonl"
    write_session(f, "sess-e", 5)
    assert run_once(cfg)[1]["compacted"] == 1
    lines = _lines(f)
    f.write_text("".join(lines[:2] + lines[3:]))  # one assistant message scrubbed by hand
    os.utime(f, (OLD, OLD))
    code, out, _ = run_once(cfg)
    assert code == 0 and out["compacted"] == 0, out["entries"]
    assert len(memory_entries(root)) == 1


def test_a_cut_tail_adds_no_entry(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-f.jsonl"
    write_session(f, "sess-f", 6)
    assert run_once(cfg)[1]["compacted"] == 1
    f.write_text("".join(_lines(f)[:-2]))
    os.utime(f, (OLD, OLD))
    code, out, _ = run_once(cfg)
    assert code == 0 and out["compacted"] == 0, out["entries"]
    assert len(memory_entries(root)) == 1


def test_a_rewrite_that_goes_on_is_compacted_again(tmp_path: Path) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-g.jsonl"
    write_session(f, "sess-g", 7)
    assert run_once(cfg)[1]["compacted"] == 1
    write_session(f, "sess-g", 7, part=3)  # the same id, other turns, ending 30 minutes later
    os.utime(f, (OLD + 100, OLD + 100))
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert any("worker_7_3_0" in e for e in memory_entries(root))


def _aider_root(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A root and a config reading one Aider history (markdown, no time per message)."""
    root = tmp_path / "root"
    (root / ".squad/memory/hot").mkdir(parents=True)
    src = tmp_path / "md"
    src.mkdir()
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[session]\nquiet_seconds = 1\n[cold]\nttl_days = 3650\n'
        f'[[sources]]\nkind = "markdown"\npath = "{src}"\nagent = "a0"\n'
    )
    return root, cfg, src / ".aider.chat.history.md"


def _history(tag: str, n: int = 3, *, drop: str = "") -> str:
    """An Aider session: ``n`` requests, each answered in three lines (``drop``: a line left out)."""
    asks = "".join(
        f"#### Please fix job {tag}{i} in ci/job_{tag}{i}.yml.\n\n"
        f"Decision: pin worker_{tag}_{i} to queue q_{tag}_{i} in src/w_{tag}/p_{i}.py.\n"
        f"The runner r_{tag}_{i} needs the cache key k_{tag}_{i}.\n"
        f"Checked with tests/t_{tag}_{i}.py.\n\n"
        for i in range(n)
    )
    asks = "".join(line for line in asks.splitlines(keepends=True) if not drop or drop not in line)
    return "\n# aider chat started at 2026-11-01 10:00:00\n\n" + asks


def test_an_untimed_session_rewritten_loses_nothing(tmp_path: Path) -> None:
    """An Aider history has no time per message: its session's end is its start, which no edit
    moves, so the end cannot tell an edit from a rewrite. Such a range is compacted again (a
    duplicate rather than new content lost; found by review)."""
    root, cfg, f = _aider_root(tmp_path)
    f.write_text(_history("old"))
    os.utime(f, (OLD, OLD))
    assert run_once(cfg)[1]["compacted"] == 1
    f.write_text(_history("new"))  # the same session id and end, other content
    os.utime(f, (OLD + 100, OLD + 100))
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert any("worker_new_2" in e for e in memory_entries(root))


def test_an_untimed_history_edited_in_place_is_compacted_again_only_where_it_changed(tmp_path: Path) -> None:
    """A line removed from one answer: the turns an entry holds word for word are not compacted
    again, so the second entry holds the edited answer alone, not a copy of the whole session."""
    root, cfg, f = _aider_root(tmp_path)
    f.write_text(_history("x"))
    os.utime(f, (OLD, OLD))
    assert run_once(cfg)[1]["compacted"] == 1
    f.write_text(_history("x", drop="runner r_x_1"))  # the middle answer loses its second line
    os.utime(f, (OLD + 100, OLD + 100))
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    entries = memory_entries(root)  # one second: listed by key, as every clone lists them
    assert len(entries) == 2
    first = next(e for e in entries if "worker_x_0" in e)
    second = next(e for e in entries if e is not first)
    assert "worker_x_0" in first and "worker_x_2" in first
    assert "worker_x_1" in second and "t_x_1" in second  # the edited answer, as it reads now
    assert "worker_x_0" not in second and "worker_x_2" not in second
    assert "job_x0" not in second and "job_x2" not in second  # no other turn again


def test_an_untimed_history_with_its_tail_cut_adds_no_entry(tmp_path: Path) -> None:
    root, cfg, f = _aider_root(tmp_path)
    f.write_text(_history("y"))
    os.utime(f, (OLD, OLD))
    assert run_once(cfg)[1]["compacted"] == 1
    f.write_text(_history("y", 2))  # the last request and its answer cut
    os.utime(f, (OLD + 100, OLD + 100))
    code, out, _ = run_once(cfg)
    assert code == 0 and out["compacted"] == 0, out["entries"]
    assert len(memory_entries(root)) == 1


def test_an_edit_of_tool_output_alone_is_compacted_with_its_message(tmp_path: Path) -> None:
    """Only aider's own output changed: the changed tool turn is compacted with the message
    before it, since a part with no message is never compacted (it was lost; found by review)."""
    root, cfg, f = _aider_root(tmp_path)

    def history(result: str) -> str:
        return (
            "\n# aider chat started at 2026-11-01 10:00:00\n\n"
            "#### Pin worker_7 to queue q_7 in src/w.py.\n\nPinned worker_7 to q_7 in src/w.py.\n\n"
            f"> Running pytest tests/test_q.py\n> {result}\n\n"
            "#### Thanks, now the cache key.\n\nKeyed the cache by the lockfile hash in src/cache.py.\n\n"
        )

    f.write_text(history("FAILED tests/test_q.py::test_pin - KeyError: 'q_7'"))
    os.utime(f, (OLD, OLD))
    assert run_once(cfg)[1]["compacted"] == 1
    f.write_text(history("FAILED tests/test_q.py::test_pin - KeyError: 'ROLLBACK_77'"))
    os.utime(f, (OLD + 100, OLD + 100))
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    entries = memory_entries(root)  # one second: listed by key, as every clone lists them
    assert len(entries) == 2
    second = next(e for e in entries if "ROLLBACK_77" in e)
    assert "src/cache.py" not in second  # not the whole session again


def test_the_ledger_keeps_keyed_digests_only(tmp_path: Path) -> None:
    """An unkeyed digest of a turn holding a short secret could be confirmed by guessing: the ledger
    keeps each turn's HMAC under the root's key, no plain sha256 of the turn raw or redacted (found
    by review; keyed since issue 31)."""
    import hashlib
    import sqlite3

    from scribed.core.content_key import Keyring
    from scribed.models import Turn

    root, cfg, f = _aider_root(tmp_path)
    f.write_text(
        "\n# aider chat started at 2026-11-01 10:00:00\n\n#### Fix the deploy in ops/deploy.sh.\n\n"
        "#### password=Winter2026\n\nUsing that for the staging db in ops/deploy.sh.\n\n"
    )
    os.utime(f, (OLD, OLD))
    assert run_once(cfg)[1]["compacted"] == 1
    state = root / ".squad/memory/.scribed"
    db = sqlite3.connect(state / "ledger.sqlite")
    old, blob = db.execute("SELECT turn_digests, turn_keys FROM entries").fetchone()
    db.close()
    assert old is None
    stored = {blob[i : i + 8] for i in range(0, len(blob), 8)}
    assert len(stored) == 3

    def digest(text: str) -> bytes:
        return hashlib.sha256(b"scribed-turn-1\0user\0message\0\0\0" + text.encode()).digest()[:8]

    assert digest("password=Winter2026") not in stored
    assert digest("password=[REDACTED_SECRET]") not in stored
    keys = Keyring(bytes.fromhex((state / "content.key").read_text()))
    assert keys.turn_digests([Turn("user", "password=Winter2026")]) in stored  # the key, and only it, tells
