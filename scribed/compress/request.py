"""What a user message asks for: the request it adds, or nothing when it only acknowledges.

A go-ahead ("sounds good, go ahead", "lgtm", "ok, do it") must never become the live hot file's
Current task or an entry's Goal, however it is phrased. No list of phrases can keep up with how
people say it, so the message is judged by what it adds. It is cut into clauses (at punctuation
and at "and", "then", "but"), and a clause adds something when it carries

* an identifier: a path, a number, an issue ``#ref``, a ``--flag``, backticks, ``snake_case`` or
  ``camelCase``, a dotted name, an URL;
* or two content words (a verb and its object: "rename the flag", "add tests");
* or one content word in a noun phrase ("the docs", "our importer") or in a question of three words
  or more ("why did it fail?").

Content words are what is left once the closed classes of English are taken out (pronouns,
determiners, auxiliaries, prepositions, conjunctions, particles, degree and time adverbs) with the
vocabulary of feedback itself: affirmations, evaluations, thanks, greetings, the verbs that only
move on ("go", "proceed", "keep", "ship"), and the nouns that only point back at what was proposed
("the plan", "your suggestion", "the changes"). Three shapes add nothing whatever their words: an
evaluation (something "looks", "sounds", "is", "works" followed only by such words), a remark
about the assistant ("you're a …"), and an exclamation ("what a …"). So "carry on" (a verb with a
particle), "merge it" (a verb with a pronoun: it approves what was proposed) and a single word add
nothing, while "ok, and then rename the flag" yields "rename the flag".
"""

from __future__ import annotations

import re

from scribed.sources.injected import harness

_SLASH = re.compile(r"^/[a-z][\w-]*\b", re.I)


def request_text(text: str) -> str:
    """A user message without slash-command lines, quoted tool output, pasted code blocks and
    pasted lines of code or config (:func:`code_line`)."""
    keep = []
    fence = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fence = not fence
            continue
        if fence or not line or _SLASH.match(line) or line.startswith(">") or code_line(line):
            continue
        keep.append(line)
    return " ".join(keep)


# A statement of code or config: an assignment to one name (``stripe.api_key = "…"``, ``export
# TOKEN=…``), a ``key: value`` whose key is a code name (``heroku_region: eu``, ``"port": 8080,``),
# a line a statement or a block ends or opens (``;``, ``{``, ``}``, a markup tag), or a call or a
# definition alone on its line (``client.connect(timeout=5)``, ``def load(path):``).
_ASSIGNMENT = re.compile(r"^(?:export\s+)?[\w.$\[\]'\"-]+\s*(?:[-+*/|&.]?=|:=)(?!=)\s*\S")
_CODE_KEY = re.compile(r"^[\"']?[\w.-]*[_.\"-][\w.-]*[\"']?\s*:\s+\S|^[\"'][^\"']+[\"']\s*:")
_CODE_END = re.compile(
    r"[;{}]\s*$|^[}\])]|^</?[A-Za-z][\w-]*[\s>/]|^[\w.$]+\([^()]*\)\s*;?$|^\w+\s+[\w.$]+\([^()]*\)\s*:$"
)
_PROSE_RUN = re.compile(r"(?:\b[A-Za-z][a-z']*\b[ ,]+){3}")  # three plain words in a row: a sentence


def code_line(line: str) -> bool:
    """Whether a line of a message is pasted code or config rather than something the user says: a
    statement's shape (above) and no run of three plain words outside its quotes ("Set x = 1 in the
    config and rerun" is a request; ``stripe.api_key = "…"`` is not, whatever it names)."""
    if not (_ASSIGNMENT.match(line) or _CODE_KEY.match(line) or _CODE_END.search(line)):
        return False
    unquoted = re.sub(r"\"[^\"]*\"|'[^']*'|`[^`]*`", " ", line)
    return not _PROSE_RUN.search(unquoted + " ")


def word_set(spec: str) -> frozenset[str]:
    """The words of ``spec``, a space-separated list written as one string, as a set."""
    return frozenset(spec.split())


