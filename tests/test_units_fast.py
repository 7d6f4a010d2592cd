"""The speed paths of ``compress.units`` (issue 15) give the same results, bit for bit, as the plain
code they replaced: a character class that differs, or a float summed in an order that follows the
hash seed, would move ties between key points and change entries."""

from __future__ import annotations

import math
import random

from scribed.compress import content, selection, tool_lines, units
from scribed.compress import tokens as tokens_mod
from scribed.compress.tokens import Vocab
from scribed.compress.units import Unit

_CHARS = "ab#-_./:\\@()$019²٣xéZ"


def _token_weight_ref(tok: str) -> float:
    """``tokens_mod.token_weight`` as it was: one Python-level check per character."""
    if tok.startswith(("#", "-")) or any(c in tok for c in "_./:\\@()$"):
        return 3.0
    if tok[:1].isdigit():
        return 1.5
    if any(c.isdigit() for c in tok):
        return 2.0
    return 0.6 if len(tok) >= tokens_mod.WORD_CHARS else 0.2


def test_token_weight_equals_the_per_character_checks() -> None:
    rng = random.Random(15)
    for _ in range(20000):
        tok = "".join(rng.choice(_CHARS) for _ in range(rng.randint(0, 7)))
        assert tokens_mod.token_weight(tok) == _token_weight_ref(tok), tok


def _vocab(n: int) -> Vocab:
    """A vocabulary whose ids 0..n-1 are the tokens ``tok0``..``tok{n-1}``."""
    v = Vocab()
    assert v.of(" ".join(f"tok{i}" for i in range(n))) == tuple(range(n))
    return v


def _gain_ref(sel: selection.Selection, u: Unit, order: list[int] | None = None) -> float:
    """``_Selection.gain`` written plainly: the exact sum of the uncovered tokens' weights (in
    ``order`` when given, else the set's), then the power."""
    toks = order if order is not None else list(u.tokens)
    g = math.fsum([sel.weights[t] for t in toks if t not in sel.have])
    return float(u.weight * g / (u.size**0.75))


def test_gain_is_the_exact_sum_in_any_token_order() -> None:
    """The score must not depend on the set's iteration order (the hash seed): a plain ``sum``
    in another order gives other last bits, so other ties and other entries between runs."""
    rng = random.Random(7)
    vocab = list(range(60))
    pool = [
        Unit("x" * 20, i, 1, "prose", rng.choice([0.12, 0.3, 1.0, 1.25, 1.5]),
             tuple(rng.sample(vocab, rng.randint(1, 12))), rng.randint(15, 480))
        for i in range(300)
    ]  # fmt: skip
    weights = selection.weights(pool, _vocab(60))
    sel = selection.Selection(pool, weights, set(), 10_000)
    for step in range(40):
        for u in pool:
            shuffled = sorted(u.tokens, key=lambda _: rng.random())
            assert sel.gain(u) == _gain_ref(sel, u) == _gain_ref(sel, u, shuffled)  # exact in any order
        sel.have.update(rng.sample(vocab, 2 if step % 3 else 0))


def _tool_units_ref(text: str) -> list[tuple[str, str]]:
    """``units._tool_result`` as it was: every line of an output that may hold an error is judged."""
    b = units._Builder()
    lines = [ln for ln in (x.strip() for x in text.splitlines()) if ln]
    last = len(lines) - 1
    maybe = units.may_hold_error(text)
    for i, ln in enumerate(lines):
        head_or_tail = i < tool_lines.TOOL_HEAD_LINES or i > last - tool_lines.TOOL_TAIL_LINES
        err = units.error_in_line(ln) if maybe else None
        if err:
            b.add(err, 1, "error", 1.0)
        elif i == last and tool_lines.RESULT.search(ln) and not tool_lines.LOG.search(ln):
            if tool_lines.names_something(ln):  # a tally or a tool's acknowledgement names nothing
                b.add(ln, 1, "result", 0.5)
        elif (
            head_or_tail
            and not tool_lines.NOISE.search(ln)
            and not tool_lines.ELIDED.match(ln)
            and tool_lines.names_something(ln)
        ):
            b.add(ln, 1, "tool", 0.12)
    return [(u.text, u.kind) for u in b.units]


