"""Open items the agent later reports done in its own words.

An open item is an order: a verb and what it acts on ("TODO: delete the Kafka consumer in
ingest/kafka.go"; :mod:`todo_item` reads it and names its act and its thing). The agent rarely
ticks it off in the same words; it says what it did: "Deleted the Kafka consumer (ingest/kafka.go)
and its tests.", "The retry loop has been removed.", "Finished migrating the users table." Such a
sentence closes the item when it holds the item's verb done (its past tense or participle, one of a
verb of the same act, or "finished"/"completed" and its -ing form) acting on the item's object (the
same thing: the same head word, none added); or the act's noun with that object said to be over
("Migration of the invoices table is complete", "The invoices table migration is done", "Completed
the invoices table migration"); or, for a removal, the thing said to be gone ("The Kafka consumer is
gone", "… no longer exists", "The code no longer has the Kafka consumer"). Whatever else the
sentence names must not contradict the item: an identifier it names beside the object (a path, a
version) is one the item names. A report that is negated, hedged, planned, partial ("partially",
"half", "almost") or taken back in the same sentence ("…, then reverted it") closes nothing, nor
does one by someone else ("the user deleted …", "Bob says: the migration is complete"), in another
place, in code or quoted. A later sentence of the same message that names the object with work
still to do opens it again ("The invoices table still needs to be migrated", "… isn't done yet",
"I still need to migrate the invoices table"), as does a later sentence that takes it back
("Restored the Kafka consumer", "Reverted it.").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from scribed.compress import lines as lines_mod
from scribed.compress.clause import FUNCTION_WORDS, word_set
from scribed.compress.errors import errors_in_turn
from scribed.compress.todo_item import (
    AUXILIARIES,
    CLAUSE_START,
    COMPLETED,
    DETERMINERS,
    HOLDS,
    NEGATIONS,
    NP_END,
    OBJECT_END,
    OVER,
    PREPOSITIONS,
    REMAINS,
    UNREAL,
    Item,
    adverb,
    back,
    clause_start,
    identifier,
    kind_of,
    mentions,
    noun_phrase,
    parse,
    phrase,
    place_of,
    same_place,
    same_thing,
    span,
    tokenize,
)
from scribed.models import Turn

# Every match of _REVERTS holds one of these (the message prefilter's words).
_REVERT_WORDS = ("revert", "restor", "roll", "undid", "undo", "undone", "backed", "back", "reinstat")
# What a revert of the last closed work names instead of the thing: "Reverted it.", "Rolled back."
_PRONOUNS = frozenset(("it", "them", "that", "this", "those", "these", "everything", "all"))
# A later sentence taking the work back: "Rolled it back", "Then I restored them", "git revert HEAD".
_REVERTS = re.compile(
    r"\b(?:revert\w*|restor\w*|roll(?:ed|ing|s)?\s+(?:\w+\s+){0,2}?back|undid|undone|undo|backed\s+out|"
    r"put\s+(?:\w+\s+){0,3}?back|brought\s+(?:\w+\s+){0,3}?back|reinstat\w*)\b",
    re.I,
)
# Not a report that the work is done: negated, hedged, planned, partial or asked.
_NOT_DONE = re.compile(
    r"\b(?:not|no|never|nothing|neither|nor|should|will|would|could|might|may|can|once|if|until|unless|"
    r"need|needs|needed|todo|fixme|still|yet|next|plan|planned|going|want|wants|try|trying|later|tomorrow|"
    r"think|guess|probably|maybe|perhaps|believe|seems?|partially|partly|half|mostly|almost|nearly|some|most|"
    r"dry|draft|example|when)\b"
    r"|\blet(?:'s| me| us)\b|n't\b|'ll\b|\?",
    re.I,
)
# Taken back later in the same sentence: "Removed X, then reverted it", "Deleted X — wait, no".
_TAKEN_BACK = re.compile(
    r"\b(?:revert\w*|restor\w*|roll(?:ed|ing)?\s+(?:\w+\s+){0,2}?back|put\s+(?:\w+\s+){0,3}?back|undo|undid|"
    r"undone|brought\s+(?:\w+\s+){0,3}?back|wait|actually|not|only|locally|except|excluding|although|though|"
    r"pending|staging|dry[- ]?run)\b",  # "(only in my local branch, not pushed)", "except the invoices table"
    re.I,
)
_SENT_END = re.compile(r"(?<=[.!?;])\s+")
_ID_MARK = re.compile(r"[_./:@#\d]")
# Who may stand before the done verb of an active report: the agent ("I", "we"), or nobody.
_BY_AGENT = word_set(
    "i we i've we've ive weve i'm we're im have has had also now just then finally already and so ok okay"
)
# What a removed thing is said to be: "the Kafka consumer is gone", "… no longer exists"; and what a
# place no longer holds it by: "the code no longer has the Kafka consumer".
_ABSENT = word_set("gone longer")
_EXISTS = word_set("exists exist there present")
# Between a subject and what it is said to be: "is", "has been", "now", "—".
_LINK = AUXILIARIES | word_set(": - \u2013 \u2014 all")
# Verbs of saying: what follows one whose subject is someone else is their report, not the agent's.
_SAYING = word_set(
    "say says said tell tells told report reports reported claim claims claimed confirm confirms confirmed "
    "mention mentions mentioned write writes wrote announce announces announced according"
)
_AGENT = word_set("i we i've we've ive weve i'm we're im")
_COORDINATION = word_set("and or ,")
MAX_SENTENCE_CHARS = 400


class _Report(NamedTuple):
    """Where a sentence's report of an item is, in its tokens."""

    start: int  # where the clause of a done verb with a subject starts; -1: no subject (passive, a state)
    verb: int  # where what says it is done starts ("removed", "is complete": "complete")
    marks: int  # where that ends ("no longer exists": three tokens)
    end: int  # where what must not be hedged ends
    place: tuple[int, int]  # where the report's place is read ("in ingest/kafka.go")
    after: int  # where what could take it back starts


