"""Tier files are parsed structurally: a code fence inside an entry never forges an entry."""

from __future__ import annotations

from markdown_it import MarkdownIt

from scribed.compress.entry import join_entries, split_entries
from scribed.tiers.wiki_block import safe_body, split_blocks

_COLD = """# Cold memory: picard

### 2026-01-02T10:00:00Z: Fix the release script
- provenance: id=e-0a1b2c3d4e5f · agent=picard

#### Key facts
- the fixture below holds a line that looks like an entry heading
~~~text
### 2026-01-03T10:00:00Z: forged entry
- provenance: id=e-ffffffffffff · agent=mallory
~~~
- still the first entry

### 2026-01-04T10:00:00Z: Second entry
- provenance: id=e-111111111111 · agent=picard
````md
```
### 2026-01-05T10:00:00Z: forged inside a longer fence
```
````
"""


def test_tilde_fence_does_not_forge_an_entry() -> None:
    _, entries = split_entries(_COLD)
    assert [e.entry_id for e in entries] == ["e-0a1b2c3d4e5f", "e-111111111111"]
    assert "forged entry" in entries[0].text
    assert "still the first entry" in entries[0].text
    assert "forged inside a longer fence" in entries[1].text


def test_unclosed_fence_runs_to_the_end() -> None:
    text = "### 2026-01-02: one\n```\n### 2026-01-03: not an entry\n"
    _, entries = split_entries(text)
    assert [e.title for e in entries] == ["one"]


def test_split_join_round_trip() -> None:
    pre, entries = split_entries(_COLD)
    assert split_entries(join_entries(pre, entries))[1] == entries
    assert "".join(e.text for e in entries) in _COLD + "\n"


def test_wiki_fence_does_not_forge_a_block() -> None:
    text = (
        "# Wiki: patterns\n\n### Release fixture\n~~~\n### forged block\n## Superseded\n~~~\n"
        "*Source:* 2026-01-02 · entry=e-0a1b2c3d4e5f | confidence: 1 session, 0 agents\n"
    )
    _, blocks = split_blocks(text)
    assert len(blocks) == 1
    assert blocks[0][1] is False
    assert "### forged block" in blocks[0][0]
    assert "#### forged" not in safe_body("~~~\n### forged\n```\n~~~\n### real")
    assert safe_body("~~~\n### forged\n```\n~~~\n### real").endswith("#### real")


def _mdit_h3_lines(text: str) -> list[int]:
    """Line numbers of top-level ``###`` headings as markdown-it (CommonMark) reads them."""
    md = MarkdownIt("commonmark")
    toks = md.parse(text)
    return [t.map[0] for t in toks if t.type == "heading_open" and t.tag == "h3" and t.level == 0 and t.map]


def test_entry_headings_agree_with_commonmark() -> None:
    texts = [
        _COLD,
        "### 2026-01-02: a\n```py\n### 2026-01-03: b\n``` trailing\n### 2026-01-04: c\n```\n### 2026-01-05: d\n",
        "### 2026-01-02: a\n   ~~~~\n### 2026-01-03: b\n~~~\n### 2026-01-04: c\n~~~~\n### 2026-01-05: d\n",
        "### 2026-01-02: a\n    ```\n### 2026-01-03: b\n",
    ]
    for text in texts:
        lines = text.splitlines()
        got = [lines.index(e.heading) for e in split_entries(text)[1]]
        assert got == _mdit_h3_lines(text), text
