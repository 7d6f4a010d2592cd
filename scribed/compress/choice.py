"""Decisions said without the word "decision": a choice in other words and a user's imperative.

A committing "we" or "let's" with a verb of choosing ("let's pin numpy to 1.26", "we'll stick with
Postgres", "we're moving from Webpack to Vite"), and a user's imperative that chooses ("revert to
yarn 1.22.19", "no, use serde_json"), are decisions when what they take names a thing used, not a
place in the work ("revert to the last commit") and the choice is settled, not hedged, reported,
conditional or asked. A change to one bare lowercase word ("switch to pnpm", not "switch to
verbose"; "replace requests with httpx", not "replace tabs with spaces") names a thing when the
change says what it changes ("switch the lockfile to pnpm") or the session uses the word as a name
(:mod:`scribed.compress.used_names`). :mod:`scribed.compress.decisions` files them with the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Whether the session uses a bare lowercase word as a thing's name (:class:`scribed.compress.used_names.UsedNames`)
Known = Callable[[str], bool]

# A choice said without the word "decision": "let's" or a "we" that commits (we'll, we will, we're,
# we are going to), maybe negated, then a verb of choosing and what it chooses ("let's pin numpy to
# 1.26", "we'll stick with Postgres", "let's not pull in x/time", "use httpx instead of requests"),
# or a verb of changing what is used, from or to something ("we're moving from Webpack to Vite",
# "switch the CI to GitHub Actions"), or of keeping, dropping or avoiding something, which is a
# choice only when what it names carries a name (:data:`_NAMED_THING`): "let's drop it for now",
# "let's keep going", "switch gears" choose nothing.
# a character of the same sentence (a version's dots are in it, and an ellipsis: "SELECT ... FOR UPDATE")
_SAYS = r"(?:[^.;!?\n]|\.(?=\w)|\.{3}(?=\s+\w))"
_SUBJECT = r"(?:let(?:'|\u2019)?s|let us|we(?:'|\u2019)ll|we will|we(?:'|\u2019)re(?: going to)?|we are(?: going to)?)"
_STRONG = (  # a verb of choosing: what follows it is the choice
    r"(?:un)?pin(?:ning)?(?!\s+down\b)|stick(?:ing)?\s+(?:with|to)|standardi[sz](?:e|ing)\s+on|settl(?:e|ing)\s+on|"
    r"revert(?:ing)?\s+(?:back\s+)?to|roll(?:ing)?\s+back\s+to|go(?:ing)?\s+back\s+to|adopt(?:ing)?|vendor(?:ing)?|"
    r"pull(?:ing)?\s+in|migrat(?:e|ing)\s+(?:to|from|off)|(?:(?<=not\s)|(?<=never\s))us(?:e|ing)|"
    rf"us(?:e|ing)(?=\s{_SAYS}{{1,80}}?\b(?:instead\s+of|rather\s+than)\b)"
)
# what replaces a thing: "replace moment.js with date-fns", "swap out jest for vitest"
_REPLACE = rf"(?:replac(?:e|ing)|swap(?:ping)?(?:\s+out)?)(?=\s{_SAYS}{{1,60}}?\s(?:with|for|by)\s)"
_CHANGE_VERB = (  # a change of what is used: to or from something
    rf"(?:switch|upgrad|downgrad|bump)\w*(?=\s(?:{_SAYS}{{0,60}}?\s)?(?:to|from|off|away\s+from)\s)|"
    rf"mov(?:e|ing)(?=\s(?:{_SAYS}{{0,60}}?\s)?from\s{_SAYS}{{1,60}}?\sto\s)|"
    r"go(?:ing)?(?=\s+to\s+(?:\S+\s+)?v?\d+(?:\.\d+)+)|"  # "go to 8.2.0": to a version
    rf"{_REPLACE}"
)
_WEAK = rf"drop(?:ping)?|ditch(?:ing)?|keep(?:ing)?|avoid(?:ing)?|us(?:e|ing)(?=\s{_SAYS}{{1,80}}?\s(?:over|for)\s)"
_SPEAKER = re.compile(rf"^{_SUBJECT}\s+", re.IGNORECASE)  # who chooses, before what is chosen
_CHOICE = re.compile(
    rf"(?:^|(?<=[\s(*_>\-\u2013\u2014,;:]))(?P<d>{_SUBJECT}\s+(?:(?:not|never|also|just|now)\s+){{0,2}}"
    rf"(?:(?P<strong>{_STRONG})|(?P<change>{_CHANGE_VERB})|{_WEAK})\s+(?P<obj>{_SAYS}{{2,200}}))",
    re.IGNORECASE,
)
# A word that names a thing: a figure, a path, package or dotted name, a backticked span, a
# capitalised name or one of three capitals or more ("PR" and "CI" are kinds of things), a flag
# (``--json``) or a snake_case identifier (``serde_json``).
_NAMED_THING = re.compile(
    r"`[^`\n]+`|\w*\d\w*|\S*\w[/@.]\w\S*|[A-Z][a-z][\w-]*|[A-Z]{3,}\w*|--\w[\w-]*|[^\W_]+_\w+"
)
_FROM_TO = re.compile(r"(?:^|\s)from\s+\S.*?\sto\s+\S")
_PRONOUN = frozenset(["it", "this", "that", "them", "these", "those", "one", "here", "there"])
_DETERMINER = frozenset(
    ["the", "a", "an", "this", "that", "these", "those", "our", "my", "your", "its", "their", "all", "any",
     "every", "each"]
)  # fmt: skip
OPTION_WORDS = 4  # an option taken says what it is for: "do 1 for the launch"
OBJECT_WORDS = 2  # the words after a weak choice's verb (and its determiner) that must name a thing


def _choice(line: str, known: Known | None = None) -> re.Match[str] | None:
    """The first choice :data:`_CHOICE` finds in ``line``: a verb of choosing whose object is no
    pronoun, or another whose object (its first words past a determiner) names a thing: "keep the
    v1 endpoint", not "keep an eye on CI" or "drop a note in Slack" (``known``: the session's names,
    :func:`_bare_name`)."""
    for m in _CHOICE.finditer(line):
        words = m.group("obj").split()
        if _unsettled(line, m) or _positional(words):
            continue
        if m.group("strong"):
            if not _pronoun(words[0]) or _value_named(words, known):  # "pin it to 3.11": the value named
                return m
            continue
        if m.group("change"):
            if _changed(m.group("change"), m.group("obj"), words, known):
                return m
            continue
        head = words[1:] if words[0].lower() in _DETERMINER else words
        if not head or head[0].endswith("ing"):
            continue  # "avoid touching main.py": an activity, not a thing
        if _names(head[:OBJECT_WORDS]):
            return m
    return None


def _pronoun(word: str) -> bool:
    return word.lower().strip("`'\"") in _PRONOUN


def _changed(verb: str, obj: str, words: list[str], known: Known | None = None) -> bool:
    """Whether a change of what is used (its ``verb``, its object ``obj`` split in ``words``) names
    a thing: from and to ("switch the default branch from master to main"), a named thing ("bump the
    MSRV to 1.82") or what it goes to ("switch the lockfile to pnpm", "bump it to 1.82",
    :func:`_value_named`), or what replaces what ("replace moment.js with date-fns", :func:`_replaced`)."""
    if verb[:4].lower() in ("repl", "swap"):
        return _replaced(obj, known)
    if _pronoun(words[0]):
        return _value_named(words, known)
    return _FROM_TO.search(obj) is not None or _names(words) or _value_named(words, known)


def _value_named(words: list[str], known: Known | None = None) -> bool:
    """Whether a choice's object goes to a value that names a thing: the first phrase after its
    "to" or "at" is a name (:func:`_names`), or a bare one (:func:`_bare`) that the change says is
    what it changes ("switch the lockfile to uv": what precedes "to" is a thing, past a determiner)
    or the session uses as a name (:func:`_bare_name`), and no place in the work ("pin it to 3.11";
    not "switch to the other branch", "pin it to the top", "switch back to the editor", nor "switch
    to verbose" in a session that runs no ``verbose``)."""
    bare = [w.lower() for w in words]
    at = next((i for i, w in enumerate(bare) if w in ("to", "at")), None)
    if at is None or at + 1 >= len(words) or _positional(["to", *words[at + 1 :]]):
        return False
    phrase = _phrase(words[at + 1 :])
    return _names(phrase) or (_bare(phrase) and (_says_what(bare[:at]) or _bare_name(phrase, known)))


def _says_what(before: list[str]) -> bool:
    """Whether the words a change takes before its "to" (lowercased) say what it changes: a thing
    past a determiner ("the formatter", "our task runner"), not a pronoun ("it", "all of it")."""
    return len(before) > 1 and before[0] in _DETERMINER and before[-1].isalpha() and not _pronoun(before[-1])


def _bare_name(phrase: list[str], known: Known | None) -> bool:
    """Whether a bare word (:func:`_bare`) is a thing's name by the session's other lines (``known``:
    run, installed, imported, pinned or configured; none known: it is not)."""
    return known is not None and _bare(phrase) and known(phrase[0])


def _replaced(obj: str, known: Known | None = None) -> bool:
    """Whether "replace X with Y" / "swap (out) X for Y" (``obj``: "X with Y") chooses a thing: X is
    no pronoun; X and Y each name one, or one does and the other is a bare word (a thing of its kind:
    "replace moment.js with date-fns"); a bare word names one when the session uses it as a name
    (:func:`_bare_name`: "replace requests with httpx" where it runs ``pip install httpx``, not
    "replace tabs with spaces"); and not both are files (an edit: "replace foo.py with bar.py")."""
    found = _REPLACED.search(obj)
    if found is None or not obj[: found.start()].split() or _pronoun(obj.split()[0]):
        return False
    x, y = _phrase(obj[: found.start()].split()), _phrase(obj[found.end() :].split())
    nx, ny = _names(x) or _bare_name(x, known), _names(y) or _bare_name(y, known)
    if not ((nx and ny) or (nx and _bare(y)) or (ny and _bare(x))):
        return False  # "replace the body with pass", "replace all occurrences of foo with bar": an edit
    return not (len(x) == len(y) == 1 and _FILE.search(x[0]) and _FILE.search(y[0]))


def _phrase(words: list[str]) -> list[str]:
    """The first phrase of ``words``: up to a word that ends one (:data:`_PHRASE_END`) or a word
    ending in punctuation, without that punctuation."""
    out: list[str] = []
    for w in words:
        if w.lower() in _PHRASE_END:
            break
        out.append(w.rstrip(",.;:!?)'\""))
        if w[-1] in ",.;:!?)" and not _NAMED_THING.fullmatch(w):
            break
    return [w for w in out if w]


def _bare(phrase: list[str]) -> bool:
    """Whether ``phrase`` is one lowercase word said bare, as a tool's name is ("pnpm", "uv",
    "date-fns", "httpx"): no determiner, pronoun, activity, place or everyday word (:data:`_NOT_A_NAME`).
    So is a mode's or a placeholder's ("verbose", "foo"): whether it names a thing, what the change
    says or the session tells (:func:`_value_named`, :func:`_bare_name`)."""
    if len(phrase) != 1 or not _BARE.fullmatch(phrase[0]):
        return False
    w = phrase[0]
    return not (w in _PRONOUN or w in _DETERMINER or w in _POSITION or w in _NOT_A_NAME or w.endswith("ing"))


_REPLACED = re.compile(r"\s(?:with|for|by)\s", re.IGNORECASE)
_BARE = re.compile(r"[a-z][a-z0-9.+-]+")  # two letters at least: "swap x for y" names nothing
# What follows "to" bare but names no tool: a time, a vague thing, a build or an environment (a place)
_NOT_A_NAME = frozenset(
    ["later", "tomorrow", "today", "something", "anything", "everything", "nothing", "whatever", "default",
     "defaults", "normal", "debug", "release", "manual", "auto", "prod", "production", "staging", "dev",
     "local", "localhost", "remote", "origin", "upstream", "head", "both", "either", "none", "work", "lunch",
     "bed", "sleep", "them", "him", "her", "docs", "pass"]
)  # fmt: skip


# A user's choice said as an imperative ("revert to yarn 1.22.19", "drop the --json flag entirely, no
# alias", "no, use serde_json", "key it on the API key ID"): read in the user's turns only (an
# assistant's imperative is a step it takes or proposes), at a clause's start (or after "X says"),
# maybe after a word of assent and an overrule ("no, …"), maybe negated ("don't use X"). Its verb
# chooses or changes what is used; an everyday directive's ("run", "fix", "check", "update") never
# does, and a verb that can be either (keep, drop, use, make) is one only with a named object or a
# mark of choice (:data:`_CHOSEN`, "no, use X").
_LEAD = r"(?:^|(?<=^[^\w/])|(?<=[.;!?:,(]\s)|(?<=[\u2013\u2014]\s)|(?<=\bsays\s)|(?<=\bsaid\s))"
_ASSENT = r"(?:(?:ok(?:ay)?|so|and|then|also|but|just|please|yeah|yes|yep|hmm+|alright|fine|right|good)[,.!]?\s+){0,3}"
_IMP_STRONG = (
    r"(?:un)?pin(?!\s+down\b)|stick\s+(?:with|to)|standardi[sz]e\s+on|settle\s+on|revert\s+(?:back\s+)?to|roll\s+back\s+to|"
    r"go\s+back\s+to|adopt|vendor|migrate\s+(?:to|from|off)|go\s+with|scrap|scratch|ditch|abandon|"
    rf"(?:use|do)(?=\s{_SAYS}{{1,120}}?\b(?:instead|rather\s+than)\b)"
)
_IMP_CHANGE = (
    rf"(?:switch|upgrade|downgrade|bump)(?=\s(?:{_SAYS}{{0,60}}?\s)?(?:to|from|off|away\s+from)\s)|"
    rf"move(?=\s(?:{_SAYS}{{0,60}}?\s)?from\s{_SAYS}{{1,60}}?\sto\s)|go(?=\s+to\s+(?:\S+\s+)?v?\d+(?:\.\d+)+)|"
    rf"{_REPLACE}"
)
_IMPERATIVE = re.compile(
    rf"{_LEAD}{_ASSENT}(?P<no>(?:no|nope|nah)[,.!]\s+{_ASSENT})?(?P<d>(?P<neg>(?:don(?:'|\u2019)?t|do\s+not|never)\s+)?"
    rf"(?P<verb>(?P<strong>{_IMP_STRONG})|(?P<change>{_IMP_CHANGE})|(?P<weak>keep|drop|avoid|use|make)|"
    r"(?P<key>key|partition|shard)(?=\s(?:\S+\s){0,3}?(?:on|by)\s)|"  # what a thing is keyed on
    r"(?P<option>do|go\s+with|take|pick)(?=\s+(?:option\s+[a-c]|\((?:\d|[a-c])\)|(?:option\s+)?(?:\d|(?-i:[A-C]|[bc])))(?:[,.;:!]|$|\s+(?:for|then|and|now)\b)))"
    rf"\s+(?P<obj>{_SAYS}{{1,200}})"
    # "scrap the lock. do X instead": the choice goes on to what replaces it
    rf"(?:[.;]\s+(?P<then>{_SAYS}{{1,120}}?\binstead\b{_SAYS}{{0,200}}))?)",
    re.IGNORECASE,
)
# What marks a choice: of one thing over another, for good, or as the default.
_CHOSEN = re.compile(
    r"\b(?:instead|rather\s+than|entirely|altogether|for\s+good|no\s+alias|(?:as|by)\s+(?:the\s+)?default|"
    r"opt-(?:in|out))\b",
    re.IGNORECASE,
)
_ON_BY = re.compile(r"\s(?:on|by)\s")
_CONDITION = re.compile(r"\b(?:if|when|whenever|unless|in case|otherwise)\b", re.IGNORECASE)


def _imperative(line: str, known: Known | None = None) -> re.Match[str] | None:
    """The first choice :data:`_IMPERATIVE` finds in a user's ``line``: a verb of choosing with an
    object that is no pronoun, a change to or from a named thing, a thing keyed on a named one, an
    option taken ("do 1"), keep or drop with a named object, or keep, drop, avoid, use or make with a
    mark of choice (:data:`_CHOSEN`) or overruling a plan ("no, use serde_json")."""
    for m in _IMPERATIVE.finditer(line):
        if (
            _not_said(line, m)
            or _unsettled(line, m)
            or (m.group("obj") and _positional(m.group("obj").split()))
        ):
            continue
        if _taken_back(m):  # words taken back: the rest of the line may choose ("…, we keep Redis")
            return _after_taken_back(line, m, known)
        if m.group("option"):  # "do 1 for the launch, …"; "pick 2" alone says nothing
            if len(m.group("d").split()) >= OPTION_WORDS:
                return m
            continue
        if _chooses(m, known):
            return m
    return None


def _chooses(m: re.Match[str], known: Known | None) -> bool:
    """Whether a user's imperative ``m`` (no option taken) chooses: a thing keyed on a named one, a
    change to or from a named thing, what "it" is set to naming one, or a strong verb's or a weak
    choice's object (:func:`_imperative`)."""
    words = m.group("obj").split()
    if m.group("key"):
        return _names(_ON_BY.split(f" {m.group('obj')} ", maxsplit=1)[-1].split()[:4])
    if m.group("change"):  # to or from a named thing: "bump the MSRV to 1.82", "switch to pnpm"
        return _changed(m.group("change"), m.group("obj"), words, known)
    if _pronoun(words[0]):  # what "it" is set to names a thing: "pin it to 3.11"
        return bool(m.group("strong")) and _value_named(words, known)
    return bool(m.group("strong")) or _weak_choice(m, words)


_RETRACT = re.compile(r"scra|ditch|abandon", re.IGNORECASE)  # verbs that take back words too ("scratch that")
# What is said, not a thing used: a speech act's noun ("my earlier comment", "the suggestion about
# retries"), or "what I said" (a verb of saying). Not "note" nor "request" (release notes, a pull
# request: things a session makes).
_SPEECH = frozenset(
    ["comment", "comments", "remark", "remarks", "suggestion", "suggestions", "proposal", "proposals", "idea",
     "ideas", "question", "questions", "reply", "replies", "answer", "answers", "message", "messages", "point",
     "points", "statement"]
)  # fmt: skip
_SAID = re.compile(
    r"what\s+(?:i|we|you)\s+(?:just\s+|first\s+|originally\s+)?"
    r"(?:said|wrote|asked|suggested|proposed|mentioned|meant|typed|told\s+you)\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[,;:.!?\u2013\u2014](?=\s|$)")
_WE = re.compile(r"\s*(?:we\s+)?", re.IGNORECASE)  # "…, we keep Redis": the choice's subject
_CLAUSE_START = ", "  # what a clause's imperative follows (:data:`_LEAD`)


def _taken_back(m: re.Match[str]) -> bool:
    """Whether a verb of taking back (scratch, scrap, ditch, abandon: ``m``) takes something said,
    not a thing used: its object's first phrase is a speech act's ("my earlier comment about CI",
    "the suggestion regarding retries") naming no thing (not "my Redis idea"), or "what I said …".
    "ditch my retry wrapper" drops a thing: whose it is does not tell."""
    if not (m.group("strong") and _RETRACT.match(m.group("verb"))):
        return False
    obj = m.group("obj")
    if _SAID.match(obj):
        return True
    phrase = _phrase(obj.split())
    return bool(phrase) and phrase[-1].lower() in _SPEECH and not _names(phrase)


def _after_taken_back(line: str, m: re.Match[str], known: Known | None) -> re.Match[str] | None:
    """The choice a user's ``line`` makes after the words ``m`` takes back ("scratch what I said
    about caching, we keep Redis": "keep Redis"), read as an imperative in the line with the words
    taken back and the next clause's subject "we" blanked (its positions kept); None if none."""
    end = _CLAUSE_END.search(line, m.start("obj"))
    if end is None:
        return None
    we = _WE.match(line, end.end())
    start = we.end() if we else end.end()
    if start >= len(line) or start < len(_CLAUSE_START):
        return None
    return _imperative(" " * (start - len(_CLAUSE_START)) + _CLAUSE_START + line[start:], known)


def _unmarked(line: str) -> list[re.Match[str]]:
    """The user's keep or use in ``line`` that :func:`_imperative` passes over for want of a mark of
    choice ("keep the window in memory"): said, settled, of a thing that is no pronoun or activity.
    A decision only when the line refuses what an earlier decision chose for that
    thing (:meth:`scribed.compress.decisions.Decisions._refused`)."""
    out = []
    for m in _IMPERATIVE.finditer(line):
        weak = (m.group("weak") or "").lower()
        if weak not in ("keep", "use") or m.group("neg") or _not_said(line, m) or _unsettled(line, m):
            continue
        words = m.group("obj").split()
        head = words[1:] if words[0].lower() in _DETERMINER and len(words) > 1 else words
        if not (_pronoun(words[0]) or head[0].endswith("ing")):  # a place too ("the window"): the
            out.append(m)  # earlier decision naming it tells
    return out


def _not_said(line: str, m: re.Match[str]) -> bool:
    """Whether the imperative ``m`` found is no sentence's choice: code ("DROP TABLE jobs;"), the
    head of a list ("keep the JSON structure from the API:") or what to do if ("if the URL 404s, use
    the 2025 version instead"), or a prohibition not overruling a plan (a directive: "never use X")."""
    verb = m.group("verb")
    if (verb.isupper() and len(verb) > 1) or m.group("d").rstrip().endswith(":"):
        return True
    if m.group("neg") and not (m.group("no") or _CHOSEN.search(m.group("d"))):
        return True  # "never use the 2023 syntax": a rule the user sets (a directive anchor), no choice
    lo = max((c.end() for c in _SENTENCE_STOP.finditer(line, 0, m.start())), default=0)
    return _CONDITION.search(line, lo, m.start()) is not None


# Said before a choice in its sentence, it is no choice made: a hedge, a report of someone's idea, a
# negation of the speaker's view, a condition or an alternative ("I don't think we'll stick with
# Postgres", "Bob suggested we're moving …", "whether we'll stick with …", "maybe let's pin …").
_HEDGE = re.compile(
    r"\b(?:if|unless|whether|maybe|perhaps|possibly|option|question|could|might|suggest\w*|propos\w*|"
    r"consider\w*|wonder\w*|not sure|either)\b|n't\s+(?:think|believe|know|expect)\b",
    re.IGNORECASE,
)
_IF = re.compile(r"\b(?:if|unless|in case)\b", re.IGNORECASE)  # after a choice: what to do if
_SENTENCE_STOP = re.compile(r"[.;!?](?=\s|$)")
# What a verb of choosing takes that is a place in the work, not a thing used: "revert to the last
# commit", "go back to line 42", "switch to the feat/login branch", "stick with the failing test",
# "stick to the plan", "pull in the latest changes", "drop Bob a message", "keep Alice in the loop".
_POSITION = frozenset(
    ["branch", "commit", "line", "tab", "terminal", "window", "step", "plan", "loop", "changes",
     "file", "test", "issue", "note", "message", "print", "debugger", "topic", "thread", "meeting",
     # a piece of the code or text at hand, or a git ref: edited, not chosen ("drop the TODO comments",
     # "keep the CHANGELOG entry", "revert to main", "scrap the last paragraph", "stick with me")
     "comment", "comments", "call", "calls", "logging", "statement", "statements", "prints", "entry",
     "paragraph", "section", "function", "fixture", "mode", "rebase", "emojis", "point", "main", "master",
     "develop", "trunk", "me", "us", "you"]
)  # fmt: skip
_ONE_NAME = re.compile(r"[\w.@/-]+(?:[,.;!]|\s+(?:instead|not|over|rather)\b|$)")  # "argparse, not click"
_FILE = re.compile(r"\w\.[a-z]{1,5}$")
_FROM_TO_PARTS = re.compile(r"(?:from|to)\s+(\S+)")
_LEADING = frozenset(["to", "back", "from", "with", "on", "onto", "into"])
_PHRASE_END = frozenset(
    ["to", "in", "on", "at", "for", "from", "with", "by", "of", "about", "regarding", "and", "or", "but", "so",
     "if", "then", "first", "now", "again", "instead", "until"]
)  # fmt: skip


def _unsettled(line: str, m: re.Match[str]) -> bool:
    """Whether the choice ``m`` found is hedged, reported or conditional in its sentence, or its
    sentence is a question ("So we're sticking with Postgres?")."""
    lo = max((c.end() for c in _SENTENCE_STOP.finditer(line, 0, m.start("d"))), default=0)
    if _HEDGE.search(line, lo, m.start("d")) is not None:
        return True
    end = _SENTENCE_STOP.search(line, m.start("d"))
    if end is not None and end.group() == "?":
        return True
    return _IF.search(line, m.start("d"), end.start() if end else len(line)) is not None  # "… if it hangs"


def _positional(words: list[str]) -> bool:
    """Whether a choice's object is a place in the work (:data:`_POSITION`), its first phrase's last
    word ("the last commit", "Slack a note"), or someone kept "in the loop"."""
    bare = [w.lower().strip(",.:;()'\"`") for w in words[:8]]
    k = 0
    while k < len(bare) and bare[k] in _LEADING:  # "(back) to the last commit", "from step 1 …"
        k += 1
    if k == 0 and (ft := _FROM_TO.search(" ".join(words))):
        # "switch the default branch from master to main": the thing changed, named; code moved
        # between files ("move the function from utils.py to helpers.py") is an edit
        return all(_FILE.search(x) for x in _FROM_TO_PARTS.findall(" ".join(words)[ft.start() :]))
    head: list[str] = []
    for w in bare[k:]:
        if w in _PHRASE_END:
            break
        head.append(w)
    while head and head[-1].replace(".", "").isdigit():
        head.pop()  # "line 42", "step 1"
    if head and (head[-1] in _POSITION or head[-1].startswith(("head~", "head^", "origin/", "upstream/"))):
        return True
    return " in the loop" in " ".join(bare[:5])


def _names(words: list[str]) -> bool:
    return any(_NAMED_THING.fullmatch(w.strip(",:()'\"")) for w in words)


def _weak_choice(m: re.Match[str], words: list[str]) -> bool:
    """Whether keep, drop, avoid, use or make (``m``) chooses: a mark of choice, an overrule or a
    negated use, or (keep, drop) a thing named past the determiner ("avoid X" is a directive); never an activity ("keep
    going") nor a path alone (a file to act on: "drop client/package.json", Aider's command)."""
    head = words[1:] if words[0].lower() in _DETERMINER and len(words) > 1 else words
    if head[0].endswith("ing"):
        return False
    weak = m.group("verb").lower()
    marked = (
        m.group("no") or m.group("then") or _CHOSEN.search(m.group("d")) or (m.group("neg") and weak == "use")
    )
    if marked:  # what is chosen names a thing ("no, use serde_json", "no, use argparse, not click";
        # not "no, use a for loop", "no, use single quotes")
        return weak == "make" or _names(words) or _ONE_NAME.match(m.group("obj")) is not None
    return weak in ("keep", "drop") and _names([w for w in head[:OBJECT_WORDS] if "/" not in w])


def _first(*found: re.Match[str] | None) -> re.Match[str] | None:
    """The match that starts first."""
    return min((m for m in found if m is not None), key=lambda m: m.start("d"), default=None)
