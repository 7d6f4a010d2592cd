"""Each error paired with the change that resolved it.

An entry's errors read ``error → fix``: each error (:mod:`scribed.compress.errors` says what one
is) is paired with the first later fix that no other error took (an edit, or an assistant sentence
that says what fixed it), or marked unresolved: never one fix for all. A sentence that negates,
hedges or only plans a fix is none (:mod:`scribed.compress.fix_report` reads what a sentence says).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from scribed.compress import tool_call
from scribed.compress.clause import request_text
from scribed.compress.command_line import covers, files_issue, program
from scribed.compress.deferral import defers
from scribed.compress.errors import error_in_line, errors_in_turn, shape
from scribed.compress.fix_report import MAX_SAID, clean_now, fix_sentences, said_sentences
from scribed.compress.stopwords import STOP
from scribed.models import Turn

_EDIT_TOOLS = re.compile(
    r"^(?:edit|multiedit|write|str_replace\w*|apply_patch|replace|write_file|edit_file|create_file|"
    r"insert|patch|search_replace|edit_notebook)$",
    re.I,
)
_PATHISH = re.compile(
    r"(?:~?/)?[\w.-]+/[\w./-]+|\b[\w-]+\.(?:py|ts|tsx|js|go|rs|java|kt|rb|c|h|cpp|cs|md|toml|json|yaml|yml)\b"
)
MAX_ERRORS = 12
EDIT_RANK = 2  # an edit's :attr:`_Change.rank`
DEFERRAL_CHARS = 160  # the user's words putting a failure off, shown after "unresolved"


@dataclass(slots=True)
class _Open:
    text: str
    shape: str
    index: int  # position of the turn in the session
    terms: dict[str, int]  # the names it carries (quoted values, paths, identifiers) → weight
    source: str = ""  # the program whose output showed it: its clean re-run confirms a fix
    command: str = ""  # the command line that showed it, as shown (cut to COMMAND_CHARS)
    ran: str = ""  # that command line whole: what a re-run must cover (:func:`covers`)
    fix: str = ""
    weak: str = ""  # a change since that names nothing of it: its fix if the check is clean then
    weak_rank: int = 0  # ``weak``'s :attr:`_Change.rank`: a command does not replace an edit
    named: bool = False  # its fix names it (a later change that only might be its fix does not replace it)
    gone: str = ""  # no fix found, but this program showed it and later ran without it
    shared: str = ""  # the fix of another error of its failure (one turn), when nothing names it
    recurred: bool = False
    files: tuple[str, ...] = ()  # the file names of its paths (:func:`_files`)
    deferred: str = ""  # the user's words putting it off ("I'll ask him tomorrow, leave the deploy for now")


@dataclass(slots=True)
class _Change:
    """Something done after an error that may have resolved it."""

    text: str  # as shown after the arrow
    low: str  # lowercased, where an error's names are looked for
    strong: bool  # an edit or a sentence saying what fixed it; False: a command
    claims: bool = False  # a sentence saying in so many words what fixed it (:data:`_CLAIM`)
    rank: int = 0  # as a fix waiting for a clean check: a command 0, a sentence 1, an edit (EDIT_RANK) 2
    negated: bool = False  # its main clause is negated: no change made, unless it names the error


# The names an error carries, by which a later change is recognised as its fix.
_QUOTED = re.compile(r"'([^'\s][^'\n]{1,80}?)'|\"([^\"\s][^\"\n]{1,80}?)\"|`([^`\n]{2,80})`")
_NAMED = re.compile(
    r"[\w.-]*[/\\][\w./\\-]+|[A-Za-z_]\w*(?:(?:\.|::)\w+)+|\w+_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*"
)
MIN_TERM_CHARS = 3
COMMAND_CHARS = 160  # a command shown as a fix, cut between words
MIN_SHARED = 2  # distinctive words a sentence shares with an error to be taken as what fixed it
_WORD = re.compile(r"[a-z][a-z0-9]{3,}")
# Programs that only read or check: running one resolves nothing (a re-run of the failing program
# confirms a fix, see ``source``).
_READ_ONLY_WORDS = (
    "cat less more head tail ls ll dir grep egrep rg ag find fd echo printf pwd which type whereis "
    "wc tree stat file diff cd clear history man env printenv date sleep true"
)
_READ_ONLY = frozenset(_READ_ONLY_WORDS.split())
_READ_ONLY_GIT_WORDS = "status log diff show blame branch remote fetch grep ls-files rev-parse"
_READ_ONLY_GIT = frozenset(_READ_ONLY_GIT_WORDS.split())


def _terms(error: str) -> dict[str, int]:
    """The names an error carries: quoted values and paths weigh 2, other identifiers 1."""
    out: dict[str, int] = {}
    for m in _QUOTED.finditer(error):
        v = next(g for g in m.groups() if g).strip().lower()
        if len(v) >= MIN_TERM_CHARS and not v.isdigit():
            out[v] = 2
    for m in _NAMED.finditer(error):
        v = m.group(0).strip("./\\-").lower()
        if len(v) >= MIN_TERM_CHARS and v not in out:
            out[v] = 2 if "/" in v or "\\" in v else 1
    return out


def _files(terms: dict[str, int]) -> tuple[str, ...]:
    """The file names of an error's paths (``CONVENTIONS.md`` of ``C:\\…\\es\\CONVENTIONS.md``): an
    edit names its file by another path (relative, another root) than the error printed."""
    out: dict[str, None] = {}
    for v in terms:
        name = v.replace("\\", "/").rsplit("/", 1)[-1]
        if name != v and "." in name.strip(".") and len(name) >= MIN_TERM_CHARS and name not in terms:
            out[name] = None
    return tuple(out)


def _command(turn: Turn) -> str:
    """A shell command a tool call ran ('' for other tools: their arguments are JSON)."""
    first = turn.text.strip().split("\n", 1)[0]
    name = turn.tool_name or ""
    if name and first.startswith(name):
        first = first[len(name) :].strip()
    return (
        "" if not first or first.startswith(("{", "[")) or _EDIT_TOOLS.match(name.split(".")[-1]) else first
    )


def _changes(turn: Turn) -> list[_Change]:
    """What an assistant turn did or said that may fix an error: an edit, a command that changes
    something, or each sentence saying what fixed it."""
    if turn.kind == "tool_call":
        name = (turn.tool_name or "").split(".")[-1]
        if _EDIT_TOOLS.match(name):
            m = _PATHISH.search(turn.text)
            text = f"edited `{m.group(0)}`" if m else f"edit via {name}"
            rest, args = tool_call.arguments(turn.text, turn.tool_name)
            wrote = tool_call.changed_line(args, rest)  # what the edit did: the line it wrote
            if wrote and "`" not in wrote:
                text += f": `{wrote}`"
            return [_Change(text, turn.text.lower(), strong=True, rank=EDIT_RANK)]
        cmd = _command(turn)
        prog = program(cmd)
        words = prog.split()
        if (
            not cmd
            or words[0] in _READ_ONLY
            or (words[0] == "git" and words[-1] in _READ_ONLY_GIT)
            or files_issue(cmd)
        ):
            return []
        return [_Change(f"ran {_code(one_line(cmd, COMMAND_CHARS))}", cmd.lower(), strong=False)]
    if turn.role != "assistant" or turn.kind != "message":
        return []
    out = []
    for sent in fix_sentences(turn.text):
        main = _MAIN_END.split(sent, maxsplit=1)[0]  # "Changed X so it doesn't call int()": made
        negated = _NOT.search(main) is not None  # "the user hasn't added the hosts file": not made
        # a fix word after a negated main clause claims nothing: "Neither is new from this
        # change, so I'd rather not mix them into the #231 fix" (not "Fixed it by not caching")
        claimed = _CLAIM.search(main if negated else sent) is not None
        claims = claimed or _CAUSE.search(sent) is not None
        out.append(_Change(sent, sent.lower(), strong=True, claims=claims, rank=1, negated=negated))
    return out


_NOT = re.compile(r"\b(?:not|no|never|nothing|neither|nor|none)\b|n't\b", re.I)
# Where a sentence's main clause ends: a clause of reason, purpose or result follows (not a comma:
# "Wait, the user hasn't added the hosts file" is negated).
_MAIN_END = re.compile(r";\s|\s(?:so|because|since|as|that|which|when|where|if|unless|until|to)\s", re.I)
# A change said with the failure it answers ("… because it did not work for leap years").
_CAUSE = re.compile(
    r"\bbecause\b[^.;]{0,160}?(?:\bfail|\berror|\bbroke|\bcrash|\bwrong|\bmissing|\bbug|"
    r"\bdid(?: not|n't)|\bdoes(?: not|n't)|\bwas(?: not|n't))",
    re.I,
)


# A fix sentence that says it fixed something ("Fixed by pinning pydantic", "the cause was the
# stale lock file", "worked around it"), not only that something changed ("Updated the CHANGELOG";
# a reason given: :data:`_CAUSE`).
_CLAIM = re.compile(
    r"(?<!/)\b(?:fix(?:ed|es)?|resolv(?:ed|es)|root cause|the cause|caused by|was because|the problem was|"
    r"the issue was|workaround|worked around|patched)\b(?!/)",
    re.I,
)


def pair(turns: list[Turn]) -> list[str]:
    """``error → fix`` lines in order of first appearance; ``→ unresolved`` where nothing fixed it.

    Every distinct error gets its own line. The errors one turn shows (a traceback and the
    failing-test summary under it) are one failure. A later change goes to the open errors whose
    names it carries (a quoted module name, a path, an identifier), the most names first, even
    when a change that named nothing of them took them before; a sentence that names none of them
    but says it fixed something goes to the errors of the most recent failure that have no fix
    yet (the one the agent was looking at). An edit, a change said or a command that names
    nothing is a failure's fix only once the check is clean: the program that failed runs clean
    again, or the assistant reports the check clean now; either settles the failure's errors.

    A user's message putting the latest failure off ("Piotr has to grant the role, I'll ask him
    tomorrow, leave the deploy for now": :func:`scribed.compress.deferral.defers`) leaves it open:
    only a clean re-run of what failed, or an edit or a sentence saying it fixed it by its names,
    settles it then, not a report that some other check is clean ("all 312 tests pass").
    """
    return [_line(op) for op in _paired(turns)]


def deferred(turns: list[Turn]) -> list[str]:
    """The errors a user put off (:func:`pair`) that nothing settled afterwards: the live blockers
    a report of other work clean does not end."""
    return [op.text for op in _paired(turns) if op.deferred and not op.fix and not op.gone]


def _paired(turns: list[Turn]) -> list[_Open]:
    """Each distinct error of ``turns`` with what settled it (:func:`pair`)."""
    found: list[_Open] = []
    by_shape: dict[str, _Open] = {}
    waiting: list[list[_Open]] = []  # failures not settled yet, oldest first
    last_prog = last_cmd = ""  # the last command run, and its program
    said: list[tuple[int, str]] = []  # the assistant's sentences while a failure is open
    for i, t in enumerate(turns):
        errs = errors_in_turn(t)
        if errs:
            tool = t.kind == "tool_result" or t.role == "tool"
            group = _failure(errs, i, found, by_shape, (last_prog, last_cmd) if tool else ("", ""))
            if group:
                waiting.append(group)
            continue
        if t.kind == "tool_result" or t.role == "tool":
            if last_prog:
                waiting = _confirmed(waiting, last_prog, last_cmd, said)
            continue
        if t.kind == "tool_call":
            last_cmd = _command(t)
            last_prog = program(last_cmd)
        if waiting and t.role == "user" and t.kind == "message":
            if defers(t.text):  # the failure the user answers is put off: it stays open
                for op in waiting[-1]:
                    op.deferred = op.deferred or one_line(request_text(t.text), DEFERRAL_CHARS)
            continue
        if waiting:
            waiting = _after(t, i, waiting, said, last_prog)
    return found


def _after(
    t: Turn, i: int, waiting: list[list[_Open]], said: list[tuple[int, str]], prog: str
) -> list[list[_Open]]:
    """Turn ``i`` (a call or a message) while failures wait: its changes assigned, and the latest
    failure settled when the assistant reports it clean now; the failures still waiting."""
    message = t.role == "assistant" and t.kind == "message"
    if message and len(said) < MAX_SAID:
        said += [(i, x) for x in said_sentences(t.text)]
    for change in _changes(t):
        _assign(change, waiting, prog if t.kind == "tool_call" else "")
    if message and (claim := clean_now(t.text)):
        return _settled(waiting, claim, said)
    return waiting


def _line(op: _Open) -> str:
    """An error's line: the error, the arrow, its fix or why it has none."""
    err = f"`{op.text}`" if "`" not in op.text else op.text
    tail = (
        op.fix
        or op.shared
        or (f"unresolved (gone when {_code(op.gone)} ran again)" if op.gone else "")
        or (f'unresolved (put off by the user: "{op.deferred}")' if op.deferred else "unresolved")
    )
    if op.recurred and op.fix:
        tail += " (after it recurred)"
    return f"{err} → {tail}"


