"""What promotion keeps out of the wiki: progress reports, chatter, fragments and non-fixes.

A cold entry's sections are extracted from a live session, so they carry what an agent said on
the way: "The tests passed.", "Here's the fix:", "I'll fix the type error …". None of it is
durable knowledge, and a wiki that fills with it hides the facts that are. These rules are
conservative: a line that also says why or how ("because", "root cause", "always", …) stays.

* :func:`is_progress`: a report of where the work stands ("All tests passed successfully!",
  "The fix is working!", "The error should be resolved now.").
* :func:`is_chatter`: the agent talking to the user about what it is doing or about to show
  ("Here's the fix:", "Let's break down the problem", "I'll need to see …").
* :func:`is_heading`: a label ("Additional Fixes").
* :func:`is_fragment`: a piece of a sentence, not a statement: an unbalanced backtick or double
  quote ("70fa175` (the license commit)"), or a start that continues something before it.
* :func:`classify` and :func:`directive_topic`: the topic a kept line goes to.
* :func:`fix_of`: the fix an ``error → fix`` line names, or "" when it names none ("unresolved",
  a promise to fix, a progress report).
"""

from __future__ import annotations

import re

# Where the work stands, stated near the start of a short line.
_PROGRESS = re.compile(
    r"^\W*(?:(?:done|finished|completed|merged|shipped|landed|deployed|released|green)\b"
    r"|(?:all |the |both )?(?:[\w-]+ )?(?:unit |integration )?tests? (?:now |all |still )?(?:pass|passed|passes|"
    r"are passing|ran|succeeded|are green)\b"
    r"|(?:it |everything |this |that )?works now\b"
    r"|[\s+*-]*\[[xX]\]\s"
    r"|(?:the |this |that |it |everything |all )?(?:[\w-]+ )?(?:fix|fixes|change|changes|error|errors|issue|"
    r"problem|build|bug|app|widget|it|everything)\s+(?:is |are |has been |have been |should be |seems |now |"
    r"now is |is now |should now be |are now )+(?:\W*\s*)?(?:now |fully |all )?(?:working|works|resolved|fixed|"
    r"gone|green|passing|verified|done|complete))",
    re.I,
)
# The agent narrating its own work to the user.
_CHATTER = re.compile(
    r"^\W*(?:first,?\s+|now,?\s+|next,?\s+|ok(?:ay)?,?\s+|great,?\s+|perfect[,!]?\s+)?"
    r"(?:here(?:'s| is| are)\b|let's\b|let me\b|i'll\b|i will\b|i've\b|i have\b|i need\b|i should\b|i fixed\b|"
    r"we need to\b|you can\b|you may need\b|please note\b|just reply\b|after making these changes\b|"
    r"(?:this|these changes|that) should (?:fix|resolve|help)\b|to (?:help )?(?:fix|identify|resolve)\b|"
    r"they provided\b|looking at the error\b)",
    re.I,
)
# Narration is knowledge only when it gives a reason ("Let's fix this by … only …" is narration).
_REASON = re.compile(r"\b(?:because|root cause|caused by|the cause)\b", re.I)
# A progress report that says why or how is knowledge.
_WHY = re.compile(
    r"\b(?:because|root cause|caused by|fix(?:ed)? by|always|never|must|only|requires?|cannot|convention|"
    r"pattern|avoid|prefer)\b",
    re.I,
)
# Narration that states a rule is one ("To fix flaky tests, always inject the clock", "You can only
# call the billing API from the worker"; found by review); "only" alone is narration's word too.
_RULE_WORD = re.compile(r"\b(?:always|never|must|can only|cannot|the rule|convention)\b", re.I)
_CODE_SPAN = re.compile(r"`[^`]*`")
HEADING_WORDS = 3  # a line this short without code or a sentence end is a label
# Not "." (".env files are never committed") nor a trailing "in"/"on" ("Users must be logged
# in", "Keep the flag turned on"): real rules start and end so (found by review).
_CONTINUES = re.compile(r"^(?:[)\]},;:…]|(?:and|or|but|nor|which|whereas)\s)", re.I)
_DANGLES = re.compile(r"\s(?:and|or|but|the|an?|to|for|with|of)$", re.I)
_UNRESOLVED = re.compile(r"^\W*unresolved\b", re.I)
_RECURRED = re.compile(r"\s*\(after it recurred\)\s*$")
_EMPTY_ERROR = re.compile(r"^[\w.\[\] -]*:\s*\W*(?:none|null|undefined|n/a)?\W*$", re.I)


def is_progress(text: str) -> bool:
    """A report of where the work stands, unless it also says why or how."""
    return bool(_PROGRESS.match(text)) and not _WHY.search(text)


def is_chatter(text: str) -> bool:
    """The agent talking about its own work ("Here's the fix:", "Let's …", "I'll …"), unless it
    gives a reason."""
    body = text.strip()
    return bool(_CHATTER.match(body)) and not (_REASON.search(body) or _RULE_WORD.search(body))


