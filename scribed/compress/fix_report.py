"""What an assistant's sentence reports of a fix: a sentence saying what fixed a failure
(:func:`fix_sentences`), a report that the check is clean now (:func:`clean_now`), or that the
failure is resolved (:func:`reports_fix`), each neither negated, hedged nor only planned. It reads
prose, not the session: :mod:`scribed.compress.error_fixes` pairs errors with what it finds, and
the live view asks :func:`reports_fix` alone.
"""

from __future__ import annotations

import re

from scribed.compress import lines as lines_mod
from scribed.compress.content import content_free
from scribed.compress.errors import error_in_line

_FIX_SENT = re.compile(
    r"(?<!/)\b(?:fix(?:ed|es)?|resolv(?:ed|es)|root cause|the cause|caused by|was because|the problem was|"
    r"the issue was|workaround|patched|changed|replaced|switched|added|removed|updated|renamed|"
    r"now (?:passes|works|builds|compiles)|pinned|installed)\b(?!/)",  # not a branch's "fix/231-…"
    re.I,
)
# A literal (lowercase) of each of _FIX_SENT's alternatives: a line holding none has no fix
# sentence. Kept in step with _FIX_SENT: tests/test_lines_prefilter.py has a phrase for each.
_FIX_WORDS = (
    "fix", "resolv", "cause", "problem was", "issue was", "workaround", "patched", "changed", "replaced",
    "switched", "added", "removed", "updated", "renamed", "now ", "pinned", "installed",
)  # fmt: skip
# A report that the check which failed is clean now ("the test passes now", "now it builds", "it
# works now"): a verb of a clean run with "now" in one sentence, no hedge (should, will, once, if…)
# and no failure word. It settles the failure the agent was looking at, as a clean re-run does.
_NOW_WORDS = ("now", "again")  # each of _NOW's matches holds one
_NOW = re.compile(r"\b(?:now|again)\b(?!\s+and\s+then)", re.I)  # a change: "passes now", "green again"
# Verbs of a clean run, as verbs ("it works now"; not "work" or "build", nouns as often).
_CLEAN_RUN = re.compile(
    r"\b(?:pass(?:es|ed|ing)?|works|succeed(?:s|ed)?|green|builds|compiles|(?:runs?|is|are|comes back) clean)\b",
    re.I,
)
_MODAL = (
    r"\b(?:should|will|would|might|may|could|once|if|when|until|unless|let's|let me|hope(?:fully)?|try|"
    r"trying|next)\b|'ll\b|'d\b|\?"
)
# Not a report that the check is clean: hedged, negated, or clean "but" something else is not.
_HEDGED = re.compile(
    rf"{_MODAL}|\b(?:to|not|no|none|nothing|neither|nor|never|still|but|fail(?:s|ed|ing|ure)?|broken|error)\b|n't\b",
    re.I,
)
_NEGATED = re.compile(rf"{_MODAL}|\b(?:not|no|none|nothing|neither|nor|never)\b|n't\b", re.I)
# A sentence saying the failure is not resolved, whatever fix word it holds: a verb of resolving
# negated ("did not work", "couldn't fix it", "nothing helped", "failed to fix"), the failure going
# on ("still fails", "the error persists", "same error"), or a fix still to make ("TODO: fix X").
# Read in the sentence's main clause: "the cause was that X did not pass the token" explains the fix.
_UNRESOLVED = re.compile(
    r"(?:\b(?:not|never|nothing|neither|nor)|n't)\s+(?:\w+\s+){0,2}?(?:work|help|fix|solv|resolv|pass|succeed)\w*"
    r"|\bnothing\s+(?:\w+\s+)?(?:work|help|fix|solv|resolv)\w*|\b(?:changed|fixed|helped|solved) nothing\b"
    r"|\bfail(?:s|ed)? to (?:fix|resolv|solv|help)|\b(?:persists?|persisted|remains?|remained|no luck|same error)\b|\bkeeps? failing\b"
    r"|\bstill\b(?:\s+\w+){0,3}?\s+(?:fail|broke|crash|error|rais|hang|time[sd]? out|timing out|red\b)"
    r"|^\W*(?:TODO|FIXME|XXX)\b|\bneeds?\s+to\s+(?:be\s+)?fix",
    re.I,
)
# Where a sentence's main clause ends and a clause explaining the bug begins.
_SUBORDINATE = re.compile(r"\s(?:because|that|where|since|which|so that|why|when)\b", re.I)


