"""Must-keep anchors, extracted deterministically before any compressor runs.

The retention guard (see :func:`guard`) checks that each anchor's exact text is in the cold
entry and adds the missing ones under "Key facts". A compressor (LLM or extractive) may
phrase things its own way; the facts agents depend on (decisions, paths, error strings,
commands, issue numbers, open TODOs) survive regardless.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable

from scribed.compress import lines as lines_mod
from scribed.compress import plan as plan_mod
from scribed.compress import todo_done
from scribed.compress.anchor_text import MAX_ANCHOR_CHARS as MAX_ANCHOR_CHARS
from scribed.compress.anchor_text import _norm as _norm  # presence checks, re-exported
from scribed.compress.anchor_text import _norm_anchor as _norm_anchor
from scribed.compress.anchor_text import _norm_text as _norm_text
from scribed.compress.anchor_text import clean
from scribed.compress.anchor_text import format_anchor as format_anchor
from scribed.compress.anchor_text import present as present
from scribed.compress.anchor_text import recall as recall
from scribed.compress.clause import acts_on
from scribed.compress.command_line import SHELL_TOOLS as _SHELL_TOOLS
from scribed.compress.decisions import Decisions, prefilter_for
from scribed.compress.errors import errors_in_turn
from scribed.compress.questions import UNANSWERED, unanswered
from scribed.compress.used_names import UsedNames
from scribed.models import Anchor, Session, Turn

# Caps per session so a pathological transcript cannot blow the entry budget.
CAPS: dict[str, int] = {
    "decision": 12,
    "path": 30,
    "identifier": 15,
    "error": 10,
    "command": 12,
    "issue": 20,
    "todo": 24,
    "directive": 8,
    "number": 4,
}
# Order in which missing anchors are restored when the budget is tight.
PRIORITY = ["decision", "todo", "path", "error", "issue", "command", "directive", "identifier", "number"]

# A path under a shell variable keeps it (``$OUT/postings.ndjson``, ``${HOME}/.config/app.toml``,
# ``$(pwd)/src/app.py``: the file is there, not at ``/src/app.py``); ``.json`` called or opening a
# block (``resp.json()``, ``if opts.json {``) is code.
_PATH = re.compile(
    r"(?<![\w@:/.$})-])"
    r"(?P<p>(?:(?:\$\{?[A-Za-z_]\w*\}?|\$\([a-z]+\))/(?:[A-Za-z0-9_@.+-]+/)*|(?:~|\.{1,2})?/?(?:[A-Za-z0-9_@.+-]+/)+)"
    r"[A-Za-z0-9_.+-]+\.[A-Za-z0-9]{1,8}"
    r"|[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.(?:py|pyi|ts|tsx|js|jsx|mjs|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|"
    r"swift|md|toml|yaml|yml|json|jsonl|ini|cfg|sh|sql|lock|txt|html|css|scss|vue|proto|tf|env|xml|gradle)"
    r"(?!(?<=json)(?:\(|\s\{)))"
    r"(?![\w/]|\.[A-Za-z_])"  # ``process.env.TZ``, ``config.json.load``: a member, no file
)
_PATH_NOEXT = re.compile(
    r"(?<![\w@:/.-])(?P<p>(?:[A-Za-z0-9_.-]+/)+(?:Dockerfile|Makefile|Procfile|Gemfile|Rakefile|Jenkinsfile|"
    r"Vagrantfile|Containerfile|Justfile|bootstrap|CODEOWNERS|LICENSE|README))(?![\w/.])"
)
_URLISH = re.compile(r"\w+://\S*")
_IDENT = re.compile(r"`(?P<i>[A-Za-z_][A-Za-z0-9_]*(?:(?:\.|::)[A-Za-z_][A-Za-z0-9_]*)*(?:\(\))?)`")
_DIFF_LINE = re.compile(r"^\s*(?:diff --git |index [0-9a-f]+\.\.|--- a/|\+\+\+ b/|--- /dev/null|@@ )")
_SHELL_WRAP = re.compile(r"^(?:bash|sh|zsh)\s+-l?c\s+(?P<c>.+)$")
_READONLY_CMD = re.compile(
    r"^(?:cat|ls|head|tail|sed -n|grep|rg|find|pwd|echo|wc|tree|less|more|stat|file)\b"
)
_ISSUE = re.compile(r"(?<![\w&/#])#(?P<n>\d{1,6})\b")
# "put a TODO in the readme": a TODO the sentence talks of (after a determiner, no colon) is no item.
_NOT_AN_ITEM = "".join(
    rf"(?<!\b{d}\s)" for d in ("a", "the", "this", "that", "these", "any", "no", "another", "each")
)
_TODO_OPEN = re.compile(
    rf"(?:^|\s)(?:[-*]\s*\[ \]\s*|(?-i:TODO|FIXME):\s*|{_NOT_AN_ITEM}(?-i:TODO|FIXME)\s+|open item[:\s]\s*|follow[- ]ups?:\s*|"
    # a line's or a bullet's "Open:" label before words: not "status is open:", "Issues — Open: 12",
    # "| Open: 3 PRs |" or "File > Open: the config" (a count, a cell, a menu)
    r"(?<![^\s\-*+]\s)(?:\*\*)?open(?:\*\*)?:(?:\*\*)?\s+(?=[^\W\d_])|"
    r"next steps?:\s*|remaining work:\s*|still to do:\s*|we still need to\s+)(?P<t>.{3,600})",
    re.IGNORECASE,
)
_TODO_DONE = re.compile(
    r"(?:^|\s)(?:[-*]\s*\[[xX]\]\s*|DONE[:\s]\s*|(?:Done|Finished|Completed):\s*|closed TODO[:\s]\s*|"
    r"resolved TODO[:\s]\s*)(?P<t>.{3,600})"
)
_TODO_DONE_SUFFIX = re.compile(
    r"^\W*(?P<t>.{3,600}?)\s+(?:is|are) (?:done|finished|complete)(?: now)?\W*$", re.I
)
# A figure: not inside a word, a version or a path (the character before its first digit). It
# starts with its digit, so the regex engine skips to digits (a leading lookbehind is tried at
# every character: 2.4 times slower on a 5 MB hot file).
_NUMBER = re.compile(
    r"(?P<n>\d(?<![\w.#/-]\d)(?:\d{0,2}(?:,\d{3})+(?:\.\d+)?(?:\s?(?:rows|records|requests|items|files|tests|users))?"
    r"|\d*(?:\.\d+)?\s?(?:ms|%|MB|GB|KB|MiB|GiB|rows|records|req/s|rps)))(?![\w%])"
)
# A directive word is a word of its own: not the tail of a config key ("yes-always: false") nor the
# head of a compound ("always-on", "must-have"). A directive runs to the end of its sentence ("Always.
# Get some sleep!" holds none: the word is a whole answer), and is one only when what follows the
# word names an action on something in its clause (_directive: "don't plant themselves", "never
# mind, …" name none).
_DIRECTIVE = re.compile(
    r"(?P<d>(?<![\w-])(?:always|never|do not|don't|must not|must|make sure to|please don't|please do not|"
    r"please avoid|avoid|refrain from|rather you)(?![\w-])(?P<rest>(?:(?![.!?](?:\s|$)).){5,200}))",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[,;:]\s|\s[-–—]+\s")
_CLAUSE_START = re.compile(r"(?:^|[.!?;:,]\s|\s[-–—]+\s|^\W+|\s(?:and|but|so)\s)", re.IGNORECASE)
# Words that may come before a directive word without being its subject: the agent or the team
# addressed, politeness and the connectives that join it to what came before.
_ADDRESS = frozenset(["you", "we", "please", "kindly", "just", "so", "and", "but", "then", "also", "ok"])
_ADDRESS |= {"okay", "now", "i'd", "rather"}
# A subject under a universal quantifier makes a rule ("Every class must have a Javadoc comment").
_EVERY = frozenset(["every", "each", "all", "any", "no"])


def _directive(line: str, m: re.Match[str]) -> bool:
    """Whether a directive word's match is one: what follows it in its clause names an action on
    something ("never mind, it …" does not), and when a subject of its own comes before it ("She
    says tomatoes don't …"), something of the project in it or in the subject (:func:`request.acts_on`:
    "The URL must be …"), unless that subject is every member of a kind (a rule: "Every method must …")."""
    start = max((c.end() for c in _CLAUSE_START.finditer(line, 0, m.start())), default=0)
    before = re.findall(r"[\w']+", line[start : m.start()].lower())
    clause = _CLAUSE_END.split(m.group("rest"), maxsplit=1)[0]
    if any(w not in _ADDRESS for w in before) and not any(w in _EVERY for w in before):
        return acts_on(f"{line[start : m.start()]} {clause}", subject=True)  # "The URL must be …"
    return acts_on(clause)


_CMD_START = re.compile(
    r"^(?:\$\s+)?(?P<c>(?:pytest|python3?|pip|uv|git|npm|npx|pnpm|yarn|make|cargo|go|docker|kubectl|"
    r"ruff|mypy|scribed|gh|node|bash|sh|poetry|tox|just|terraform|helm|curl|alembic|psql|bundle|rake|rails|"
    r"mvn|gradle|dotnet|deno|bun|ansible|systemctl|uvicorn|alembic)\b[^\n`]{0,160}"
    r"|\./[\w./-]+\.(?:sh|py)\b[^\n`]{0,120})"
)
_BACKTICK = re.compile(r"`([^`\n]{3,180})`")


# Each TODO pattern below needs one of these literals, whatever its case: a line without them is
# skipped (found in a turn's lines joined, :func:`lines.mentioning`).
_TODO_ANY = lines_mod.prefilter(
    "[ ]", "[x]", "todo", "fixme", "done", "finished", "complete", "open item", "follow-up", "follow up",
    "open:", "open**:", "next step", "remaining work", "still to do", "still need to",
)  # fmt: skip
_PATH_EXT = re.compile(
    r"\.(?:py|pyi|ts|tsx|js|jsx|mjs|go|rs|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|md|toml|yaml|yml|json|jsonl|ini|"
    r"cfg|sh|sql|lock|txt|html|css|scss|vue|proto|tf|env|xml|gradle)(?![\w/]|\.[A-Za-z_])"
)
_DIGIT = re.compile(r"\d")
_DIGITS = re.compile(r"\d+")
_CAMEL = re.compile(r"[a-z][A-Z]")
MIN_ANCHOR_CHARS = 2
MAX_FIGURES = 3  # a message stating more figures is a measurement dump, not a fact


# An open item (a TODO, a plan step) is printed whole up to this many characters, then by sentences.
TODO_CHARS = 600


# Turn kinds whose lines carry anchors; decisions and TODOs come from the first two only.
_LINE_KINDS = frozenset({"message", "tool_call", "summary"})
_PROSE_KINDS = frozenset({"message", "summary"})
TurnLines = list[tuple[Turn, list[str]]]


def _lines(turns: Iterable[Turn], kinds: set[str] | frozenset[str]) -> Iterable[tuple[Turn, str]]:
    for t, lines in _turn_lines(turns, kinds):
        for line in lines:
            yield t, line


def _turn_lines(turns: Iterable[Turn], kinds: set[str] | frozenset[str] = _LINE_KINDS) -> TurnLines:
    """Each turn of ``kinds`` with its non-blank lines outside diffs."""
    return [(t, _split(t.text)) for t in turns if t.kind in kinds]


def _split(text: str) -> list[str]:
    """A turn's non-blank lines outside diffs."""
    return [ln for ln in text.splitlines() if ln.strip() and not _DIFF_LINE.match(ln)]


