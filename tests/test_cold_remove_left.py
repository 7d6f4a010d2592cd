"""``scribed cold-remove`` of an entry that left cold already says where its text still is."""

from __future__ import annotations

from pathlib import Path

from helpers import run_cli


def test_removing_a_folded_entry_names_the_digest_that_still_serves_it(tmp_path: Path) -> None:
    folder = tmp_path / ".squad/memory/cold/picard"
    folder.mkdir(parents=True)
    (folder / "retired.txt").write_text("e-0123456789ab 2026-12-07 folded into d-548bd1e0ba71\n")
    p = run_cli("cold-remove", "e-0123456789ab", "--root", str(tmp_path))
    out = p.stdout.decode()
    assert p.returncode == 0, p.stderr.decode()
    assert "nothing removed" in out, out
    assert "still served from the digest d-548bd1e0ba71" in out, out
    assert "scribed cold-remove d-548bd1e0ba71" in out, out
