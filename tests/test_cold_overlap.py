"""Entries of one session whose line ranges overlap (two clones compacted one transcript at different
points) made one, by what the entries carry (:mod:`scribed.tiers.cold_overlap`), and the team sync
that applies it (:meth:`scribed.core.cold_sync.AgentSync.deduped`). Real git:
``tests/test_team_git_overlap.py``."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import run_cli

from scribed.compress.entry import Entry, join_entries, split_entries
from scribed.core import team_doctor, team_sync
from scribed.core.ledger_rebuild import rebuild_rows
from scribed.tiers import cold_overlap, cold_store
from scribed.tiers.layout import Layout

SID = "0c9e7d1a-5b2f-4e3c-9a1d-7f6e5d4c3b2a"


def _entry(
    key: str,
    lines: tuple[int, int],
    end: str,
    title: str,
    *,
    decisions: tuple[str, ...] = (),
    outcome: str = "",
    facts: tuple[str, ...] = (),
    session: str = SID,
    kind: str = "claude",
    agent: str = "riker",
    source: str = "",
) -> Entry:
    """A cold entry as compaction writes one (heading, provenance, sections). Its transcript, unless
    ``source`` names it, is read in a folder named by the id's first four hex digits: entries
    ``e-aaaa…`` come from one clone, ``e-bbbb…`` from another."""
    text = (
        f"### 2026-03-0{end}Z: {title}\n"
        f"- provenance: id={key} · agent={agent} · session={session} · source=`{source or f'~/{key[2:6]}/t/{session}.jsonl'}` ({kind}) · "
        f"lines {lines[0]}–{lines[1]} · sha256={'ab' * 32} · ratio=0.400\n\n"
    )
    sections = [("Outcome", [outcome] if outcome else []), ("Decisions", [f"- {d}" for d in decisions])]
    sections.append(("Key facts", [f"- {f}" for f in facts]))
    text += "\n".join(f"#### {t}\n" + "\n".join(items) for t, items in sections if items) + "\n"
    return split_entries(text)[1][0]


PART1 = _entry(
    "e-aaaa00000001", (1, 4), "4T10:03:00", "Make the export job resumable in jobs/export.py",
    decisions=("checkpoint every 500 rows in jobs/export.py",), outcome="Done: export resumes (4 passed).",
)  # fmt: skip
PART2 = _entry(
    "e-aaaa00000002", (5, 8), "4T11:07:00", "Now cap the export batch at 2 MB, issue #88",
    decisions=("cap each batch at 2 MB",), outcome="Done: batch cap in place (2 passed).",
)  # fmt: skip
WHOLE = _entry(
    "e-bbbb00000001", (1, 8), "4T11:07:00", "Make the export job resumable in jobs/export.py",
    decisions=("checkpoint every 500 rows in jobs/export.py", "cap each batch at 2 MB"),
    outcome="Done: batch cap in place (2 passed).",
)  # fmt: skip


def _keys(entries: list[Entry]) -> list[str]:
    return sorted(e.entry_id or "" for e in entries)


def test_the_finer_cut_is_kept_and_the_whole_retired_in_any_order() -> None:
    """Lines 1–4 and 5–8 here, 1–8 there: the two parts stay (each its own goal and outcome), the
    whole is retired naming them, its session and its lines; planned again, nothing moves."""
    for given in ([PART1, PART2, WHOLE], [WHOLE, PART2, PART1]):
        p = cold_overlap.plan("riker", given)
        assert _keys(p.entries) == ["e-aaaa00000001", "e-aaaa00000002"]
        assert p.retired == {
            "e-bbbb00000001": f"covered by e-aaaa00000001,e-aaaa00000002 · session={SID} · lines 1–8"
        }
        assert not p.made
        assert cold_overlap.plan("riker", p.entries).retired == {}


def test_of_two_finer_cuts_the_one_with_more_parts_is_kept() -> None:
    """Lines 1–4, 5–8 and 9–12 here, 1–6 and 7–12 there: each clone's cut spans the session; the
    one with more parts stays (more budget, more goals and outcomes), the other is retired."""
    third = _entry("e-aaaa00000003", (9, 12), "4T12:00:00", "Then document the cap", decisions=("doc it",))
    b1 = _entry("e-bbbb00000002", (1, 6), "4T10:30:00", "Make the export job resumable in jobs/export.py")
    b2 = _entry("e-bbbb00000003", (7, 12), "4T12:00:00", "Cap the export batch")
    p = cold_overlap.plan("riker", [b2, third, PART2, b1, PART1])
    assert _keys(p.entries) == ["e-aaaa00000001", "e-aaaa00000002", "e-aaaa00000003"]
    assert set(p.retired) == {"e-bbbb00000002", "e-bbbb00000003"}


def test_a_partial_overlap_is_merged_into_one_entry_with_every_item_once() -> None:
    """Lines 1–6 and 5–8: neither tells all, no finer cut spans them; one entry of lines 1–8 holds
    both goals, both outcomes and every decision once (the one both told, from lines 5–6, once),
    the provenance of the later one, and ``folded=`` both ids. The same entries give the same entry
    in any order, and it is stable."""
    first = _entry(
        "e-cccc00000001", (1, 6), "4T10:05:00", "Rotate the signing key in auth/keys.py",
        decisions=("keep the old key valid for 24 hours", "store keys in the KMS, not on disk"),
        outcome="Done: rotation script works.",
    )  # fmt: skip
    second = _entry(
        "e-dddd00000001", (5, 8), "4T10:09:00", "Store keys in the KMS",
        decisions=("store keys in the KMS, not on disk", "alert when a key is older than 90 days"),
        outcome="Done: alert wired (3 passed).",
    )  # fmt: skip
    p = cold_overlap.plan("riker", [first, second])
    (made,) = p.made
    assert p.entries == [made]
    assert cold_overlap.plan("riker", [second, first]).made[0].text == made.text
    text = made.text
    assert (
        made.entry_id
        and made.entry_id.startswith("e-")
        and made.entry_id not in {"e-cccc00000001", "e-dddd00000001"}
    )
    assert made.heading == "### 2026-03-04T10:09:00Z: Rotate the signing key in auth/keys.py"
    assert f" · lines 1–8 · sha256={'ab' * 32} · folded=e-cccc00000001,e-dddd00000001" in text
    for item in ("keep the old key valid for 24 hours", "store keys in the KMS, not on disk",
                 "alert when a key is older than 90 days", "Done: rotation script works.",
                 "Done: alert wired (3 passed).", "Store keys in the KMS"):  # fmt: skip
        assert text.count(item) == 1, (item, text)
    assert "ratio=" not in text  # the size figures were the part's alone
    assert set(p.retired) == {"e-cccc00000001", "e-dddd00000001"}
    assert p.retired["e-cccc00000001"] == f"merged into {made.entry_id} · session={SID} · lines 1–6"
    assert cold_overlap.plan("riker", p.entries).retired == {}
    assert cold_overlap.span(made) is not None and made.ids == {
        made.entry_id,
        "e-cccc00000001",
        "e-dddd00000001",
    }


def test_one_clone_ahead_is_merged_and_a_part_that_comes_later_joins_it() -> None:
    """Lines 1–4 here, 1–8 there: no finer cut spans 1–8, so both merge (what 1–4 said that 1–8
    left out is kept); when this clone then compacts 5–8 too, it joins the merged entry; and an
    entry the merged one folds already (written back by a clone that was away) is retired into
    it, with no new entry."""
    p = cold_overlap.plan("riker", [PART1, WHOLE])
    (made,) = p.made
    assert "Done: export resumes (4 passed)." in made.text and "Done: batch cap in place" in made.text
    again = cold_overlap.plan("riker", [made, PART2])
    (made2,) = again.made
    assert made2.text.count("cap each batch at 2 MB") == 1
    assert {"e-aaaa00000001", "e-bbbb00000001", "e-aaaa00000002", made.entry_id} <= made2.ids
    back = cold_overlap.plan("riker", [made2, PART1])
    assert not back.made and back.entries == [made2]
    assert back.retired["e-aaaa00000001"].startswith(f"folded into {made2.entry_id} · ")


def test_a_key_fact_restating_what_another_part_says_is_not_listed_again() -> None:
    """A part's retention guard listed its decision under Key facts (``decision: …``) while the
    other part holds it under Decisions: merged, it is said once; a fact nothing else says stays."""
    first = _entry("e-eeee00000001", (1, 6), "4T09:06:00", "Pin the base image",
                   decisions=("pin python:3.12-slim by digest",))  # fmt: skip
    second = _entry("e-edde00000002", (4, 9), "4T09:09:00", "Pin the base image",
                    facts=("decision: pin python:3.12-slim by digest", "issue: #1", "path: `docker/base`"))  # fmt: skip
    (made,) = cold_overlap.plan("riker", [first, second]).made
    assert made.text.count("pin python:3.12-slim by digest") == 1, made.text
    assert "- issue: #1" in made.text and "- path: `docker/base`" in made.text


def test_entries_of_other_sessions_or_without_a_range_are_left_alone() -> None:
    """Overlapping lines are the same history only within one session of one agent and source kind;
    parts that follow one another do not overlap; digests and imported units name no range."""
    other = [
        _entry("e-ffff00000001", (1, 8), "4T12:00:00", "Other session", session="9d8c7b6a-other"),
        _entry("e-ffff00000002", (1, 8), "4T12:00:00", "Other kind", kind="codex"),
        _entry("e-ffff00000003", (1, 8), "4T12:00:00", "Other agent", agent="worf"),
        _entry("i-ffff00000004", (1, 8), "4T12:00:00", "Imported unit"),
    ]
    p = cold_overlap.plan("riker", [PART1, PART2, *other])
    assert p.retired == {} and not p.made and len(p.entries) == 6
    assert cold_overlap.span(other[3]) is None


def test_entries_of_one_session_from_another_transcript_file_are_left_alone() -> None:
    """A resumed or forked transcript copies old records with the old session id, so another file
    can carry the same session and overlapping line numbers with other turns: lines 2–6 of it are
    not covered by 1–4 and 5–8 of this one, nor merged with 1–4; both kept (a possible duplicate,
    never a loss), and no overlap is reported."""
    fork = _entry(
        "e-ffff0000000f", (2, 6), "6T09:00:00", "Move the nightly report to cron in ops/cron.py",
        decisions=("run the report at 02:00 UTC",), source="~/t/7a1b2c3d-resumed.jsonl",
    )  # fmt: skip
    for given in ([PART1, PART2, fork], [fork, PART1]):
        p = cold_overlap.plan("riker", given)
        assert p.retired == {} and not p.made and not p.overlaps, p.retired
        assert _keys(p.entries) == _keys(given)


def test_one_transcript_file_in_two_clones_is_one_history_by_its_name() -> None:
    """Each clone reads its own transcripts folder, so the absolute ``source=`` differs while the
    file's name is the same: its cuts are still one history (the whole retired for the parts)."""
    a1 = _entry("e-aaaa00000001", (1, 4), "4T10:03:00", "One", source=f"/home/ann/a-transcripts/{SID}.jsonl")
    a2 = _entry("e-aaaa00000002", (5, 8), "4T11:07:00", "Two", source=f"/home/ann/a-transcripts/{SID}.jsonl")
    whole = _entry("e-bbbb00000001", (1, 8), "4T11:07:00", "One", source=f"C:\\Users\\bo\\riker\\{SID}.jsonl")
    p = cold_overlap.plan("riker", [a1, a2, whole])
    assert _keys(p.entries) == ["e-aaaa00000001", "e-aaaa00000002"] and set(p.retired) == {"e-bbbb00000001"}


