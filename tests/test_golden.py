"""Golden output: the extractive pipeline's cold entries for a fixed generated backlog, byte for byte.

Speed work (issue 15) must not change a single output byte. The hash below was recorded from the
code before that work; a change that alters any entry (an anchor found or lost, a key point
ranked differently, a byte of rendering) fails here. If an output change is intended, record the
new hash in the same commit and say why.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

import gen  # noqa: E402

from scribed import config as config_mod  # noqa: E402
from scribed.core.scribe import Scribe  # noqa: E402

# sha256 over every cold file (name + bytes), recorded at c6c6d22 (before issue 15's speed work) as
# 26e2fddc…; re-recorded when the key-point pool shrank on purpose (issue 15: a tool-output line
# repeated in the session is one unit, and 50/20 head/tail lines per tool output instead of 150/50),
# and again when key-point scores became exact sums (math.fsum): before, a score's last bits
# followed the hash seed, so the same backlog gave different entries in different processes.
# Re-recorded at stop 24: a file read's line numbers ("   57→ return x") are no longer part of a
# tool-output key point (a reader has no use for them, and "return x" read twice is now one unit);
# and again when the guard began cutting the goal and outcome to make room for a missing anchor
# (two generated entries: recall 0.79 -> 1.00 and 0.77 -> 0.92, their goals shorter), then
# when that cut was undone where it would drop an anchor the goal held (one entry keeps its
# directive whole and does not gain a figure).
# Re-recorded for issue 30 (what a user message adds decides the goal): a later message that is a
# paste with one identifier ("Here is what I have locally: SHOP_CURSOR_KEY=…") is no longer a second
# goal ("· then: Here is what I have locally: …"), so four goals lose that tail and their "·…"; the
# bytes it freed go to key points (one code line more in each of those entries) and the user's line
# moves from the goal to Key facts.
# Re-recorded again for issue 30 (the outcome is the session's conclusion, in whole sentences): the
# agent-written hot file's entry took as outcome the last three sentences of its notes, run together
# ("DONE: bump the reports client timeout assistant: Summary of where this stands. Open item: …
# assistant: Done: the reports change is in and all tests pass."); it is now its last "Done:" line
# ("Done: the reports change is in and all tests pass."), and the bytes freed hold one more key point.
# The generated backlog keeps no plans, so the plan sections (Progress, plan open items) do not show.
# Issue 30 (content): a sentence or list item that names nothing is no key point ("Looking into
# the cause.", "Noting this for later.", "Checked the options." were 45 of the 102 lines that
# changed), and a unit's speaker prefix ("user: ") is not one of its tokens, so "user: It is
# related to #8878 too." no longer counts as new next to a goal that says the same; the bytes
# freed go to the next-ranked units (code lines naming identifiers, in this generated backlog).
# Then errors → fixes (issue 30 part 5): a fix sentence that names nothing ("Looking into the
# cause.") is no fix, so six generated errors get the later "Fixed: the root cause was …" line;
# errors stay while the entry is within the guard's cap, so three entries list their files as
# restored "path:" facts instead and one keeps its error with its fix instead of a bare "error:".
# (Both recorded on h30b; merged with h30a's two above, the tree differs from h30a's by those
# changes only: 159 lines, checked with `python tests/test_golden.py DIR` on both.)
# Then issue 30 part 6 (prose facts): a goal the heading holds whole is not printed again under
# Goal (one generated hot file's "\# Current work"); a goal and outcome that crowd out the key
# points of a small entry keep their most informative whole sentences within the heading (two
# goals lose "It is related to #… too." or a "Please don't …" sentence, which come back as key
# points); names, dates and quantities weigh like figures; the heading's title is counted at its
# real length (50 lines of the backlog changed).
# Then a sentence that names only the message's own kind ("Progress update.", "Summary of where this
# stands.": the generator's assistant notes) is filler: 24 such key points go, and the bytes go to
# the next-ranked units (generated code and tool-output lines; three tool lines are displaced by
# the reshuffle: "LOG_LEVEL=debug", "reap: tidy search batch handling", "return retry_3"). The
# label, directive and pasted-code changes before it left this output as it was.
# Then a key point that repeats what another section of the entry holds (Jaccard >= 0.7 with an
# open item, a decision, the outcome: "TODO: bump the billing client timeout" under Key points
# next to "bump the billing client timeout" under Open items; "Final decision: cap cache batches
# at 3967 rows per request." next to the decision) is an echo and goes (16 lines); the bytes go
# to the next-ranked units (code and tool-output lines of the generated backlog).
# Then the provenance line prints no defaults (issue 30 part 6: it took ~330 of a 600-byte entry):
# no "turns N", no "compressor=extractive", no "recall=1.00" (49 bytes); the compressor's estimate
# of an entry's fixed cost falls by as much (460 -> 415), so every entry's key points get those
# bytes: more code and tool-output lines, and two errors come back with their fixes under Errors →
# fixes instead of as bare "error:" Key facts.
# Re-recorded for issue 31's keyed content ids: every entry's id is now made from its redacted turns
# (e-64a647beece5 -> e-dd9938c3c178 for md-3-0000), and the hot entry's session id and sha256 are
# keyed (hot-c44f10c68e3f -> hot-c939fb01f8a8 under the zero key); those 25 provenance lines are the
# only change (the trees diffed equal with ids, hot- ids and sha256= values masked).
# Both, merged (issue 30 on h30b, issue 31's ids on main): the merged tree equals h30b's with ids,
# hot- ids and sha256= values masked.
# Then tool-output listings (a newcomer's demo entry had 37 "tests/…::test_case_0NN PASSED [ N%]"
# lines as key points): lines of one tool output sharing a shape once their numbered words are
# masked, three or more of them, are a listing whose first line stands for the rest across the
# session (`tool_lines.shape`). In the generated backlog the listings are pip's "Collecting X==v"
# lines, JSON "sha256": … rows and "return retry_3" code lines; their bytes go to the next-ranked
# units (diffs' hunk headers, "Installing collected packages: …"). bench/quality.py --sessions 96
# --seed 1 gives the same recall; bench/realdata.py on the dev set: scribed/head ≥ 16 KB
# 1.546 -> 1.539, ratio p50 0.098 unchanged, 0 mid-token cuts.
# Then Reusable knowledge (what promotion files as wiki patterns) is a lesson, not a report of work:
# a sentence needs a lesson's word ("root cause", "because", "turns out", "must", …) and something
# it is about, and one already paired with its error under Errors → fixes is not said again. The
# generated entries lose "Done: bump the invoices client timeout", "TODO: …", "(next to Fixes
# #1234 …)" and their fix sentences from the section (16 sections go); the bytes go to key points.
# bench/quality.py --sessions 96 --seed 1: weighted recall 0.984 -> 0.985; bench/realdata.py:
# scribed/head >= 16 KB 1.539 -> 1.542, ratio p50 0.098, 0 cuts.
# Then listings in messages too: a message's lines sharing a shape (3 or more) keep their first
# line, as tool output's do (a newcomer's demo entry was 46 of 51 key points of a pasted diff's
# hunk headers and `return legacy_response(value_N)` lines). In the generated backlog, pasted
# diffs' numbered `x = self.f(0)` lines go from their paragraphs (52 lines changed); the bytes go
# to the user's lines and directives. bench/realdata.py: scribed/head >= 16 KB 1.542 -> 1.546,
# ratio p50 0.099; bench/quality.py weighted recall 0.985; bench/convo.py 0.354 (unchanged).
# Stop 40: an error the fit dropped and the guard restored under Key facts is a `fixed:` fact (not
# `error:`, which the hot seed lists as a blocker) when its error line named a fix: three such lines
# in two entries; and a tool line with no informative word (a progress run `FFssFs..`, a rule of
# `=`, numbers alone) is no unit: two entries keep other numbered code lines of one listing.
# bench/realdata.py figures unchanged; bench/quality.py weighted recall 0.985 (unchanged).
# Stop 41: a goal is never a markdown heading: the agent-written hot file's entry was titled
# "# Current work" (its notes' heading) and is now titled by the first request in them, which moves
# three key points into the Goal. Every transcript's entry is byte-identical.
# Then a decision said again with another figure supersedes the earlier one: the agent-written hot
# file's notes (several generated sessions) decide "cap cache batches at 2035 rows per request",
# later "… at 3967 rows …", which now reads "cap cache batches at 3967 rows per request (supersedes:
# cap cache batches at 2035 rows per request)" instead of both standing as current (in its entry and
# the digest folding it); a key point repeating a decision is judged an echo of it without its
# supersedes note, and one code line gives way to another. Every transcript's entry is
# byte-identical to stop 42's before the change (07a84fc…).
# Re-recorded at stop 43 (errors and junk): a tool-output line that names nothing (a test run's
# tally "=== 221 passed in 20.91s ===", "collected 55 items", "done in 3.2s", "Migrated 4
# revisions.", a JSON field's value, a commit's "Date:" line) or that is a runner's progress
# ("tests/search/test_shard.py ..... [ 21%]") is no key point; the bytes go to the next-ranked
# code lines (diff hunks, log.debug calls). Lost with them: pip's "Collecting pydantic==2.27.4" and
# "Installing collected packages: …" (plain words). One error's fix changes from the user's request
# "Please fix the reports tenant bug from #2427." (a fix said of another issue) to the assistant's
# "Fixed: the checksum was computed before gzip; it passes now."
# Then (a review's) a version ("Collecting pydantic==2.27.4") and a commit's short hash ("9f8e7d6c5b4a
# merge branch 'main'") name something again: those lines come back, four code lines give way.
# Re-recorded at stop 44 (tool boilerplate): pytest's header ("platform linux -- Python 3.11.9,
# pytest-8.3.3, pluggy-1.5.0", "configfile: pyproject.toml", "plugins: anyio-4.6.0, cov-5.0.0": 76
# lines), a failure section's title between rules ("____ test_token ____": 18), an Edit's
# confirmation ("The file pkg/webhooks/worker.py has been updated.": 8) are no key points; a shell
# call's key point is its command without the tool's name (66 "`shell rg -n 'x' src`", "`Bash cat
# .env.local && git log -1`" read "`rg -n 'x' src`", or go, covered by the Commands section). The
# bytes go to the next-ranked units: code lines (diff hunks, assignments, log.debug calls) and a few
# sentences. No section other than Key points changes.
GOLDEN = "9285444eb2b8856f7b1d085210e03bb367d73668fd656a8b84e8aaacb4724b8f"
SESSIONS = 24


def _hot_text() -> str:
    """An agent-written hot file: several generated sessions' plain text, as notes."""
    parts = [s.plain for s in gen.iter_sessions(7, 4, min_kb=20, max_kb=60, formats=("markdown",))]
    return "# Current work\n\n" + "\n\n".join(parts)