def _unquoted(raw: str) -> str:
    """A command without the quotes around it whole (``'pytest -x'``); a quote ending it that
    closes one inside (``pip install 'psycopg[binary]==3.1.18'``) stays."""
    if len(raw) > 1 and raw[0] == raw[-1] and raw[0] in "'\"" and raw[0] not in raw[1:-1]:
        return raw[1:-1].strip()
    return raw


def _command(raw: str) -> str | None:
    """A command worth keeping: unwrapped from ``bash -lc``, and not a read-only look."""
    raw = _unquoted(raw.strip())
    m = _SHELL_WRAP.match(raw)
    if m:
        raw = _unquoted(m.group("c").strip())
    if _READONLY_CMD.match(raw):
        return None
    c = _CMD_START.match(raw)
    if c is None:
        return None
    end = c.end("c")
    if end < len(raw) and raw[end] not in "\n`":  # cut at its length limit: between words, marked
        cmd = c.group("c")
        if not raw[end].isspace() and " " in cmd:
            cmd = cmd.rsplit(" ", 1)[0]
        return cmd.rstrip() + " …"
    return c.group("c")


class _Found:
    """Anchors in order, deduplicated by (kind, shape) and capped per kind."""

    def __init__(self) -> None:
        self.out: list[Anchor] = []
        self.seen: set[tuple[str, str]] = set()
        self.counts: dict[str, int] = {}

    def add(self, kind: str, text: str, line: int, superseded: str | None = None) -> None:
        text = clean(text, TODO_CHARS if kind == "todo" else MAX_ANCHOR_CHARS)
        if kind in ("command", "error"):
            shape = _DIGITS.sub("0", text)
        else:  # an open item said twice, once capitalised ("Backfill …" in a plan, "backfill …" in prose)
            shape = " ".join(text.casefold().split()).rstrip(".") if kind == "todo" else text
        if (
            len(text) < MIN_ANCHOR_CHARS
            or (kind, shape) in self.seen
            or self.counts.get(kind, 0) >= CAPS[kind]
        ):
            return
        self.seen.add((kind, shape))
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.out.append(Anchor(kind, text, line, superseded))  # type: ignore[arg-type]

    def extend(self, other: _Found) -> None:
        """``other``'s anchors after these; its kinds are none of these (so no cap or duplicate
        across the two changes)."""
        assert self.counts.keys().isdisjoint(other.counts), "kinds of their own only"
        self.out.extend(other.out)
        self.seen |= other.seen
        self.counts.update(other.counts)