def _settled(waiting: list[list[_Open]], claim: str, said: list[tuple[int, str]]) -> list[list[_Open]]:
    """The latest failure reported clean (``claim``), not one the user put off (the report is of
    other work): each of its errors keeps its fix, else takes what a clean re-run would give it
    (:func:`_confirmed`), else the report itself."""
    at = _latest(waiting)
    if at < 0:
        return waiting
    g = waiting[at]
    for op in g:
        if not op.fix:
            op.fix = op.weak or _said_about(op, g, said) or op.shared or claim
    return waiting[:at] + waiting[at + 1 :]


def _latest(waiting: list[list[_Open]]) -> int:
    """The index of the latest failure the user did not put off, or -1."""
    return next((k for k in range(len(waiting) - 1, -1, -1) if not any(op.deferred for op in waiting[k])), -1)


def _assign(change: _Change, waiting: list[list[_Open]], prog: str) -> None:
    """Give ``change`` to the open errors that name the most of it, else, when it is a sentence
    saying it fixed something, to the latest failure's errors without a fix; an edit, a change
    said or a command naming nothing is only noted, their fix once the check is clean (a clean
    re-run, the agent's report): an edit after an error it does not name may be other work (the
    agent "can't fix it from here" and goes on with the next task). See :func:`pair`."""
    if not change.strong and any(op.source == prog for g in waiting for op in g):
        return  # the failing program run again: a check, not a change
    if chosen := _most_named(change, waiting):
        _give(change.text, chosen, waiting)
        return
    if change.rank:  # an edit or a sentence naming an error's file by another path: a fix it may be
        by_file = [
            op
            for g in waiting
            for op in g
            if not op.fix and not op.deferred and _names_file(change.low, op.files)
        ]
        if by_file:
            _give(change.text, by_file, waiting, named=False)
            return
    at = _latest(waiting)
    latest = [op for op in waiting[at] if not op.fix and not op.shared] if at >= 0 else []
    for op in latest:  # naming none of them, only a sentence saying it fixed them is their fix
        if change.claims and not _other_issue(change.low, op.text):
            op.fix = change.text
        elif change.rank >= op.weak_rank and not change.negated:  # the latest edit, sentence, command
            op.weak, op.weak_rank = change.text, change.rank  # the fix once the check is clean