# The function words of English (its closed classes: pronouns, determiners, auxiliaries,
# prepositions, conjunctions, particles): they hold no request of their own.
FUNCTION_WORDS = word_set(
    # pronouns and pro-forms
    "i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his she "
    "her hers it its itself they them their theirs themselves this that these those who whom whose "
    "which what whatever something anything everything nothing someone anyone everyone one ones same "
    "rest remaining else such "
    # determiners and quantifiers
    "a an the some any no every each all both either neither another other much many more most few "
    "little lot lots bit bunch ton tons several enough "
    # auxiliaries, copulas and modals
    "be am is are was were been being do does did have has had having will would shall should can "
    "could may might must ought gonna wanna "
    # prepositions and conjunctions
    "about above across after against along among around as at before behind below beside between "
    "beyond by down during except for from in inside into like near of off on onto out outside over "
    "past since through till to toward towards under until up upon with within without via per and "
    "or but nor so yet because although though while if unless whether than then "
    # particles and adverbs of degree, time, manner and stance
    "not just only also too very really quite pretty rather even still already again now here there "
    "today tonight tomorrow soon later once ever never always maybe perhaps probably actually "
    "basically literally totally absolutely definitely certainly surely indeed exactly precisely "
    "completely fully entirely well anyway anyhow far ahead away back forward forth how why when "
    "where kinda sorta bunch "
    # contractions' second halves
    "s re ll ve d m t n"
)
# The vocabulary of feedback: affirmations, evaluations, thanks, greetings, moving on, pointing back.
_FEEDBACK = word_set(
    # affirmation, hesitation, interjection
    "yes yeah yea yep yup ya yah aye ok okay okey k kk alright alrighty aight sure right correct true "
    "agreed agree affirmative roger noted understood gotcha got get it's no nope nah hmm hm uh um "
    "oh ah ahh aha wow whoa huh eh please pls plz kindly "
    # evaluation
    "good great nice cool fine perfect awesome excellent amazing wonderful fantastic brilliant "
    "lovely neat solid sweet best better clean helpful useful impressive reasonable sensible happy "
    "glad fair ready done finished complete set "
    # evaluation verbs
    "like likes liked love loves loved enjoy enjoyed appreciate appreciated prefer "
    # thanks and greetings
    "thanks thank thx ty tysm cheers grateful hi hello hey morning afternoon evening night bye "
    "goodbye welcome "
    # perception and working verbs of an evaluation
    "look looks looking looked sound sounds sounded seem seems seemed feel feels felt reads appear "
    "appears work works worked working make makes made sense "
    # verbs that only move on
    "go goes going went proceed proceeding continue continuing carry keep resume move ship let "
    "start begin finish wrap try retry doing "
    # nouns and verbs that point back at what was proposed or said
    "plan plans idea ideas suggestion suggestions approach proposal option options work job stuff "
    "thing things change changes progress way direction call catch point effort help answer "
    "explanation response update updates step steps proposed suggested described mentioned "
    "outlined planned said recommended recommendation discussed needed wanted meant asked expected "
    "hoped"
)
_OUT = FUNCTION_WORDS | _FEEDBACK
_ARTICLES = word_set("the a an my our your their his her its every each both another this that these those")
_EVAL_VERBS = word_set(
    "is are was were be been s re look looks looked sound sounds sounded seem seems seemed feel "
    "feels felt reads appear appears work works worked"
)
_CONNECTIVES = word_set("and then also so now next plus but after afterwards additionally finally")

# Split a message into clauses: at sentence punctuation (not inside a token such as ``a.py``), at a
# dash between words, and before the conjunctions that join a go-ahead to a request.
_CLAUSE = re.compile(r"[,;:!?…]+(?=\s|$)|\.+(?=\s|$)|\s[-–—]+\s|(?<=\s)(?=(?:and|then|but)\b)", re.IGNORECASE)
_TOKEN = re.compile(r"\S+")
_CONTRACTION = re.compile(r"n['’]t\b|['’](?:s|re|ll|ve|d|m)\b", re.IGNORECASE)
_IDENT = re.compile(r"\d|[/\\`#@_]|^--?[a-z]|\w\.\w|::|\(\)|https?:", re.IGNORECASE)
_SCORE = re.compile(r"^(?:\+\d{1,3}|\d{1,3}%)$")  # "+1", "100%": a score given, not a thing named
_IDENT_CASED = re.compile(r"[a-z][A-Z]")
_EDGE = ".,;:!?()[]{}<>\"'`*_~…“”‘’"  # stripped from a word before it is looked up
MIN_QUESTION_WORDS = 3
CONTENT_WORDS = 2


def _identifier(token: str) -> bool:
    """Whether a raw token is shaped like a name of something: a path, a number, a ref, code."""
    core = token.strip(".,;:!?…")
    if not core or _SCORE.match(core):
        return False
    if _IDENT_CASED.search(core):
        return True
    return bool(_IDENT.search(core.lower() if core.isupper() else core))


def _plain_words(clause: str) -> list[str]:
    """The clause's words, lowercased, contractions split ("that's" -> "that", "s")."""
    out: list[str] = []
    for tok in _TOKEN.findall(_CONTRACTION.sub(lambda m: " " + m.group(0).strip("'’"), clause)):
        w = tok.strip(_EDGE).lower()
        if any(c.isalpha() for c in w):  # an emoji or a lone symbol is no word
            out.append(w)
    return out


