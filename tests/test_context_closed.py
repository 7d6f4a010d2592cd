"""An item an older entry left open and a newer entry of the same agent lists as done is struck in
what `scribed context` prints (an exploratory tester's spawn with `--max-bytes 2500` read
"Document the --since flag" as still open: the newer entry's Progress was left out to fit)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from scribed.cli.main import main
from scribed.recall.closed import key, strike_done


def _entry(eid: str, when: str, outcome: str, progress: list[str], open_items: list[str]) -> str:
    def block(title: str, items: list[str]) -> str:
        return f"#### {title}\n" + "".join(f"- {i}\n" for i in items) if items else ""

    return (
        f"### {when}: {outcome}\n"
        f"- provenance: id={eid} · agent=juno · session=s-{eid} · source=`x.jsonl` (claude) · lines 1–9\n\n"
        f"#### Outcome\n{outcome}\n" + block("Progress", progress) + block("Open items", open_items)
    )


OLD = _entry(
    "e-000000000001", "2026-11-23T10:00:00Z", "Export ships as CSV.", ["Add --since"],
    ["Document the `--since` flag in docs/cli.md.", "Add an XLSX export", "Ask legal about the licence"],
)  # fmt: skip
NEW = _entry(
    "e-000000000002", "2026-11-24T14:30:00Z", "Moved the export to csv.DictWriter.",
    ["Rewrite export_csv()", "Document the --since flag in docs/cli.md", "[x] ask legal about the licence"],
    ["Add an XLSX export"],
)  # fmt: skip


def test_an_open_item_a_newer_entry_did_is_struck_with_its_date() -> None:
    got = strike_done([(NEW, "2026-11-24T14:30:00Z"), (OLD, "2026-11-23T10:00:00Z")])
    assert got[NEW] == NEW  # the newest entry: nothing newer did its items
    old = got[OLD]
    assert "- ~~Document the `--since` flag in docs/cli.md.~~ (done: 2026-11-24)" in old
    assert "- ~~Ask legal about the licence~~ (done: 2026-11-24)" in old
    assert "- Add an XLSX export\n" in old  # still open in both
    assert old.replace("~~", "").count("(done: ") == 2


def test_an_older_entrys_progress_closes_nothing_newer() -> None:
    """Done before it was opened again is no closure: only a newer entry's Progress counts."""
    reopened = _entry("e-000000000003", "2026-11-25T09:00:00Z", "Reopened.", [], ["Add --since"])
    got = strike_done([(reopened, "2026-11-25"), (OLD, "2026-11-23")])
    assert got[reopened] == reopened


def test_items_compare_without_marks_case_or_closing_punctuation() -> None:
    assert (
        key("Document the `--since` flag.")
        == key("[x] document the --since flag")
        == "document the --since flag"
    )
    assert key("Add an XLSX export") != key("Add an XLSX export for the herbarium team")


def test_the_spawn_context_reads_the_item_as_done(tmp_path: Path) -> None:
    cold = tmp_path / ".squad/memory/cold"
    cold.mkdir(parents=True)
    (cold / "juno.md").write_text("# Cold memory: juno\n\n" + OLD + "\n" + NEW)
    out = CliRunner().invoke(main, ["context", "juno", "--root", str(tmp_path), "--situation", "resume"])
    assert out.exit_code == 0, out.output
    assert "~~Document the `--since` flag in docs/cli.md.~~ (done: 2026-11-24)" in out.output
    assert "- Add an XLSX export\n" in out.output
