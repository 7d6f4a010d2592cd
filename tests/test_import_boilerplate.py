"""``squad init``'s boilerplate is no memory (finding m06 of a tester using the real Squad CLI).

The fixture is what ``squad init`` (Squad CLI 0.10.0) writes into every agent's ``history.md``,
copied byte for byte; the kept lines were written after the rule, in other words.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from scribed.config import from_dict
from scribed.core.importer import import_squad

# .squad/agents/scribe/history.md as `squad init --no-workflows` writes it (agent Scribe, repo R).
SQUAD_INIT = """# Project Context

- **Project:** R
- **Created:** 2026-12-08

## Core Context

Agent {Name} initialized and ready for work.

## Recent Updates

📌 Team initialized on 2026-12-08

## Learnings

Initial setup complete.
"""
AS_OF = datetime(2026, 12, 20, tzinfo=UTC)


def _team(root: Path, learnings: dict[str, str]) -> None:
    for agent in ("scribe", "ralph", "Rai"):
        hist = root / ".squad/agents" / agent / "history.md"
        hist.parent.mkdir(parents=True)
        text = SQUAD_INIT.format(Name=agent.capitalize())
        hist.write_text(
            text.replace("Initial setup complete.\n", learnings.get(agent, "Initial setup complete.\n"))
        )


def test_squad_init_boilerplate_becomes_no_entry_fact_or_seed(tmp_path: Path) -> None:
    """After ``squad init`` and ``import --all``, "Initial setup complete." and "📌 Team initialized
    on DATE" were cold entries in every agent, the hot seeds said "outcome: Initial setup complete."
    and "Agent Scribe initialized and ready for work." was the wiki's "Core context of scribe".
    Such a section names nothing and says no deed beyond the team's own setup: no entry, no fact, one
    warning for them all. Short lines that do say something stay, and so does the Project Context."""
    root = tmp_path / "repo"
    kept = {
        "scribe": "Set up CI on GitHub Actions.\n",
        "ralph": "Initialized the Postgres schema v3.\n",
    }
    _team(root, kept)
    core = root / ".squad/agents/Rai/history.md"
    core.write_text(
        core.read_text().replace(
            "ready for work.", "ready for work.\n\nTeam initialized; Alice owns billing."
        )
    )
    out = import_squad(from_dict({"root": str(root)}), None, as_of=AS_OF)
    memory = root / ".squad/memory"
    titles = sorted((e.agent, e.title) for e in out.cold)
    assert ("rai", "Learnings") not in titles and not any(t == "Recent Updates" for _, t in titles), titles
    assert ("scribe", "Learnings") in titles and ("ralph", "Learnings") in titles, titles
    assert {a for a, t in titles if t == "Project Context"} == {"scribe", "ralph", "rai"}, titles
    said = [w for w in out.warnings if "squad init" in w]
    assert len(said) == 1 and said[0].startswith("7 "), (
        out.warnings
    )  # 3 Recent Updates, Rai's Learnings, 3 cores
    text = "".join(p.read_text() for p in memory.rglob("*.md"))
    assert "Initial setup complete" not in text and "Team initialized on" not in text, text
    assert "Set up CI on GitHub Actions." in text and "Postgres schema v3" in text, text
    assert [p.agent for p in out.pinned] == ["rai"], out.pinned
    pinned = (memory / "wiki/agent-rai.md").read_text()
    assert "Alice owns billing" in pinned and "initialized and ready" not in pinned, pinned
    assert not (memory / "wiki/agent-scribe.md").exists()
    assert "Initial setup" not in (memory / "hot/rai.md").read_text()