def test_an_entry_whose_source_name_was_cut_short_is_left_alone() -> None:
    """A path too long for the provenance line is cut (a name longer than the line is dropped, one
    with spaces cut between words, ``…`` put in): its file name is unknown, so the entry is not
    taken for another's history, even one whose path was cut the same way."""
    parts = [
        _entry("e-aaaa00000001", (1, 4), "4T10:03:00", "One", source="…"),
        _entry("e-aaaa00000002", (5, 8), "4T11:07:00", "Two", source="/home/ann/My Transcripts/…"),
    ]
    for other in ("…", "/home/ann/My Transcripts/…"):
        cut = _entry("e-bbbb00000001", (1, 8), "4T11:07:00", "Whole", source=other)
        p = cold_overlap.plan("riker", [*parts, cut])
        assert p.retired == {} and not p.overlaps, other


def test_parts_that_end_on_its_last_line_at_another_time_are_no_finer_cut() -> None:
    """A part ending on the whole's last line ends on the same turn, at the same time: one that
    ends there at another time is not the same history, and nothing is retired in favour of it
    (the entries are merged, nothing lost)."""
    late = _entry("e-aaaa00000009", (5, 8), "4T15:00:00", "Something else on those lines")
    p = cold_overlap.plan("riker", [PART1, late, WHOLE])
    assert len(p.made) == 1 and set(p.retired) == {"e-aaaa00000001", "e-aaaa00000009", "e-bbbb00000001"}


