"""How a clause of a message is read: whether it adds something (an identifier, content words) and
what it does (asks, offers, says what the user will do himself), from its words and their order.
A user's request (:mod:`scribed.compress.request`), the work he puts off
(:mod:`scribed.compress.deferral`), a directive's object (:func:`acts_on`), an agent's advice
(:func:`advises`) and a to-do's plain words are all read this way, so the reading sits below them.
"""

from __future__ import annotations

import re

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
    "hoped "
    # the message naming its own kind or size ("quick one before standup", "a quick question")
    "quick quickly question"
)
_OUT = FUNCTION_WORDS | _FEEDBACK
ARTICLES = word_set("the a an my our your their his her its every each both another this that these those")
_EVAL_VERBS = word_set(
    "is are was were be been s re look looks looked sound sounds sounded seem seems seemed feel "
    "feels felt reads appear appears work works worked"
)

# --- what a clause adds -------------------------------------------------------------------------------
# A clause adds something when it carries
#
# * an identifier: a path, a number, an issue ``#ref``, a ``--flag``, backticks, ``snake_case`` or
#   ``camelCase``, a dotted name, an URL;
# * or two content words (a verb and its object: "rename the flag", "add tests");
# * or one content word in a noun phrase ("the docs", "our importer") or in a question of three words
#   or more ("why did it fail?").
#
# Content words are what is left once the closed classes of English are taken out (pronouns,
# determiners, auxiliaries, prepositions, conjunctions, particles, degree and time adverbs) with the
# vocabulary of feedback itself: affirmations, evaluations, thanks, greetings, the verbs that only
# move on ("go", "proceed", "keep", "ship"), and the nouns that only point back at what was proposed
# ("the plan", "your suggestion", "the changes"). Three shapes add nothing whatever their words: an
# evaluation (something "looks", "sounds", "is", "works" followed only by such words), a remark
# about the assistant ("you're a …"), and an exclamation ("what a …"). So "carry on" (a verb with a
# particle), "merge it" (a verb with a pronoun: it approves what was proposed) and a single word add
# nothing, while "ok, and then rename the flag" yields "rename the flag". A "quick one before
# standup" adds nothing either: the message naming its own size or kind is feedback vocabulary too.

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


def adds(clause: str, *, question: bool = False) -> bool:
    """Whether one clause adds something (the rule above); ``question``: it ends
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
    if any(words[j] in ARTICLES for j in range(max(0, i - 2), i)):
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


def has_content(clause: str) -> bool:
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


# --- what a clause does -------------------------------------------------------------------------------
# A clause that adds something may still ask for nothing. What it does is read from its structure:
#
# * it asks when it is a question ("can you fix it?", "could you …" without the mark too), an order (a
#   verb first, then what it acts on: "rename the flag", "poll every 2s", "keep Jest 29.7.0"), a
#   prohibition ("don't touch …"), "let's …", "please …", a wish ("I'd like …", "I need …") or says
#   what must be done ("we need to …", "you should …", "the .npmrc should be …");
# * it offers something when it asks nothing and presents a thing ("here's the deploy hook"), makes it
#   depend on the hearer's need ("if you need it", "in case it helps", "you'll need the key"), or
#   marks itself as information in passing (a verbless "for reference", "for your information",
#   "FYI", "by the way", "btw");
# * it says what the user will do himself when "I" comes with "will" or "going to" and a verb that is
#   not a wish ("I'll ask Priya for the grant", "I'll push it after standup").
#
# A message with an offer in it and no clause that asks asks nothing, whatever else it holds (the
# link, the key, the fact it hands over): an FYI never replaces the task. The user's own plan never
# starts a request ("ugh. I'll ask Priya for the grant. carry on with the polling change" asks the
# last).
#
# The kinds :func:`scribed.compress.deferral.clause_kind` gives (putting work off is read there).
ASKS, OFFERS, OWN, TELLS, DEFERS = "asks", "offers", "own", "tells", "defers"
_ASIDE = word_set("fyi btw")  # "for your information", "by the way" as they are abbreviated
_LEADING = _ASIDE | word_set(
    "please pls plz kindly just also then and or so now ok okay oh ah actually maybe first next finally "
    "but yes yeah yep well hey hmm um anyway meanwhile"
)
_POLITE = word_set("please pls plz kindly")
_INVERTED = word_set("can could would will shall do does did")  # "can you …", "would you …"
MUST = word_set("should must ought gotta")
HAVE_TO = word_set("need needs have has got")  # before "to": "we need to …", "you have to …"
_WISH = word_set("want wants need needs like love prefer appreciate wish expect require")
SUBJECTS = word_set("i you we it they he she")
# What an order's verb may be followed by: a determiner or a pronoun (its object), a particle or a
# preposition (its complement), a clause it takes ("check whether …", "make sure …").
_OBJECT_START = word_set(
    "the a an this that these those it them me us him her my our your their its all both each every "
    "some any no another everything anything something what how why whether if which where when sure "
    "up out off down back over away to at with on into through from in about around onto after before "
    "until"
)
_MODEL = re.compile(r"^[A-Za-z]?\d+(?:\.\d+)*[A-Za-z]?$")
FINITE = word_set(
    "is are was were s re am m be will would can could should must may might has have had does did ll d"
)
_NEGATION = word_set("not n't never no")
_FUTURE = word_set("will ll shall")
_NEEDY = word_set("need needs want wants help helps useful handy relevant")
_CONDITIONAL = word_set("if unless whenever should")
MIN_PAST = 4  # "need", "feed", "shed" are no -ed pasts
_MIN_ING = 5  # "bring", "thing" are no -ing forms


def words_of(clause: str) -> tuple[list[str], list[str]]:
    """The clause's words lowercased (contractions split) and as written (for case and identifiers)."""
    low: list[str] = []
    raw: list[str] = []
    for tok in _TOKEN.findall(_CONTRACTION.sub(lambda m: " " + m.group(0).strip("'’"), clause)):
        w = tok.strip(_EDGE)
        if w:
            low.append(w.lower())
            raw.append(w)
    return low, raw


