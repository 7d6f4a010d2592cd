"""An entry's size is counted from its parts, not encoded from the whole text (issue 15's fixed
cost: fitting renders an entry ~20 times). These tests hold the counted size and the text to the
way they were built before: the whole text, encoded, with the ratio's digits settled."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from scribed.compress import anchors as anchors_mod
from scribed.compress import entry, entry_guard
from scribed.compress.entry import EntryMeta, one_line, safe_line
from scribed.models import SECTIONS, Anchor, Summary
from scribed.session.redact import redact_path


def _built_whole(summary: Summary, meta: EntryMeta) -> str:
    """The render as it was: the whole body joined, the text encoded per try of the ratio (since
    issue 30 without a Goal section when the heading holds the goal whole)."""
    out: list[str] = []
    title_text = one_line(summary.goal or "session", 100) or "session"
    for key, title in SECTIONS:
        value = getattr(summary, key)
        if key == "goal" and not title_text.endswith("…") and title_text == " ".join(value.split()):
            continue
        if isinstance(value, str):
            if value.strip():
                out.append(f"#### {title}\n{safe_line(value, 1200)}")
        else:
            items = [v for v in value if v and v.strip()]
            if items:
                out.append(
                    f"#### {title}\n" + "\n".join(f"- {one_line(v, entry.MAX_ITEM_CHARS)}" for v in items)
                )
    body = "\n".join(out)
    head = f"### {entry.iso(meta.end)}: {title_text}"
    before, after, _ = entry._provenance_parts(meta)
    text, size = "", 0
    for _ in range(3):
        ratio = size / meta.bytes_in if meta.bytes_in else 0.0
        text = f"{head}\n{before}ratio={ratio:.3f}{after}\n\n{body}\n"
        if len(text.encode()) == size:
            break
        size = len(text.encode())
    return text


_short = st.text(alphabet="ab é→`🙂\n #-", max_size=40)
# Long enough for the cuts: a goal's 100 characters, an item's or the outcome's 1,200.
_long = st.tuples(st.text(alphabet="ab é→`", min_size=1, max_size=9), st.integers(15, 300)).map(
    lambda t: (t[0] + " ") * t[1]
)
_text = st.one_of(_short, _short, _short, _long)
_items = st.lists(_text, max_size=6)


@st.composite
def _summaries(draw: st.DrawFn) -> Summary:
    lists = {key: draw(_items) for key, _ in SECTIONS[2:]}
    return Summary(goal=draw(_text), outcome=draw(_text), **lists)


def _meta(bytes_in: int, source: str = "/t/x.jsonl") -> EntryMeta:
    when = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    return EntryMeta(
        "e-0123456789ab", "ann", "s1", source, "copilot", when, 1, 9, 4, "ff", "extractive", bytes_in
    )


@settings(max_examples=300, deadline=None)
@given(
    _summaries(),
    st.sampled_from([0, 1, 7, 99, 100, 999, 1000, 9999, 10**6]),
    st.sampled_from(["/t/x.jsonl", "/t/é→🙂 `x`.md"]),
)
def test_render_and_size_match_the_whole_text(summary: Summary, bytes_in: int, source: str) -> None:
    meta = _meta(bytes_in, source)
    want = _built_whole(summary, meta)
    assert entry.render(summary, meta) == want
    assert entry.size_of(summary, meta) == len(want.encode())


def test_a_changed_item_is_rendered_anew() -> None:
    """The remembered sections are keyed by their items: a popped item leaves the entry."""
    meta = _meta(5000)
    s = Summary(goal="g", outcome="o", decisions=["keep A", "drop B"])
    assert "drop B" in entry.render(s, meta)
    s.decisions.pop()
    assert "drop B" not in entry.render(s, meta)
    assert entry.size_of(s, meta) == len(_built_whole(s, meta).encode())


def _guard_counting_each_time(
    summary: Summary, anchors: list[Anchor], meta: EntryMeta, hard_cap: int
) -> list[str]:
    """The guard as it was: the whole entry's size counted again after each restored fact."""
    s = summary.model_copy(deep=True)
    text = entry.render(s, meta)
    missing = sorted(
        (a for a in anchors if not anchors_mod.present(a, text)),
        key=lambda a: anchors_mod.PRIORITY.index(a.type),
    )
    for a in missing:
        if s.key_facts and anchors_mod.present(a, "\n".join(s.key_facts)):
            continue
        s.key_facts.append(anchors_mod.format_anchor(a))
        if len(_built_whole(s, meta).encode()) > hard_cap:
            s.key_facts.pop()
    return s.key_facts


_anchors = st.lists(
    st.builds(Anchor, type=st.sampled_from(anchors_mod.PRIORITY), text=_text.filter(str.strip)), max_size=12
)


@settings(max_examples=300, deadline=None)
@given(
    _summaries(), _anchors, st.sampled_from([0, 99, 1000, 10**6]), st.integers(min_value=0, max_value=1500)
)
def test_guard_keeps_the_size_it_would_count(
    summary: Summary, anchors: list[Anchor], bytes_in: int, hard_cap: int
) -> None:
    meta = _meta(bytes_in)
    got, _ = entry_guard.guard(summary, anchors, meta, hard_cap)
    assert got.key_facts == _guard_counting_each_time(summary, anchors, meta, hard_cap)


