"""Stop 46: a pattern is searched only when the text holds a literal its every match holds
(decisions' labels, :data:`scribed.compress.reversal_wording.NEEDS`), and a fact's normal form is
taken in one pass on ASCII text. Neither may change what is found: every match holds one of its
pattern's literals, whatever the case; the labels are tried in their order; the normal form is the
regex one."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scribed.compress import anchors, decisions, lines, reversal_wording, scope, terms
from scribed.models import Turn

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PREFILTERED = [
    *decisions._LABELS,
    (decisions._CHOICE, decisions._CHOICE_NEEDS),
    *reversal_wording.NEEDS.items(),
]
IDS = [f"{p.pattern[:30]}" for p, _ in PREFILTERED]
CASES = (str, str.upper, str.lower, str.title, str.swapcase)
# A phrase for each alternative of the prefiltered patterns (decisions' labels and choices, a
# reversal's, a removal's, a change's, a return's and a passive's wording), and other bits of text.
PHRASES = [
    "Decision: use uv", "final decision (v2): uv", "we decided to use uv", "I agreed on uv", "team chose uv",
    "we will go with uv", "we're going with uv", "let's go with uv: it is fast", "going with this: uv",
    "the plan is to use uv", "change of plan, uv", "Actually, no: uv", "scratch that. let's use uv",
    "scratch the big idea; use uv", "reversing the earlier call: uv", "overriding my previous choice - uv",
    "Redis is out, polling is in", "we'll pin uv to 0.4", "we\u2019re sticking with uv", "let us adopt uv",
    "we are moving from pip to uv", "we will keep the v2_api", "we reverted", "it supersedes that",
    "use X instead", "no longer needed", "scrapped", "rather than pip", "replacing pip", "dropped",
    "abandoned", "undone", "retired", "scratch", "changed my mind", "on second thought", "remove the lock",
    "deleting it", "ripped out", "got rid of it", "ditching it", "eliminate it", "phase out", "stopped using",
    "switch the cache from memcached to redis", "upgrade Python from 3.11 over to 3.13", "went from a to b",
    "keep fpdf2", "revert to jest", "go back to mkdocs", "stick with Debian", "stay on 11", "return to v1",
    "the lock is now replaced", "pip has been dropped", "v1 was deprecated", "it is no longer used",
    ", since ", ". ", "; ", ":", " - ", "\u2014", "x", " ", "\t", "`a.py`", "\u0130", "\u0131", "\u017f",
    "\u212a", "\xe9", "\xdf",
]  # fmt: skip
PIECE = st.tuples(st.sampled_from(PHRASES), st.sampled_from(CASES)).map(lambda p: p[1](p[0]))
LINE = st.lists(PIECE | st.text(max_size=3), max_size=8).map(" ".join)


def _holds(text: str, literals: tuple[str, ...]) -> bool:
    return lines.may_match(lines.lowered(text), literals)


@pytest.mark.parametrize(("pattern", "literals"), PREFILTERED, ids=IDS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_match_holds_a_literal_of_its_pattern(
    pattern: re.Pattern[str], literals: tuple[str, ...], data: st.DataObject
) -> None:
    text = data.draw(st.from_regex(pattern))
    for case in CASES:
        if pattern.search(case(text)):
            assert _holds(case(text), literals), (case(text), literals)


def test_each_phrase_holds_a_literal_of_each_pattern_it_matches() -> None:
    matched = set()
    for phrase in PHRASES:
        for text in (f(phrase) for case in CASES for f in (case, lambda x, c=case: f"so {c(x)} here")):
            for pattern, literals in PREFILTERED:
                if pattern.search(text):
                    matched.add(pattern)
                    assert _holds(text, literals), (text, pattern.pattern[:40])
    assert matched == {p for p, _ in PREFILTERED}  # each pattern is tried on a phrase it matches


def _said_before(t: Turn, line: str, known: decisions.Known | None) -> re.Match[str] | None:
    """decisions.Decisions._line's label search before stop 46: every pattern searched, in order."""
    return (
        decisions._DECISION.search(line)
        or decisions._DECISION_VERB.search(line)
        or decisions._DECISION_MORE.search(line)
        or decisions._OUT_IN.search(line)
        or decisions._first(
            decisions._choice(line, known), decisions._imperative(line, known) if t.role == "user" else None
        )
    )


@SETTINGS
@given(LINE, st.sampled_from(["user", "assistant"]))
@example(
    "we decided to wait. Decision: use uv", "assistant"
)  # the first pattern's match, not the first match
@example("let's use uv instead of pip, we decided to go with uv", "user")
def test_a_line_states_what_every_pattern_searched_found(line: str, role: str) -> None:
    t = Turn(role, line)
    got, want = decisions.Decisions()._said(t, line), _said_before(t, line, None)
    assert (got and (got.re, got.span(), got.group("d"))) == (
        want and (want.re, want.span(), want.group("d"))
    )


@SETTINGS
@given(LINE)
def test_the_reversal_wording_is_what_its_patterns_find(text: str) -> None:
    for pattern in reversal_wording.NEEDS:
        assert reversal_wording.matches(pattern, text) is (pattern.search(text) is not None)
    assert reversal_wording.may_reverse(text) is any(
        p.search(text) is not None
        for p in (reversal_wording.REVERSAL, reversal_wording.REMOVAL, reversal_wording.CHANGE)
    )


_MD = re.compile(r"[`*_>#\[\]()~|]")


def _norm_before(text: str) -> str:
    """terms.norm before stop 46: regex passes for markdown and for the other non-word characters."""
    text = terms.strip_supersedes(text)[0].casefold()
    text = _NON_WORD.sub(" ", _MD.sub(" ", text)).replace("_", " ")
    return " ".join(text.split())


_NON_WORD = re.compile(r"[^\w]+")


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127)) | st.text())
def test_the_normal_form_is_the_regex_one(text: str) -> None:
    assert terms.norm.__wrapped__(text) == _norm_before(text)


def test_every_ascii_character_is_normalised_as_the_regex_does() -> None:
    for c in map(chr, range(128)):
        for text in (f"Ab{c}Cd", f"{c}x_{c}", f"(supersedes: a){c}", c * 3):
            assert terms.norm.__wrapped__(text) == _norm_before(text), repr(text)


# (earlier decision, later one, whether it supersedes it): the later one's qualifier names what
# replaces the thing the earlier one places there ("on buildkite rather than jenkins" after "on
# jenkins"), read only when a qualifier's terms are not all in the earlier one (stop 46)
PLACED = [
    ("run the nightly job on jenkins", "run the nightly job on buildkite rather than jenkins", True),
    ("keep the cache in sqlite", "keep the cache in duckdb, replacing sqlite", True),
    ("store the uploads in minio", "store the uploads in garage instead of minio", True),
    ("keep jenkins for the release builds", "run the nightly job on buildkite rather than jenkins", False),
    ("keep the sqlite file for the tests", "keep the cache in duckdb, replacing sqlite", False),
]


@pytest.mark.parametrize(("old", "new", "want"), PLACED)
def test_a_qualifier_in_the_place_of_what_it_replaces(old: str, new: str, want: bool) -> None:
    assert scope.in_scope(new, old) is want
    turns = [Turn("assistant", f"Decision: {x}", line=i + 1) for i, x in enumerate((old, new))]
    assert [a.superseded for a in anchors._decisions(turns)] == ([old] if want else [None, None])
