"""The whole-text line prefilter (scribed/compress/lines.py): it must name every line the real,
case-insensitive pattern matches, whatever the case, the script and the line breaks."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scribed.compress import anchors, decisions, error_fixes, errors, fix_report, lines, tool_lines
from scribed.compress.content import content_free
from scribed.models import Turn

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
BREAKS = ["\n", "\r\n", "\r", "\v", "\f", "\x1c", "\x85", "\u2028", "\u2029"]
# A phrase for every alternative of the real patterns (fix_report._FIX_SENT; anchors' decision and
# TODO patterns): removing any literal from the word lists leaves one of them unnamed.
FIX_PHRASES = [
    "fix it now",
    "we fixed the loop",
    "this fixes it",
    "resolved the race",
    "resolves the race",
    "the root cause was x",
    "the cause was x",
    "caused by the cache",
    "it was because of x",
    "the problem was the lock",
    "the issue was the lock",
    "a workaround for x",
    "patched the loop",
    "changed the retry",
    "replaced the loop",
    "switched to uv",
    "added a lock",
    "removed the cache",
    "updated the pin",
    "renamed the module",
    "now passes again",
    "now works again",
    "now builds again",
    "now compiles again",
    "pinned the version",
    "installed the wheel",
]
DECISION_PHRASES = [
    "Decision: use uv",
    "decided: use uv",
    "final decision: use uv",
    "revised decision: use uv",
    "we decided to use uv",
    "I agreed on uv",
    "team chose uv",
    "we will go with uv",
    "we are going with uv",
    "let's go with uv",
    "lets go with uv",
    "let\u2019s go with uv",
    "going with this: uv",
    "the plan is to use uv",
    "change of plan: uv",
    "actually, no: uv",
    "scratch that. we should use uv",
    "scratch the big idea. use uv",
    "reversing the earlier call: uv",
    "we revert our decision - uv",
    "overriding my previous choice: uv",
    "we'll go with uv",
    "we\u2019re going with uv",
    "we've decided to use uv",
    "let's pin uv to 0.4",
    "lets pin uv to 0.4",
    "let\u2019s pin uv to 0.4",
    "let us pin uv to 0.4",
    "we'll pin uv to 0.4",
    "we\u2019ll pin uv to 0.4",
    "we will pin uv to 0.4",
    "we're pinning uv to 0.4",
    "we\u2019re pinning uv to 0.4",
    "we are pinning uv to 0.4",
]
# A user's imperative (stop 43, :data:`decisions._IMPERATIVE`): read with :data:`decisions.USER_WORDS`.
IMPERATIVE_PHRASES = [
    "pin uv to 0.4", "unpin uv", "stick with uv", "standardize on uv", "settle on uv", "revert to uv 0.4",
    "roll back to uv 0.4", "go back to uv", "adopt uv", "vendor uv", "migrate to uv", "go with uv", "scrap uv",
    "ditch uv", "abandon uv", "use uv instead", "do uv rather than pip", "switch to uv", "upgrade to uv 0.5",
    "downgrade to uv 0.3", "bump uv to 0.5", "move from pip to uv", "go to 0.5.1", "keep uv_x", "drop --uv",
    "avoid uv_x", "no, use uv", "make uv the default", "key it on the API", "partition it by user_id",
    "shard it on user_id", "do 1 for now", "take 2 then", "pick b, then",
]  # fmt: skip
TODO_PHRASES = [
    "- [ ] write docs",
    "* [ ] write docs",
    "TODO: write docs",
    "FIXME write docs",
    "open item: write docs",
    "follow-up: write docs",
    "follow up: write docs",
    "next step: write docs",
    "next steps: write docs",
    "remaining work: write docs",
    "still to do: write docs",
    "we still need to write docs",
    "- [x] write docs",
    "- [X] write docs",
    "DONE: write docs",
    "Done: write docs",
    "Finished: write docs",
    "Completed: write docs",
    "closed TODO: write docs",
    "resolved TODO write docs",
    "the docs is done",
    "the docs are finished",
    "the docs is complete now",
]
DECISION = [decisions._DECISION, decisions._DECISION_VERB, decisions._DECISION_MORE, decisions._CHOICE]
TODO = [anchors._TODO_OPEN, anchors._TODO_DONE, anchors._TODO_DONE_SUFFIX]
CASES = (str, str.upper, str.lower, str.title)
PIECES = [
    *FIX_PHRASES, *DECISION_PHRASES, *TODO_PHRASES, *IMPERATIVE_PHRASES,
    "→", "\xe9", "\u0130", "\u0131", "\u017f", "\u212a", "\xdf", "\u03a3", "x", " ", "`a.py`", ". ",
]  # fmt: skip
PIECE = st.tuples(st.sampled_from(PIECES), st.sampled_from(CASES)).map(lambda p: p[1](p[0]))
TEXT = st.lists(PIECE | st.sampled_from(BREAKS) | st.text(max_size=4), max_size=40).map("".join)


def _named(text: str, words: tuple[str, ...], real: list[re.Pattern[str]]) -> None:
    got = lines.holding(text, words, ("x",))
    picked = None if got is None else got[0]
    if got is not None:  # each pattern's lines are its own
        assert got[1] == [i for i, ln in enumerate(text.splitlines()) if "x" in ln.lower()]
    split = text.splitlines()
    if picked is None:
        assert any(c in text for c in lines.FOLDS_TO_ASCII)
        return
    assert picked == sorted(set(picked))
    assert all(any(w in split[i].lower() for w in words) for i in picked)  # none named for nothing
    for i, line in enumerate(split):
        if any(p.search(line) for p in real):
            assert i in picked, (line, picked)


@SETTINGS
@given(TEXT)
def test_every_fix_sentence_line_is_named(text: str) -> None:
    _named(text, fix_report._FIX_WORDS, [fix_report._FIX_SENT])


@SETTINGS
@given(st.lists(PIECE | st.just("\n") | st.text(alphabet="ab \u2192", max_size=3), max_size=40).map("".join))
def test_lines_broken_by_newlines_alone_are_counted(text: str) -> None:
    """The common case, every line ended by "\\n" alone: a hit's line is the newlines before it."""
    _named(text, fix_report._FIX_WORDS, [fix_report._FIX_SENT])
    _named(text, decisions.WORDS.literals, DECISION)
    _named(text, anchors._TODO_ANY.literals, TODO)