def lead(low: list[str]) -> int:
    """Where the clause starts once its discourse words ("ok", "please", "also", "then") are passed."""
    i = 0
    while i < len(low) - 1 and low[i] in _LEADING:
        i += 1
    return i


def verb_form(w: str) -> bool:
    """A finite verb or an auxiliary: an -ed past, an -s present, "is", "will", "can"."""
    if w in FINITE:
        return True
    past = w.endswith("ed") and not w.endswith("eed") and len(w) > MIN_PAST
    return past or (w.endswith("s") and not w.endswith(("ss", "us")) and w not in FUNCTION_WORDS)


def base_form(w: str) -> bool:
    """Whether a word may be a verb's base form (an order's first word): a plain word outside the
    closed classes and the words of evaluation, not an -ed, -s or -ing form."""
    if not w.isalpha() or w in FUNCTION_WORDS or (w in _FEEDBACK and w not in _ORDER_VERBS):
        return False
    return not (verb_form(w) or (w.endswith("ing") and len(w) > _MIN_ING))


# Verbs of the feedback vocabulary that still give an order when an object follows ("keep Jest
# 29.7.0", "make it LISTEN/NOTIFY", "set it back to 3000", "finish WEB-884").
_ORDER_VERBS = word_set(
    "keep make set finish try start begin move continue carry resume ship wrap retry get go let look update "
    "change call help work point answer"
)


def orders(low: list[str], raw: list[str], i: int, *, strict: bool = False) -> bool:
    """Whether the clause from word ``i`` is an order: a verb's base form, then what it acts on (an
    identifier, a determiner or pronoun, a particle or preposition, a name not followed by a verb of
    its own: "Keep Jest 29.7.0", not "Marcus Chen approves …"), or any plain word when the verb is
    written in lower case mid-message ("ok, write docs"). ``strict`` (an agent's prose, where nouns
    start clauses often): no plain word, and no figure after a word in lower case either ("and
    horizontal space", "burst 20")."""
    if i + 1 >= len(low):
        return False
    if (low[i] == "do" and low[i + 1] in _NEGATION) or low[i] in ("never", "dont"):
        return True  # "don't touch docker-compose.yml", "never push to main"
    if low[i] == "let" and low[i + 1] in ("s", "us", "me"):
        return True
    return base_form(low[i]) and _object_follows(low, raw, i, strict=strict)


def _object_follows(low: list[str], raw: list[str], i: int, *, strict: bool) -> bool:
    """Whether what follows word ``i`` (a verb's base form) is what it acts on (:func:`orders`)."""
    nxt = raw[i + 1]
    if low[i + 1] in ("and", "or") and i + 2 < len(low) and base_form(low[i + 2]):
        return True  # "commit and push after each file compiles"
    if (strict or raw[i][:1].isupper()) and _MODEL.match(nxt):
        return False  # a name and its model, version or figure: "Kraken X60", "Node 20.11.1", "burst 20"
    if low[i + 1] in _OBJECT_START or _identifier(nxt):
        return True
    if nxt[:1].isupper():
        k = i + 1
        while k < len(raw) and raw[k][:1].isupper():
            k += 1
        return k >= len(low) or not verb_form(low[k])
    lower = raw[i][:1].islower() and not strict
    return lower and nxt.isalpha() and not verb_form(low[i + 1]) and low[i + 1] not in _OUT