def _acts(item: Item, low: list[str]) -> _Report | None:
    """A report of the item's verb done acting on the item's object: actively ("removed the retry
    loop") or passively ("the retry loop has been removed", "retry loop removed")."""
    for i, w in enumerate(low):
        if not (w in item.forms or (w in item.gerunds and i and low[i - 1] in COMPLETED)):
            continue
        after = i + 1
        said = phrase(low[after:], said=True)
        k = clause_start(low, i)  # "The Kafka consumer in x.go has been deleted"
        if same_thing(item, said):
            end = after + span(low[after:])
            return _Report(k, i, i + 1, end, (end, len(low)), end)
        before = [x for x in low[k:i] if x not in AUXILIARIES]
        if not said and same_thing(item, phrase(before)):
            return _Report(-1, i, i + 1, i + 1, (i + 1, len(low)), i + 1)  # passive: the thing is its subject
    return None


def _past_place(low: list[str], e: int) -> int:
    """Where the places after a subject's thing end ("of the billing tables to Postgres is …")."""
    while e < len(low) and low[e] in PREPOSITIONS:
        e += 1
        while e < len(low) and not (low[e] in OBJECT_END or low[e] in NP_END or adverb(low[e])):
            e += 1
    return e


def _said_of(low: list[str], s: int, e: int, at: tuple[int, int] | None) -> _Report | None:
    """The report of a subject (tokens ``s`` to ``e``, the clause's first words, but for an agent's
    "so", "now") said to be over or gone by the tokens ``at``, after its places and links ("is",
    "has been")."""
    if at is None or not all(w in _BY_AGENT for w in low[clause_start(low, s) : s]):
        return None  # "Bob says the migration is complete": the migration is no subject of the clause
    verb, marks = at
    p = _past_place(low, e)  # its place before what it is said to be, else after it ("gone from x.go")
    return _Report(-1, verb, marks, marks, (e, p) if p > e else (marks, len(low)), marks)


def _state(low: list[str], e: int, states: frozenset[str]) -> tuple[int, int] | None:
    """Where a subject ending at ``e`` is said to be in one of ``states`` (or no longer there, when
    one is "longer"), after its places and links ("is", "has been", "—")."""
    q = _past_place(low, e)
    while q < len(low) and (low[q] in _LINK or adverb(low[q])):
        q += 1
    if q < len(low) and low[q] in states and low[q] != "longer":
        at = q, q + 1
    elif (
        "longer" in states
        and low[q : q + 2] == ["no", "longer"]
        and q + 2 < len(low)
        and low[q + 2] in _EXISTS
    ):
        at = q, q + 3
    else:
        return None
    return at if _said(low, at[1]) else None  # not "has gone stale"