@SETTINGS
@given(TEXT)
def test_every_decision_and_todo_line_is_named(text: str) -> None:
    _named(text, decisions.WORDS.literals, DECISION)
    _named(text, decisions.USER_WORDS.literals, [*DECISION, decisions._IMPERATIVE])
    _named(text, anchors._TODO_ANY.literals, TODO)
    ls = [ln for ln in text.splitlines() if ln.strip()]  # anchors' lines: non-blank
    said, todo = lines.mentioning(ls, decisions.WORDS, anchors._TODO_ANY)
    assert all(lines.mentions(decisions.WORDS, ln) for ln in said)  # what the per-line check kept
    assert all(lines.mentions(anchors._TODO_ANY, ln) for ln in todo)


@SETTINGS
@given(TEXT)
def test_a_few_short_lines_name_what_the_joined_scan_names(text: str) -> None:
    """A few short lines are checked one by one (a hot file's paragraphs); the joined scan, for
    more: each names every line the other does (the per-line check may name more of non-ASCII
    text, which it reads without its other characters), and on ASCII text the same lines."""
    ls = [ln for ln in text.splitlines() if ln.strip()][: lines.FEW_LINES]
    if sum(map(len, ls)) > lines.FEW_CHARS:
        return
    one_by_one = lines.mentioning(ls, decisions.WORDS, anchors._TODO_ANY)
    picked = lines.holding("\n".join(ls), decisions.WORDS.literals, anchors._TODO_ANY.literals)
    if picked is None:
        return
    joined = [[ls[i] for i in p] for p in picked]
    for mine, theirs in zip(one_by_one, joined, strict=True):
        assert set(theirs) <= set(mine)
        if all(ln.isascii() for ln in ls):
            assert mine == theirs


def test_each_alternative_is_named() -> None:
    """Every phrase matches its real pattern (in each case it still matches) and is named."""
    for phrases, words, real in (
        (FIX_PHRASES, fix_report._FIX_WORDS, [fix_report._FIX_SENT]),
        (DECISION_PHRASES, decisions.WORDS.literals, DECISION),
        (IMPERATIVE_PHRASES, decisions.USER_WORDS.literals, [decisions._IMPERATIVE]),
        (TODO_PHRASES, anchors._TODO_ANY.literals, TODO),
    ):
        for phrase in phrases:
            assert any(p.search(phrase) for p in real), phrase
            for case in CASES:
                text = f"before\nso {case(phrase)} here\nafter"
                if any(p.search(text.splitlines()[1]) for p in real):
                    assert lines.holding(text, words) == [[1]], (phrase, case)