def build(root: Path) -> Path:
    """A root holding the backlog (transcripts inside it, so provenance paths are relative) and a hot file."""
    transcripts = root / "transcripts"
    for s in gen.iter_sessions(3, SESSIONS, min_kb=2, max_kb=240):
        gen.write_session(s, transcripts)
    hot = root / ".squad/memory/hot/data.md"
    hot.parent.mkdir(parents=True)
    hot.write_text(_hot_text(), encoding="utf-8")
    ts = datetime(2026, 11, 5, 12, 0, tzinfo=UTC).timestamp()
    os.utime(hot, (ts, ts))
    return transcripts


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted((root / ".squad/memory/cold").glob("*.md")):
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def run(root: Path) -> str:
    transcripts = build(root)
    cfg = config_mod.from_dict(
        {
            "root": str(root),
            "session": {"quiet_seconds": 0},
            "compress": {"backend": "extractive"},
            "log": {"format": "json", "level": "error"},
            "sources": gen.sources(transcripts),
        }
    )
    scribe = Scribe(cfg, rand=bytes)  # a fixed content key (zeros): the hot entry's ids are keyed
    try:
        rep = scribe.run_once(force=True)
    finally:
        scribe.close()
    assert rep.failed == 0
    assert rep.compacted == SESSIONS + 1  # every session and the hot file
    return digest(root)