def test_overlapping_entries_compacted_from_one_path_are_left_to_the_ledger() -> None:
    """One machine's entries of one file that overlap (an Aider history edited in place and
    compacted again where it changed) are its own history, superseded by its ledger: neither
    retired nor merged, and not reported; with a clone's entry beside them, still left alone."""
    old = _entry("e-aaaa00000001", (1, 8), "4T10:03:00", "Pin worker_2_0 to queue q_20")
    again = _entry("e-aaaa00000002", (5, 8), "4T11:07:00", "Pin worker_2_1 to queue q_99")
    p = cold_overlap.plan("riker", [old, again])
    assert not p.retired and not p.made and not p.overlaps
    p = cold_overlap.plan("riker", [old, again, WHOLE])
    assert not p.retired and not p.made and not p.overlaps


def test_a_gap_between_parts_holding_another_entrys_end_is_no_finer_cut() -> None:
    """Parts 1–4 and 9–12 span 1–12, but an entry ending on line 6 says a turn sits between them
    that neither part holds: retiring the others for them would lose it, so all are merged."""
    a = _entry("e-1111000000a1", (1, 4), "4T08:04:00", "One")
    b = _entry("e-1111000000a2", (9, 12), "4T08:12:00", "Two")
    whole = _entry("e-2222000000b1", (1, 12), "4T08:12:00", "One")
    mid = _entry("e-3333000000b2", (3, 6), "4T08:06:00", "Mid", decisions=("say it between the parts",))
    p = cold_overlap.plan("riker", [a, b, whole, mid])
    assert len(p.made) == 1 and "say it between the parts" in p.made[0].text
    p = cold_overlap.plan("riker", [a, b, whole])  # the gap holds no entry's end: a finer cut
    assert not p.made and set(p.retired) == {"e-2222000000b1"}


