"""An index over one topic's blocks, so merging a fact costs a few lookups, not a scan.

Merging looks for three things: duplicates (same normalised text, or token sets at least
``NEAR_DUP`` alike), what a ``supersedes`` names (:func:`same_fact`) and what reversal wording
reverses (:func:`reversal_score`). Scanning every block for each new fact made promotion
quadratic. The index answers each question with a *superset* of the blocks that can match, found
through postings (normalised text → blocks, token → blocks, term → blocks; the counting filter for the Jaccard
thresholds); the caller then applies the exact same test to those few, in block order, so the
result is the one a scan gives.

A fact saying an earlier one again with another figure or the opposite (:func:`restated`) is
found by its words instead: each block is posted under the shapes a statement covering it has
(``restate.Statement.shapes``), the newest RESTATED_CANDIDATES of each kept in the answer.

Counting filter: a token set with Jaccard ≥ t to ``A`` holds ``need`` ≥ t·|A| of ``A``'s tokens,
so at least one of any ``|A| - need + 1`` of them: the index looks up the rarest.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Iterable

from scribed.compress.restate import statement
from scribed.compress.reversal import least, probes
from scribed.compress.terms import CONTAINED_CHARS, NEAR_DUP, SAME_FACT_SHARE, claim, norm, term_set
from scribed.tiers.wiki_block import Block

EXTRA = 2  # postings counted beyond the least needed (see holding)
RESTATED_CANDIDATES = 16  # the newest blocks of one statement shape a restatement is tested against


def _one_apart_upto() -> int:
    """The most tokens a text may have for all its near-duplicates to be at most one token apart
    from it (one token more, one less, or the same set): ``c / (c + 2) < NEAR_DUP`` for every
    ``c`` up to it, computed as :meth:`Block.is_dup` computes a Jaccard."""
    n = 0
    while (n + 1) / (n + 3) < NEAR_DUP:
        n += 1
    return n


# Near-duplicates of a text of at most ONE_APART tokens are found by signature (the XOR of its
# token hashes, and of it with one token taken out): a few dict lookups, where scanning the
# postings of its rarest tokens grew with the wiki (a bounded vocabulary repeats every word).
ONE_APART = _one_apart_upto()
POSTED_FROM = least(ONE_APART + 1, NEAR_DUP)  # fewest tokens of a near-duplicate of a longer text
_FEW_TOKENS = 2  # a contained text of this many tokens may start or end inside a word


def _inner(toks: list[str]) -> str:
    """One token of a text that any text containing it holds whole: the longest inner token."""
    return max(toks[1:-1], key=len)


class BlockIndex:
    """Postings over the blocks of one doc, in doc order; catches up with appended blocks."""

    def __init__(self) -> None:
        self._reset(None)

    def _reset(self, src: list[Block] | None) -> None:
        self.src = src
        self.blocks: list[Block] = []
        self.pos: dict[int, int] = {}
        self.exact: defaultdict[str, list[Block]] = defaultdict(list)  # norm(text) → blocks
        # (token, how many tokens) → (block, its text's tokens): near-duplicates have alike sizes
        self.text_tokens: defaultdict[tuple[str, int], list[tuple[Block, frozenset[str]]]] = defaultdict(list)
        self.tok_n: dict[str, int] = {}  # token → posted blocks holding it (which tokens are rare)
        # signature of a text's token set (``_sig``) → (block, tokens), and of the set less one
        # token; most signatures are one block's, so a second one goes to ``more`` (no list each)
        self.sig: dict[int, tuple[Block, frozenset[str]]] = {}
        self.sig_less: dict[int, tuple[Block, frozenset[str]]] = {}
        self.more: defaultdict[tuple[bool, int], list[tuple[Block, frozenset[str]]]] = defaultdict(list)
        self.names: defaultdict[str, list[Block]] = defaultdict(list)  # norm(text|title) → blocks
        self.tokens: defaultdict[str, list[Block]] = defaultdict(list)  # any token of text|title
        self.inner: defaultdict[str, list[Block]] = defaultdict(list)  # one inner token of text|title
        self.short: list[Block] = []  # text or title of ≤ 2 tokens, long enough to be "contained"
        self.terms: defaultdict[str, list[Block]] = defaultdict(list)  # term_set of the claim
        self.sized: defaultdict[tuple[str, int], list[Block]] = defaultdict(list)  # (term, how many)
        self.term_sets: dict[int, set[str]] = {}  # id(block) → its terms (to check a candidate)
        self.refs: dict[str, int] = {}
        self.reversing: list[tuple[str, int, Block]] = []  # (date, position) of blocks with reversal wording
        self.rev_ids: set[int] = set()
        self.probe_of: dict[int, list[tuple[frozenset[str], int, int]]] = {}
        self.named_upto = 0  # blocks in names/tokens/inner/short so far
        self.terms_upto = 0  # blocks in terms/sized so far
        self.shaped: defaultdict[str, list[Block]] = defaultdict(list)  # a statement's shape → blocks
        self.covered: defaultdict[str, list[Block]] = defaultdict(list)  # a covering one's shape → blocks
        self.stated_upto = 0  # blocks in shaped/covered so far

    def sync(self, blocks: list[Block]) -> BlockIndex:
        """Index the blocks appended since the last call (all of them for another list)."""
        if blocks is not self.src or len(blocks) < len(self.blocks):
            self._reset(blocks)
        for b in blocks[len(self.blocks) :]:
            self._add(b)
        return self

    def _add(self, b: Block) -> None:
        """What every merge asks about: same text, near-duplicates, refs and reversing blocks. The
        postings only some merges need (names, terms) are built on first use."""
        self.pos[id(b)] = len(self.blocks)
        self.blocks.append(b)
        n, toks = b.key()
        self.exact[n].append(b)
        pair = (b, toks)
        size = len(toks)
        if size <= ONE_APART + 1:  # the near-duplicate of a text signatures find
            hashes = [hash(tok) for tok in toks]
            sig = 0
            for h in hashes:
                sig ^= h
            first, less, more = self.sig, self.sig_less, self.more
            if first.setdefault(sig, pair) is not pair:
                more[False, sig].append(pair)
            for h in hashes:
                if less.setdefault(sig ^ h, pair) is not pair:
                    more[True, sig ^ h].append(pair)
        if size >= POSTED_FROM:  # the near-duplicate of a longer text
            tok_n, postings = self.tok_n, self.text_tokens
            for tok in toks:
                postings[tok, size].append(pair)
                tok_n[tok] = tok_n.get(tok, 0) + 1
        self.note_refs(b.refs)
        self.note_reversing(b)

    def _signed(self, less: bool, sig: int) -> list[tuple[Block, frozenset[str]]]:
        """The (block, tokens) with this signature (of their set less one token: ``less``)."""
        first = (self.sig_less if less else self.sig).get(sig)
        if first is None:
            return []
        return [first, *self.more.get((less, sig), ())]

    def _sync_names(self) -> None:
        for b in self.blocks[self.named_upto :]:
            seen: set[str] = set()
            for name in {b.key()[0], norm(b.title)}:
                self.names[name].append(b)
                words = name.split()
                for tok in set(words) - seen:
                    self.tokens[tok].append(b)
                seen |= set(words)
                if len(words) > _FEW_TOKENS:
                    _once(self.inner, _inner(words), b)
                elif len(name) >= CONTAINED_CHARS and (not self.short or self.short[-1] is not b):
                    self.short.append(b)
        self.named_upto = len(self.blocks)

    def _sync_terms(self) -> None:
        postings, sized, sets = self.terms, self.sized, self.term_sets
        for b in self.blocks[self.terms_upto :]:
            text = b.text
            terms = term_set(claim(text) if "**" in text else text)  # a claim is a **What:** field
            sets[id(b)] = terms
            size = len(terms)
            for tok in terms:
                postings[tok].append(b)
                sized[tok, size].append(b)
        self.terms_upto = len(self.blocks)

    def _sync_statements(self) -> None:
        for b in self.blocks[self.stated_upto :]:
            st = b.stated()
            if st is not None:
                self.shaped[st.shape].append(b)
                for shape in st.shapes:
                    self.covered[shape].append(b)
        self.stated_upto = len(self.blocks)

    def note_refs(self, refs: Iterable[str]) -> None:
        """Entry ids a block now names (it was added, or gained a source)."""
        for r in refs:
            self.refs[r] = self.refs.get(r, 0) + 1

    def note_reversing(self, b: Block) -> None:
        """Record a block that reverses others (added, or given a ``supersedes`` by a merge)."""
        if b.reverses_any() and id(b) not in self.rev_ids:
            self.rev_ids.add(id(b))
            bisect.insort(self.reversing, (b.date, self.pos[id(b)], b), key=lambda r: (r[0], r[1]))

    def ordered(self, found: Iterable[Block]) -> list[Block]:
        uniq = {id(b): b for b in found}
        return sorted(uniq.values(), key=lambda b: self.pos[id(b)])

    # --- questions ---------------------------------------------------------------------------
    def dups(self, n: str, toks: frozenset[str]) -> list[Block]:
        """Blocks that may be near-duplicates of a text (normalised ``n``, tokens ``toks``)."""
        found = list(self.exact.get(n, ()))
        if len(toks) <= ONE_APART:  # the same set, one token more or one less
            sig = _sig(toks)
            found += [b for b, _ in self._signed(False, sig)]
            found += [b for b, _ in self._signed(True, sig)]
            for tok in toks:
                found += [b for b, bt in self._signed(False, sig ^ hash(tok)) if bt < toks]
            return self.ordered(found)
        # A near-duplicate B holds ``need`` of the tokens at least, so one of the ``len - need + 1``
        # rarest (any will do; the rarest, counted over all sizes with one lookup a token, keep
        # the scan short); and |A|/|B| ≥ Jaccard ≥ NEAR_DUP bounds its size.
        need = least(len(toks), NEAR_DUP)
        sizes = range(need, int(len(toks) / NEAR_DUP) + 2)
        postings = self.text_tokens
        tok_n = self.tok_n
        rare = sorted(toks, key=lambda tok: tok_n.get(tok, 0))
        for tok in rare[: len(rare) - need + 1]:
            for k in sizes:
                got = postings.get((tok, k))
                if got:
                    found += [b for b, bt in got if len(bt & toks) >= need]
        return self.ordered(found)

    def _sharing(self, toks: Iterable[str], t: float) -> list[Block]:
        """Blocks whose tokens may be at least ``t`` Jaccard-alike with ``toks`` (they hold
        ``t·|toks|`` of them at least)."""
        uniq = set(toks)
        return holding(self.tokens, uniq, least(len(uniq), t), extra=0)

    def named(self, ref: str) -> list[Block]:
        """Blocks whose text or title ``same_fact(ref, …)`` may hold for."""
        a = norm(ref)
        if not a:
            return []
        self._sync_names()
        words = a.split()
        found = [*self.names.get(a, ()), *self._sharing(words, SAME_FACT_SHARE)]
        if len(a) >= CONTAINED_CHARS and len(words) <= _FEW_TOKENS:
            # ref inside a block's text, where it may start or end inside a word (longer refs: the
            # block holds all of ref's inner tokens, which _sharing's count already admits)
            found += self.blocks
        for tok in set(words):  # a block's text inside ref
            found += self.inner.get(tok, ())
        found += self.short
        return self.ordered(found)

    def restating(self, text: str) -> list[Block]:
        """Blocks ``text`` may say again with another figure or the opposite (:func:`restated`): the
        newest of those its words cover."""
        st = statement(claim(text) if "**" in text else text)
        if st is None:
            return []
        self._sync_statements()
        return self.covered.get(st.shape, [])[-RESTATED_CANDIDATES:]

    def restated_by(self, older: Block) -> list[Block]:
        """Blocks that may say ``older`` again with another figure or the opposite: the newest of
        those whose words cover it."""
        st = older.stated()
        if st is None:
            return []
        self._sync_statements()
        return [b for shape in st.shapes for b in self.shaped.get(shape, [])[-RESTATED_CANDIDATES:]]

    def reversed_by(self, text: str) -> list[Block]:
        """Blocks ``reversal_score(text, block.text)`` may be above 0 for."""
        found: list[Block] = self.restating(text)
        pr = probes(text)
        if pr:
            self._sync_terms()
        for terms, need, most in pr:
            if most and need == len(terms):  # all of a few terms, in a short fact
                tok = min(terms, key=lambda t: len(self.terms.get(t, ())))
                sets = self.term_sets
                for k in range(1, most + 1):  # those holding them all (scoring costs more than this)
                    found += [b for b in self.sized.get((tok, k), ()) if terms <= sets[id(b)]]
            else:
                found += holding(self.terms, terms, need, sets=self.term_sets)
        return self.ordered(found)

    def reversing_since(self, date: str, older: Block) -> list[Block]:
        """Blocks with reversal wording dated ``date`` or later that may reverse ``older``, in doc
        order: by their ``supersedes`` (for the exact test to decide), or by what their wording
        needs the reversed fact to hold (the probes, kept per block)."""
        i = bisect.bisect_left(self.reversing, date, key=lambda r: r[0])
        terms: set[str] | None = None
        found = [b for b in self.restated_by(older) if b.date > date]  # same day: the one added last wins
        for _, _, b in self.reversing[i:]:
            if b.supersedes:
                found.append(b)
                continue
            if terms is None:
                terms = term_set(claim(older.text))
            if any(
                len(want & terms) >= need and (not most or len(terms) <= most)
                for want, need, most in self._probes(b)
            ):
                found.append(b)
        return self.ordered(found)

    def _probes(self, b: Block) -> list[tuple[frozenset[str], int, int]]:
        got = self.probe_of.get(id(b))
        if got is None:
            got = self.probe_of[id(b)] = probes(b.text)
        return got


def holding(
    postings: dict[str, list[Block]],
    terms: Iterable[str],
    need: int,
    extra: int = EXTRA,
    sets: dict[int, set[str]] | None = None,
) -> list[Block]:
    """The blocks that may hold ``need`` of ``terms`` (a superset, from the rarest postings).

    One that does misses at most ``len(terms) - need`` of them, so it holds ``1 + j`` of the
    ``len(terms) - need + 1 + j`` rarest, for any ``j < need``: counting hits over ``extra`` more
    postings than the least needed keeps out blocks that share a single common word (worth it
    where checking a candidate costs more than counting, as scoring a reversal does).

    With ``sets`` (each block's terms), exactly the blocks holding ``need`` of ``terms``, checked
    against the rarest postings alone: counting over more postings made each lookup scan the long
    postings of common terms, which grow with the wiki."""
    uniq = set(terms)
    rare = sorted(uniq, key=lambda tok: len(postings.get(tok, ())))
    if not rare or need < 1:
        return []
    if sets is not None:
        picked = rare[: len(rare) - need + 1]
        seen: set[int] = set()
        out = []
        for tok in picked:
            for b in postings.get(tok, ()):
                if id(b) not in seen:
                    seen.add(id(b))
                    if len(sets[id(b)] & uniq) >= need:
                        out.append(b)
        return out
    j = min(extra, need - 1)
    picked = rare[: len(rare) - need + 1 + j]
    if j == 0:
        return [b for tok in picked for b in postings.get(tok, ())]
    hits = Counter(id(b) for tok in picked for b in postings.get(tok, ()))
    keep = {i for i, n in hits.items() if n > j}
    return [b for tok in picked for b in postings.get(tok, ()) if id(b) in keep]


def _sig(toks: Iterable[str]) -> int:
    """A token set's signature: the XOR of the tokens' hashes, so one taken out is one XOR more
    (two sets with one signature are rare, and the caller's exact test tells them apart)."""
    out = 0
    for tok in toks:
        out ^= hash(tok)
    return out


def _once(index: defaultdict[str, list[Block]], tok: str, b: Block) -> None:
    posting = index[tok]
    if not posting or posting[-1] is not b:
        posting.append(b)
