"""``redact_path``: a file name can carry a secret that running-text redaction leaves alone,
because a name right after ``/`` is a path there (``/etc/passwd: …``), never an assignment."""

from __future__ import annotations

import json

import pytest

from scribed.session.redact import REDACTED, Rule, redact, redact_path, rules
from scribed.session.rules import MARK

NAMES = [r for r in rules() if "/" not in r.tests[0] and "\n" not in r.tests[0]]


@pytest.mark.parametrize("rule", NAMES, ids=lambda r: r.id)
def test_every_rule_example_as_a_file_name_is_redacted(rule: Rule) -> None:
    """A rule's first test (its example) as a file name: its secret is redacted there too."""
    ex, secret = MARK.sub(r"\1", rule.tests[0]), MARK.findall(rule.tests[0])[0]
    for path in (f"/home/dev/notes/{ex}", f"/home/dev/notes/{ex} s1.jsonl", f"C:\\notes\\{ex}.md"):
        shown = redact_path(path)
        assert secret not in shown and REDACTED in shown, shown
        assert redact_path(shown) == shown


def test_running_text_keeps_path_components_and_plain_paths_stay() -> None:
    path = "/x/DB_PASSWORD=hunter2xyz s1.jsonl"
    assert redact(path) == path  # why redact_path exists: a path component is not an assignment
    for plain in (
        "/etc/passwd",
        "~/.claude/projects/-home-dev-shop/5e55.jsonl",
        "transcripts/old-1/events.jsonl",
    ):
        assert redact_path(plain) == plain


def test_nuget_password_inside_a_json_line_is_redacted() -> None:
    """A transcript line is JSON: the XML attribute's quotes arrive escaped (found by the
    every-writer property test in the transcript archive, which redacts raw lines)."""
    line = json.dumps({"content": 'a\n<add key="ClearTextPassword" value="x7nSAVTnGyHiAEZ8" />\nb'})
    assert "x7nSAVTnGyHiAEZ8" not in redact(line)
    kept = json.dumps({"content": '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" />'})
    assert redact(kept) == kept
