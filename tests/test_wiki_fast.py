"""The wiki's fast paths give what the slow ones give (issue 15: 100 facts into 10,000 blocks)."""

from __future__ import annotations

import itertools
import random

import pytest

from scribed.compress.reversal_wording import CHANGE, REMOVAL, REVERSAL, may_reverse
from scribed.tiers import wiki_block
from scribed.tiers.wiki_block import _may_reverse

PHRASES = [
    "reverse", "reverses", "reversed", "reversing", "revert", "reverts", "reverted", "reverting",
    "supersede", "superseded", "instead", "no longer", "scrap", "scraps", "scrapped", "rather than",
    "replace", "replaces", "replaced", "replacing", "drop", "drops", "dropped", "dropping", "abandon",
    "abandons", "abandoned", "undo", "undoes", "undone", "retire", "retires", "retired", "scratch",
    "change of plan", "change my mind", "changed our mind", "on second thought", "actually,",
]  # fmt: skip


@pytest.mark.parametrize("phrase", PHRASES)
def test_every_reversal_phrase_passes_the_prefilter(phrase: str) -> None:
    for text in (phrase, phrase.upper(), phrase.title(), f"We {phrase} the m42 queue."):
        assert REVERSAL.search(text), text
        assert _may_reverse(text), text


REMOVALS = [
    "remove", "removes", "removed", "removing", "delete", "deletes", "deleted", "deleting", "rip out",
    "ripped out", "get rid of", "got rid of", "getting rid of", "stop using", "stopped using", "ditch",
    "ditched", "eliminate", "eliminated", "phase out", "phased out",
]  # fmt: skip


@pytest.mark.parametrize("phrase", REMOVALS)
def test_every_removal_phrase_passes_the_prefilter(phrase: str) -> None:
    for text in (phrase, phrase.upper(), phrase.title(), f"We {phrase} the m42 queue."):
        assert REMOVAL.search(text) and may_reverse(text), text
        assert _may_reverse(text), text


CHANGES = [
    "switch the cache from A to B", "switched from A over to B", "moving from A to B", "migrate from A to B",
    "the migration from A to B", "change the store from A to B", "upgrade Python from 3.11 to 3.13",
    "downgraded from 5 to 4", "bump node from 20 to 22", "went from 3 to 4 pods", "swap from A to B",
]  # fmt: skip


@pytest.mark.parametrize("phrase", CHANGES)
def test_every_change_phrase_passes_the_prefilter(phrase: str) -> None:
    for text in (phrase, phrase.upper(), phrase.title(), f"We {phrase} for m42."):
        assert CHANGE.search(text) and may_reverse(text), text
        assert _may_reverse(text), text


def test_prefilter_never_hides_a_match() -> None:
    rng = random.Random(5)
    vocab = [
        *PHRASES,
        *REMOVALS,
        *CHANGES,
        "switch",
        "from",
        "to",
        "keep",
        "the",
        "buffer",
        "m42",
        "Redis",
        "queue",
        "ß",
        "İ",
        "ſcrap",
        ",",
        "\n",
    ]
    for _ in range(3000):
        text = " ".join(rng.choice(vocab) for _ in range(rng.randrange(1, 8)))
        assert _may_reverse(text) or not may_reverse(text), text
        odd = text.replace(" ", rng.choice(["  ", "\n", "\t", " \n "]))  # a phrase's words apart (a review's)
        assert _may_reverse(odd) or not may_reverse(odd), odd


LINES = ["# Wiki: t", "> desc", "", "### A title", "body text", "## Superseded", "## Superseded  ",
         "### B", "*Status:* superseded by x", "#### deep", "##  Superseded", "x ### y", "\r", "### "]  # fmt: skip


def test_plain_split_is_the_fenced_split() -> None:
    rng = random.Random(9)
    for n in itertools.chain(range(6), [20, 40] * 200):
        text = "\n".join(rng.choice(LINES) for _ in range(n)) + rng.choice(["", "\n"])
        assert wiki_block._split_plain(text) == wiki_block._split_fenced(text), repr(text)