# A fix still to make, in a sentence's main clause: "I'll fix X after lunch", "going to patch Y
# later", or one the user is told to try ("you can run the server again to see if it is resolved").
# Not "I'll" or "let's" alone: an agent (Aider) says "Let's update the import in server.js" as it
# makes the edit.
_PLANNED = re.compile(
    r"\b(?:going to|gonna|plan(?:ning)? to|want to|need to|have to|later|tomorrow|afterwards|eventually|"
    r"at some point|next (?:time|week|sprint)|after lunch)\b"
    r"|\byou\s+(?:can|could|should|may|might|need|will)\b|\bto see (?:if|whether)\b"  # steps for the user to take
    r"|\b(?:fix|solution|answer|way out|options?)\b[^.;]{0,30}\beither\b[^.;]{1,160}\bor\b",  # the ways out,
    # none taken yet ("the fix is either X or Y"; not "Fixed: either the currency or the locale was …")
    re.I,
)


def _planned(sent: str) -> bool:
    """Whether a sentence says a fix is still to be made (:data:`_PLANNED`, in its main clause)."""
    return _PLANNED.search(_SUBORDINATE.split(sent, maxsplit=1)[0]) is not None


def _unresolved(sent: str) -> bool:
    """Whether a sentence says the failure is not resolved (:data:`_UNRESOLVED`, in its main clause)."""
    return _UNRESOLVED.search(_SUBORDINATE.split(sent, maxsplit=1)[0]) is not None


_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(])")
FIX_CHARS = (12, 300)  # a sentence saying what fixed an error: not a fragment, not a paragraph
MAX_SAID = 200  # assistant sentences remembered while failures are open (bounded work)


def reports_fix(text: str) -> bool:
    """Whether an assistant's message reports the failure resolved: the check clean now, or
    "fixed" / "resolved" / "solved", neither negated nor hedged (the live view's blockers end there;
    a change that may fix it, "added logging", "changed the timeout", does not end them)."""
    return bool(clean_now(text)) or _resolved(text)


_DONE = re.compile(r"\b(?:fixed|resolved|solved)\b", re.I)
_DONE_WORDS = ("fixed", "resolved", "solved")


def _said_lines(text: str, words: tuple[str, ...]) -> list[str]:
    """The last :data:`MAX_SAID` lines of an assistant's message holding one of ``words`` (found in
    one scan; a report ends a message), or every line when the scan cannot tell."""
    lines = text.splitlines()
    picked = lines_mod.holding(text, words)
    return lines if picked is None else list(map(lines.__getitem__, picked[0][-MAX_SAID:]))


def _resolved(text: str) -> bool:
    """A sentence of ``text`` reporting a resolution in so many words, neither hedged nor negated."""
    for raw in _said_lines(text, _DONE_WORDS):
        for sent in _SENT_END.split(raw.strip()):
            if (
                _DONE.search(sent)
                and not _NEGATED.search(sent)
                and not _unresolved(sent)
                and not error_in_line(sent)
            ):
                return True
    return False


def fix_sentences(text: str) -> list[str]:
    """The sentences of a message saying what fixed something (not a negated or failing one)."""
    out: list[str] = []
    lines = text.splitlines()
    picked = lines_mod.holding(text, _FIX_WORDS)  # a sentence's match is one in its line
    for raw in lines if picked is None else map(lines.__getitem__, picked[0]):
        line = raw.strip().lstrip("-*> ").strip()
        if not line or line.startswith(("```", "<<<<<<<", ">>>>>>>", "=======")):
            continue
        for sent in _SENT_END.split(line):
            sent = sent.strip()
            if (
                FIX_CHARS[0] <= len(sent) <= FIX_CHARS[1]
                and _FIX_SENT.search(sent)
                and not error_in_line(sent)
                and not _unresolved(sent)  # "The fix did not work, the test still fails."
                and not _planned(sent)  # "I'll fix src/parse.c after lunch."
                and not content_free(sent)  # "Looking into the cause." says what, not which
            ):
                out.append(sent)
    return out


def clean_now(text: str) -> str:
    """The assistant's sentence reporting that what failed is clean now (:data:`_CLEAN_RUN`), or ''."""
    for sent in _sentences("\n".join(_said_lines(text, _NOW_WORDS))):  # a report names nothing: all read
        if (
            _NOW.search(sent)
            and _CLEAN_RUN.search(sent)
            and not _HEDGED.search(sent)
            and not error_in_line(sent)
        ):
            return sent
    return ""


def _sentences(text: str) -> list[str]:
    """The sentences of an assistant message's prose lines (not code, not a merge marker) of a
    fix's length (:data:`FIX_CHARS`)."""
    out = []
    for raw in text.splitlines():
        line = raw.strip().lstrip("-*> ").strip()
        if not line or line.startswith(("```", "<<<<<<<", ">>>>>>>", "=======")):
            continue
        out += [x.strip() for x in _SENT_END.split(line) if FIX_CHARS[0] <= len(x.strip()) <= FIX_CHARS[1]]
    return out


def said_sentences(text: str) -> list[str]:
    """The sentences of an assistant message that could say what fixed something."""
    return [x for x in _sentences(text) if not content_free(x)]
