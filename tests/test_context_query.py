"""`scribed context AGENT --query`: the best-matching whole cold entries and active wiki facts."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from test_search import _entry, _root

from scribed.cli.main import main


def _incidents(tmp: Path) -> None:
    lay = _root(tmp)
    filler = [f"routine upkeep item {i} in src/misc_{i}.py" for i in range(30)]
    texts = [
        _entry(f"e-1000000000{i:02d}", "picard", f"s-{i}", 10 + i % 15, f"Routine work {i}", filler)
        for i in range(12)
    ]
    texts.insert(
        3,
        _entry(
            "e-2000000000aa",
            "picard",
            "s-outage",
            8,
            "Postmortem: checkout 502s after the nginx reload",
            [
                "upstream keepalive pool exhausted after the nginx reload",
                "raised keepalive_requests to 10000",
            ],
        ),
    )
    (lay.cold / "picard.md").write_text("# Cold memory: picard\n\n" + "\n".join(texts))
    with (lay.wiki / "patterns.md").open("w") as fh:
        fh.write(
            "# Wiki: patterns\n\n### 2026-11-08: Known issue: nginx reload drops keepalive upstreams\n"
            "- status: active\n- source: 2026-11-08 · entry=e-2000000000aa · agent=picard · session=s-outage\n"
        )


def test_post_incident_with_a_query_brings_that_incident(tmp_path: Path) -> None:
    _incidents(tmp_path)
    args = [
        "context",
        "picard",
        "--root",
        str(tmp_path),
        "--situation",
        "post-incident",
        "--max-bytes",
        "2500",
    ]
    out = CliRunner().invoke(main, [*args, "--query", "checkout 502 nginx reload keepalive"])
    assert out.exit_code == 0, out.output
    text = out.output
    assert "Postmortem: checkout 502s after the nginx reload" in text
    assert "raised keepalive_requests to 10000" in text  # the whole entry, not a piece of it
    assert "Known issue: nginx reload drops keepalive upstreams" in text
    assert len(text.encode()) <= 2500 + 1
    # Without the query the newest entries come first and the incident (older) does not fit.
    plain = CliRunner().invoke(main, args).output
    assert "Postmortem: checkout 502s" not in plain


def test_a_query_alone_searches_cold_and_wiki(tmp_path: Path) -> None:
    _incidents(tmp_path)
    out = CliRunner().invoke(main, ["context", "picard", "--root", str(tmp_path), "--query", "keepalive"])
    assert out.exit_code == 0, out.output
    assert "### Cold (summarized history)" in out.output and "### Wiki (durable reference)" in out.output
    assert "Postmortem" in out.output


def test_a_query_matching_nothing_says_so_and_words_match_their_other_forms(tmp_path: Path) -> None:
    """An exploratory tester's `--query "label pdf library"` printed "(no wiki pages yet)" beside a
    wiki holding "keep fpdf2 for the labels": no word matched (label ≠ labels), and the note said
    the tier was empty. Words are stemmed now (label, labels; reload, reloading), and a query that
    matches nothing says that."""
    _incidents(tmp_path)
    base = ["context", "picard", "--root", str(tmp_path), "--query"]
    out = CliRunner().invoke(main, [*base, "zeppelin quartz"])
    assert out.exit_code == 0, out.output
    assert "_(no cold entry matches the query)_" in out.output
    assert "_(no wiki fact matches the query)_" in out.output
    assert "yet)_" not in out.output
    out = CliRunner().invoke(main, [*base, "reloading upstream"])
    assert out.exit_code == 0, out.output
    assert "Known issue: nginx reload drops keepalive upstreams" in out.output
    assert "Postmortem: checkout 502s after the nginx reload" in out.output
