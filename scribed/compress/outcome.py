"""A session's outcome: its conclusion, in whole sentences.

The outcome is what the next spawn reads first about the last session, so it must be where the
session ended, not a fragment of a message the agent wrote on its way ("Security review is crucial.
Let me add that to our todo list", written just before a tool call). It is taken from

* the last assistant message that concludes a run of work: one no tool call of the agent follows
  before the user speaks again or the session ends (a message followed by more work is a note on
  the way); when no message concludes (the session ended mid-work), the last test run's result if
  one ran after the last message, else that message; a reply to an offer or an FYI of the user's
  ("here's the deploy hook if you need it" → "Thanks; not needed for this change.") is about that,
  not the work: it is neither (unless it has a "Done:" line);
* when that message answers a follow-up of the user's without a tool call and has no "Done:"
  line, the message that concluded the agent's work before it comes first, then "Then: " and
  the reply ("Deployed … Then: Ok, dropping the XLSX export.");
* within it, its "Done:" (or "Summary:", "Result:", "Outcome:") line when it has one, whole;
  else its last statements: questions to the user, announcements of what the agent is about to do
  ("Let me …", "I'll …"), labels of what follows ("Here's the commit message:"), open-item lines (they are listed under Open items), code or data run into
  a line, "sentences" longer than :data:`OUTCOME_CHARS`, and advice said after a statement on
  the same line ("Everything on the list is done. …; consider the route template instead.") are
  not the outcome (a message with nothing else is no conclusion: an earlier one is looked for);
* and when that holds no test result, the last test run's summary line after it ("14 passed in
  2.31s"), as "Last test run: …";
* then the commits made after it (:func:`scribed.compress.todo_done.commits`: "Committed 0c71d4b:
  build: …"); when the message ended asking the user and the user answered before the commit
  (Aider's "/commit" after "leave storybook for now"), the commits alone.

Sentences are kept whole: the last one (with the ones before it while they are under
:data:`SHORT_OUTCOME` characters: "All tests pass." alone says little), within :data:`OUTCOME_CHARS`:
the statement, not the message; a "Done:" line up to :data:`DONE_CHARS`. A markup tag (``</thinking-content-…>``) ends a
sentence and is not part of one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from scribed.compress.clause import advises
from scribed.compress.content import THEN, content_free
from scribed.compress.request import offered
from scribed.models import Turn

OUTCOME_CHARS = 300
SHORT_OUTCOME = 80  # a last sentence shorter than this ("All tests pass.") takes the one before it
DONE_CHARS = 900
OUTCOME_WORDS = 3
_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(#*\"'])")
_DONE_LINE = re.compile(
    r"^(?P<who>[a-z][\w-]{0,20}:\s+)?\W{0,4}(?:done|summary|result|outcome|status)\W{0,4}:\s*\S",
    re.IGNORECASE,
)  # after a speaker's label ("assistant: Done: …") too
_NOT_PROSE = ("#", "|", "<<<<<<<", ">>>>>>>", "=======")
# Sentences that are not a result: the agent announcing its next step, or addressing the user.
_ON_THE_WAY = re.compile(
    r"^\W*(?:let me|let's|i'll|i will|i'm going to|i am going to|now i(?:'ll| will| need)|next,? i|"
    r"first,? i|i need to|we need to|let us|shall i|should i|would you|do you want|want me to|"
    r"if you(?:'d| would)? like|let me know|feel free)\b",
    re.IGNORECASE,
)
_OPEN_LINE = re.compile(
    r"^\W*(?:todo|fixme|open(?: items?)?|follow[- ]ups?|next steps?|remaining)\b\W*:", re.IGNORECASE
)


def open_line(text: str) -> bool:
    """Whether ``text`` is an open-item line ("Open: …", "TODO: …", "Next steps: …"): listed
    under Open items, never an outcome."""
    return _OPEN_LINE.match(text) is not None


_TEST_SUMMARY = re.compile(
    r"(?:\b\d+ (?:passed|failed)\b[^\n]{0,80}|\bTests?:\s+\d+[^\n]{0,80}|\btest result: \w+\.[^\n]{0,80}"
    r"|^OK \(\d+ tests?\)|^FAILED \((?:failures|errors)=\d+[^\n]*\))",
    re.MULTILINE,
)
_HAS_RESULT = re.compile(r"\b\d+ (?:passed|failed|tests?)\b|\bgreen\b|\ball tests pass", re.IGNORECASE)


def conclusion(turns: Sequence[Turn]) -> str:
    """The session's outcome (rules in the module docstring); "" when no assistant message says one."""
    at, concludes = _concluding(turns)
    test = _last_test_run(turns if at is None else turns[at + 1 :])
    made = _committed_after(turns, at)
    if at is None or (made and _answered(turns, at) and _asks(turns[at].text)):
        # no message concludes, or its question was answered and then work was committed (Aider's
        # "/commit" after "leave storybook for now"): what was committed is where it ended
        return " ".join(x for x in (made, f"Last test run: {test}." if test else "") if x)
    if test and not concludes:
        return f"Last test run: {test}."  # the session ended mid-work: its last note is no conclusion
    text = _statement(turns[at].text)
    if concludes and not _done_line(turns[at].text) and (work := _work_before(turns, at)) is not None:
        # a reply that did no work, to a follow-up after the work's conclusion ("scratch the XLSX
        # export" → "Ok, dropping it."): the work's conclusion is the outcome, the reply after it
        done = _statement(turns[work].text)
        if len(done) + len(text) <= OUTCOME_CHARS:  # else the reply alone: it may take the work back
            text = f"{done} {THEN}{text}"
    test = test if not _HAS_RESULT.search(text) else ""
    if test and len(text) + len(test) <= DONE_CHARS:
        text = f"{text} Last test run: {test}.".strip()
    if made and len(text) + len(made) <= DONE_CHARS:
        text = f"{text} {made}"
    return text


