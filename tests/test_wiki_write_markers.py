"""A fact's text with lines git writes around a merge conflict (``<<<<<<<``, ``=======``,
``>>>>>>>``, ``|||||||``) outside a code fence is refused, naming the line: stored, git and scribed
would take the page for a conflict (the next sync "repaired" it, dropping those lines from the
fact in silence; ``git diff --check`` calls them leftover markers). The same lines in a code fence,
indented, or as a Markdown underline of another length are stored and read back as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from scribed import config
from scribed.cli.main import main
from scribed.core.scribe import Scribe
from scribed.curate.agent_writes import agent_fact, apply_inbox, inbox_dir
from scribed.session.door import redacted
from scribed.tiers.cold import Layout
from scribed.tiers.wiki import WikiError


def _write(root: Path, text: str, title: str = "Markers") -> tuple[int, str]:
    p = CliRunner().invoke(
        main,
        ["wiki-write", "notes", "--agent", "riker", "--title", title, "--root", str(root)],
        input=text.encode(),
    )
    return p.exit_code, p.output + (p.stderr if p.stderr_bytes is not None else "")


def _page(root: Path) -> str:
    page = root / ".squad/memory/wiki/notes.md"
    return page.read_text() if page.exists() else ""


def _sync(root: Path) -> None:
    """The root lock taken and let go: the team sync that repaired such a page runs both times."""
    scribe = Scribe(config.from_dict({"root": str(root)}))
    try:
        with scribe.locked():
            pass
    finally:
        scribe.close()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / ".squad").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("text", "line", "shown"),
    [
        (
            "When git shows\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\nkeep both.",
            2,
            "<<<<<<< HEAD",
        ),
        ("Section A\n=======\nuse it as a separator", 2, "======="),
        ("the end of a conflict:\n>>>>>>> feature/login", 2, ">>>>>>> feature/login"),
        ("diff3 adds\n||||||| base\nbetween the sides", 2, "||||||| base"),
        ("\n\nopening\n<<<<<<<<<< ours (a long one)\n", 4, "<<<<<<<<<< ours (a long one)"),
    ],
)
def test_a_marker_line_outside_a_fence_is_refused_naming_it(
    root: Path, text: str, line: int, shown: str
) -> None:
    code, out = _write(root, text)
    assert code == 2, out
    assert f"line {line}" in out and shown in out and "code fence" in out, out
    assert _page(root) == "", "the fact was written anyway"


def test_the_same_lines_fenced_indented_or_of_another_length_are_stored_as_written(root: Path) -> None:
    texts = {
        "Fenced": "Resolve like this:\n```\n<<<<<<< ours\nx = 2\n=======\nx = 3\n>>>>>>> theirs\n```\nthen git add.",
        "Indented": "git shows\n    <<<<<<< HEAD\n    ours\n    =======\n    theirs\n    >>>>>>> branch",
        "Underline": "Release checklist\n=================\n1. bump the version\n========\n2. tag it",
    }
    for title, text in texts.items():
        code, out = _write(root, text, title)
        assert code == 0, out
    _sync(root)
    page = _page(root)
    for text in texts.values():
        assert text in page, (text, page)


def test_an_inbox_file_with_a_marker_line_is_quarantined_with_the_line_named(root: Path) -> None:
    """The inbox drop folder and MCP's ``wiki_write`` build the fact the same way: refused alike."""
    layout = Layout(root)
    inbox = inbox_dir(layout)
    inbox.mkdir(parents=True)
    (inbox / "riker-notes.md").write_text(
        "---\ntopic: notes\nagent: riker\ntitle: Markers\n---\nbefore\n=======\nafter\n"
    )
    res = apply_inbox(layout, None)
    assert not res.applied and len(res.quarantined) == 1, res
    assert "line 2" in res.quarantined[0].reason and "=======" in res.quarantined[0].reason, res
    with pytest.raises(WikiError, match="line 1"):
        agent_fact("notes", "riker", redacted(">>>>>>> theirs"), date="2026-12-01", via="mcp")


@pytest.mark.parametrize(
    ("text", "title", "shown"),
    [
        (
            "*Status:* in production since March.\nThe billing cron runs on systemd timers.",
            "Billing cron",
            "*Status:* in production since March.",
        ),
        ("*Status:* live", "Billing cron", "*Status:* live"),
        ("   *Status:* live", "Billing cron", "*Status:* live"),  # the statement is stored stripped
        ("*Status:* live", "", "*Status:* live"),  # no title: under the same line, starred off
        ("\n*Status:* superseded by the new cron\nit runs hourly", "Cron", "*Status:* superseded"),
        ("- status: deprecated\n- source: the runbook", "2026-01-01: billing cron", "- status: deprecated"),
    ],
)
def test_a_first_line_that_reads_as_a_status_mark_is_refused(
    root: Path, text: str, title: str, shown: str
) -> None:
    """Stored right under the title, it made the new fact read as retired (counted deprecated, moved
    under ``## Superseded`` by the next sync)."""
    code, out = _write(root, text, title)
    assert code == 2, out
    assert "status mark" in out and shown in out and "another line" in out and "reword" in out, out
    assert _page(root) == "", "the fact was written anyway"
    with pytest.raises(WikiError, match="status mark"):
        agent_fact("notes", "riker", redacted(text), title=redacted(title), date="2026-12-01", via="mcp")


def test_a_status_word_elsewhere_is_stored_as_a_current_fact(root: Path) -> None:
    texts = {
        "Billing cron": "The billing cron runs on systemd timers.\n*Status:* in production since March.",
        "Old": "- status: deprecated\n- source: the runbook",  # not under a dated title
    }
    for title, text in texts.items():
        code, out = _write(root, text, title)
        assert code == 0, out
    _sync(root)
    page = _page(root)
    assert "\n## Superseded" not in page, page
    assert [ln[4:] for ln in page.splitlines() if ln.startswith("### ")] == list(texts), page