def _adds(clause: str, *, question: bool = False) -> bool:
    """Whether one clause adds something (the rule of the module docstring); ``question``: it ends
    with a question mark."""
    raw = _TOKEN.findall(clause)
    if any(_identifier(t) for t in raw):
        return True
    words = _plain_words(clause)
    if not words or _no_content_shape(words):
        return False
    content = [i for i, w in enumerate(words) if w not in _OUT]
    if len(content) >= CONTENT_WORDS:
        return True
    if not content:
        return False
    i = content[0]
    if any(words[j] in _ARTICLES for j in range(max(0, i - 2), i)):
        return True  # a noun phrase: "the docs", "our importer", "a new endpoint"
    return question and len(words) >= MIN_QUESTION_WORDS


_ACRONYM = re.compile(r"^[A-Z][A-Z0-9]{2,}s?$|^[A-Z][a-z]+[A-Z]\w*$")  # "CORS", "URLs", "TypeScript"


def acts_on(text: str, *, subject: bool = False) -> bool:
    """Whether ``text`` (what follows a directive word) names an action on something: an identifier,
    or a verb with its object (two content words: "push to main", "change this file"). Less is said
    of something else, not asked of the agent ("don't plant themselves", "never mind").

    ``subject``: a subject other than the user or the agent comes before the directive word ("It
    must be insured", "I don't see the date"): a statement about that subject, which is a rule of
    the project only when it names a thing of the project (an identifier, an acronym, a code name).
    """
    toks = [t.strip(_EDGE) for t in _TOKEN.findall(text)]
    if any(_identifier(t) or _ACRONYM.match(t) for t in toks if t):
        return True
    return not subject and sum(w not in FUNCTION_WORDS for w in _plain_words(text)) >= CONTENT_WORDS


def _content(clause: str) -> bool:
    """Whether a clause holds any content word or identifier (a trailing "thanks!" holds none)."""
    return any(map(_identifier, _TOKEN.findall(clause))) or any(w not in _OUT for w in _plain_words(clause))


def _no_content_shape(words: list[str]) -> bool:
    """An evaluation, a remark about the assistant, or an exclamation: they add nothing."""
    if words[0] == "you" and len(words) > 1 and words[1] in _EVAL_VERBS:
        return True  # "you're a …", "you are the …"
    if words[0] in ("what", "how") and len(words) > 1 and words[1] in ("a", "an"):
        return True  # "what a …"
    for i, w in enumerate(words):
        if w in _EVAL_VERBS and i > 0:
            return all(x in _OUT for x in words[i + 1 :])  # "<anything> looks/is/works <feedback>"
    return False


def _clauses(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, ends with a question mark) of each clause of ``text``."""
    spans: list[tuple[int, int, bool]] = []
    at = 0
    for m in _CLAUSE.finditer(text):
        spans.append((at, m.start(), "?" in m.group(0)))
        at = m.end()
    spans.append((at, len(text), False))
    return [(s, e, q) for s, e, q in spans if text[s:e].strip()]


def request(text: str) -> str:
    """The request a user message adds: from its first clause that adds something to its last clause
    holding a content word (after an acknowledgement, without the connectives that joined them: "and
    then", "also"; a closing "thanks!" dropped); ""
    when it adds nothing (an acknowledgement, a
    go-ahead, a greeting, a bare slash command) or is harness text."""
    if harness(text):
        return ""
    body = request_text(text)
    clauses = _clauses(body)
    first = next((k for k, (s, e, q) in enumerate(clauses) if _adds(body[s:e], question=q)), None)
    if first is None:
        return ""
    last = max(k for k, (s, e, _) in enumerate(clauses) if k == first or (k > first and _content(body[s:e])))
    start, end = clauses[first][0], clauses[last][1]
    end = _sentence_end(body, end)
    out = body[start:end].strip()
    if start == 0:
        return out  # the message is the request from its first word: as the user wrote it
    words = out.split()
    while len(words) > 1 and words[0].lower().strip(",;:") in _CONNECTIVES:
        words.pop(0)  # "ok, and then rename the flag" -> "rename the flag"
    out = " ".join(words)
    return out[:1].upper() + out[1:]


def _sentence_end(text: str, end: int) -> int:
    """``end`` moved past the punctuation that closes its clause (a question keeps its "?")."""
    while end < len(text) and text[end] in ".!?)\"'”’":
        end += 1
    return end


def substantive(text: str) -> bool:
    """Whether a user message states a task (see :func:`request`)."""
    return bool(request(text))