def extract(session: Session, turns: list[Turn] | None = None) -> list[Anchor]:
    """All anchors of a session (or of the given subset of its turns), deterministic order.

    Each turn is split into lines once and every pass reads them before the next turn is split:
    a session's lines are never all held at once (a 64 MB session's would be 150 MB). Every
    pattern runs only on lines holding the literal text it needs (a keyword, a ``/``, a backtick).
    """
    turns = session.turns if turns is None else turns
    plan = plan_mod.final(turns)
    decisions = Decisions(UsedNames(turns))
    todos = _Todos({clean(x, TODO_CHARS).lower() for x in plan.done()} if plan is not None else set())
    per_line = _Found()  # kinds of their own (paths, numbers, …): added after decisions and TODOs
    # A transcript that records the shell's runs: a command only named in a message ("the red build
    # is `yarn test --ci`") was not run; in a chat without them (Aider, markdown) it is all there is.
    runs = any(t.kind == "tool_call" and (t.tool_name or "").lower() in _SHELL_TOOLS for t in turns)
    _read_lines(turns, decisions, todos, per_line, mentions=not runs)
    found = _Found()
    for a in decisions.result():
        found.add("decision", a.text, a.line, a.superseded)
    if plan is not None:  # the agent's own plan first (what it left open, in progress first)
        for text in plan.open():
            found.add("todo", text, plan.line)
    still = todos.result()
    reported = todo_done.done_in_prose(
        {k: todos.stated[k] for k in still}, turns
    )  # "Deleted the Kafka consumer"
    reported |= todo_done.committed(
        {k: todos.stated[k] for k in still}, turns
    )  # "Commit e2f5d90 feat: evict idle buckets …"
    for text, line_no in still.items():
        if text not in reported:
            found.add("todo", text, line_no)
    for question, line_no in unanswered(turns):  # the user asked, no reply took it up
        found.add("todo", f"{UNANSWERED}{question}", line_no)
    found.extend(per_line)
    _shell_commands(turns, found)
    _relative_paths(found.out)
    # Errors: only error-shaped text (see compress/errors.py); prose that mentions "error" is not one.
    for t in turns:
        for err in errors_in_turn(t):
            found.add("error", err, t.line)
    return found.out