@settings(max_examples=300, deadline=None)
@given(_summaries(), _text)
def test_an_added_fact_adds_what_it_prints(summary: Summary, line: str) -> None:
    """The guard's kept size: appending a fact adds exactly the bytes the entry grows by."""
    meta = _meta(1000)
    _, blocks, before = entry.parts_of(summary, meta)
    listed = sum(1 for v in summary.key_facts if v and v.strip())
    added = entry.item_bytes(line, listed, len(blocks), dict(SECTIONS)["key_facts"])
    summary.key_facts.append(line)
    assert entry.parts_of(summary, meta)[2] == before + added


def test_a_fact_in_an_entry_with_no_sections() -> None:
    """The first printed section has no newline before it: the kept size must not count one."""
    meta = _meta(1000)
    s = Summary(goal="", outcome=" ")
    _, blocks, before = entry.parts_of(s, meta)
    assert not blocks
    added = entry.item_bytes("path: `a.py`", 0, 0, dict(SECTIONS)["key_facts"])
    s.key_facts.append("path: `a.py`")
    assert entry.parts_of(s, meta)[2] == before + added
    hard_cap = entry.size_of(s, meta)
    got, _ = entry_guard.guard(
        Summary(goal="", outcome=" "), [Anchor(type="path", text="a.py")], meta, hard_cap
    )
    assert got.key_facts == ["path: `a.py`"]  # exactly at the cap: kept


def test_a_summary_built_without_validation_renders_as_before() -> None:
    """A non-text item cannot key the remembered sections: it is rendered without them."""
    for items in ([[], "a"], [None, "a"], ["", " ", "a"]):
        s = Summary.model_construct(**{**Summary().model_dump(), "goal": "g", "key_points": items})
        assert "#### Key points\n- a\n" in entry.render(s, _meta(100))


def test_remembered_normalising_and_paths_are_the_plain_ones() -> None:
    short, long_ = "a  b\n\tc", "x \n " * 600
    for text in (short, long_):
        assert anchors_mod._norm_anchor(text) == anchors_mod._norm(text)
        assert anchors_mod.present(Anchor(type="number", text=text), "zz " + anchors_mod._norm(text) + " zz")
    path = "/srv/DB_PASSWORD=hunter2 notes/x.md"
    assert redact_path(path) == redact_path.__wrapped__(path) == redact_path(path)
    assert "hunter2" not in redact_path(path)


def test_provenance_prints_no_defaults_and_the_ledger_rebuild_reads_them_back(tmp_path: Path) -> None:
    """Issue 30: the provenance line took ~330 bytes of a 600-byte entry. The extractive compressor
    and a recall of 1.00 are not printed (nor the turn count); a rebuilt ledger reads an absent
    field as its default, and an LLM entry or a partial recall still say what they are."""
    from scribed.core.ledger_rebuild import rebuild_rows

    when = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    plain = EntryMeta(
        "e-00000000000a", "kim", "s-1", "x.md", "markdown", when, 1, 9, 9, "ab" * 32, "extractive", 900
    )
    llm = EntryMeta(
        "e-00000000000b", "kim", "s-2", "y.md", "markdown", when, 1, 9, 9, "cd" * 32, "llm:m", 900, 0.8
    )
    texts = [entry.render(Summary(goal="Port the exporter", outcome="Done."), m) for m in (plain, llm)]
    prov = [t.splitlines()[1] for t in texts]
    assert "compressor=" not in prov[0] and "recall=" not in prov[0] and "turns" not in prov[0]
    assert prov[0].endswith(f"ratio={len(texts[0].encode()) / 900:.3f}")
    assert " · compressor=llm:m · " in prov[1] and prov[1].endswith(" · recall=0.80")
    memory = tmp_path / "memory"
    (memory / "cold").mkdir(parents=True)
    (memory / "cold" / "kim.md").write_text("# Cold\n\n" + "\n".join(texts), encoding="utf-8")
    rows = {r["id"]: r for r in rebuild_rows(memory, tmp_path / "archive")}
    assert (rows["e-00000000000a"]["compressor"], rows["e-00000000000a"]["recall"]) == ("extractive", 1.0)
    assert (rows["e-00000000000b"]["compressor"], rows["e-00000000000b"]["recall"]) == ("llm:m", 0.8)
    assert rows["e-00000000000a"]["first_line"] == 1 and rows["e-00000000000a"]["last_line"] == 9


def test_an_entrys_provenance_reads_back_as_it_was_written() -> None:
    """:func:`entry.provenance` is the one reader of the line :func:`entry.render` writes (the
    ledger's rebuild, promotion and ``cold-remove`` use it); a ``retired.txt`` reason, written in
    the same form, reads with :func:`entry.provenance_fields`."""
    when = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    meta = EntryMeta(
        "e-00000000000c",
        "kim",
        "s-3",
        "notes/z.md",
        "markdown",
        when,
        12,
        140,
        9,
        "ef" * 32,
        "llm:m",
        900,
        0.5,
    )
    text = entry.render(Summary(goal="Port the exporter", outcome="Done."), meta)
    got = entry.provenance(text)
    assert got is not None
    fields, lines = got
    assert lines == (12, 140)
    assert (fields["id"], fields["agent"], fields["session"]) == ("e-00000000000c", "kim", "s-3")
    assert (fields["source"], fields["compressor"], fields["recall"]) == (
        "`notes/z.md` (markdown)",
        "llm:m",
        "0.50",
    )
    assert entry.provenance("### 2026-11-02: no provenance\n\n#### Outcome\nDone.\n") is None
    reason = "2026-11-03 removed by hand · session=s-3 · lines 12–140"
    assert entry.provenance_fields(reason) == ({"session": "s-3"}, (12, 140))
