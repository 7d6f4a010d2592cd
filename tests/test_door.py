"""Redaction happens once, at the door (scribed.session.door): the tier writers take redacted types
and do not redact themselves, so text that skipped the door must be refused, by mypy and at run time."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from secrets_corpus import SECRETS

from scribed import config
from scribed.cli import demo
from scribed.core.compressors import Compressors
from scribed.core.scribe import Scribe
from scribed.models import Session, Turn
from scribed.session import door
from scribed.session.door import redact_within
from scribed.session.redact import REDACTED, redact
from scribed.tiers import live

REPO = Path(__file__).resolve().parents[1]

# Each call hands a writer text or a session that did not come through the door.
UNREDACTED_CALLS = """\
from pathlib import Path
from scribed.models import Session
from scribed.curate import agent_writes
from scribed.tiers import hot_seed, live, transcripts
from scribed.tiers.cold import Layout

layout = Layout(Path("."))
raw = Session(agent="picard", session_id="s-1", source=Path("x"), kind="copilot")
live.refresh(layout, raw, "copilot", None)
live.render_live(raw, "copilot")
hot_seed.reseed(layout, "picard", "copilot", "s-1", None)
agent_writes.write_agent_fact(layout, "t", "picard", "a raw text")
agent_writes.deprecate(layout, "t", "x", "picard", reason="a raw reason")
"""


def test_mypy_refuses_writers_handed_unredacted_text(tmp_path: Path) -> None:
    """The types are the contract: every writer call above is a type error (strict mypy)."""
    snippet = tmp_path / "unredacted.py"
    snippet.write_text(UNREDACTED_CALLS)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--no-incremental",
            str(snippet),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO), "MYPYPATH": str(REPO)},
        check=False,
    )
    errors = [ln for ln in proc.stdout.splitlines() if ": error:" in ln and "arg-type" in ln]
    lines = {int(ln.split(":")[1]) for ln in errors}
    assert lines == {9, 10, 11, 12, 13}, proc.stdout


def test_live_writer_refuses_a_session_that_skipped_the_door() -> None:
    raw = Session(agent="picard", session_id="s-1", source=Path("x"), kind="copilot")
    with pytest.raises(TypeError, match="door"):
        live.render_live(raw, "copilot")  # type: ignore[arg-type]


def test_a_session_is_redacted_at_the_door_and_only_there(tmp_path: Path, monkeypatch: Any) -> None:
    """Swap the door's engine for one that stamps what it redacted: the demo's secrets reach no file,
    and what the writers wrote carries the door's stamp (no writer redacted on its own)."""
    root = tmp_path / "squad"
    root.mkdir()
    manifest = demo.build(root)
    secrets = [s for s in manifest["secrets"] if len(s) >= 8]
    real = door.redact

    def stamped(text: str) -> str:
        out = real(text)
        return out.replace("[REDACTED_SECRET]", "[DOOR]") if out != text else out

    real_within = door.redact_within

    def stamped_within(before: str, texts: list[str], after: str) -> list[str]:
        return [r.replace("[REDACTED_SECRET]", "[DOOR]") for r in real_within(before, texts, after)]

    monkeypatch.setattr(door, "redact", stamped)
    monkeypatch.setattr(door, "redact_within", stamped_within)
    door.clear_cache()
    cfg = config.load(root / "scribed.toml")
    scribe = Scribe(cfg)
    seen: list[str] = []  # every text a compressor was handed (the core's, or its work ahead of the lock)
    real_compress = Compressors.compress

    def recording(self: Compressors, red: door.RedactedSession, anchors: Any, budget: int) -> Any:
        seen.extend(t.text for t in red.session.turns)
        return real_compress(self, red, anchors, budget)

    monkeypatch.setattr(Compressors, "compress", recording)
    try:
        report = scribe.run()
    finally:
        scribe.close()
    assert report.compacted and not report.failed
    assert seen and any("[DOOR]" in t for t in seen)
    for s in secrets:
        assert not any(s in t for t in seen), f"{s!r} reached the compressor"
    written = [p for p in (root / ".squad").rglob("*") if p.is_file() and p.suffix == ".md"]
    texts = {p: p.read_text(errors="replace") for p in written}
    for p, text in texts.items():
        for s in secrets:
            assert s not in text, f"{s!r} leaked into {p}"
        assert "[REDACTED_SECRET]" not in text, f"{p}: redacted by something other than the door"
    assert any("[DOOR]" in t for t in texts.values())
    door.clear_cache()


