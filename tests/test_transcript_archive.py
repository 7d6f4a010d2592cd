"""The transcript archive: a redacted zstd copy of each compacted transcript, and ``scribed show``."""

from __future__ import annotations

import json
import os
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner

from scribed import config
from scribed.cli.main import main
from scribed.core.scribe import Scribe
from scribed.sources import zst
from scribed.tiers import transcripts

SECRET = "ghp_R7t2Kq9LmX4vB8nC1zD5wF3hJ6pS0aY2uE8i"
SID = "c0ffee00-1234-4abc-8def-0123456789ab"
FACT = "The staging database is pg-staging-7 on port 6543; the summary never needed it."


def claude_file(folder: Path, sid: str = SID, extra: list[str] | None = None) -> Path:
    records: list[dict[str, Any]] = [
        {
            "type": "user",
            "uuid": "u1",
            "sessionId": sid,
            "timestamp": "2026-03-02T10:00:00Z",
            "message": {
                "role": "user",
                "content": f"Deploy the API to staging; use token {SECRET} for the registry.",
            },
        },
        {
            "type": "assistant",
            "uuid": "u2",
            "sessionId": sid,
            "timestamp": "2026-03-02T10:00:05Z",
            "message": {"id": "msg_1", "role": "assistant", "content": [{"type": "text", "text": FACT}]},
        },
    ]
    for i, line in enumerate(extra or []):
        records.append(
            {
                "type": "user",
                "uuid": f"x{i}",
                "sessionId": sid,
                "timestamp": f"2026-03-02T11:00:{i:02d}Z",
                "message": {"role": "user", "content": line},
            }
        )
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".squad/memory").mkdir(parents=True)
    return root


def cfg_dict(root: Path, src: Path, **archive: Any) -> dict[str, Any]:
    return {
        "root": str(root),
        "archive": archive,
        "sources": [{"kind": "claude", "path": str(src), "agent": "riker"}],
    }


def run(cfg: dict[str, Any], now: datetime | None = None) -> int:
    parsed = config.from_dict(cfg)
    scribe = Scribe(parsed, clock=lambda: now) if now else Scribe(parsed)
    try:
        return scribe.run_once(force=True).compacted
    finally:
        scribe.close()


def write_config(tmp_path: Path, data: dict[str, Any]) -> Path:
    lines = [f'root = "{data["root"]}"']
    if data.get("archive"):
        lines.append("[archive]")
        lines += [f"{k} = {json.dumps(v)}" for k, v in data["archive"].items()]
    for s in data["sources"]:
        lines += ["[[sources]]", *(f'{k} = "{v}"' for k, v in s.items())]
    path = tmp_path / "scribed.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def show(cfg_path: Path, session: str) -> Any:
    return CliRunner().invoke(main, ["--config", str(cfg_path), "show", session], env={"SCRIBED_CONFIG": ""})


def test_compacted_transcript_is_archived_redacted_and_shown_after_deletion(tmp_path: Path) -> None:
    root, src = make_root(tmp_path), tmp_path / "projects"
    path = claude_file(src)
    data = cfg_dict(root, src)
    assert run(data) == 1
    dest = root / ".squad/memory/.scribed/transcripts"
    (rec,) = list(transcripts.iter_archives(dest))
    assert rec.sessions == [SID] and rec.agents == ["riker"] and rec.kind == "claude"
    raw = rec.path.read_bytes()
    assert raw.startswith(b"\x28\xb5\x2f\xfd")  # a zstd frame
    plain = zstandard.ZstdDecompressor().stream_reader(rec.path.open("rb")).read()
    assert SECRET.encode() not in plain and b"[REDACTED_SECRET]" in plain and FACT.encode() in plain
    assert stat.S_IMODE(rec.path.stat().st_mode) == 0o600
    assert len(plain.splitlines()) == len(path.read_bytes().splitlines())

    path.unlink()  # the tool's cleanup
    res = show(write_config(tmp_path, data), SID)
    assert res.exit_code == 0, res.output
    assert FACT in res.stdout and SECRET not in res.stdout and "[REDACTED_SECRET]" in res.stdout
    assert show(write_config(tmp_path, data), SID[:8]).stdout == res.stdout  # a unique prefix is enough
    missing = show(write_config(tmp_path, data), "no-such-session")
    assert missing.exit_code == 1 and "no archived transcript" in missing.output