_ISSUE_REF = re.compile(r"(?<![\w&])#\d+\b")


def _other_issue(low: str, error: str) -> bool:
    """Whether a sentence names a numbered issue its error does not ("#302 fixed with a regression
    test" after a clippy failure): a fix said of an issue is that issue's."""
    refs = _ISSUE_REF.findall(low)
    return bool(refs) and not any(r in error for r in refs)


def _most_named(change: _Change, waiting: list[list[_Open]]) -> list[_Open]:
    """The open errors whose names ``change`` carries the most of (a fix that named its error
    before is not taken back)."""
    best, chosen = 0, []
    for g in waiting:
        for op in g:
            if op.named or (op.deferred and change.rank < EDIT_RANK and not change.claims):
                continue  # put off: only an edit or a sentence saying it fixed it, by its names
            score = sum(w for term, w in op.terms.items() if term in change.low)
            if score > best:
                best, chosen = score, [op]
            elif score == best and score:
                chosen.append(op)
    return chosen


def _names_file(low: str, files: tuple[str, ...]) -> bool:
    """Whether ``low`` names one of ``files`` as a whole path segment (``app/main.py`` names
    ``main.py``; ``app/domain.py`` does not)."""
    return any(re.search(rf"(?:^|[/\\\s`'\"(]){re.escape(name)}(?![\w.-])", low) for name in files)