def test_lines_are_those_of_splitlines() -> None:
    text = "a\r\nfixed b\rc\x85d fixed\u2028fixed\n\nfixed"
    assert lines.holding(text, fix_report._FIX_WORDS) == [[1, 3, 4, 6]]
    assert lines.holding("no match here", fix_report._FIX_WORDS) == [[]]
    for brk in BREAKS:  # a literal found twice, on two lines
        assert lines.holding(f"fixed it, fixed{brk}fixed", fix_report._FIX_WORDS) == [[0, 1]], repr(brk)
    assert lines.holding("ſwitched", fix_report._FIX_WORDS) is None  # re.I folds ſ to s; lower() does not


@SETTINGS
@given(st.lists(PIECE | st.sampled_from(["\n", ". ", "Reading it. ", *BREAKS]), max_size=30).map("".join))
def test_changes_are_those_of_every_line(text: str) -> None:
    """The fix sentences found through the prefilter are those the loop over every line found
    (below: error_fixes._changes's loop as it was before the prefilter)."""
    turn = Turn(role="assistant", text=text, kind="message")
    want = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("-*> ").strip()
        if not line or line.startswith(("```", "<<<<<<<", ">>>>>>>", "=======")):
            continue
        for sent in fix_report._SENT_END.split(line):
            sent = sent.strip()
            if (
                fix_report.FIX_CHARS[0] <= len(sent) <= fix_report.FIX_CHARS[1]
                and fix_report._FIX_SENT.search(sent)
                and not errors.error_in_line(sent)
                and not fix_report._unresolved(sent)  # since stop 40: "the fix did not work", "TODO: fix"
                and not fix_report._planned(sent)  # since stop 41: "I'll fix X after lunch"
                and not content_free(sent)
            ):
                want.append(sent)
    assert [c.text for c in error_fixes._changes(turn)] == want


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


_NUMBERED_BEFORE = re.compile(r"(?<!\S)\S*\d\S*")  # tool_lines.shape's mask until stop 40


@SETTINGS
@given(st.lists(st.sampled_from([*"a1 \t٣\xa0\u3000x-²\x1f", "PASSED"]), max_size=20).map("".join))
def test_shape_is_what_masking_every_line_gives(line: str) -> None:
    """tool_lines.shape masks word by word, and only where a digit is: the same shape as masking every
    line with the pattern it replaced (a word holding a digit, from the word's start)."""

    assert tool_lines.shape(line) == " ".join(_NUMBERED_BEFORE.sub("0", line).split())


def test_few_numbers_reads_the_first_20000_characters() -> None:
    """A turn's figures are counted in its first 20,000 characters, as before, and the count
    stops at the one too many."""
    late = "x " * 10_000 + "5 ms, 6 ms, 7 ms, 8 ms"
    early = "5 ms, 6 ms, 7 ms, 8 ms " + late
    for text, few in ((late, True), (early, False), ("5 ms, 6 ms, 7 ms", True)):
        assert anchors._few_numbers(Turn(role="assistant", text=text)) is few
        assert (len(_NUMBER_BEFORE.findall(text, 0, 20_000)) <= anchors.MAX_FIGURES) is few


ERROR_BITS = ["Error", "E  ", "FAILED", "exit", " ", "\u2192", "12", "x", "Segm", "\t", "error:"]


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.integers(0, 9999), st.lists(st.sampled_from(ERROR_BITS) | st.text(max_size=3), max_size=6)
        ),
        min_size=1,
        max_size=90,
    )
)
def test_numbered_lines_have_their_errors_where_their_numbers_are_gone(
    rows: list[tuple[int, list[str]]],
) -> None:
    """units._tool_result finds a read file's error lines before taking the line numbers off the
    lines it uses: the same lines as after (a number and its arrow hold no error word)."""

    raw = [ln for ln in (f"{n}\u2192{''.join(bits)}".strip() for n, bits in rows) if ln]
    gone = [tool_lines.READ_LINE_NO.sub("", ln, count=1).strip() or ln for ln in raw]
    assert tool_lines.error_candidates(raw, 0, len(raw)) == tool_lines.error_candidates(gone, 0, len(gone))
