"""The real-data benchmark (bench/realdata.py) on a tiny transcript written here: it runs, scores
all four methods, skips missing data cleanly, and its identifier score is right by hand."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import peers  # noqa: E402
import realdata  # noqa: E402

pytest.importorskip("sumy", reason="the bench extra is not installed: pip install -e '.[bench]'")

TRANSCRIPT = """# Session 2026-03-02T09:15:00Z

## User

The nightly export crashes with `KeyError: 'owner'` when a board has no owner. See #214.
Please fix it in src/export/boards.py and keep the CSV columns stable.

## Assistant

I read src/export/boards.py. The loop calls `row["owner"]` directly, so an orphaned board raises
KeyError. I will use `row.get("owner", "")` and add a test in tests/test_boards.py.

```
$ python -m pytest tests/test_boards.py --maxfail=1
E   KeyError: 'owner'
1 failed in 0.12s
```

## User

Good. Also the retry helper `fetch_with_backoff` sleeps too long; cap it at 30 seconds.

## Assistant

Done: BoardExporter.write_rows now tolerates a missing owner, and fetch_with_backoff caps its delay
through the new `MAX_BACKOFF_S` constant in src/net/retry.py. The ValueError path for a negative
delay is unchanged. Ran `python -m pytest -q` and all 48 tests pass. Opened #215 for the flaky
upload test, which still times out now and then with `UploadTimeoutError` on slow runners.
"""


def _write_input(tmp_path: Path) -> Path:
    data = tmp_path / "input" / "notes"
    data.mkdir(parents=True)
    body = TRANSCRIPT + "".join(
        f"\n## User\n\nNext, look at step {i} of the import in src/imp/step_{i}.py.\n\n"
        f"## Assistant\n\nStep {i} now validates `config.step_{i}` before loading; parse_step_{i} "
        f"raises StepError{i} on bad input, logged by ImportRunner.\n"
        for i in range(12)
    )
    (data / "2026-03-02-export-fix.md").write_text(body)
    return tmp_path / "input"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "bench/realdata.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )


def test_identifier_extractor_finds_each_kind() -> None:
    ids = peers.identifiers(TRANSCRIPT)
    assert ids["src/export/boards.py"] == "path"
    assert ids["tests/test_boards.py"] == "path"
    assert ids['row.get("owner", "")'] == "backtick"
    assert ids["#214"] == "issue" and ids["#215"] == "issue"
    assert ids["KeyError"] == "error" and ids["ValueError"] == "error"
    assert ids["BoardExporter.write_rows"] == "code"  # dotted
    assert ids["fetch_with_backoff"] == "backtick"  # backticked first; same string, one identifier
    assert ids["MAX_BACKOFF_S"] == "backtick"
    assert ids["--maxfail"] == "code"  # a flag
    camel = peers.identifiers("the BoardExporter class and a plain Word, an API and the URLs")
    assert camel == {"BoardExporter": "code"}
    snake = peers.identifiers("call parse_step_3 then __init__, not _**User**_ or ___")
    assert set(snake) == {"parse_step_3", "__init__"}
    # prose is not an identifier
    assert peers.identifiers("Yes/no, e.g. this and/or that. Done. The end.") == {}


def test_retention_by_hand() -> None:
    idents = peers.identifiers("Fix #12 in app/main.py; call load_cfg and raise ConfigError.")
    assert set(idents) == {"#12", "app/main.py", "load_cfg", "ConfigError"}
    # #12 is not in #123, load_cfg not in load_cfg_v2: 2 of 4 kept
    assert peers.retention(idents, "see #123 and app/main.py; load_cfg_v2 raises ConfigError") == 0.5
    assert peers.retention(idents, "#12 app/main.py load_cfg ConfigError") == 1.0
    assert peers.retention(idents, "") == 0.0
    assert peers.retention({}, "anything") is None
    # whitespace differences do not matter
    assert peers.retention({"a b": "backtick"}, "x a\n  b y") == 1.0


def test_mid_token_cuts() -> None:
    src = "Edit src/components/FooterLinks.tsx and run `git commit -m 'fix footer links'` now."
    idents = peers.identifiers(src)
    out = "- Files: src/components/Footer…\n- Ran `git commit -m …\n- Edit src/components/FooterLinks.tsx …"
    cuts = peers.mid_token_cuts(out, src, idents)
    assert len(cuts) == 2, cuts
    assert peers.mid_token_cuts("- Files: src/components/FooterLinks.tsx", src, idents) == []


def test_peers_respect_the_budget() -> None:
    text = "\n".join(f"line {i} mentions file_{i}.py and more words here." for i in range(200))
    h = peers.head(text, 200)
    assert len(h.encode()) <= 200 and text.startswith(h) and h.endswith("here.")
    s = peers.line_sample(text, 400)
    lines = s.splitlines()
    assert len(s.encode()) <= 400 and len(lines) >= 5
    assert lines[0] != "line 0 mentions file_0.py and more words here."  # spread, not the head
    assert int(lines[-1].split()[1]) > 150  # reaches the end of the session
    lr = peers.lexrank(text, 300)
    assert 0 < len(lr.encode()) <= 300


def test_detection_by_name(tmp_path: Path) -> None:
    g = realdata.group_of
    assert g(Path(".aider.chat.history.md"), None) == "aider"
    assert g(Path("x/.specstory/history/2025-01-01_a.md"), None) == "specstory"
    assert g(Path("notes/a.md"), None) == "md"
    assert g(Path("s/rollout-2026-01-01.jsonl"), None) == "codex"
    assert g(Path("abc/events.jsonl"), None) == "copilot"
    assert g(Path("p/3f2a.jsonl"), None) == "claude"
    assert g(Path("p/readme.txt"), None) is None
    assert g(Path("p/a.jsonl"), "codex") == "codex"
    f = tmp_path / "proj/.specstory/history/a.md"
    f.parent.mkdir(parents=True)
    f.write_text("x")
    assert realdata.detect(f, None) == [(f, Path(".specstory/history/a.md"), "specstory")]


def test_missing_paths_skip_with_exit_0(tmp_path: Path) -> None:
    p = _run(str(tmp_path / "nope"))
    assert p.returncode == 0, p.stderr
    assert f"skipped: {tmp_path / 'nope'} not found" in p.stdout
    assert "DEV.md" in p.stdout and "Traceback" not in p.stderr
    p = _run(str(tmp_path / "nope"), "--json")
    assert p.returncode == 0 and "DEV.md" in json.loads(p.stdout)["message"]


def test_score_gives_every_method_the_entry_size() -> None:
    text = TRANSCRIPT * 3
    entry = (
        "### 2026-03-02T09:15:00Z: Fix the export crash\n"
        "- provenance: id=e-1 · session=s1 · source=`src/export/boards.py` (markdown) · lines 1–9 · #214\n\n"
        "#### Goal\nFix the KeyError in the nightly export (#215).\n"
    )
    c = realdata.Cold(entry, Path("x.md"), "markdown", "s1", 1, 9)
    row = realdata.score(c, text)
    budget = len(entry.encode())
    assert row["entry_bytes"] == budget and row["bytes_in"] == len(text.encode())
    assert set(row["retention"]) == set(realdata.METHODS) and not row["errors"]
    assert all(0 < row["out_bytes"][m] <= budget for m in realdata.METHODS), row["out_bytes"]
    # the provenance line is not scored: of the session's identifiers only KeyError and #215 count
    assert row["retention"]["scribed"] == pytest.approx(2 / row["identifiers"])
    assert row["cuts"] == 0


def test_end_to_end_on_a_tiny_transcript(tmp_path: Path) -> None:
    src = _write_input(tmp_path)
    before = {f: (f.read_bytes(), f.stat().st_mtime_ns) for f in src.rglob("*") if f.is_file()}
    p = _run(str(src), str(tmp_path / "missing"))
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and f"{src}: 1 files" in p.stderr  # progress
    out = p.stdout
    header = next(line for line in out.splitlines() if line.startswith("file "))
    for m in realdata.METHODS:
        assert m in header
        assert f"\n  {m} " in out, f"{m} missing from the totals"
    row = next(line for line in out.splitlines() if "2026-03-02-export-fix.md" in line)
    assert len(row.split()) == len(header.split()) - 2, row  # "KB in" and "entry B" are two words each
    assert f"skipped: {tmp_path / 'missing'} not found" in out
    assert "totals: 1 sessions" in out and "mid-token cuts in scribed's entries: 0" in out
    assert {f: (f.read_bytes(), f.stat().st_mtime_ns) for f in src.rglob("*") if f.is_file()} == before


def test_plot(tmp_path: Path) -> None:
    rows = [
        {"bytes_in": kb * 1024, "retention": {m: (i + 1) / 5 for i, m in enumerate(realdata.METHODS)}}
        for kb in (2, 20, 200)
    ]
    rows[0]["retention"]["lexrank"] = None  # a failed peer is left out, not drawn as 0
    png = tmp_path / "plot.png"
    realdata.plot(rows, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
