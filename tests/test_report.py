"""``scribed report``: baseline vs tiered spawn sizes, the old-noise window rule, both output forms."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import run_cli

from scribed.cli.context import register
from scribed.cli.main import Main, main
from scribed.recall import report
from scribed.sources.injected import MARK_CLOSE, MARK_OPEN
from scribed.tiers.cold import Layout

WIRED = "context" in main.commands


def cli(*args: str) -> tuple[int, str, str]:
    """The real CLI in a subprocess once cli.py registers the commands; a local group before."""
    if WIRED:
        p = run_cli(*args)
        return p.returncode, p.stdout.decode(), p.stderr.decode()
    group = Main(
        name="scribed", params=list(main.params), callback=main.callback, commands=dict(main.commands)
    )
    register(group)
    res = CliRunner().invoke(group, list(args), env={"SCRIBED_CONFIG": ""})
    return res.exit_code, res.stdout, res.stderr


def dated(*stamps: str) -> str:
    return "# History\n\n## Learnings\n" + "".join(f"\n### {s}: entry\nbody\n" for s in stamps)


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "squad"
    sq = root / ".squad"
    (sq / "agents/picard").mkdir(parents=True)
    (sq / "agents/riker").mkdir(parents=True)
    (sq / "agents/_alumni").mkdir(parents=True)
    (sq / "agents/_alumni/history.md").write_text("old\n")
    (sq / "agents/picard/charter.md").write_text("# Picard\n\nLead.\n")
    (sq / "agents/picard/history.md").write_text(
        dated("2026-06-01", "2026-06-02", "2026-11-19T08:00:00Z", "2026-11-20T09:00:00Z")
        + "\n```\n### 2020-01-01: inside a fence, not an entry\n```\n"
    )
    (sq / "agents/riker/charter.md").write_text("# Riker\n")
    (sq / "decisions.md").write_text(dated("2026-11-20"))
    for d in ("hot", "cold", "wiki"):
        (sq / "memory" / d).mkdir(parents=True)
    (sq / "memory/cold/picard.md").write_text("# Cold memory: picard\n\n### 2026-11-18T10:00:00Z: s\nx\n")
    (sq / "memory/cold/data.md").write_text("# Cold memory: data\n")
    (sq / "memory/wiki/decisions.md").write_text("# Decisions\n\nHMAC.\n")
    (sq / "memory/hot/worf.md").write_text("Current task: guard the gate\n")
    (root / "scribed.toml").write_text('root = "."\n')
    return root


def test_noise_window_rule() -> None:
    texts = [dated("2026-11-18", "2026-11-19", "2026-11-20"), dated("2026-11-20T12:00:00Z")]
    # reference = newest entry 2026-11-20T12:00Z: entries at or before 2026-11-19T12:00Z are old
    assert report.noise(texts, None) == (4, 2, datetime(2026, 11, 20, 12, tzinfo=UTC))
    # a live hot file's `updated:` moves the window
    ref = datetime(2026, 11, 25, tzinfo=UTC)
    assert report.noise(texts, ref)[:2] == (4, 4)
    assert report.noise(["no dated entries\n### Undated: x\n"], None) == (0, 0, None)


def test_known_agents(tmp_path: Path) -> None:
    assert report.known_agents(Layout(make_root(tmp_path))) == ["data", "picard", "riker", "worf"]


def test_rows_noise_and_empty_spawn(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (row,) = report.build(Layout(root), ["picard"])["agents"]
    # history: 4 dated (the fenced one does not count) + decisions: 1 → newest 2026-11-20T09:00Z
    assert (row["dated_entries"], row["old_entries"]) == (5, 3)
    assert row["old_noise_pct"] == 60.0
    assert row["window_end"] == "2026-11-20T09:00:00Z"
    # picard has no hot file: the default spawn loads no memory, and no saving is claimed
    assert row["spawn_empty"] is True and row["savings_pct"] is None


def sized_root(tmp_path: Path) -> Path:
    """Files of known sizes: baseline 200 + 5000 + 1800 + 2000 (cold) + 1000 (wiki) = 10,000 bytes;
    a hot file whose `scribed context` block is 45 bytes of headings + 255 bytes = 300 bytes."""
    root = tmp_path / "sized"
    sq = root / ".squad"
    for d in ("agents/picard", "memory/hot", "memory/cold", "memory/wiki"):
        (sq / d).mkdir(parents=True)

    def pad(path: Path, head: str, size: int) -> None:
        path.write_text(head + "x" * (size - len(head) - 1) + "\n")

    pad(sq / "agents/picard/charter.md", "# Picard\n", 200)
    pad(sq / "agents/picard/history.md", "# History\n", 5000)
    pad(sq / "decisions.md", "# Decisions\n", 1800)
    pad(sq / "memory/cold/picard.md", "# Cold memory: picard\n", 2000)
    pad(sq / "memory/wiki/decisions.md", "# Decisions\n", 1000)
    # the printed block is 300 bytes: this hot file, the titles and scribed's marker pair
    pad(sq / "memory/hot/picard.md", "Current task: ", 255 - len(MARK_OPEN) - len(MARK_CLOSE) - 2)
    (root / "scribed.toml").write_text('root = "."\n')
    return root


def test_savings_are_on_what_the_default_spawn_prints(tmp_path: Path) -> None:
    root = sized_root(tmp_path)
    code, printed, err = cli("--config", str(root / "scribed.toml"), "context", "picard")
    assert code == 0, err
    assert len(printed.encode()) == 300
    (row,) = report.build(Layout(root), ["picard"])["agents"]
    assert (row["baseline_bytes"], row["baseline_tokens"]) == (10_000, 2_500)
    assert (row["charter_bytes"], row["history_bytes"], row["decisions_bytes"]) == (200, 5000, 1800)
    assert (row["cold_bytes"], row["wiki_bytes"]) == (2000, 1000)
    assert (row["hot_only_bytes"], row["spawn_bytes"]) == (300, 500)
    assert row["savings_pct"] == 95.0 and row["spawn_empty"] is False
    # the blank template loads labels and no memory: an empty spawn, as is a missing hot file
    (root / ".squad/memory/hot/picard.md").write_text(
        "# Hot memory: picard\n\nCurrent task:\nActive decisions:\nLast actions:\nBlockers:\nTalking to:\n"
    )
    (row,) = report.build(Layout(root), ["picard"])["agents"]
    assert row["spawn_empty"] is True and row["savings_pct"] is None and row["hot_only_bytes"] > 45
    (root / ".squad/memory/hot/picard.md").unlink()
    data = report.build(Layout(root), ["picard"])
    (row,) = data["agents"]
    assert row["spawn_empty"] is True and row["savings_pct"] is None
    assert data["average"]["savings_pct"] is None and data["average"]["empty_spawns"] == 1
    text = report.markdown(data)
    assert "| n/a: empty spawn |" in text
    assert "The default spawn is empty for picard" in text and "no savings are claimed" in text


def test_live_hot_updated_sets_the_window(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (root / ".squad/memory/hot/picard.md").write_text(
        "---\nscribed-live: copilot:s\nupdated: 2026-12-01T00:00:00Z\n---\nCurrent task: x\n"
    )
    (row,) = report.build(Layout(root), ["picard"])["agents"]
    assert row["old_noise_pct"] == 100.0 and row["window_end"] == "2026-12-01T00:00:00Z"


def test_unknown_agent_row_is_all_shared_files(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    (row,) = report.build(Layout(root), ["nobody"])["agents"]
    assert row["charter_bytes"] == 0 and row["history_bytes"] == 0 and row["cold_bytes"] == 0
    assert row["baseline_bytes"] == row["decisions_bytes"] + row["wiki_bytes"]


def test_markdown_table_has_average_row(tmp_path: Path) -> None:
    text = report.markdown(report.build(Layout(make_root(tmp_path))))
    lines = text.splitlines()
    assert lines[0] == "| Agent | Total Context | Old Noise % | Hot-Only Size | Savings |"
    table = [ln for ln in lines if ln.startswith("|")]
    assert [ln.split("|")[1].strip() for ln in table[2:]] == [
        "data",
        "picard",
        "riker",
        "worf",
        "**Average**",
    ]
    assert "KB" in lines[3] and "tokens" in lines[3] and lines[3].rstrip().endswith("n/a: empty spawn |")
    assert lines[5].rstrip().endswith("% |"), "worf has a hot file: its saving is shown"
    assert "The default spawn is empty for data, picard, riker:" in text
    assert "no agents found" in report.markdown(report.build(Layout(tmp_path / "empty")))


def test_cli_forms_and_errors(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    cfg = ("--config", str(root / "scribed.toml"), "report")
    code, out, err = cli(*cfg)
    assert code == 0, err
    assert out.startswith("| Agent | Total Context |") and "**Average**" in out
    code, md, _ = cli(*cfg, "--markdown")
    assert code == 0 and md == out
    code, out, err = cli(*cfg, "--json", "picard", "riker")
    assert code == 0, err
    data = json.loads(out)
    assert [r["agent"] for r in data["agents"]] == ["picard", "riker"]
    for args, msg in [(("--json", "--markdown"), "choose one"), (("Bad/Name",), "invalid agent name")]:
        code, out, err = cli(*cfg, *args)
        assert code == 2 and out == "" and msg in err and err.count("\n") == 1, err


def test_report_of_an_agent_with_no_memory_says_so_and_lists_those_that_have(tmp_path: Path) -> None:
    """Finding s21: `scribed report nobody` printed a row of shared files as if the agent existed."""
    root = make_root(tmp_path)
    cfg = ("--config", str(root / "scribed.toml"), "report")
    for args in (("nobody",), ("picard", "nobody", "--json"), ("Worf", "nobody")):
        code, out, err = cli(*cfg, *args)
        assert code == 2 and out == "" and "Traceback" not in err, (args, err)
        assert "no agent named 'nobody' has memory" in err and str(root / ".squad") in err, err
        assert err.rstrip().endswith("agents that do: data, picard, riker, worf"), err
    code, out, err = cli(*cfg, "ghost", "nobody")
    assert code == 2 and "no agents named 'ghost', 'nobody' have memory" in err, err
    code, out, err = cli(*cfg, "Worf", "data", "--json")  # a hot file alone, a cold file alone: memory
    assert code == 0, err
    assert [r["agent"] for r in json.loads(out)["agents"]] == ["worf", "data"]


def test_an_agent_list_in_a_message_is_bounded() -> None:
    from scribed.cli.context import agent_list

    names = [f"a{i:02d}" for i in range(25)]
    assert agent_list(names) == ", ".join(names[:10]) + " and 15 more"
    assert agent_list(names[:3]) == "a00, a01, a02"


@pytest.mark.parametrize("agents", [None, ["picard"]])
def test_report_writes_nothing(tmp_path: Path, agents: list[str] | None) -> None:
    root = make_root(tmp_path)
    before = sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*"))
    report.build(Layout(root), agents)
    assert sorted((p, p.stat().st_mtime_ns) for p in root.rglob("*")) == before


def test_report_names_its_baseline(tmp_path: Path) -> None:
    """Issue 33: without Squad histories the baseline is scribed's own cold file, and it says so."""
    from scribed.cli import demo

    root = tmp_path / "demo"
    root.mkdir()
    demo.build(root)
    assert run_cli("--config", str(root / "scribed.toml"), "run-once").returncode == 0
    data = report.build(Layout(root))
    assert {r["agent"]: r["baseline"] for r in data["agents"]} == {
        "picard": "scribed", "riker": "scribed", "troi": "scribed", "worf": "scribed",
    }  # fmt: skip
    text = report.markdown(data)
    assert "| picard* |" in text and report.SQUAD_BASELINE in text
    assert (
        "No Squad history or decisions for picard, riker, troi, worf (marked *): their baseline is "
        "scribed's own cold file and wiki pages" in text
    )
    assert "* baseline: scribed's own cold file and wiki" in report.chart(data)
    (root / ".squad/agents/picard").mkdir(parents=True)  # a Squad history: Squad's baseline
    (root / ".squad/agents/picard/history.md").write_text(dated("2026-11-19"))
    rows = {r["agent"]: r for r in report.build(Layout(root))["agents"]}
    assert rows["picard"]["baseline"] == "squad" and rows["riker"]["baseline"] == "scribed"
    text = report.markdown(report.build(Layout(root)))
    assert "| picard |" in text and "for riker, troi, worf (marked *): their" in text
    (root / ".squad/decisions.md").write_text(dated("2026-11-18"))  # shared by all: Squad's baseline
    text = report.markdown(report.build(Layout(root)))
    names = [ln.split("|")[1].strip() for ln in text.split("\n\n")[0].splitlines()[2:-1]]
    assert names == ["picard", "riker", "troi", "worf"], names
    assert "marked *" not in text and report.SQUAD_BASELINE in text