def _said(low: list[str], i: int) -> bool:
    """Whether a phrase ends before token ``i``: nothing follows, or a function word, a mark or an
    adverb ("is done now", "is complete: …"), not a word of its own ("migration script")."""
    return (
        i >= len(low)
        or low[i] in FUNCTION_WORDS
        or low[i] in OBJECT_END
        or low[i] in NP_END
        or adverb(low[i])
    )


def _nominal(item: Item, low: list[str]) -> _Report | None:
    """A report of the item's act, named by its noun, over: "Migration of the invoices table is
    complete", "The invoices table migration is done", "Completed the invoices table migration",
    "Deleting the Kafka consumer: done". The act's object is the item's (of it, or before the noun)."""
    for n, w in enumerate(low):
        if w not in item.nouns:
            continue
        if n + 1 < len(low) and (low[n + 1] in ("of", "for") or w in item.gerunds):
            said, e = noun_phrase(low, n + 2 if low[n + 1] in ("of", "for") else n + 1)
            m = n
        else:
            m, e = back(low, n, set(item.thing)), n + 1
            said = tuple(low[m:n]) if _said(low, e) else ()
        if not same_thing(item, said):
            continue
        s = back(low, m, DETERMINERS)
        b = back(low, s, word_set("with :"))  # "done with the …", "Completed: the …"
        if b and low[b - 1] in COMPLETED:
            return _Report(clause_start(low, b - 1), b - 1, b, e, (e, len(low)), e)
        if (rep := _said_of(low, s, e, _state(low, e, OVER))) is not None:
            return rep
    return None


def _absent(item: Item, low: list[str]) -> _Report | None:
    """A report that the thing a removal acts on is gone: "The Kafka consumer is gone now", "…
    no longer exists", "The code no longer has the Kafka consumer"."""
    for s, e in mentions(item, low):
        b = s - 1
        if b >= 2 and low[b] in HOLDS and low[b - 2 : b] == ["no", "longer"]:  # noqa: PLR2004
            return _Report(-1, b - 2, b + 1, e, (e, len(low)), e)
        if (rep := _said_of(low, s, e, _state(low, e, _ABSENT))) is not None:
            return rep
    return None


def _closes(item: Item, sentence: str) -> bool:
    """Whether ``sentence`` reports ``item`` done (see the module docstring)."""
    return _judge(item, [w.lower() for w in tokenize(sentence)], sentence) is not None


def _judge(item: Item, low: list[str], sentence: str, ids: dict[str, str] | None = None) -> _Report | None:
    """:func:`_closes` on the sentence's tokens, lowercased (``low``), and its identifiers with their
    kinds (``ids``), made once per sentence: the report when it closes the item."""
    named = {n: k for n, k in (_kinds(low) if ids is None else ids).items() if n not in item.thing}
    for kind, mine in item.kinds:  # "to 1.21" where the item said "to 1.22"
        if kind in named.values() and mine.isdisjoint(named):
            return None
    rep = _acts(item, low) or _nominal(item, low) or (_absent(item, low) if item.removal else None)
    if rep is None:
        return None
    start, verb, marks, end, (p0, p1), after = rep
    said = {*item.forms, *low[verb:marks]}
    if any(f in code.lower() for code in _CODE_SPAN.findall(sentence) for f in said):
        return None  # the report is code: "Commit message draft: `Migrated …`"
    if "?" in sentence or _NOT_DONE.search(" ".join(low[:verb] + low[marks:end])):
        return None
    if _TAKEN_BACK.search(" ".join(low[after:])) or _reported(low[:verb]):
        return None
    if start >= 0 and not all(w in _BY_AGENT or w in COMPLETED or w.endswith("ly") for w in low[start:verb]):
        return None  # someone else did it ("the user deleted", "someone already deleted")
    if not same_place(item, place_of(low[p0:p1])):
        return None  # "from the test helpers" where the item said "from server.py"
    return rep


def _kinds(low: list[str]) -> dict[str, str]:
    """The identifiers among a sentence's lowercased tokens, with their kinds (:data:`_ID_MARK`
    finds what may be one, a superset: lowercased, no capital follows a lowercase letter)."""
    return {t: kind_of(t) for t in low if _ID_MARK.search(t) and identifier(t)}


