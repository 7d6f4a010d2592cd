"""The whole-text line prefilter (scribed/compress/lines.py): it must name every line the real,
case-insensitive pattern matches, whatever the case, the script and the line breaks."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scribed.compress import anchors, errors, lines
from scribed.models import Turn

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BREAKS = ["\n", "\r\n", "\r", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029"]
PIECES = [
    "Fixed", "the ROOT cause", "was because", "The problem was", "workaround", "Now passes", "now\tpasses",
    "Decision:", "decided", "We agreed", "let's go with", "- [ ] ", "- [X] ", "TODO: ", "Follow-up:",
    "next steps:", "is done", "DONE ", "Scratch that.", "→", "é", "İ", "ſ", "ß", "Σ", "x", " ", "`a.py`",
    "We still need to", "Completed:", "renamed", "PINNED", "installed", "resolves",
]  # fmt: skip
TEXT = st.lists(st.sampled_from(PIECES + BREAKS) | st.text(max_size=4), max_size=40).map("".join)


def _named(text: str, words: re.Pattern[str], real: list[re.Pattern[str]]) -> None:
    got = lines.holding(text, words, re.compile("x"))
    picked = None if got is None else got[0]
    if got is not None:  # each pattern's lines are its own
        assert got[1] == [i for i, ln in enumerate(text.splitlines()) if "x" in ln.lower()]
    split = text.splitlines()
    if picked is None:
        assert any(c in text for c in lines.FOLDS_TO_ASCII)
        return
    assert picked == sorted(set(picked))
    assert all(words.search(split[i].lower()) for i in picked)  # no line named for nothing
    for i, line in enumerate(split):
        if any(p.search(line) for p in real):
            assert i in picked, (line, picked)


@SETTINGS
@given(TEXT)
def test_every_fix_sentence_line_is_named(text: str) -> None:
    _named(text, errors._FIX_WORDS, [errors._FIX_SENT])


@SETTINGS
@given(TEXT)
def test_every_decision_and_todo_line_is_named(text: str) -> None:
    decision = [anchors._DECISION, anchors._DECISION_VERB, anchors._DECISION_MORE]
    _named(text, anchors._DECISION_ANY[0], decision)
    todo = [anchors._TODO_OPEN, anchors._TODO_DONE, anchors._TODO_DONE_SUFFIX]
    _named(text, anchors._TODO_ANY[0], todo)


def test_lines_are_those_of_splitlines() -> None:
    text = "a\r\nfixed b\rc\x85d fixed\u2028fixed\n\nfixed"
    assert lines.holding(text, errors._FIX_WORDS) == [[1, 3, 4, 6]]
    assert lines.holding("no match here", errors._FIX_WORDS) == [[]]
    assert lines.holding("ſwitched", errors._FIX_WORDS) is None  # re.I folds ſ to s; lower() does not


@SETTINGS
@given(st.lists(st.sampled_from([*PIECES, "\n", ". ", "Reading it. "]), max_size=30).map("".join))
def test_changes_are_those_of_every_line(text: str) -> None:
    """The fix sentences found through the prefilter are those a test of every line finds."""
    turn = Turn(role="assistant", text=text, kind="message")
    want = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("-*> ").strip()
        if not line or line.startswith(("```", "<<<<<<<", ">>>>>>>", "=======")):
            continue
        for sent in errors._SENT_END.split(line):
            sent = sent.strip()
            if (
                errors.FIX_CHARS[0] <= len(sent) <= errors.FIX_CHARS[1]
                and errors._FIX_SENT.search(sent)
                and not errors.error_in_line(sent)
                and not errors.content_free(sent)
            ):
                want.append(sent)
    assert [c.text for c in errors._changes(turn)] == want


# anchors._NUMBER as it was written first, its lookbehind leading (tried at every character).
_NUMBER_BEFORE = re.compile(
    r"(?<![\w.#/-])(?P<n>\d{1,3}(?:,\d{3})+(?:\.\d+)?(?:\s?(?:rows|records|requests|items|files|tests|users))?"
    r"|\d+(?:\.\d+)?\s?(?:ms|%|MB|GB|KB|MiB|GiB|rows|records|req/s|rps))(?![\w%])"
)
FIGURES = [
    "1",
    "12",
    "1,234",
    ",567",
    "3.5",
    " ",
    "ms",
    "%",
    "MB",
    "rows",
    " tests",
    "v",
    ".",
    "#",
    "/",
    "-",
    "a",
    "٣",
    "_",
]


@SETTINGS
@given(st.lists(st.sampled_from(FIGURES) | st.text(max_size=3), max_size=30).map("".join))
def test_figures_are_those_the_first_pattern_finds(text: str) -> None:
    """anchors._NUMBER starts at its digit (the engine skips to digits) and finds what it found."""
    assert [m.span("n") for m in anchors._NUMBER.finditer(text)] == [
        m.span("n") for m in _NUMBER_BEFORE.finditer(text)
    ]
    assert anchors._few_numbers(Turn(role="assistant", text=text)) == (
        len(_NUMBER_BEFORE.findall(text, 0, 20_000)) <= anchors.MAX_FIGURES
    )


@SETTINGS
@given(st.lists(st.sampled_from([*"a1 \t٣\xa0\u3000x-²\x1f", "PASSED"]), max_size=20).map("".join))
def test_a_line_without_a_digit_has_the_shape_masking_gives(line: str) -> None:
    """units._shape skips the mask where no digit is: the same shape as masking every line."""
    from scribed.compress import units

    assert units._shape(line) == " ".join(units._NUMBERED.sub("0", line).split())
