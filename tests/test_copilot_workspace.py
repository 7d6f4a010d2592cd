"""Copilot CLI's ``workspace.yaml`` (beside ``events.jsonl``) as session metadata (issue 16).

The place and summary fields go to ``Session.meta`` over what ``session.start`` recorded; the agent
name never comes from it; a missing, malformed or oversized file is ignored (debug log, no warning).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from scribed.sources import copilot, parse_file

SAMPLE = Path(__file__).parent / "samples" / "copilot" / "37f4c2de-9b1a-4e0f-8d7c-2a6b5e9f1c03"


def test_sample_workspace_fills_every_session_meta() -> None:
    r = parse_file("copilot", SAMPLE / "events.jsonl", "scribe")
    assert {s.agent for s in r.sessions} == {"scribe", "tester"}  # names as before
    for sess in r.sessions:
        assert sess.meta == {
            "cwd": "/home/dev/repo/server",  # workspace.yaml wins over session.start's /home/dev/repo
            "git_root": "/home/dev/repo",
            "repository": "acme/widgets",
            "branch": "fix/590-default-host",
            "summary": "Fix #590: the server crashed on an empty config table;\ndefaults now fill a missing host",
        }
    assert not [w for w in r.warnings if "workspace" in w]


@pytest.mark.parametrize(
    "text",
    [
        None,  # no workspace.yaml: session.start's context only
        "cwd: [/a, /b]\n",  # a flow list
        "context:\n  cwd: /elsewhere\n",  # a nested mapping
        "cwd /elsewhere\n",  # not key: value
        'summary: "unterminated\n',
        "\xff\xfe binary",
        "summary: " + "x" * (copilot.MAX_WORKSPACE_BYTES + 1) + "\n",
    ],
)
def test_missing_or_malformed_workspace_is_ignored(tmp_path: Path, text: str | None) -> None:
    folder = tmp_path / "session-state" / "37f4c2de-9b1a-4e0f-8d7c-2a6b5e9f1c03"
    folder.mkdir(parents=True)
    shutil.copy(SAMPLE / "events.jsonl", folder / "events.jsonl")
    if text is not None:
        (folder / "workspace.yaml").write_bytes(text.encode("latin-1"))
    r = parse_file("copilot", folder / "events.jsonl", "scribe")
    main = next(s for s in r.sessions if s.agent == "scribe")
    assert main.meta == {
        "cwd": "/home/dev/repo", "git_root": "/home/dev/repo", "branch": "main", "repository": "acme/widgets",
    }  # fmt: skip
    assert not [w for w in r.warnings if "workspace" in w]


def test_flat_yaml_reader() -> None:
    text = (
        "# written by the CLI\n---\nid: abc\nsummary: 'it''s fixed'  \nbranch: main # current\n"
        'empty:\nfolded: >\n  one\n  two\n\nrepository: "acme/\\u00e9"\n'
    )
    assert copilot.parse_workspace(text) == {
        "id": "abc", "summary": "it's fixed", "branch": "main", "empty": "", "folded": "one two",
        "repository": "acme/é",
    }  # fmt: skip
    assert copilot.parse_workspace("a: 1\n  b: 2\n") is None  # indentation outside a block scalar
    assert copilot.parse_workspace("url:http://x\n") is None