def _give(fix: str, chosen: list[_Open], waiting: list[list[_Open]], *, named: bool = True) -> None:
    """``fix`` names the ``chosen`` errors (``named``: by their names, not taken back; else by
    their file only: a later change naming them takes them). The errors one turn showed are one
    failure: those of its errors the change does not name (the failing-test line under a
    traceback) share its fix, unless something names them later."""
    for op in chosen:
        op.fix, op.named = fix, named
    for g in waiting:
        if any(op in chosen for op in g):
            for op in g:
                op.shared = op.shared or fix


def _confirmed(
    waiting: list[list[_Open]], prog: str, cmd: str, said: list[tuple[int, str]]
) -> list[list[_Open]]:
    """The program that showed a failure ran ``cmd`` without an error, covering what failed (not
    ``pytest -k other``: :func:`covers`): that failure is settled, each error with its fix, else
    the command run since, else what the assistant said about it since (a sentence sharing two of
    its distinctive words); the failures left open."""
    left = []
    for g in waiting:
        ran = [op.source == prog and covers(cmd, op.ran, op.text) for op in g]
        if not any(ran):
            left.append(g)
            continue
        # a narrower re-run settles the errors it ran; one naming another test or file stays open
        # (an error naming none, a traceback's last line, goes with its failure)
        still = [op for op, r in zip(g, ran, strict=True) if not r and _TEST_NAMED.search(op.text)]
        for op in g:
            if op.fix or op in still:
                continue
            op.fix = op.weak or _said_about(op, g, said) or op.shared
            op.gone = "" if op.fix else op.command
        if still:
            left.append(still)
    return left


