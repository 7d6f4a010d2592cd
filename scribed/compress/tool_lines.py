"""What a line of tool output is worth to a reader of the memory: the head and tail the pool reads
(:func:`lines_used`), a test runner's header (:func:`header_end`), a listing one line stands for
(:func:`listing_shapes`), a line that names nothing (:func:`names_something`, :func:`informative`),
a tool's progress, elision and log noise, a call whose arguments are data (:func:`data_call`).
The unit pool (:mod:`scribed.compress.units`) asks; a tool's output is most of a session's text
(94 % of the generated backlog's), so each check is cheap or guarded by a literal test.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from itertools import accumulate, chain

from scribed.compress import content
from scribed.compress.command_line import SHELL_TOOLS, unwrapped
from scribed.compress.errors import error_in_line, may_hold_error_at
from scribed.compress.tokens import NAMED_TOOL_WEIGHT, WORD_CHARS, names_id, ordered, token_weight

RESULT = re.compile(
    r"\b(?:passed|failed|succeeded|success(?:ful(?:ly)?)?|built|compiled|wrote|written|created|deployed|"
    r"installed|finished|completed?|BUILD|exit(?:ed)?|total|merged|pushed|committed|applied)\b",
    re.I,
)


LOG = re.compile(r"\b(?:DEBUG|TRACE|INFO)\b")


# A tool's note that it cut its output ("[8033 lines truncated] ...", "... 12 more lines"): not content.
ELIDED = re.compile(
    r"^\W{0,6}(?:\d[\d,]*\s+(?:more\s+)?(?:lines?|bytes|chars|characters|rows|items)\s+"
    r"(?:truncated|omitted|elided|hidden|not shown)|(?:(?:output|content|text)\s+)?(?:truncated|omitted|elided)\b.{0,40}$|"
    r"\.{3}\s*\(?\d[\d,]*\s+more\b)",
    re.I,
)


# Every match of ELIDED holds one of these (lowercased): its prefilter on ASCII text.
ELIDED_WORDS = ("truncated", "omitted", "elided", "hidden", "not shown", "more")


# A file read with line numbers: "   296→code", or as ``cat -n`` numbers them, "    12\tcode" (stripped).
READ_LINE_NO = re.compile(r"^\d{1,7}(?:→|\t)")


NOISE = re.compile(r"\b(?:DEBUG|TRACE)\b")


# Plain tool-output lines that are candidates: head and tail of each output (errors and the final
# result anywhere). Down from 150/50 (issue 15): on the real-data set identifier retention on
# sessions >= 16 KB stayed within 0.005x of head truncation, for 28% fewer units on the generated backlog.
TOOL_HEAD_LINES = 50


TOOL_TAIL_LINES = 20


def lines_used(text: str, lines: list[str], *, maybe: bool) -> tuple[list[int], list[str]]:
    """The indexes of an output's lines that may give units (head and tail, and lines between
    that may hold an error when ``maybe``), and those lines as used (a file read's without their
    line numbers)."""
    last = len(lines) - 1
    tail = max(TOOL_HEAD_LINES, last - TOOL_TAIL_LINES + 1)
    order: Iterable[int] = chain(range(min(TOOL_HEAD_LINES, len(lines))), range(tail, len(lines)))
    if maybe and tail > TOOL_HEAD_LINES:  # a line's number (below) holds no error word: same lines
        order = sorted({*order, *error_candidates(lines, TOOL_HEAD_LINES, tail)})
    order = list(order)
    if "→" in text or "\t" in text:  # a file read with line numbers: the lines used, without theirs
        return order, [
            READ_LINE_NO.sub("", ln, count=1).strip() or ln for ln in map(lines.__getitem__, order)
        ]
    return order, list(map(lines.__getitem__, order))


# A test runner's header: a line naming versions (``platform linux -- Python 3.12.4, pytest-8.3.2``,
# ``> web@2.4.1 test``, ``go: downloading github.com/x/y v1.9.0``), then settings (``rootdir:
# /src/app``, ``plugins: cov-5.0.0, xdist-3.6.1``), between banners (``=== test session starts ===``).
HEADER_LINES = 12


HEADER_CHARS = 240  # a header's line is shorter


_SETTING = re.compile(r"[a-z][a-z_-]*:\s*[^\s,]+(?:,\s*[^\s,]+)*")


BANNER = ("===", "---", "___", "***", "!!!")


RULE_CHARS = frozenset("=-_*!")  # a banner's last character: most lines are no banner by it alone


MIN_HEADED_LINES = 4  # an output with a header: a header's line or two, then a body


_VERSIONED = re.compile(r"\d\.\d")


_HASH = re.compile(r"(?<![.\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}(?![.\w-])")


def header_end(lines: list[str]) -> int:
    """How many of an output's first lines are its header: versions of the tool, its interpreter
    and plugins (:func:`environment`), then the root and config it found (:data:`_SETTING`),
    banners between them. They name the environment, not the work: the same on every run. A
    header is followed by the output's body (an output of MIN_HEADED_LINES lines or more: the
    caller checks); an output that is all "header" (``python --version``'s answer) is its own
    answer, and has none."""
    end = 0
    for k, ln in enumerate(lines[:HEADER_LINES]):
        banner = ln.startswith(BANNER) or ln.endswith(BANNER)
        # a setting only after the versions (``cat config.yml`` starts with settings too); an
        # error ends it, as anything else does
        if not (banner or (end and _SETTING.fullmatch(ln)) or environment(ln)) or error_in_line(ln):
            break
        end = end if banner else k + 1
    return end if end < len(lines) else 0


def environment(line: str) -> bool:
    """Whether a line names versions and nothing else: each name it gives is a version
    (``pytest-8.3.2``, ``v1.9.0``), the name of the one following it (``github.com/x/y v1.9.0``) or
    an absolute path (the interpreter's, the root's); a commit's hash is the work. A header's line
    is short: a longer one is not read."""
    if len(line) > HEADER_CHARS or _VERSIONED.search(line) is None:
        return False
    toks = list(ordered(line))
    named = [k for k, t in enumerate(toks) if names_id(t)]
    low = f" {line.lower()}"  # a token's leading "/" is stripped: an absolute path is found in the line
    return (
        bool(named)
        and all(
            _VERSIONED.search(toks[k])
            or (k + 1 < len(toks) and _VERSIONED.search(toks[k + 1]))
            or any(f"{lead}{toks[k]}" in low for lead in (" /", "(/", "~/"))
            for k in named
        )
        and _HASH.search(line) is None
    )


_EDGES = "[](){}%.,:;|'\"`"


RUN_CHARS = 3  # a word of this many distinct characters or fewer is a run (`FFssFsFs`, `====`)


def informative(line: str) -> bool:
    """Whether a tool line has a word of four characters or more that is no number and no run of
    three characters or fewer (a test runner's progress ``FFssFsFsFs..ssFF [ 45%]``, a rule of
    ``=``): one that is not, however rare its "words", tells a reader nothing."""
    for w in line.split():
        core = w.strip(_EDGES)
        if len(core) >= WORD_CHARS and not core.isdigit() and len(set(core)) > RUN_CHARS:
            return True
    return False


def names_something(line: str) -> bool:
    """Whether a tool's line names something of the work: a path, a code name, a flag, a ``#123``
    (a token :func:`token_weight` weighs 3, not a figure: ``1.84s``), a CamelCase name or a proper name. Plain words and
    counts alone are the tool's acknowledgement ("Todos have been modified successfully. Ensure
    that you continue…") or a tally of results it does not name ("10 passed in 1.84s"): apart
    from the command that printed them they tell a reader nothing; nor does a runner's progress."""
    if PROGRESS.search(line):  # "tests/test_a.py ....F. [ 45%]": the run's marks, its file aside
        return False
    if any(not t[:1].isdigit() and token_weight(t) >= NAMED_TOOL_WEIGHT for t in ordered(line)):
        return True
    if _VERSION_OR_HASH.search(line) or _FAILED_TALLY.search(line):
        return (
            True  # "Python 3.11.4", "HEAD is now at 3e9a0f1 …", "3 failed, 97 passed": facts a reader needs
        )
    return _MIXED_CASE.search(line) is not None or bool(content.names(line))


# A version (two dots or more: "3.11.4", not a duration "1.84s") or a commit's short hash (7-12 hex
# with a digit and a letter) names a thing; a tally with a failure or an error is a result (an all-pass
# tally is the tool's acknowledgement).
_VERSION_OR_HASH = re.compile(
    r"\b\d+\.\d+\.\d+\b|(?<![.\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,12}(?![.\w-])"
)  # a commit's short hash: not a digest (32+ hex) nor a diff's "index f89a028..3d92976"


_FAILED_TALLY = re.compile(r"\b[1-9]\d*\s+(?:failed|errors?|failures?)\b", re.IGNORECASE)


# pytest's marks, or a test's status (``-v``: ``tests/t.py::test_x PASSED [ 12%]``), then the share
# of the run done: the run's progress (its tally and failures say what a reader needs)
PROGRESS = re.compile(
    r"(?:^|\s)(?:[.EFsSxX]+|PASSED|FAILED|SKIPPED|XFAIL|XPASS|ERROR)\s+\[\s{0,2}\d{1,3}%\]$"
)


_MIXED_CASE = re.compile(r"\b[A-Za-z]*[a-z][A-Z]\w*")


# The three in one scan (the pool's check; :func:`names_something` is the reference)
NAMED_SHAPE = re.compile(f"{_VERSION_OR_HASH.pattern}|{_MIXED_CASE.pattern}|(?i:{_FAILED_TALLY.pattern})")


# A word holding a digit (a counter, a numbered name, a percentage) is what varies between the lines
# of one listing.
_DIGIT = re.compile(r"\d")


# Lines of one tool output with the same shape once their numbered words are masked are a listing
# (a test runner's PASSED lines, numbered code, a progress log) when this many share it.
SHAPE_RUN = 3


def shape(line: str) -> str:
    """The line with each word holding a digit masked and its spaces collapsed (columns padded to
    a width): lines of one listing share it. Word by word (``str.split`` and the regex engine's
    ``\\s`` know the same spaces): a fifth faster than a masking regex over the line, which tried
    each word's end for a digit."""
    words = line.split()
    if _DIGIT.search(line) is None:
        return " ".join(words)
    return " ".join(["0" if _DIGIT.search(w) else w for w in words])


def listing_shapes(lines: list[str]) -> dict[str, str]:
    """``lines``' listed ones (their shape shared by SHAPE_RUN of them, a repeated line counted
    each time) → their shape: each shape computed once per distinct line."""
    if len(lines) < SHAPE_RUN:
        return {}
    of = dict.fromkeys(lines, "")
    for ln in of:
        of[ln] = shape(ln)
    counts = Counter(map(of.__getitem__, lines))
    return {ln: sh for ln, sh in of.items() if counts[sh] >= SHAPE_RUN}


def error_candidates(lines: list[str], lo: int, hi: int) -> set[int]:
    """The indexes in ``lo:hi`` of the lines an error pattern may match (:func:`may_hold_error`'s
    prefilter finds something in them): one scan of the lines joined, instead of a call per line.
    A prefilter match never spans two lines (they are stripped and non-empty, and its only
    pattern with whitespace needs two whitespace characters), so each line it holds is found."""
    starts = list(accumulate((len(ln) + 1 for ln in lines[lo:hi]), initial=0))
    found = {bisect_right(starts, pos) - 1 for pos in may_hold_error_at("\n".join(lines[lo:hi]))}
    return {lo + k for k in found}


def data_call(first: str, tool: str | None) -> bool:
    """Whether a tool call's first line is its tool's arguments as data (``Edit {"file_path": …}``,
    ``apply_patch *** Begin Patch``), not a command a reader could run: its file is under *Files*,
    its text no key point."""
    args = first[len(tool) :].lstrip(" :") if tool and first.startswith(tool) else first
    return args.startswith(("{", "[{", '["', "[]", "***"))  # not a shell's test: "[ -f .env ] && …"


def shell_command(first: str, tool: str | None) -> str:
    """A call's first line without the name of the shell tool that ran it, nor the shell's ``bash
    -lc`` (``Bash pytest -q`` and ``shell bash -lc 'pytest -q'`` are ``pytest -q``, as the entry's
    commands show it); another tool's call keeps its name (``Grep TODO`` says what ran). '' for a
    program given data through the shell (``apply_patch *** Begin Patch``: :func:`data_call`)."""
    if not (tool and tool.lower() in SHELL_TOOLS and first.startswith(tool)):
        return first
    cmd = unwrapped(first[len(tool) :].strip(" :"))
    if not cmd:
        return first
    return "" if data_call(cmd, cmd.split(None, 1)[0]) else cmd