def _read_lines(
    turns: list[Turn], decisions: Decisions, todos: _Todos, found: _Found, *, mentions: bool = True
) -> None:
    """Every pass over each turn's lines, a turn at a time (``mentions``: see :func:`_message_anchors`)."""
    for t in turns:
        if t.kind not in _LINE_KINDS:
            continue
        ls = _split(t.text)
        if t.kind in _PROSE_KINDS:
            said, todo = lines_mod.mentioning(ls, prefilter_for(t), _TODO_ANY)
            decisions.feed(t, said)
            todos.feed(t, todo)
        _line_anchors(t, ls, found, mentions=mentions)


def _shell_commands(turns: list[Turn], found: _Found) -> None:
    """The commands the agent ran through a shell tool."""
    for t in turns:
        if t.kind == "tool_call" and (t.tool_name or "").lower() in _SHELL_TOOLS:
            first = t.text.split("\n", 1)[0]
            if (t.tool_name or "") and first.lower().startswith((t.tool_name or "").lower()):
                first = first[len(t.tool_name or "") :].strip(" :")
            cmd = _command(first)
            if cmd:
                found.add("command", cmd, t.line)


class _Todos:
    """The TODOs prose states, fed a turn's lines at a time; open ones are those no line marks done."""

    def __init__(self, done: set[str]) -> None:
        self.open: dict[str, int] = {}
        self.stated: dict[str, int] = {}  # each open item's last statement
        self.done = done
        self.struck: set[str] = set()  # items a list struck through: "- [ ] ~~Redis backend~~ dropped"

    def feed(self, t: Turn, ls: list[str]) -> None:
        """``t``'s lines that mention a TODO word (:func:`lines.mentioning` with :data:`_TODO_ANY`)."""
        open_todos, done = self.open, self.done
        following = _Following(t.text, ls)
        for line in ls:
            for m in _TODO_DONE.finditer(line):
                done.add(clean(m.group("t"), TODO_CHARS).lower())
            suffix = _TODO_DONE_SUFFIX.match(line)
            if suffix:
                done.add(clean(suffix.group("t"), TODO_CHARS).lower())
            for m in _TODO_OPEN.finditer(line):
                item = m.group("t")
                if (struck := _STRUCK.match(item)) is not None:
                    rest = item[struck.end() :].strip()
                    if not rest or _STRUCK_NOTE.match(rest):  # "~~X~~ dropped: …", "~~X~~ (moved to #12)"
                        if len(self.struck) < MAX_STRUCK:
                            self.struck.add(" ".join(struck.group("s").lower().split()))
                        continue
                    item = rest  # "~~Redis~~ Memcached backend": corrected, the rest is the item
                key = clean(_continued(following, line, item), TODO_CHARS)
                if key.lower() in done:
                    continue
                open_todos.setdefault(key, t.line)
                self.stated[key] = t.line  # the last time: a report before it closes nothing

    def result(self) -> dict[str, int]:
        """The items still open: not marked done, and not what a list struck through (an item
        beginning with the struck words: "Redis backend so limits hold…" for "~~Redis backend~~")."""
        return {
            text: line_no
            for text, line_no in self.open.items()
            if text.lower() not in self.done and not any(_begins(text.lower(), x) for x in self.struck)
        }


