"""End to end: the issue's acceptance scenario through the real CLI in a subprocess."""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import pytest
from helpers import run_cli, run_json, tree_bytes

from scribed.cli import demo
from scribed.compress.entry import split_entries
from scribed.session.redact import redact


@pytest.fixture
def squad(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    root = tmp_path / "squad"
    root.mkdir()
    return root, demo.build(root)


def cold_text(root: Path, agent: str) -> str:
    return (root / ".squad/memory/cold" / f"{agent}.md").read_text()


def _check_cold_entries(root: Path, manifest: dict[str, Any], agents: list[str]) -> None:
    """One dated entry per session, every planted fact kept, reversed decisions marked, provenance."""
    for agent, facts in manifest["agents"].items():
        text = cold_text(root, agent)
        _, entries = split_entries(text)
        assert len(entries) == agents.count(agent), agent
        assert re.match(r"### \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z: ", entries[0].heading)
        assert all(e.date.startswith("2026-11-20") for e in entries), "dates come from the session"
        for kind in ("decisions", "paths", "errors", "issues", "todos", "commands"):
            for fact in facts.get(kind, []):
                assert fact in text, f"{agent}: {kind} {fact!r} missing from cold entry"
        for stale in facts.get("stale", []):
            for line in text.splitlines():
                if stale in line:
                    assert "supersedes" in line, f"reversed decision presented as current: {line}"
        # provenance
        assert (
            "- provenance: id=e-" in text and "sha256=" in text and " · lines " in text and "ratio=" in text
        )
        assert "compressor=" not in text, "the default compressor is not printed (issue 30)"


def test_acceptance_run_once(squad: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = squad
    cfg = str(root / "scribed.toml")
    transcripts_before = tree_bytes(root / "transcripts")
    hot_before = (root / ".squad/memory/hot/riker.md").read_bytes()

    code, out, err = run_json("--config", cfg, "run-once")
    assert code == 0, err
    assert "Traceback" not in err
    # one entry per session and per Copilot sub-agent
    agents = sorted(e["agent"] for e in out["entries"])
    assert agents == ["picard", "riker", "riker", "troi", "worf"], out
    assert out["failed"] == 0
    assert {e["compressor"] for e in out["entries"]} == {"extractive"}
    # the malformed Copilot line was reported with the file named
    assert "malformed" in err and "events.jsonl" in err

    _check_cold_entries(root, manifest, agents)
    # the state folder (ledger, transcript copies) keeps itself out of git from its first run
    assert (root / ".squad/memory/.scribed/.gitignore").read_text().splitlines()[-1] == "*"

    # size: each agent's cold file ≤ 12% of the bytes of its sessions
    by_agent: dict[str, int] = {}
    for e in out["entries"]:
        by_agent[e["agent"]] = by_agent.get(e["agent"], 0) + e["bytes_in"]
    for agent, bytes_in in by_agent.items():
        size = len(cold_text(root, agent).encode())
        assert size <= 0.12 * bytes_in, f"{agent}: cold {size} B > 12% of {bytes_in} B"

    # no secret anywhere under .squad/ except the archive, nor on stdout/stderr
    secrets = manifest["secrets"] + manifest["extra_secrets"]
    for rel, data in tree_bytes(root / ".squad").items():
        if rel.startswith("memory/.scribed/archive/"):
            continue
        for s in secrets:
            assert s.encode() not in data, f"secret {s[:8]}… leaked into {rel}"
    for s in secrets:
        assert s not in err and s not in str(out)

    # the hot file: its redacted bytes archived, the file re-seeded from the entry just written
    archived = list((root / ".squad/memory/.scribed/archive/hot").glob("riker-*.md.gz"))
    assert len(archived) == 1
    assert gzip.decompress(archived[0].read_bytes()) == redact(hot_before.decode()).encode()
    hot_after = (root / ".squad/memory/hot/riker.md").read_text()
    assert "scribed-live: seed:hot:" in hot_after and "Current task: profile the nightly" not in hot_after

    # transcripts byte-identical
    assert tree_bytes(root / "transcripts") == transcripts_before

    # a second run adds nothing
    squad_before = tree_bytes(root / ".squad", skip=(".scribed",))
    code, out2, err2 = run_json("--config", cfg, "run-once")
    assert code == 0, err2
    assert out2["compacted"] == 0
    assert tree_bytes(root / ".squad", skip=(".scribed",)) == squad_before


def test_growth_adds_one_entry_for_the_new_part(squad: tuple[Path, dict[str, Any]]) -> None:
    root, _ = squad
    cfg = str(root / "scribed.toml")
    assert run_json("--config", cfg, "run-once")[0] == 0
    codex = next((root / "transcripts/codex").rglob("*.jsonl"))
    with codex.open("a") as fh:
        fh.write(
            '{"timestamp":"2026-11-20T15:00:00.000Z","type":"response_item","payload":{"type":"message",'
            '"role":"assistant","content":[{"type":"output_text","text":"Decision: pin psycopg to 3.2.1 in '
            'requirements/base.txt because 3.2.2 breaks COPY (issue #981)."}]}}\n'
        )
    code, out, err = run_json("--config", cfg, "run-once", "--force")
    assert code == 0, err
    assert [e["agent"] for e in out["entries"]] == ["worf"]
    text = cold_text(root, "worf")
    _, entries = split_entries(text)
    assert len(entries) == 2
    assert "requirements/base.txt" in entries[1].text and "#981" in entries[1].text
    assert "#977" not in entries[1].text, "the second entry covers the new part only"
    assert entries[1].date.startswith("2026-11-20T15:00")


def test_not_quiet_is_skipped_unless_forced(tmp_path: Path) -> None:
    root = tmp_path / "r"
    (root / ".squad").mkdir(parents=True)
    md = tmp_path / "notes"
    md.mkdir()
    (md / "2026-11-29-session.md").write_text(
        "User: please rename `load_cfg` to `load_config` in scribed/config.py\n\n"
        "Assistant: Done. Decision: keep a deprecated alias for one release.\n" * 20
    )
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'root = "{root}"\n[compress]\nbackend = "extractive"\n'
        f'[[sources]]\nkind = "markdown"\npath = "{md}"\nagent = "geordi"\n'
    )
    code, out, _ = run_json("--config", str(cfg), "run-once")
    assert code == 0 and out["compacted"] == 0 and out["skipped"] == 1
    code, out, _ = run_json("--config", str(cfg), "run-once", "--force")
    assert code == 0 and out["compacted"] == 1


def test_dry_run_writes_nothing(squad: tuple[Path, dict[str, Any]]) -> None:
    root, _ = squad
    before = tree_bytes(root)
    code, out, err = run_json("--config", str(root / "scribed.toml"), "run-once", "--dry-run")
    assert code == 0, err
    assert out["compacted"] == 5 and out["dry_run"] is True
    assert tree_bytes(root) == before
    assert not (root / ".squad/memory/.scribed").exists()


def test_human_output_and_version(squad: tuple[Path, dict[str, Any]]) -> None:
    root, _ = squad
    p = run_cli("--config", str(root / "scribed.toml"), "run-once")
    assert p.returncode == 0
    assert b"5 sessions: 5 compacted, 0 skipped, 0 failed" in p.stdout
    v = run_cli("--version")
    assert v.returncode == 0 and b"scribed" in v.stdout


def test_private_permissions(squad: tuple[Path, Any]) -> None:
    """Everything scribed creates is 0600 (files) / 0700 (folders): hot and cold hold work history."""
    root, _ = squad
    cfg = str(root / "scribed.toml")
    assert run_json("--config", cfg, "run-once")[0] == 0
    assert run_json("--config", cfg, "promote", "--as-of", "2027-06-01")[0] == 0
    p = run_cli(
        "--config", cfg, "wiki-write", "conventions", "--agent", "riker", input=b"Always pin uv.lock.\n"
    )
    assert p.returncode == 0, p.stderr
    premade = {root / ".squad", root / ".squad/memory", root / ".squad/memory/hot"}  # made by the demo
    checked = 0
    for p in (root / ".squad").rglob("*"):
        if p in premade:
            continue
        mode = p.stat().st_mode & 0o777
        assert mode == (0o700 if p.is_dir() else 0o600), f"{p} has mode {oct(mode)}"
        checked += 1
    assert checked > 10