def test_rerun_keeps_the_archive_and_a_grown_file_replaces_it(tmp_path: Path) -> None:
    root, src = make_root(tmp_path), tmp_path / "projects"
    claude_file(src)
    data = cfg_dict(root, src)
    run(data)
    (rec,) = list(transcripts.iter_archives(root / ".squad/memory/.scribed/transcripts"))
    first = rec.path.stat()
    assert run(data) == 0
    assert rec.path.stat().st_ino == first.st_ino  # nothing rewritten
    claude_file(src, extra=["Also roll back if the health check fails for 5 minutes."])
    assert run(data) == 1
    (again,) = list(transcripts.iter_archives(root / ".squad/memory/.scribed/transcripts"))
    text = b"".join(transcripts.read_chunks(again)).decode()
    assert "roll back if the health check fails" in text and again.bytes_in > rec.bytes_in


def test_archive_folder_is_configurable_and_can_be_off(tmp_path: Path) -> None:
    root, src = make_root(tmp_path), tmp_path / "projects"
    claude_file(src)
    elsewhere = tmp_path / "keep"
    run(cfg_dict(root, src, folder=str(elsewhere)))
    assert [r.sessions for r in transcripts.iter_archives(elsewhere)] == [[SID]]
    assert not (root / ".squad/memory/.scribed/transcripts").exists()

    root2 = make_root(tmp_path / "two")
    run(cfg_dict(root2, src, transcripts=False))
    assert not (root2 / ".squad/memory/.scribed/transcripts").exists()


def test_retention_deletes_old_archives(tmp_path: Path) -> None:
    root, src = make_root(tmp_path), tmp_path / "projects"
    claude_file(src)
    claude_file(src, sid="0ld00000-1234-4abc-8def-0123456789ab")
    old = datetime(2025, 1, 1, tzinfo=UTC)
    run(cfg_dict(root, src, retention_days=30), now=old)
    dest = root / ".squad/memory/.scribed/transcripts"
    assert len(list(transcripts.iter_archives(dest))) == 2
    assert transcripts.prune(dest, 30, old + timedelta(days=29)) == 0
    assert transcripts.prune(dest, 30, old + timedelta(days=31)) == 2
    assert list(dest.iterdir()) == []


def test_zst_source_is_archived_from_its_decompressed_content(tmp_path: Path) -> None:
    root, src = make_root(tmp_path), tmp_path / "sessions"
    src.mkdir()
    meta = {"id": "019b0000-0000-7000-8000-0000000000aa", "cwd": "/r", "source": "cli"}
    lines = [
        {"timestamp": "2026-03-01T10:00:00Z", "type": "session_meta", "payload": meta},
        {
            "timestamp": "2026-03-01T10:00:01Z",
            "type": "response_item",
            "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": FACT}]},
        },
    ]
    plain = src / "rollout-2026-03-01T10-00-00-019b0000-0000-7000-8000-0000000000aa.jsonl"
    plain.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with plain.open("rb") as fin, (src / (plain.name + ".zst")).open("wb") as fout:
        zst.compress_file(fin, fout)
    os.unlink(plain)
    data = {
        "root": str(root),
        "sources": [{"kind": "codex", "path": str(src), "agent": "worf", "workspace": "*"}],
    }
    assert run(data) == 1
    res = show(write_config(tmp_path, data), meta["id"])
    assert res.exit_code == 0 and FACT in res.stdout and '"session_meta"' in res.stdout


def test_a_copy_after_a_failed_one_is_whole_and_redacted(tmp_path: Path) -> None:
    """The compressor is reused between copies: a copy that failed mid-stream (disk full) must
    not leave its half frame in the next one."""
    import io

    src = claude_file(tmp_path / "t")
    big = tmp_path / "big.txt"
    big.write_bytes(os.urandom(3 << 20).hex().encode())

    class Full(io.BytesIO):
        def write(self, b: Any) -> int:
            if self.tell() > 1000:
                raise OSError(28, "No space left on device")
            return super().write(b)

    with pytest.raises(OSError, match="No space left"):
        transcripts._fill(Full(), big)
    out = io.BytesIO()
    n = transcripts._fill(out, src)
    text = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(out.getvalue())).read()
    assert len(text) == n and FACT.encode() in text and SECRET.encode() not in text
    assert transcripts.produce(src) is not None and transcripts.produce(src).data == out.getvalue()  # type: ignore[union-attr]