def test_a_long_tool_output_keeps_every_error_line_the_plain_loop_kept() -> None:
    """Past its head, only the lines the error prefilter finds are judged: the units must be the
    ones judging every line gives (errors at line edges, next to blank lines and 'E  ' lines)."""
    from scribed.models import Turn

    rng = random.Random(25)
    pieces = [
        "ok: step done with value 12", "Error: cannot open config.toml", "E   AssertionError: 1 != 2",
        "E", "E  x", "  ", "", "FAILED tests/test_a.py::test_b - boom", "exited with code 3",
        "npm ERR! missing script", "INFO Error: ignored", "plain line about parser_state", "ValueError",
        "Traceback (most recent call last):", "KeyError: 'k'", "wrote 3 files", "panic: oh no here",
    ]  # fmt: skip
    for n in range(300):
        text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(1, 160)))
        b = units._Builder()
        units._tool_result(b, Turn("tool", text, kind="tool_result", line=1))
        assert [(u.text, u.kind) for u in b.units] == _tool_units_ref(text), n


def test_whitespace_normalising_equals_the_regex() -> None:
    """``anchors._norm`` (``str.split`` in C) is ``re.sub(r"\\s+", " ", s)`` on every character."""
    import re

    from scribed.compress import anchors

    for c in range(0x110000):
        s = f"a{chr(c)}b"
        assert anchors._norm(s) == re.sub(r"\s+", " ", s), hex(c)
    for s in ["", " ", "\n\t ", " a ", "a  b\n", "\u2028x\u00a0", "x\x1c"]:
        assert anchors._norm(s) == re.sub(r"\s+", " ", s), repr(s)


def test_sentence_score_equals_the_case_insensitive_patterns() -> None:
    """ASCII sentences are lowercased and matched by the patterns without re.IGNORECASE: the score
    must be the one the case-insensitive patterns give, on mixed case and at word edges."""
    from scribed.compress import extractive as x

    assert all(p.pattern == p.pattern.lower() for p in x._FOLDED), "an uppercase literal never matches"

    def ref(s: str) -> float:
        out = 2.0 * bool(x._OUTCOME.search(s)) + 2.0 * bool(x._FIX.search(s)) + bool(x._KNOWLEDGE.search(s))
        out += 0.5 * ("`" in s or "/" in s) + 0.5 * bool(x._FIGURE.search(s))
        return out - 2.0 * bool(x._CHATTER.match(s)) - (len(s) > x.MAX_SENTENCE_CHARS)

    words = [
        "Fixed",
        "RESOLVES",
        "root",
        "cause",
        "Done",
        "green",
        "Must",
        "NEVER",
        "turns",
        "out",
        "Okay",
        "Let",
        "me",
        "OPENED",
        "a",
        "PR",
        "merged",
    ]
    words += ["prefixed", "undone", "x/y", "`a`", "12ms", "#4", "Kelvin", "ſure", "okay,", "_must"]
    rng = random.Random(3)
    for _ in range(5000):
        s = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        s = "".join(c.upper() if rng.random() < 0.2 else c for c in s)
        assert x.score(s) == ref(s), s


def test_the_error_prefilter_never_matches_across_a_line_end() -> None:
    """``tool_lines.error_candidates`` scans stripped, non-empty lines joined by newlines: a prefilter
    match spanning two of them would hide the line it starts on. Its one pattern with whitespace
    (``E\\s\\s``) needs two whitespace characters in a row, which joined stripped lines never hold."""
    from scribed.compress import errors

    lines = ["a line ending in E", "next line", "E", "x", "FAIL", "ED twice", "exi", "t 3"]
    text = "\n".join(lines)
    for m in errors._MAYBE.finditer(text):
        assert "\n" not in m.group(), m.group()
    assert "\\s" not in errors._MAYBE.pattern.replace(r"E\s\s", ""), "a new pattern may span lines"