def _reported(low: list[str]) -> bool:
    """Whether the words before a report make it someone else's: a verb of saying with a subject
    not the agent ("Bob says:", "According to Bob,", "Priya confirmed:", "I was told"; not "As I
    said," or "As mentioned,") and no "I" or "we" after it."""
    other = False
    for j, w in enumerate(low):
        if w in _SAYING and (w == "according" or (j and low[j - 1] not in _AGENT and low[j - 1] != "as")):
            other = True
        elif w in _AGENT:
            other = False
    return other


def _pending(item: Item, low: list[str], floor: int = 0) -> bool:
    """Whether a sentence (from token ``floor`` on) says work on the item's object remains: the
    object named, and in its clause, after it ("The invoices table still needs to be migrated",
    "… isn't done", "… will be migrated"), before it ("I still need to migrate the invoices
    table") or before the colon it follows ("Left to do: the invoices table")."""
    for s, e in mentions(item, low, floor):
        k = clause_start(low, s)
        coordinated = k == s and e < len(low) and low[e] in _COORDINATION  # "X and Y still need work"
        stops = CLAUSE_START - _COORDINATION if coordinated else CLAUSE_START
        end = next((n for n in range(e, len(low)) if low[n] in stops), len(low))
        if e < end and low[e] in PREPOSITIONS and not same_place(item, (low[e], noun_phrase(low, e + 1)[0])):
            continue  # "the retry loop in ingest/backoff.go" where the item said "in ingest/retry.go"
        before = low[max(k, floor) : s]
        if k == s and k - 1 >= floor and low[k - 1] == ":":
            before = low[max(clause_start(low, k - 1), floor) : k - 1]
        if _unfinished(item, low[e:end]) or _unfinished(item, before):
            return True
    return False


def _unfinished(item: Item, words: list[str]) -> bool:
    """Whether a clause's words say work remains: a word of remaining work not negated ("needs",
    "left", "not yet"; not "no longer needs", "needs nothing"), or a negation, a modal or a future
    before one of the item's verbs or a word saying it is over ("isn't migrated", "will be deleted",
    "is not complete"); not after one saying it is done ("is migrated and …")."""
    unreal = negated = False
    for n, w in enumerate(words):
        if w == "yet":
            return True
        if w in NEGATIONS or w.endswith("n't"):
            unreal = negated = True
        elif w in UNREAL or w.endswith("'ll"):
            unreal = True
        elif w in REMAINS:
            after = words[n + 1] if n + 1 < len(words) else ""
            return not negated and after not in NEGATIONS  # not "needs no further changes"
        elif w in item.acts or w in OVER:
            if unreal:
                return True
            if w in item.forms or w in OVER:
                return False
    return False


_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s")
_CODE_SPAN = re.compile(r"`[^`]*`")


def _prose_lines(text: str, picked: Iterable[int]) -> Iterable[tuple[int, str]]:
    """The picked lines of a message that are its prose (with their index): not inside a code
    fence, not quoted."""
    lines = text.splitlines()
    fenced: set[int] = set()
    if "```" in text or "~~~" in text:
        inside = False
        for n, ln in enumerate(lines):
            if ln.lstrip().startswith(("```", "~~~")):
                inside = not inside
                fenced.add(n)
            elif inside:
                fenced.add(n)
    for n in picked:
        line = lines[n]
        code = line.startswith(("    ", "\t")) and not _LIST_ITEM.match(line)  # an indented code block
        if n not in fenced and not code and not line.lstrip().startswith(">"):
            yield n, line


def _sentences(text: str, words: tuple[str, ...]) -> Iterable[tuple[tuple[int, int], str]]:
    """The sentences of a message's prose lines holding one of ``words`` (found in one scan), not
    too long, not quoting someone's words ("The PR says \"Deleted X\""), each with where it is
    (its line's index and its own in the line)."""
    picked = lines_mod.holding(text, words)
    every = range(len(text.splitlines()))
    for n, line in _prose_lines(
        text, sorted({i for p in picked for i in p}) if picked is not None else every
    ):
        for k, sent in enumerate(_SENT_END.split(line.strip())):
            if len(sent) <= MAX_SENTENCE_CHARS and sent.count('"') < 2 and "\u201c" not in sent:  # noqa: PLR2004
                yield (n, k), sent


MAX_ITEMS = 64  # the open items of a session looked at (the latest stated): bounded work per sentence