@pytest.mark.parametrize("seed", ["0", "1"])
def test_extractive_output_is_byte_identical(tmp_path: Path, seed: str) -> None:
    # A fresh process per hash seed: the entries must not depend on it (set iteration order
    # follows the seed; a pool's workers and a rerun each get their own).
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(Path(__file__).resolve()), str(tmp_path / "squad")]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == GOLDEN


if __name__ == "__main__":  # print the hash of a run in the folder given (to record it)
    from scribed import log

    log.configure("json", "error")
    print(run(Path(sys.argv[1])))


def test_prefilters_never_skip_a_match() -> None:
    """Each anchor prefilter is a superset of the patterns it guards, on generated lines and on
    the characters re.IGNORECASE folds to ASCII (İ ı ſ K)."""
    import random

    from scribed.compress import anchors as a
    from scribed.compress import decisions as d
    from scribed.compress import errors
    from scribed.compress import lines as lines_mod

    lines = [ln for s in gen.iter_sessions(5, 6, min_kb=4, max_kb=40) for ln in s.plain.splitlines()]
    rng = random.Random(5)
    odd = [
        "Decısion: use X",
        "we ſtill need to ship",
        "TODO: fix İt",
        "Done: retry",
        "- [X] done item",
        "→ decided: Y",
        "Scratch that. We should use Redis",
        "E   AssertionError: x",
        "npm ERR! code 1",
        "exited with code 2",
        "  ● Table › sorts by due date",
        " FAIL  src/a.test.ts > Table > sorts",
        "   ❯ src/a.test.ts > Table > sorts",
        "    ✕ sorts (18 ms)",
        "Tests:       1 failed, 6 passed, 7 total",
        "could not create pull request: HTTP 401: Bad credentials",
        "< HTTP/1.1 502 Bad Gateway",
        "curl: (7) Failed to connect",
    ]
    words = "decision decided go with scratch actually, todo fixme done finished complete next step follow-up"
    for _ in range(400):
        w = rng.sample(words.split(), 3)
        lines.append(
            rng.choice(["", "→ ", "é "]) + " ".join(x.upper() if rng.random() < 0.3 else x for x in w)
        )
    for line in [*lines, *odd]:
        if d._DECISION.search(line) or d._DECISION_VERB.search(line) or d._DECISION_MORE.search(line):
            assert lines_mod.mentions(d.WORDS, line), line
        if a._TODO_OPEN.search(line) or a._TODO_DONE.search(line) or a._TODO_DONE_SUFFIX.match(line):
            assert lines_mod.mentions(a._TODO_ANY, line), line
        if a._PATH.search(line):
            assert "." in line and ("/" in line or a._PATH_EXT.search(line)), line
        e = errors._PYTEST_E.sub("", errors._LEAD.sub("", line.strip()))
        if errors._EXC.match(e):
            assert errors._MAYBE_EXC.search(line), line
        if errors._EXC.match(e) or errors._GENERIC.match(e) or errors._EXIT.search(e):
            assert errors._MAYBE.search(line), line
        if errors._TEST_FAIL.match(e) or errors._HTTP.match(e):
            assert errors._MAYBE.search(line), line