def test_tool_output_noise_and_elision_prefilters_keep_the_per_line_result() -> None:
    """The per-line noise and elision checks run only when the output holds their words: the
    units must be the ones checking every line gives, elided lines in every case included."""
    from scribed.models import Turn

    rng = random.Random(26)
    pieces = [
        "DEBUG pool: 3 workers", "step TRACE id=9", "[8033 lines truncated] ...", "... 12 more lines",
        "(output truncated after 400 bytes)", "Content OMITTED for brevity", "12 rows hidden",
        "5 items not shown", "... (4 more)", "...  3,000 more", "plain line about parser_state",
        "résumé of 3 files written", "2 MORE LINES TRUNCATED", "debug is fine in lowercase",
        "Elided: 20 chars", "more to come in the next step", "wrote 3 files", "ok: cache warm",
    ]  # fmt: skip
    for n in range(400):
        lines = rng.randint(1, 3) if n % 2 else rng.randint(1, 90)  # short: one elision word alone
        text = "\n".join(rng.choice(pieces) for _ in range(lines))
        b = units._Builder()
        units._tool_result(b, Turn("tool", text, kind="tool_result", line=1))
        assert [(u.text, u.kind) for u in b.units] == _tool_units_ref(text), n


def _add_ref(b: units._Builder, text: str, line: int, kind: str, weight: float) -> None:
    """``_Builder.add`` as it was: every text normalised and looked up (and, since issue 30, a
    sentence or list item that names nothing dropped)."""
    if len(text) < units.MIN_UNIT_CHARS or weight <= 0:
        return
    text = " ".join(text.split())
    n = len(text)
    if n < units.MIN_UNIT_CHARS or n > units.MAX_UNIT_CHARS:
        return
    toks = b.seen.get(text)
    if toks is None:
        toks = b.seen[text] = b.vocab.of(text)
        if toks and not text.islower():
            b.camel |= units._camel_bonus(text)
    elif kind == "tool":
        return
    if not toks or (kind in ("prose", "item") and content.content_free(text)):
        return
    if units._CHATTER.match(text):
        weight *= 0.3
    size = (n if text.isascii() else len(text.encode())) + 3
    b.units.append(Unit(text, len(b.units), line, kind, weight, toks, size))


def test_a_repeated_tool_line_is_dropped_as_before_and_other_repeats_kept() -> None:
    rng = random.Random(29)
    texts = ["ok fine", "  run   pytest -q now ", "run pytest -q now", "a" * 500, "Parser state ok", "x" * 12]
    for n in range(300):
        new, ref = units._Builder(), units._Builder()
        for _ in range(rng.randint(1, 40)):
            args = (
                rng.choice(texts),
                1,
                rng.choice(["tool", "prose", "item", "tool"]),
                rng.choice([0.0, 0.12, 1.0]),
            )
            new.add(*args)
            _add_ref(ref, *args)
        assert [(u.text, u.kind, u.weight) for u in new.units] == [
            (u.text, u.kind, u.weight) for u in ref.units
        ], n


def _tokens_ref(text: str) -> frozenset[str]:
    """``tokens_mod.tokens`` as it was: every token stripped and filtered in Python, per call."""
    found = dict.fromkeys(t.strip(tokens_mod.EDGE) for t in tokens_mod.TOKEN.findall(text.lower()))
    return frozenset(
        t
        for t in found
        if (len(t) >= tokens_mod.MIN_TOKEN_CHARS or t[:1].isdigit() or t[:1] == "#")
        and t not in tokens_mod._STOP
    )