def _objectless(m: re.Match[str], sentence: str) -> bool:
    """Whether a revert names nothing but the last work: "Reverted it.", "Rolled it back: …",
    "Rolled back." (what follows it is a pronoun, a mark or nothing)."""
    rest = sentence[m.end() :].lstrip()
    return (
        not rest
        or rest[0] in ".:;,!(\u2013\u2014-"
        or rest.split()[0].lower().strip(".,:;!") in _PRONOUNS
        or any(w in _PRONOUNS for w in m.group().lower().split())
    )


def done_in_prose(open_items: dict[str, int], turns: Iterable[Turn]) -> set[str]:
    """The open items (text → the line it was last stated at) an assistant message after them
    reports done, that the rest of that message does not say still need work, and nothing later
    restores. Each sentence is read once; only the items whose verb form, act's noun (or, for a
    removal, "gone" or "no longer") it holds are judged."""
    latest = sorted(open_items.items(), key=lambda kv: kv[1])[-MAX_ITEMS:]
    items = [it for text, line in latest if (it := parse(text, line)) is not None]
    if not items:
        return set()
    by_word: dict[str, list[Item]] = {}
    for it in items:
        for w in (*it.forms, *it.gerunds, *it.nouns, *(_ABSENT if it.removal else ())):
            by_word.setdefault(w, []).append(it)
    words = tuple(sorted(by_word))
    with_reverts = tuple(sorted({*by_word, *_REVERT_WORDS}))  # looked for once something is closed
    first = min(it.line for it in items)
    done: set[str] = set()
    keys = {it.text: it.keys for it in items}
    last: list[str] = []  # the items the latest closing sentence closed: what "Reverted it." takes back
    for t in turns:
        if t.role != "assistant" or t.kind != "message" or t.line <= first:
            continue
        here: dict[Item, tuple[tuple[int, int], int]] = {}  # closed in it: where, and its report's end
        for at, sent in _sentences(t.text, with_reverts if done else words):
            low = [w.lower() for w in tokenize(sent)]
            held = set(low)
            if done and (rv := _REVERTS.search(sent)) is not None and not _NOT_DONE.search(sent):
                named = [x for x in done if not held.isdisjoint(keys[x])]
                for x in named or (last if _objectless(rv, sent) else []):
                    done.discard(x)  # "Rolled it back: the smoke test failed", "Reverted the migration"
                continue
            candidates = dict.fromkeys(x for w in low for x in by_word.get(w, ()))
            ids = _kinds(low) if candidates else {}
            closed = [
                (it, rep)
                for it in candidates
                if it.line < t.line
                and it.text not in done
                and not held.isdisjoint(keys[it.text])
                and (rep := _judge(it, low, sent, ids)) is not None
            ]
            done.update(it.text for it, _ in closed)
            here.update((it, (at, rep.after)) for it, rep in closed)
            last = [it.text for it, _ in closed] or last
        if here:
            done -= _still_pending(t.text, here)
    return done


def _still_pending(text: str, closed: dict[Item, tuple[tuple[int, int], int]]) -> set[str]:
    """The items closed in a message (where, and where their report ended) that a later sentence of
    it says still need work: "Migrated the orders table, then migrated the invoices table. The invoices
    table still needs its foreign keys." Only the sentences naming a closed item's object are read."""
    heads = tuple(sorted({k for it in closed for k in it.keys}))
    out: set[str] = set()
    for at, sent in _sentences(text, heads):
        if "?" in sent:
            continue  # a question says nothing remains
        low = [w.lower() for w in tokenize(sent)]
        held = set(low)
        for it, (when, after) in closed.items():
            if at >= when and not held.isdisjoint(it.keys) and _pending(it, low, after if at == when else 0):
                out.add(it.text)
    return out


# A commit recorded in the session: Aider's "Commit e2f5d90 feat: evict idle buckets" line (a tool
# output), a shell's ``git commit -m "fix: dedupe events"`` (a tool call whose output shows no
# error: a hook that rejected it made no commit); its subject without a conventional type.
_AIDER_COMMIT = re.compile(r"^[>\s]{0,4}Commit (?P<sha>[0-9a-f]{7,40}) (?P<m>[^\n]{3,220})", re.MULTILINE)
_AIDER_CALLS = ("edit", "aider")  # the calls Aider's markdown log records before its commit line
_GIT_MADE = re.compile(
    r"^\[[^\]\s]{1,80}(?: \(root-commit\))? (?P<sha>[0-9a-f]{7,40})\] (?P<m>[^\n]{1,220})", re.MULTILINE
)
_GIT_COMMIT = re.compile(r"\bgit commit\b[^\n]{0,80}?\s-[a-z]*m\s*[\"'](?P<m>[^\"'\n]{3,220})")
_TYPE = re.compile(r"(?P<type>[a-z]{2,10})(?:\([^)\n]{0,40}\))?!?:\s*")
MAX_COMMITS = 500  # commit subjects read from one session (bounded work)