# --- the team sync -------------------------------------------------------------------------------
def _root(tmp_path: Path, entries: list[Entry]) -> Layout:
    """A root whose riker store holds ``entries`` (as a pull left them), its view the first one."""
    root = tmp_path / "root"
    folder = root / ".squad/memory/cold/riker"
    folder.mkdir(parents=True)
    for e in map(cold_store.canonical, entries):
        (folder / cold_store.file_name(e)).write_text(e.text)
    (root / ".squad/memory/cold/riker.md").write_text(join_entries("# Cold memory: riker\n", entries[:1]))
    return Layout(root)


def _view(layout: Layout) -> list[str]:
    return [e.entry_id or "" for e in split_entries(layout.cold_file("riker").read_text())[1]]


def test_the_sync_retires_a_session_told_twice_once_and_a_rebuilt_ledger_keeps_its_lines(
    tmp_path: Path,
) -> None:
    """After a pull that brought the other clone's cut, the sync keeps the finer cut in the store
    and the view, lists the whole in ``retired.txt`` with its session and lines (what a rebuilt
    ledger reads, so that part is not compacted again), and a second sync changes nothing.
    ``doctor`` names the overlap before the sync and nothing after."""
    layout = _root(tmp_path, [WHOLE, PART1, PART2])
    (told,) = team_doctor.told_twice(layout)
    assert told["session"] == SID and told["kept"] == ["e-aaaa00000001", "e-aaaa00000002"]
    status = run_cli("status", "--root", str(layout.root)).stdout.decode()
    line = re.search(r"^cold memory: +session told twice in riker's cold memory.*$", status, re.M)
    assert line and f"{SID}: " in line.group() and "e-bbbb00000001 (lines 1–8)" in line.group(), status
    res = team_sync.sync(layout, today="2026-03-05")
    assert res.told_twice == {"riker": ["e-bbbb00000001"]}
    assert _view(layout) == ["e-aaaa00000001", "e-aaaa00000002"]
    folder = layout.cold / "riker"
    assert sorted(p.name for p in folder.glob("*.md")) == sorted(
        cold_store.file_name(e) for e in (PART1, PART2)
    )
    assert (folder / "retired.txt").read_text() == (
        f"e-bbbb00000001 2026-03-05 covered by e-aaaa00000001,e-aaaa00000002 · session={SID} · lines 1–8\n"
    )
    again = team_sync.sync(layout, today="2026-03-06", force=True)
    assert not again.changed and not again.told_twice
    assert team_doctor.told_twice(layout) == []
    assert "told twice" not in run_cli("status", "--root", str(layout.root)).stdout.decode()
    rows = {r["id"]: r for r in rebuild_rows(layout.memory, layout.archive)}
    assert (rows["e-bbbb00000001"]["session"], rows["e-bbbb00000001"]["last_line"]) == (SID, 8)


