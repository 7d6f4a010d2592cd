"""Prose facts (issue 30 part 6): conversational sessions keep their names, dates and figures.

A two-person chat has no identifiers; what a later reader asks about it is who, what, when,
where and how many. These tests check the pieces that make an entry keep those: sentences split
where they end (not after "St." or "Dr."), names, dates and quantities ranked like identifiers,
a goal the heading holds printed once, a small entry's goal and outcome leaving room for facts;
and the conversational bench (bench/convo.py) against head truncation.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from scribed.compress import anchors, entry, entry_fit, entry_guard, selection, units
from scribed.compress.content import SENTENCE_END
from scribed.compress.extractive import ExtractiveCompressor
from scribed.config import CompressCfg
from scribed.core.budget import entry_budget
from scribed.models import Session, Summary, Turn

ROOT = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 4, 11, 17, 40, tzinfo=UTC)


def _meta(bytes_in: int) -> entry.EntryMeta:
    """A provenance line as long as a real one (a chat log's source path and session id)."""
    return entry.EntryMeta(
        "e-0123456789ab", "ann", "2026-04-11-ann-and-bo", "logs/ann/2026-04-11-ann-and-bo.md", "markdown",
        T0, 1, 24, 24, "0" * 64, "extractive", bytes_in,
    )  # fmt: skip


def test_a_sentence_does_not_end_after_a_title_or_an_initial() -> None:
    text = "She works at St. Clare's now. Dr. Haddad signed it! J. Smith came at 9 a.m. on Monday."
    assert SENTENCE_END.split(text) == [
        "She works at St. Clare's now.",
        "Dr. Haddad signed it!",
        "J. Smith came at 9 a.m. on Monday.",
    ]


def test_a_goal_the_heading_holds_whole_is_printed_once() -> None:
    short = entry.render(
        Summary(goal="Move the export to Parquet", outcome="It writes one file."), _meta(9000)
    )
    assert short.count("Move the export to Parquet") == 1 and "#### Goal" not in short
    long_goal = (
        "Move the export to Parquet, one file per tenant and month, and keep the CSV path working for the"
        " old clients until March"
    )
    long = entry.render(Summary(goal=long_goal, outcome="It writes one file."), _meta(9000))
    assert "#### Goal\n" + long_goal in long  # the heading cuts it: the section holds it whole


def _chat(lines: list[tuple[str, str]]) -> list[Turn]:
    return [Turn(r, t, "message", T0 + timedelta(minutes=i), i + 1, 0) for i, (r, t) in enumerate(lines)]


CHAT = [
    ("user", "Guess where I am writing from. I'm at the airport in Lisbon, helping my sister move."),
    ("assistant", "Oh fun! How is it going over there?"),
    ("user", "Gorgeous and very hilly. We carried a sofa up four floors because the elevator was broken."),
    ("assistant", "Ouch. Anything else new?"),
    ("user", "I'm applying for the charge nurse position; the deadline is April 30."),
    ("assistant", "Great, good luck with it!"),
    ("user", "I need a reference letter from Dr. Haddad, my attending."),
    ("assistant", "She likes you, right? I think it will be fine."),
    ("user", "Honestly it has been a long and slightly strange week for everyone around here, I think."),
    ("assistant", "Totally understandable, weeks like that happen to everyone sometimes."),
    ("user", "Anyway, that is more or less everything that happened since we last talked."),
    ("assistant", "Thanks for the update, talk soon!"),
]


def test_a_small_chat_entry_keeps_names_dates_and_figures() -> None:
    """A 600-byte entry of a ~2 KB chat: before issue 30 its goal and outcome filled it (no key
    point, the deadline and the reference lost); now the goal keeps its most informative sentence
    and the key points hold the dated, named facts."""
    turns = _chat(CHAT)
    session = Session(agent="ann", session_id="s1", source=Path("chat.md"), kind="markdown", turns=turns)
    found = anchors.extract(session)
    bytes_in = 2_300
    budget = entry_budget(CompressCfg(), bytes_in, found)
    summary = ExtractiveCompressor().compress(session, found, budget).summary
    meta = _meta(bytes_in)
    fitted = entry_fit.fit_with_room(summary, found, meta, budget, int(budget * 1.15))
    text = entry.render(entry_guard.guard(fitted, found, meta, int(budget * 1.15))[0], meta)
    assert len(text.encode()) <= budget * 1.15
    kept = [f for f in ("Lisbon", "four floors", "April 30", "Dr. Haddad") if f in text]
    assert len(kept) >= 2, text


def test_names_and_dates_outrank_plain_words_of_the_same_length() -> None:
    pool = units.split(
        _chat(
            [
                ("user", "We should probably organise the cupboard differently sometime."),
                ("user", "Ines moves to Porto on Saturday with Karim."),
            ]
        )
    )
    chosen = selection.select(pool, 70)
    assert [u.text for u in chosen] == ["user: Ines moves to Porto on Saturday with Karim."]


def test_the_conversational_bench_keeps_twice_what_head_truncation_keeps() -> None:
    """bench/convo.py at compress.ratio 0.10 on every conversation of bench/convo/ (its held-out
    split included): answer retention at least twice that of the first 10% of each session."""
    sys.path.insert(0, str(ROOT / "bench"))
    import convo

    convs = convo.load(convo.DATA)
    res = convo.evaluate(convs, 0.10, 600, ("scribed", "head", "head10"))
    summary = convo.summarize(res["rows"], ("scribed", "head", "head10"))
    ret = summary["retention"]
    assert ret["scribed"] >= 2 * ret["head10"], ret
    assert summary["questions"] >= 150