def _begins(text: str, head: str) -> bool:
    """Whether ``text``'s head (its words up to a preposition, a conjunction or a mark: "Redis
    backend" of "Redis backend so limits hold…") is ``head``: the struck item is that one, not
    another naming the same thing ("Redis TLS certificates for staging")."""
    return text == head or _HEAD_END.split(text, maxsplit=1)[0].strip() == head


# A list item struck through (markdown's ``~~…~~``) and a note after it ("dropped: …", "(moved to
# #12)", "done"): dropped, not open. Struck words followed by others are a correction.
_STRUCK = re.compile(r"~~(?P<s>[^~\n]{2,200})~~")
_STRUCK_NOTE = re.compile(r"[(:,;\-\u2013\u2014]|\w+(?:[:,;]|\s+[(\-\u2013\u2014]|\s*$)")
_HEAD_END = re.compile(
    r"[,;:.(\u2013\u2014]|\s(?:so|for|in|on|at|to|with|from|of|by|and|or|but|because|since|when|after|"
    r"before|until|while|that|which|via|across|without)\s",
    re.I,
)
MAX_STRUCK = 64  # struck items remembered per session (each open item is checked against them)


# A line that starts something of its own: a list item, a quote, a table, a heading, a fence, a
# blank line, or a label ("assistant: …", "Note: …").
_NOT_CONTINUATION = re.compile(r"^\s*(?:[-*+>|#]|\d{1,3}[.)]\s|```|~~~|$|[\w-]{1,30}:(?:\s|$))")
# A line that ends on one of these words was wrapped: its sentence goes on below.
_WRAPPED_END = re.compile(
    r"\b(?:the|a|an|of|to|for|in|on|at|by|with|from|and|or|but|that|which|its|their|our|is|are|be|"
    r"when|once|until|so|as|into|than|this|these|if)\s*$",
    re.IGNORECASE,
)
WRAP_WIDTH = 70  # a line this long that ends without punctuation was wrapped at a fixed width
MAX_WRAPPED_LINES = 3