MAX_COMMITS_SHOWN = 3  # the last commits an outcome names


def _committed_after(turns: Sequence[Turn], at: int | None) -> str:
    """The commits made after turn ``at`` (all of them when None), the last few: "Committed 0c71d4b:
    build: revert to yarn 1.22.19 …"; "" when none."""
    from scribed.compress.todo_done import commits  # here: the outcome of most sessions needs none

    if not any("ommit" in t.text for t in turns[0 if at is None else at + 1 :]):
        return ""
    made = [c for c in commits(list(turns)) if at is None or c.at > at][-MAX_COMMITS_SHOWN:]
    # Aider's "(no commit message provided)" says nothing: its hash alone
    said = "; ".join(
        c.sha if c.message.startswith("(") and c.sha else f"{c.sha}: {c.message}".lstrip(": ") for c in made
    )
    return f"Committed {said.rstrip('.')}." if made else ""


def _asks(text: str) -> bool:
    """Whether a message ends asking the user (its last prose line a question: "Want me to add
    the devDependency?"); what it said before is then options, not a conclusion."""
    lines = _prose_lines(text)
    return bool(lines) and lines[-1].rstrip(" *_").endswith("?")


def _answered(turns: Sequence[Turn], at: int) -> bool:
    """Whether the user spoke after turn ``at`` before the next commit (Aider's auto-commit follows
    the message it made, before the user speaks: the message stands)."""
    for t in turns[at + 1 :]:
        if t.role == "user" and t.kind == "message":
            return True
        if "ommit" in t.text and t.kind != "message":
            return False
    return False


def _concluding(turns: Sequence[Turn]) -> tuple[int | None, bool]:
    """The index of the last assistant message that concludes a run of work and states something
    (and True); else of the last assistant message that states something (and False). A reply to
    an offer or an FYI of the user's (:func:`request.offered`: "here's the deploy hook if you need
    it") with no tool call before it is about that, not the work ("Thanks; not needed for this
    change."): it is neither, unless it has a "Done:" line."""
    replies = _replies_to_offers(turns)
    worked = False  # a tool call of the agent came after the message being looked at
    fallback: int | None = None
    for i in range(len(turns) - 1, -1, -1):
        t = turns[i]
        if t.role == "user" and t.kind == "message":
            worked = False
            continue
        if t.kind == "tool_call":
            worked = True
            continue
        if t.role != "assistant" or t.kind != "message" or not _statement(t.text):
            continue
        if i in replies and not _done_line(t.text):
            continue
        if not worked:
            return i, True
        if fallback is None:
            fallback = i
    return fallback, False


def _done_line(text: str) -> bool:
    """Whether a message has a "Done:" (or "Summary:", "Result:"…) line: a conclusion in itself."""
    return any(_DONE_LINE.match(ln) for ln in _prose_lines(text))


def _work_before(turns: Sequence[Turn], at: int) -> int | None:
    """When message ``at`` answers the user's last message without a tool call, the message that
    concluded the agent's work before that (a tool call before it, none after it): its index; else
    None (``at`` did work, or no work was concluded before it)."""
    for i in range(at - 1, -1, -1):
        t = turns[i]
        if t.kind == "tool_call":
            return None  # the reply did work
        if t.role == "user" and t.kind == "message":
            break
    else:
        return None
    concluded: int | None = None
    for j in range(i - 1, -1, -1):
        t = turns[j]
        if t.kind == "tool_call":
            return concluded  # work, then the message that concluded it (None: none did)
        if t.role == "user" and t.kind == "message":
            return None  # an exchange without work: nothing concluded work there
        if concluded is None and t.role == "assistant" and t.kind == "message" and _statement(t.text):
            concluded = j
    return None


