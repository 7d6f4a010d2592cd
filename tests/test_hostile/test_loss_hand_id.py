"""An entry whose id a user edited by hand in the cold view (stop 49) was kept twice: the edited
one stored as new, and the old id, gone from the view with no fold or promotion to explain it,
written back beside it. The edit is the user's: the entry is kept once, under the edited id, and
the old id is retired with its session and lines, so a rebuilt ledger does not compact that part
of the session again."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lossy_kit import make_root, run_once, session_counts, write_session


def _ids(text: str) -> list[str]:
    return re.findall(r"^- provenance: id=(\S+) ", text, re.M)


@pytest.mark.parametrize("new", ["e-0123456789ab", "mine-for-the-record"])
def test_an_entry_whose_id_was_edited_by_hand_is_kept_once_under_that_id(tmp_path: Path, new: str) -> None:
    root, (src,), cfg = make_root(tmp_path)
    f = src / "rollout-h.jsonl"
    write_session(f, "sess-h", 3)
    assert run_once(cfg)[1]["compacted"] == 1
    cold = root / ".squad/memory/cold"
    view = cold / "a0.md"
    (old,) = _ids(view.read_text())
    view.write_text(view.read_text().replace(f"id={old} ", f"id={new} "))
    for _ in range(2):  # the second run changes nothing more
        code, out, err = run_once(cfg)
        assert code == 0 and out["compacted"] == 0, err[-2000:]
        assert _ids(view.read_text()) == [new]
        stored = sorted(p.name for p in (cold / "a0").glob("*.md"))
        assert len(stored) == 1 and old not in stored[0], stored
        assert session_counts(root) == {"sess-h lines 2–6": 1}
    assert f"{old} " in (cold / "a0" / "retired.txt").read_text()

    # the ledger lost, the session grown: only what is new is compacted
    for p in (root / ".squad/memory/.scribed").glob("ledger.sqlite*"):
        p.unlink()
    write_session(f, "sess-h", 3, part=1, append=True)
    code, out, err = run_once(cfg)
    assert code == 0 and out["compacted"] == 1, err[-2000:]
    assert session_counts(root) == {"sess-h lines 2–6": 1, "sess-h lines 7–11": 1}