class _Following:
    """The lines after a TODO's line in its turn's text (for :func:`_continued`): the text is split
    and where each of the turn's TODO lines first occurs is found once, when first asked (split
    and searched per TODO, a list of 8,000 wrapped items in one 0.5 MB message took 6 s)."""

    __slots__ = ("at", "lines", "text", "wanted")

    def __init__(self, text: str, wanted: list[str]) -> None:
        self.text, self.wanted = text, wanted
        self.lines: list[str] = []
        self.at: dict[str, int] | None = None

    def after(self, line: str) -> list[str]:
        """Up to MAX_WRAPPED_LINES lines after the first line of the text equal to ``line``."""
        if self.at is None:
            self.lines, want, self.at = self.text.splitlines(), set(self.wanted), {}
            for i, ln in enumerate(self.lines):
                if ln in want:
                    self.at.setdefault(ln, i)
        at = self.at.get(line)
        return [] if at is None else self.lines[at + 1 : at + 1 + MAX_WRAPPED_LINES]


def _continued(following: _Following, line: str, item: str) -> str:
    """``item`` (found at the end of ``line``) with the lines that continue its sentence when the
    line was wrapped ("…timezone for the\nParquet partitions (#318)."): it ends on a word that
    cannot end a sentence, or it is as long as a wrapped line and ends without punctuation. It
    goes on up to the end of the sentence, a blank line, a list item, a heading, a fence or a label."""
    end = item.rstrip()
    if end[-1:] in ".!?:;)" or len(item) >= TODO_CHARS:
        return item
    if not _WRAPPED_END.search(end) and len(line.rstrip()) < WRAP_WIDTH:
        return item
    out = item
    for nxt in following.after(line):
        if _NOT_CONTINUATION.match(nxt) or _TODO_OPEN.search(nxt) or len(out) >= TODO_CHARS:
            break
        out = f"{out} {nxt.strip()}"
        if nxt.rstrip()[-1:] in ".!?" or not (_WRAPPED_END.search(nxt) or len(nxt.rstrip()) >= WRAP_WIDTH):
            break
    return out