def _replies_to_offers(turns: Sequence[Turn]) -> set[int]:
    """The assistant messages that answer a user message offering something, no tool call between."""
    out: set[int] = set()
    after = False
    for i, t in enumerate(turns):
        if t.role == "user" and t.kind == "message":
            after = offered(t.text)
        elif t.kind == "tool_call":
            after = False
        elif after and t.role == "assistant" and t.kind == "message":
            out.add(i)
    return out


_TAG = re.compile(r"</?[A-Za-z][\w:-]*(?:\s[^<>]{0,200})?/?>")
# A line's list and quote markers: a ``-``, ``*`` or ``+`` before a blank, a ``>``. Not a character
# set: ``- **Owner:** alice`` stripped of every ``-*`` read ``Owner:** alice``.
_MARKS = re.compile(r"^(?:[-*+](?:\s+|$)|>\s*)+")


def unbullet(line: str) -> str:
    """``line`` without its list or quote markers, its emphasis kept whole."""
    return _MARKS.sub("", line.strip()).strip()


def _prose_lines(text: str) -> list[str]:
    out: list[str] = []
    fence = False
    for line in _TAG.sub("\n", text).splitlines():
        s = line.strip()
        if s.startswith(("```", "~~~")):
            fence = not fence
            continue
        if not fence and s and not s.startswith(_NOT_PROSE):
            out.append(s)
    return out


def _statement(text: str) -> str:
    """The concluding statement of one message: its "Done:" line, else its last result sentences."""
    lines = _prose_lines(text)
    done = [(ln, m) for ln, m in ((ln, _DONE_LINE.match(ln)) for ln in lines) if m]
    if done:
        ln, m = done[-1]
        line = unbullet(ln[len(m.group("who") or "") :])
        sents = [x for x in _SENT_END.split(line) if not _OPEN_LINE.match(x)]
        if sents and len(sents[0]) <= DONE_CHARS and _prose(sents[0]):
            return _within(sents, DONE_CHARS, first=True)
    kept = [_without_advice(unbullet(ln)) for ln in lines if not _OPEN_LINE.match(ln)]
    sents = [
        s
        for s in _SENT_END.split(" ".join(kept))
        if len(s.split()) >= OUTCOME_WORDS
        and len(s) <= OUTCOME_CHARS
        and _prose(s)
        and not s.rstrip().endswith(("?", ":"))  # a question, or the label of what follows it
        and not _ON_THE_WAY.match(s)
        and not content_free(s)  # "Take care!", "So was I, honestly." conclude nothing (issue 30)
    ]
    out: list[str] = []
    for sent in reversed(sents):  # the last sentence, and the ones before it while it is short
        if out and (sum(map(len, out)) >= SHORT_OUTCOME or sum(map(len, out)) + len(sent) > OUTCOME_CHARS):
            break
        out.insert(0, sent)
    return " ".join(out)


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s")


def _without_advice(line: str) -> str:
    """A line of prose without its sentences that tell the reader what to do (:func:`request.advises`)
    when another of its sentences states something: "Everything on the list is done except the
    Grafana panel. Raw `r.URL.Path` as a label can explode cardinality …; consider the route template
    instead." ends with its statement. A line that only advises, and a list item (a plan's step is an
    order too), are left whole."""
    if _LIST_ITEM.match(line):
        return line
    sents = _SENT_END.split(line)
    said = [x for x in sents if not advises(x)]
    return " ".join(said) if said and len(said) < len(sents) else line


PROSE_SHARE = 0.6  # letters and spaces in a sentence of prose (code and data have fewer)


def _prose(sentence: str) -> bool:
    """Whether a sentence reads as prose, not code or data run into a line (a JSON object, a diff)."""
    return sum(c.isalpha() or c == " " for c in sentence) >= PROSE_SHARE * len(sentence)


def _within(sents: list[str], limit: int, *, first: bool) -> str:
    """Whole sentences within ``limit``: from the first (``first``) or the last ones; a single
    sentence over the limit is kept whole all the same (it is the conclusion)."""
    order = sents if first else list(reversed(sents))
    out: list[str] = []
    size = 0
    for s in order:
        if out and size + len(s) + 1 > limit:
            break
        out.append(s)
        size += len(s) + 1
    return " ".join(out if first else reversed(out)).strip()


def _last_test_run(turns: Sequence[Turn]) -> str:
    """The summary line of the last test run in ``turns`` ("" when none ran)."""
    for t in reversed(turns):
        if t.kind != "tool_result":
            continue
        found = _TEST_SUMMARY.findall(t.text[-4000:])
        if found:
            return " ".join(found[-1].strip(" =-").split())
    return ""
