"""A cold entry's fact that starts with a line git writes around a merge conflict (a session that
talked about one: ``<<<<<<< HEAD``, ``=======``, ``>>>>>>> feature``) is promoted with that line
indented by one space: it reads the same, and neither git (``git diff --check``) nor the next
sync's conflict repair takes the page for a merge conflict (the repair dropped such lines)."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from scribed import config
from scribed.core import promote
from scribed.core.scribe import Scribe
from scribed.tiers.cold import Layout
from scribed.tiers.wiki import WikiDoc
from scribed.tiers.wiki_block import conflict_line
from tests.test_promote import cold_entry

LONG = " in src/app.py, since the feature branch moved the retry limit and the tests pin it" * 2
FACTS = [
    "<<<<<<< HEAD holds our side: keep x = 2" + LONG,
    "======= splits the two sides: take x = 3" + LONG,
    ">>>>>>> feature ends their side: x = 3 wins" + LONG,
]


def test_promoted_marker_lines_are_indented_and_the_page_is_no_conflict(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    cold_entry(
        layout, "riker", datetime(2026, 8, 1, tzinfo=UTC), "e-abcabcabc001", goal="merge", decisions=FACTS
    )
    promote.promote(config.from_dict({"root": str(tmp_path)}), as_of=datetime(2026, 11, 29, tzinfo=UTC))
    page = layout.wiki / "decisions.md"
    text = page.read_text()
    assert conflict_line(text) is None, text
    for fact in FACTS:  # each line kept whole, one space before it
        assert f"\n {fact}\n" in text
    before = text
    scribe = Scribe(config.from_dict({"root": str(tmp_path)}))
    try:
        with scribe.locked():  # the team sync's conflict repair runs here: nothing to repair
            pass
    finally:
        scribe.close()
    assert page.read_text() == before
    doc = WikiDoc.parse("decisions", before)
    assert sorted(b.body.strip() for b in doc.blocks) == sorted(FACTS)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    check = subprocess.run(
        ["git", "-C", str(tmp_path), "diff", "--cached", "--check"], capture_output=True, text=True
    )
    assert "conflict marker" not in check.stdout, check.stdout