def test_clip_tool_output_keeps_what_the_whole_text_scan_kept() -> None:
    """The word prefilter of clip_tool_output finds the same error lines as _ERROR_LINE over the whole
    middle, also for the characters re.IGNORECASE folds to ASCII (İ ı ſ K) and lines it truncates."""
    import random

    from scribed.sources import common as c

    def reference(middle: str) -> list[str]:
        out: list[str] = []
        for m in c._ERROR_LINE.finditer(middle):
            start = middle.rfind("\n", 0, m.start()) + 1
            end = middle.find("\n", m.end())
            line = middle[start : end if end >= 0 else len(middle)].strip()
            if line not in out:
                out.append(line)
        return out

    frags = [
        "Traceback (most recent call last)",
        "ValueError",
        "valueerror: x",
        "error: bad",
        "ERROR[E0308]: m",
        "npm ERR! x",
        "FAILED",
        "fail:",
        "panicked at",
        "E   assert",
        "e  x",
        "Segmentation fault",
        "ſegmentation fault",
        "exıt code 1",
        "exit status 2",
        "exited with code -3",
        "İndexError",
        "Fatal:",
        "KeyException",
        "plain words",
        "exit 0",
        "  ",
        "\n",
        "\n",
        "İ",
        "ß",
        "x" * 450,
        "non-zero exit",
        "é",
        " FAIL  a.test.ts > T > x",
        "  ● T › x",
        "   ❯ a.test.ts > T > x",
        "    × sorts",
        "✕ Sorts",
        " Tests  1 failed | 2 passed (3)",
        "HTTP/1.1 500 Internal",
        "Http 401: no",
        "curl: (22) x",
    ]
    rng = random.Random(7)
    for _ in range(3000):
        middle = "".join(
            rng.choice(frags) + rng.choice([" ", "\n", "", "é"]) for _ in range(rng.randint(1, 40))
        )
        assert list(dict.fromkeys(c._error_lines(middle))) == reference(middle), middle
