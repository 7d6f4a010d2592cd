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

from scribed.compress.entry import Entry, split_entries
from scribed.core import cold_sync
from scribed.core.cold_sync import AgentSync
from scribed.tiers import cold_store
from scribed.tiers.layout import Layout


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


def _entry(i: int, session: str) -> str:
    return (
        f"### 2026-11-01 — fact {i}\n\n- provenance: id=e-{i:012x} · agent=a0 · session={session} · "
        f"source=`~/codex0/r{i}.jsonl` (codex) · lines {i * 5 + 2}–{i * 5 + 6} · sha256=ab · ratio=0.1\n\n"
        f"Step {i}: widget_{i} clips its label at {i * 3} px.\n\n"
    )


def test_entries_gone_unexplained_read_the_view_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each entry gone from the view is looked up among the parts of sessions the view's new
    entries tell, read once per sync: before, every gone entry read every view entry's provenance
    again (1000 gone in a view of 3000 new: 20 s under the root lock)."""
    view_n, gone_n = 40, 12
    _, view = split_entries("".join(_entry(i, f"s{i}") for i in range(view_n)))
    _, gone = split_entries("".join(_entry(view_n + i, f"g{i}") for i in range(gone_n)))
    edited = view[7].text.replace("id=e-000000000007 ", "id=e-0123456789ab ")
    _, (renamed,) = split_entries(edited)
    a = AgentSync(Layout(tmp_path), "a0", {cold_store.key(e): "x" for e in [*gone, view[7]]}, "2026-12-08")
    a.view = {cold_store.key(e): e for e in [*view[:7], renamed, *view[8:]]}
    reads = 0
    place = cold_sync._place

    def counted(e: Entry) -> tuple[str, str, str, int, int] | None:
        nonlocal reads
        reads += 1
        return place(e)

    monkeypatch.setattr(cold_sync, "_place", counted)
    assert [a._left(cold_store.key(e), e) for e in gone] == [""] * gone_n
    why = a._left(cold_store.key(view[7]), view[7])
    assert why.startswith("id edited by hand: now e-0123456789ab · session=s7 · lines 37–41"), why
    assert reads <= view_n + gone_n + 1, reads