def test_the_sync_and_doctor_leave_a_session_id_shared_by_another_file_alone(tmp_path: Path) -> None:
    """Lines 1–4 and 5–8 of one transcript and 2–6 of another with the same session id: the sync
    retires nothing, and doctor (status) names no session told twice."""
    fork = _entry("e-ffff0000000f", (2, 6), "6T09:00:00", "Fork", source="~/t/7a1b2c3d-resumed.jsonl")
    layout = _root(tmp_path, [PART1, PART2, fork])
    assert team_doctor.told_twice(layout) == []
    res = team_sync.sync(layout, today="2026-03-07")
    assert not res.told_twice and not (layout.cold / "riker/retired.txt").exists()
    assert sorted(_view(layout)) == ["e-aaaa00000001", "e-aaaa00000002", "e-ffff0000000f"]


def test_a_readers_sync_then_the_runs_retire_the_whole_as_told_twice_not_as_lost(tmp_path: Path) -> None:
    """The view held the whole at the last sync; a pull brings the parts; a spawn's reader sync
    makes the view one and leaves the store to the run, which then retires the whole as told twice
    (not as an entry gone from the view for no reason, kept and warned about)."""
    layout = _root(tmp_path, [WHOLE])
    team_sync.sync(layout, today="2026-03-05")
    folder = layout.cold / "riker"
    for e in map(cold_store.canonical, (PART1, PART2)):  # the pull
        (folder / cold_store.file_name(e)).write_text(e.text)
    team_sync.sync(layout, today="2026-03-05", reader=True)
    assert _view(layout) == ["e-aaaa00000001", "e-aaaa00000002"]
    assert (folder / cold_store.file_name(cold_store.canonical(WHOLE))).exists()  # the run's to write
    res = team_sync.sync(layout, today="2026-03-05")
    assert not res.unexplained and not res.restored
    assert re.search(r"^e-bbbb00000001 2026-03-05 covered by ", (folder / "retired.txt").read_text(), re.M)
    assert not (folder / cold_store.file_name(cold_store.canonical(WHOLE))).exists()
    assert _view(layout) == ["e-aaaa00000001", "e-aaaa00000002"]


def test_cold_remove_of_an_entry_told_twice_names_the_entries_that_tell_its_session(tmp_path: Path) -> None:
    """Removing the retired whole removes nothing (it is gone already) and says which entries tell
    its session now, and the command that removes them."""
    layout = _root(tmp_path, [WHOLE, PART1, PART2])
    team_sync.sync(layout, today="2026-03-05")
    p = run_cli("cold-remove", "e-bbbb00000001", "--root", str(layout.root))
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    assert "nothing removed" in out
    # the --root given is carried (stop 49): the pasted command removes them from this root
    assert f"`scribed cold-remove e-aaaa00000001 e-aaaa00000002 --root {layout.root}`" in out, out