# An error naming a test or a file: a narrower re-run that did not run it says nothing of it.
_TEST_NAMED = re.compile(r"::\w|\b[\w/.-]+\.[a-z]{1,5}\b|\bTest[A-Z]\w*|\btest_\w+", re.I)


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP}


def _said_about(op: _Open, group: list[_Open], said: list[tuple[int, str]]) -> str:
    """The sentence said since ``op`` appeared that shares the most of its distinctive words (not
    in the other errors of its failure), when at least two; else ''."""
    others = set().union(*(_words(o.text) for o in group if o is not op))
    mine = _words(op.text) - others
    best, text = MIN_SHARED - 1, ""
    for i, sent in said:
        if i > op.index and not error_in_line(sent):
            n = len(mine & _words(sent))
            if n > best:
                best, text = n, sent
    return text


def one_line(text: str, limit: int) -> str:
    """``text`` on one line within ``limit`` chars, cut between words (never inside a token)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    return (head.rsplit(" ", 1)[0] if " " in head else "") + "…"


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else text


def _failure(
    errs: list[str], i: int, found: list[_Open], by_shape: dict[str, _Open], source: tuple[str, str]
) -> list[_Open]:
    """The open errors one turn shows: new ones (up to MAX_ERRORS) and fixed ones that came back."""
    group: list[_Open] = []
    for e in errs:  # a tally next to the errors it counts is none (errors_in_turn)
        sh = shape(e)
        known = by_shape.get(sh)
        if known is not None:
            if known.fix:  # it came back after its fix
                known.recurred = True
                known.fix = known.weak = known.gone = ""
                known.named = False
                if source[0]:
                    known.source, known.command, known.ran = (
                        source[0],
                        one_line(source[1], COMMAND_CHARS),
                        source[1],
                    )
                group.append(known)
            else:  # shown again: the change since, waiting for a clean check, did not fix it, and a
                # clean run before no longer settles it (it failed again: a blocker, not "gone")
                known.weak, known.weak_rank, known.gone = "", 0, ""
            continue
        if len(found) >= MAX_ERRORS:
            continue
        terms = _terms(e)
        cmd = one_line(source[1], COMMAND_CHARS)
        op = _Open(e, sh, i, terms, source[0], cmd, source[1], files=_files(terms))
        found.append(op)
        by_shape[sh] = op
        group.append(op)
    return group