def _line_anchors(t: Turn, ls: list[str], found: _Found, *, mentions: bool = True) -> None:
    """Paths, numbers, issues, directives, identifiers and commands of a turn's lines (each check
    the turn needs once is made once)."""
    message = t.kind == "message"
    few: bool | None = None  # whether the turn states few figures: asked once, when a line has a digit
    for line in ls:
        scrubbed = _URLISH.sub(" ", line) if "://" in line else line
        if "." in scrubbed and ("/" in scrubbed or _PATH_EXT.search(scrubbed)):
            for m in _PATH.finditer(scrubbed):
                p = m.group("p")
                if not _looks_like_version(p):
                    found.add("path", p, t.line)
        if "/" in scrubbed:
            for m in _PATH_NOEXT.finditer(scrubbed):
                found.add("path", m.group("p"), t.line)
        if message and (few is None or few) and _DIGIT.search(scrubbed):
            few = _few_numbers(t) if few is None else few
            for m in _NUMBER.finditer(scrubbed) if few else ():
                found.add("number", m.group("n"), t.line)
        if "#" in line:
            for m in _ISSUE.finditer(line):
                found.add("issue", "#" + m.group("n"), t.line)
        if message:
            _message_anchors(t, line, found, mentions=mentions)


def _message_anchors(t: Turn, line: str, found: _Found, *, mentions: bool = True) -> None:
    """What only a message line holds: the user's directives, identifiers and commands (a
    command in backticks only when ``mentions``: the transcript records no shell runs)."""
    if t.role == "user":
        at = 0
        while m := _DIRECTIVE.search(line, at):  # a directive word inside one that is no directive counts
            ok = _directive(line, m)
            if ok:
                found.add("directive", m.group("d"), t.line)
            at = m.end() if ok else m.start("rest")
    if "`" in line:
        for m in _IDENT.finditer(line):
            ident = m.group("i")
            if "_" in ident or "." in ident or "(" in ident or _CAMEL.search(ident):
                found.add("identifier", ident, t.line)
        for m in _BACKTICK.finditer(line) if mentions else ():
            cmd = _command(m.group(1))
            if cmd:
                found.add("command", cmd, t.line)
    if line.lstrip().startswith("$ "):
        cmd = _command(line.strip()[2:])
        if cmd:
            found.add("command", cmd, t.line)


def _relative_paths(out: list[Anchor]) -> None:
    """One anchor per file: ``./x`` is ``x``, and an absolute path whose tail is another path anchor
    is that file (the relative form is kept: paths are read relative to the repo root)."""
    paths = [a for a in out if a.type == "path"]
    rel = {a.text.removeprefix("./") for a in paths if not a.text.startswith(("/", "~"))}
    seen: set[str] = set()
    for a in paths:
        key = a.text.removeprefix("./")
        absolute = a.text.startswith(("/", "~"))
        shadowed = (
            any(r != key and r.endswith("/" + key.lstrip("~/")) for r in rel) if "/" not in key else False
        )
        if key in seen or shadowed or (absolute and any(key.endswith("/" + r) for r in rel if "/" in r)):
            out.remove(a)
            continue
        seen.add(key)
        if key != a.text:
            out[out.index(a)] = Anchor(a.type, key, a.line, a.superseded)


def _few_numbers(t: Turn) -> bool:
    """A stated figure ("p95 is down to 217 ms") is a fact; a turn full of them is a measurement
    dump (the scan stops at the figure too many)."""
    return (
        sum(1 for _ in itertools.islice(_NUMBER.finditer(t.text, 0, 20_000), MAX_FIGURES + 1)) <= MAX_FIGURES
    )


def _looks_like_version(p: str) -> bool:
    return bool(re.fullmatch(r"v?\d+(?:\.\d+)+", p))


def _decisions(turns: list[Turn]) -> list[Anchor]:
    """Decisions in order; a later reversal replaces the decision it reverses (:class:`Decisions`)."""
    decisions = Decisions(UsedNames(turns))
    for t, ls in _turn_lines(turns, _PROSE_KINDS):
        decisions.feed(t, lines_mod.mentioning(ls, prefilter_for(t))[0])
    return decisions.result()