def test_tokens_equal_the_plain_filter_with_the_cache_full_or_not(monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    rng = random.Random(27)
    alphabet = "aB1#-_./:\\@()$ ~,%:;xyzQ9 \t\n"
    words = ["about", "Parser", "--dry-run", "#412", "v1.2.3.", "src/app.py:", "::", "a.b", "x", "12ms"]
    texts = [
        " ".join(rng.choice(words) if rng.random() < 0.5 else "".join(rng.choices(alphabet, k=rng.randint(1, 9)))
                 for _ in range(rng.randint(0, 14)))
        for _ in range(3000)
    ]  # fmt: skip
    for size in (tokens_mod.ACCEPTED_MAX, 7):
        monkeypatch.setattr(tokens_mod, "ACCEPTED_MAX", size)
        tokens_mod.ACCEPTED.clear()
        for text in texts:
            assert tokens_mod.tokens(text) == _tokens_ref(text), text
        assert len(tokens_mod.ACCEPTED) <= size


def _run_ref(sel: selection.Selection, candidates: list[Unit]) -> None:
    """``_Selection.run`` as it was: every score recomputed when it comes up."""
    import heapq

    heap = [(-sel.gain(u), u.pos) for u in candidates]
    heapq.heapify(heap)
    while heap and sel.left > selection.MIN_ROOM:
        _, pos = heapq.heappop(heap)
        u = sel.units[pos]
        if u.size > sel.left or (u.kind == "code" and u.size > sel.code_left):
            continue
        g = sel.gain(u)
        if g <= 0:
            continue
        if heap and g < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-g, pos))
            continue
        if selection.near_duplicate(u, sel.by_token):
            continue
        sel.take(u)


def test_selection_reusing_current_scores_picks_what_recomputing_picks() -> None:
    rng = random.Random(28)
    vocab = list(range(80))
    for n in range(60):
        pool = [
            Unit("x" * 20, i, 1, rng.choice(["prose", "tool", "code"]), rng.choice([0.12, 0.3, 1.0, 1.5]),
                 tuple(rng.sample(vocab, rng.randint(1, 10))), rng.randint(15, 300))
            for i in range(rng.randint(1, 250))
        ]  # fmt: skip
        budget = rng.randint(50, 20_000)
        weights = selection.weights(pool, _vocab(80))
        new = selection.Selection(pool, weights, set(), budget)
        new.run(list(pool))
        ref = selection.Selection(pool, weights, set(), budget)
        _run_ref(ref, list(pool))
        assert [u.pos for u in new.chosen] == [u.pos for u in ref.chosen], n


def test_a_long_raw_token_is_judged_but_not_kept() -> None:
    """A pasted blob must not stay in the process's token cache after its session (review)."""
    blob = "q" * (tokens_mod.ACCEPTED_CHARS + 1)
    short = "w" * tokens_mod.ACCEPTED_CHARS
    tokens_mod.ACCEPTED.clear()
    assert tokens_mod.tokens(f"{blob} {short}") == {blob, short}
    assert blob not in tokens_mod.ACCEPTED and short in tokens_mod.ACCEPTED


def test_errors_in_turn_reads_only_the_lines_its_prefilter_finds() -> None:
    """``errors_in_turn`` looks only at lines the prefilter finds something in: the errors must be
    the ones reading every line gives, for tool output and (strict) assistant prose, with
    ``E  `` runs spanning line ends, other line breaks, repeats and empty lines."""
    from scribed.compress import errors
    from scribed.models import Turn

    def reference(turn: Turn) -> list[str]:
        strict = turn.role == "assistant" and turn.kind == "message"
        out: dict[str, None] = {}
        for line in turn.text.splitlines():
            if e := errors.error_in_line(line, strict=strict):
                out.setdefault(e)
        return list(out)

    rng = random.Random(41)
    pieces = [
        "ok", "", "E", "E  ", "  x", "E   AssertionError: boom", "KeyError: 'k'", "error: cannot open x",
        "main.go:4:2: undefined: Foo", "a.c:1:2: error: bad", "FAILED tests/t.py::x - boom", "exit code 2",
        "Process exited with code 1", "INFO error: none", "panic: nil map", "npm ERR! code E404", "\r", "\u2028",
        "ValueError", "see the Error docs", "--- FAIL: TestX (0.01s)",
    ]  # fmt: skip
    for _ in range(3000):
        text = rng.choice(["\n", "\n\n", " \n"]).join(rng.choice(pieces) for _ in range(rng.randrange(1, 12)))
        for role, kind in (("tool", "tool_result"), ("assistant", "message"), ("user", "message")):
            turn = Turn(role, text, kind)  # type: ignore[arg-type]
            assert errors.errors_in_turn(turn) == reference(turn), (role, text)