def test_door_redacts_turns_and_keeps_the_session_shape() -> None:
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    s = Session(
        agent="picard",
        session_id="s-1",
        source=Path("/tmp/x.jsonl"),
        kind="copilot",
        turns=[Turn("user", f"token {secret} here", end_offset=10), Turn("assistant", "ok", end_offset=20)],
    )
    red = door.redact_session(s)
    assert secret not in red.session.turns[0].text
    assert [t.end_offset for t in red.session.turns] == [10, 20]
    assert s.turns[0].text.endswith("here") and secret in s.turns[0].text  # the parsed session is untouched
    only = door.redact_session(s, s.turns[1:])
    assert [t.text for t in only.session.turns] == ["ok"]


def test_a_session_let_go_is_emptied_once_redacted_and_redacted_the_same() -> None:
    """A streamed session read for its entry alone gives its raw texts up at the door: a text a
    secret changed is then held once (redacted), not twice, while the entry is made."""
    secret = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

    def session() -> Session:
        turns = [Turn("user", "plan the release", end_offset=1)]
        turns += [Turn("assistant", f"token {secret} in the log {i}", end_offset=2 + i) for i in range(3)]
        return Session(
            agent="picard", session_id="s-3", source=Path("/tmp/x.md"), kind="markdown", turns=turns
        )

    kept, gone = session(), session()
    want = door.redact_session(kept, kept.turns[1:], remember=False)
    got = door.redact_session(gone, gone.turns[1:], remember=False, let_go=True)
    assert [t.text for t in got.session.turns] == [t.text for t in want.session.turns]
    assert all(secret not in t.text and t.text for t in got.session.turns)
    assert [t.text for t in gone.turns] == ["plan the release", "", "", ""]  # only the picked turns
    assert secret in kept.turns[1].text  # without let_go the parsed session is untouched


def test_door_judges_each_turn_with_the_turns_around_it() -> None:
    """Issue 31: a parser that cuts a file at blank lines (a hot file, markdown) puts a PGP key's
    armour header and its body in different turns; the door judges each turn inside its neighbours,
    as ``scribed redact`` judges the file, so the body is redacted in every writer too."""
    pem = next(s for s in SECRETS if s.name == "pem_pgp")
    head, body = pem.line.split("\n\n", 1)
    assert all(x not in redact(pem.line) for x in pem.extra)
    turns = [Turn("assistant", "Last actions:", end_offset=1), Turn("assistant", head, end_offset=2)]
    turns += [Turn("assistant", body, end_offset=3), Turn("assistant", "Next: rotate it", end_offset=4)]
    s = Session(agent="picard", session_id="s-2", source=Path("/tmp/hot.md"), kind="hot", turns=turns)
    red = door.redact_session(s)
    texts = [t.text for t in red.session.turns]
    assert [t.end_offset for t in red.session.turns] == [1, 2, 3, 4]
    assert texts[0] == "Last actions:" and texts[3] == "Next: rotate it"
    for fragment in pem.extra:
        assert not any(fragment in t for t in texts), fragment
    assert REDACTED in texts[2]


def test_door_blocks_give_the_same_text_as_one_window() -> None:
    """Blocks and their context (a long session) redact each turn as the whole session would."""
    secrets = [s for s in SECRETS if "\n" not in s.line]
    texts = [
        f"turn {i}: " + ("filler words " * 300 if i % 3 else secrets[i % len(secrets)].line)
        for i in range(200)
    ]
    assert sum(map(len, texts)) > 3 * door.BLOCK_CHARS
    door.clear_cache()
    got = door.redacted_texts(texts)
    assert got == redact_within("", texts, "")
    assert door.redacted_texts(texts) == got  # from the cache