def _must(low: list[str]) -> bool:
    """A wish or what must be done: "I'd like …", "I need …", "we need to …", "you should …", "the
    config should be …", "can you …", "would you …"."""
    for k, w in enumerate(low):
        nxt = low[k + 1] if k + 1 < len(low) else ""
        after = low[k + 2] if k + 2 < len(low) else ""
        if w in MUST and nxt not in SUBJECTS:  # "should you need them" is a condition
            return True
        if w in HAVE_TO and nxt == "to" and not _NEGATION & set(low[max(0, k - 2) : k]):
            return True  # not "you don't have to ask"
        if w in _INVERTED and nxt == "you":
            return True
        if w == "i" and (nxt in _WISH or (nxt in ("d", "would") and after in _WISH)):
            return True
    return False


def asks(clause: str, *, question: bool = False) -> bool:
    """Whether a clause asks for something (the rule above); ``question``: it ends with "?"."""
    low, raw = words_of(clause)
    if question or clause.rstrip().endswith("?"):
        return True
    if not low:
        return False
    return any(w in _POLITE for w in low) or orders(low, raw, lead(low)) or _must(low)


def advises(sentence: str) -> bool:
    """Whether a sentence of the agent's tells the reader what to do: one of its clauses (not one
    joined by "and") is an order ("consider the route template instead", "run `gh auth login`") or
    says what "you" can or must do ("You'll need to open the PR yourself")."""
    for s, e, _ in clause_spans(sentence):
        low, raw = words_of(sentence[s:e])
        if not low or low[0] in _COORDINATORS:
            continue  # "We'll use X and ensure it's styled …": the verb shares the subject before it
        i = lead(low)
        if orders(low, raw, i, strict=True) or (
            low[i] == "you" and low[i + 1 : i + 2] and low[i + 1] in _MODALS
        ):
            return True  # "consider the route template instead", "you can use Google Fonts"
    return False


_COORDINATORS = word_set("and or but nor then")
_MODALS = word_set("can could may might should must need ll will would d")


def offers(low: list[str], i: int) -> bool:
    """A thing presented ("here's …"), made to depend on the hearer's need ("if you need it", "you'll
    need the key"), or information in passing (a verbless "for reference", "FYI", "btw")."""
    if low[i] == "here" or any(w in _ASIDE for w in low) or "by the way" in " ".join(low):
        return True
    rest = low[i + 1 :]
    if (
        low[i] == "for"
        and 0 < len(rest) <= CONTENT_WORDS
        and rest[-1] not in _OUT
        and rest[0] in ("your", rest[-1])
    ):
        return True  # "for reference", "for your information"
    for k, w in enumerate(low):
        tail = low[k + 1 :]
        if w in _CONDITIONAL or (w == "case" and low[k - 1 : k] == ["in"]):
            if tail[:1] == ["you"] and _needs(tail[1:], then=True):
                return True  # "if you need it", "in case you want to check it", "should you need them"
            if any(x in _NEEDY for x in tail) and all(x in _OUT or x in _NEEDY for x in tail):
                return True  # "in case it helps", "if that's useful"
        elif w == "you" and _needs(tail):
            return True  # "you'll need the stripe key"
    return False


def _needs(tail: list[str], *, then: bool = False) -> bool:
    """Whether the words after "you" say what the hearer will need, not what he must do: "(will)
    need the key", not "need to restart"; ``then``: in a condition, where "(if you) want to look"
    is an offer too."""
    j = 0
    while j < len(tail) and tail[j] in _MAY:
        j += 1
    return len(tail) > j and tail[j] in _NEEDY and (then or tail[j + 1 : j + 2] != ["to"])


_MAY = word_set("will ll may might would d ever do")


def own(low: list[str], i: int) -> bool:
    """What the user will do himself: "I" with "will" or "going to" and a verb that is no wish."""
    if low[i] != "i":
        return False
    j = i + 1
    if low[j : j + 1] and low[j] in _FUTURE:
        j += 1
    elif low[j : j + 2] in (["m", "gonna"], ["am", "gonna"]):
        j += 2
    elif low[j : j + 3] in (["m", "going", "to"], ["am", "going", "to"]):
        j += 3
    else:
        return False
    while j < len(low) - 1 and low[j] in _LEADING:
        j += 1  # "I'll just …", "I'll also …"
    return j < len(low) and low[j] not in _WISH and low[j] not in _NEGATION


def clause_spans(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, ends with a question mark) of each clause of ``text``."""
    spans: list[tuple[int, int, bool]] = []
    at = 0
    for m in _CLAUSE.finditer(text):
        spans.append((at, m.start(), "?" in m.group(0)))
        at = m.end()
    spans.append((at, len(text), False))
    return [(s, e, q) for s, e, q in spans if text[s:e].strip()]