def is_heading(text: str) -> bool:
    """A label rather than a statement: three words or fewer, no code, no sentence end
    ("Additional Fixes"), and no rule in it ("Always use pnpm", "Use UTC everywhere" are rules)."""
    short = len(text.split()) <= HEADING_WORDS and not re.search(r"[.!?`/=]", text)
    return short and not _WHY.search(text) and not re.match(r"\W*(?:use|keep|pin|prefer)\b", text, re.I)


def is_fragment(text: str) -> bool:
    """A piece of a sentence: an unbalanced backtick or double quote, or a start that continues
    something before it (a closing bracket, a comma, "and …"), or an end that stops mid-clause
    ("… for added fiber and")."""
    return unbalanced(text) or bool(_CONTINUES.match(text.strip()) or _DANGLES.search(text.strip()))


def cut_off(text: str) -> bool:
    """A decision's fragment: unbalanced, or a start that continues something before it (its end
    is not judged: "Users must be logged in" ends on a preposition)."""
    return unbalanced(text) or bool(_CONTINUES.match(text.strip()))


def unbalanced(text: str) -> bool:
    """An odd backtick or double quote: a piece cut out of a longer text ("70fa175` (the license
    commit)"); a quote inside a code span (`\"`) is code, not a quotation."""
    plain = text.replace("```", "")
    return bool(plain.count("`") % 2 or _CODE_SPAN.sub("", plain).count('"') % 2)


def fix_of(fix: str) -> str:
    """The fix an ``error → fix`` line names, or "" when it names none: "unresolved", a promise
    ("I'll fix the type error …"), a progress report ("The fix is working!") or chatter."""
    fix = _RECURRED.sub("", fix).strip()
    if not fix or _UNRESOLVED.match(fix) or is_fragment(fix):
        return ""
    if is_progress(fix) or is_chatter(fix):
        return ""
    return fix


def names_an_error(error: str) -> bool:
    """Whether an error text says what went wrong: not "Error: (none)", nor a status alone (`exit
    status 1`, `npm ERR! code 2`: any failure's, so a fix paired with it would be read as the fix
    of every failure that exits so)."""
    text = error.strip().strip("`")
    return not _EMPTY_ERROR.match(text) and not set(_WORD.findall(text.lower())) <= _STATUS_WORDS


_WORD = re.compile(r"[a-z]+")
_STATUS_WORDS = frozenset(
    [
        "exit",
        "exited",
        "exits",
        "status",
        "code",
        "with",
        "process",
        "returned",
        "non",
        "zero",
        "error",
        "err",
        "npm",
        "command",
        "failed",
        "the",
    ]
)


# --- topics ------------------------------------------------------------------------------------
_MUST_NOT = re.compile(r"\b(?:must not|mustn't|may not|cannot|can't|can not)\b", re.I)
_CONVENTION = re.compile(r"\b(?:always|never|must|conventions?)\b", re.I)
_CONSTRAINT = re.compile(r"\b(?:limits?|limited|only|requires?|required)\b", re.I)
_CONTRACT = re.compile(r"\b(?:APIs?|endpoints?|schemas?|contracts?|interfaces?|returns?)\b", re.I)
# How a rule starts. "don't see the date", "don't like the bold" are what a user says of themselves
# ("I don't …": the directive anchor starts at "don't"), not rules.
_RULE_START = re.compile(
    r"\W*(?:please\s+)?(?:(?P<no>do not|don't|avoid|refrain from)|make sure to|rather you)\b"
    r"(?!\s+(?:see|like|want|know|think|have|need|understand|get|care|mind|believe|feel|mean|agree|"
    r"remember|recall|seem|really)\b)",
    re.I,
)
_CODEISH = re.compile(r"`[^`]*`|\S*/\S*")


def classify(text: str) -> str:
    """The topic a reusable-knowledge item belongs to (see the module docstring).

    Code spans and paths are not prose: ``/v2/limits`` says nothing about a limit.
    """
    text = _CODEISH.sub(" ", text)
    if _MUST_NOT.search(text):
        return "constraints"
    if _CONVENTION.search(text):
        return "conventions"
    if _CONSTRAINT.search(text):
        return "constraints"
    if _CONTRACT.search(text):
        return "contracts"
    return "patterns"


def directive_topic(directive: str) -> str:
    """A user's rule is a convention or a constraint: the keywords decide; one they miss that
    starts as a rule does ("do not add it as a vendordep" is a constraint, "make sure to …" a
    convention); anything else is not a rule ("")."""
    if directive.rstrip().endswith(":"):
        return ""  # it introduces what follows ("Do not guess the path. Just put this code …:")
    topic = classify(directive)
    if topic in ("conventions", "constraints"):
        return topic
    m = _RULE_START.match(directive)
    if not m:
        return ""
    return "constraints" if m.group("no") else "conventions"
