"""A seeded hot file's Active decisions are the decisions still standing, not only the last
session's: an earlier session's decision stays until a later one on its subject replaces it (an
exploratory tester's spawn lost "use the stdlib csv module, not pandas" when the next session was
about the deploy). A later decision that shares a term with it is taken as replacing it: an earlier
decision is left out rather than shown current beside one that may reverse it."""

from __future__ import annotations

from pathlib import Path

from scribed.tiers import cold, hot_seed
from scribed.tiers.cold import Layout


class _Log:
    def info(self, *_a: object, **_k: object) -> None: ...
    def warning(self, *_a: object, **_k: object) -> None: ...
    def debug(self, *_a: object, **_k: object) -> None: ...


def _entry(eid: str, when: str, decisions: list[str]) -> str:
    return (
        f"### {when}: Work of {eid}\n"
        f"- provenance: id={eid} · agent=juno · session=s-{eid} · source=`x.jsonl` (claude) · lines 1–9\n\n"
        f"#### Goal\nWork of {eid}\n#### Outcome\nDone with {eid}.\n"
        + ("#### Decisions\n" + "".join(f"- {d}\n" for d in decisions) if decisions else "")
    )


def _active(tmp: Path, *entries: str, sid: str) -> str:
    layout = Layout(tmp)
    layout.cold.mkdir(parents=True, exist_ok=True)
    layout.cold_file("juno").write_text(cold.preamble("juno") + "\n" + "\n".join(entries))
    assert hot_seed.reseed(layout, "juno", "claude", sid, _Log())  # type: ignore[arg-type]
    text = layout.hot_file("juno").read_text()
    return text.split("Active decisions:")[1].split("Last actions:")[0]


def test_an_earlier_decision_on_another_subject_stands_with_its_day(tmp_path: Path) -> None:
    got = _active(
        tmp_path,
        _entry(
            "e-000000000001", "2026-11-23T09:00:00Z", ["use the stdlib csv module for the export, not pandas"]
        ),
        _entry("e-000000000002", "2026-11-24T09:00:00Z", ["deploy with sam to eu-west-1 only"]),
        _entry("e-000000000003", "2026-11-26T09:00:00Z", []),
        sid="s-e-000000000003",
    )
    assert "- deploy with sam to eu-west-1 only (2026-11-24)" in got
    assert "- use the stdlib csv module for the export, not pandas (2026-11-23)" in got


def test_an_earlier_decision_a_later_one_names_the_subject_of_is_left_out(tmp_path: Path) -> None:
    got = _active(
        tmp_path,
        _entry("e-000000000001", "2026-11-23T09:00:00Z", ["Use UUIDv7 primary keys for seed_lots"]),
        _entry("e-000000000002", "2026-11-24T09:00:00Z", ["keep the pandas export"]),
        _entry("e-000000000003", "2026-11-25T09:00:00Z", ["we keep bigserial ids instead of UUIDs"]),
        sid="s-e-000000000003",
    )
    assert "bigserial" in got and "UUIDv7" not in got, got  # "uuids" begins "uuidv7": one subject
    assert "- keep the pandas export (2026-11-24)" in got


def test_a_decision_said_again_later_is_listed_once(tmp_path: Path) -> None:
    got = _active(
        tmp_path,
        _entry("e-000000000001", "2026-11-20T09:00:00Z", ["pin numpy to 1.26"]),
        _entry("e-000000000002", "2026-11-21T09:00:00Z", ["pin numpy to 1.26"]),
        sid="s-e-000000000002",
    )
    assert got.count("pin numpy to 1.26") == 1, got


def test_only_the_last_few_entries_are_read(tmp_path: Path) -> None:
    things = ["sessions", "invoices", "thumbnails", "audit", "metrics", "webhooks", "exports"]
    stores = ["redis", "postgres", "s3", "sqlite", "clickhouse", "dynamodb", "gcs"]
    old = [
        _entry(f"e-00000000001{i}", f"2026-11-0{i + 1}T09:00:00Z", [f"{things[i]} on {stores[i]}"])
        for i in range(hot_seed.CARRY_BACK + 2)
    ]
    got = _active(tmp_path, *old, sid=f"s-e-00000000001{hot_seed.CARRY_BACK + 1}")
    shown = [t for t in things if f"- {t} on " in got]
    assert shown == things[1:], got  # the last session's and CARRY_BACK before it: not the oldest