class Commit(NamedTuple):
    """A commit the session made: the turn recording it (its index, ``at``, and line), its hash when the
    transcript shows it, and its message as written."""

    at: int  # the turn's index
    line: int
    sha: str
    message: str


def commits(turns: list[Turn]) -> list[Commit]:
    """Each commit the session made, in order (at most :data:`MAX_COMMITS`)."""
    out: list[Commit] = []
    for i, t in enumerate(turns):
        if "ommit" not in t.text:
            continue
        if t.kind == "tool_call":
            after = turns[i + 1] if i + 1 < len(turns) else None
            if after is not None and after.kind == "tool_result" and errors_in_turn(after):
                continue  # rejected (a hook, nothing to commit): no commit made
            first = t.text.split("\n", 1)[0]  # the command line; not a file's content a tool writes
            at = first.find("git commit")
            found = list(_GIT_COMMIT.finditer(first)) if at >= 0 and "{" not in first[:at] else []
            if found and after is not None and after.kind == "tool_result":
                # git's own "[main 5be20c4] fix: …" says a commit was made (without it none was:
                # "nothing to commit", a hook refused) and its hash; its subject where the message
                # as typed is no text ("$(cat <<'EOF' …") or was cut at a quote ("don't")
                made = _GIT_MADE.search(after.text)
                if made is None:
                    continue
                typed = found[0].group("m")
                msg = (
                    made.group("m") if typed.startswith("$(") or made.group("m").startswith(typed) else typed
                )
                out.append(Commit(i, t.line, made.group("sha"), msg.strip()))
                if len(out) >= MAX_COMMITS:
                    return out
                continue
        elif t.kind == "tool_result" or t.role == "tool":
            prev = turns[i - 1] if i else None
            if (
                prev is not None
                and prev.kind == "tool_call"
                and (prev.tool_name or "").lower() not in _AIDER_CALLS
            ):
                continue  # a command's output ("cat NOTES.md"), not Aider's own line after its edit
            found = list(_AIDER_COMMIT.finditer(t.text))
        else:
            continue  # said, not done ("I'll run git commit -m …")
        for m in found:
            out.append(Commit(i, t.line, m.groupdict().get("sha") or "", m.group("m").strip()))
            if len(out) >= MAX_COMMITS:
                return out
    return out


def _subjects(turns: list[Turn]) -> list[tuple[int, str]]:
    """(line, subject) of each commit the session made, in order; a revert is none."""
    out: list[tuple[int, str]] = []
    for c in commits(turns):
        typed = _TYPE.match(c.message)
        if (typed and typed.group("type") == "revert") or c.message.lower().startswith("revert"):
            continue
        out.append((c.line, " ".join(tokenize((c.message[typed.end() :] if typed else c.message).lower()))))
    return out


def committed(open_items: dict[str, int], turns: Iterable[Turn]) -> set[str]:
    """The open items (text → the line it was last stated at) a later commit of the session names
    whole as its subject (``feat: evict idle buckets after 10 minutes`` for the item "evict idle
    buckets after 10 minutes"): work a commit records is done. The subject is the item's words, or
    begins with them and goes on after a word or mark that ends an object ("… for the EU shard",
    "… (#412)"): more said of the same work, not another thing ("… config stub"). Items are looked
    up by their first word: linear in the commits."""
    by_first: dict[str, list[tuple[str, str]]] = {}
    for x in open_items:
        key = " ".join(tokenize(x.lower()))
        if key:
            by_first.setdefault(key.split(" ", 1)[0], []).append((key, x))
    if not by_first:
        return set()
    done: set[str] = set()
    for line, subject in _subjects(list(turns)):
        for key, text in by_first.get(subject.split(" ", 1)[0], ()):
            if open_items[text] >= line:
                continue  # stated (again) after this commit: the commit closed an earlier one
            rest = subject[len(key) + 1 :] if subject.startswith(key + " ") else None
            if subject == key or (rest is not None and rest.split(" ", 1)[0] in OBJECT_END):
                done.add(text)  # "… after 10 minutes": its object ends there; "… config stub" is another
    return done
