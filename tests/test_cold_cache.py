"""The cold tier's parse cache (tiers/cold.py): what an append remembers of the file it wrote must be
exactly what parsing that file gives, or a later append or hot seed would work from a wrong view."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from scribed.compress.entry import split_entries
from scribed.tiers import cold, seed_text
from scribed.tiers.cold import Layout
from tests.test_core import T0, _entry_text


def _cached(path: Path) -> cold._Parsed:
    got = cold._parsed.get(path)
    assert got is not None, "an append remembers the file it wrote"
    return got


@pytest.mark.parametrize("max_bytes", [6000, 100_000])
def test_remembered_parse_is_the_files_parse(tmp_path: Path, max_bytes: int) -> None:
    lay = Layout(tmp_path)
    order = list(range(30))
    random.Random(3).shuffle(order)  # out of date order: entries go in the middle too
    for i in order:
        text, eid = _entry_text(i)
        cold.append(lay, "kim", text, eid, max_bytes=max_bytes, now=T0)
        path = lay.cold_file("kim")
        data = path.read_text()
        got = _cached(path)
        pre, entries = split_entries(data)
        assert got.text == data
        assert (got.pre, got.entries) == (pre, entries)
        assert got.ids == cold._entry_ids(entries)
        assert got.part_sizes() == [
            cold._part_bytes(e.text) for e in entries
        ]  # carried from append to append
        assert cold._file_bytes(got.pre, got.entries, got.part_sizes()) == len(data.encode())
        assert cold.append(lay, "kim", text, eid, max_bytes=max_bytes, now=T0) == (False, 0)


def test_held_appends_keep_each_entrys_size(tmp_path: Path) -> None:
    """Inside a batch the file is not joined per append: its size comes from the sizes carried."""
    lay = Layout(tmp_path)
    order = list(range(30))
    random.Random(5).shuffle(order)
    with cold.batched_appends():
        for i in order:
            text, eid = _entry_text(i)
            cold.append(lay, "kim", text, eid, max_bytes=100_000, now=T0)
            held = cold._held()
            assert held is not None
            got = held[lay.cold_file("kim")].state
            assert got.part_sizes() == [cold._part_bytes(e.text) for e in got.entries]
            assert cold._file_bytes(got.pre, got.entries, got.part_sizes()) == len(got.text.encode())
    assert split_entries(lay.cold_file("kim").read_text())[1] == got.entries


def test_a_file_edited_since_is_parsed_again(tmp_path: Path) -> None:
    lay = Layout(tmp_path)
    t1, id1 = _entry_text(1)
    t2, id2 = _entry_text(2)
    cold.append(lay, "kim", t1, id1, max_bytes=100_000, now=T0)
    path = lay.cold_file("kim")
    path.write_text(path.read_text() + "\n" + t2)  # an agent appends the same entry by hand
    assert cold.append(lay, "kim", t2, id2, max_bytes=100_000, now=T0) == (False, 0)
    assert seed_text.newest_entry(lay, "kim") is not None


def test_an_open_fence_is_not_remembered(tmp_path: Path) -> None:
    lay = Layout(tmp_path)
    t1, id1 = _entry_text(1)
    t2, id2 = _entry_text(2)
    cold.append(lay, "kim", t1.rstrip("\n") + "\n```\nopen fence\n", id1, max_bytes=100_000, now=T0)
    cold.append(lay, "kim", t2, id2, max_bytes=100_000, now=T0)
    path = lay.cold_file("kim")
    pre, entries = cold.parsed(path)
    assert (pre, entries) == split_entries(path.read_text())
    assert len(entries) == 1, "the second heading is inside the first entry's open fence"


def test_an_entrys_ids_are_read_once_and_given_out_as_a_fresh_set() -> None:
    """Entry.ids is read from the text once (a run asks every entry of a file, each append): what a
    caller does to the set it got changes nothing, and an entry asked equals one never asked."""
    text = (
        "### 2026-03-01 — t\n<!-- scribed: id=e-0123456789ab folded=e-111111111111,e-222222222222 -->\nbody\n"
    )
    _, (asked,) = split_entries(text)
    _, (never,) = split_entries(text)
    got = asked.ids
    assert got == {"e-0123456789ab", "e-111111111111", "e-222222222222"}
    got.clear()
    assert asked.ids == never.ids and asked.entry_id == "e-0123456789ab"
    assert asked == never
