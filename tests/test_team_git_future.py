"""Stop 49, checked: two clones compacting one session whose time stamps lie past their clocks
date its entry by their own clocks (:mod:`scribed.dates`), so one entry id gets two dates and two
store files (``{date}-{id}.md``) that a merge brings together. The sync holds entries by id: the
next run on either clone keeps one file, the same on both, and neither view ever shows it twice."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

from test_team_git import AGENTS, Clone, clone_pair

SID = "0b7c2f0e-1111-4222-8333-444455556666"


def _transcript(c: Clone) -> None:
    turns = [
        ("user", "Fix the cache key in src/cache.py, see issue #77."),
        ("assistant", "Decision: key the cache by tenant in make_key(), because issue #77 mixes tenants."),
        ("assistant", "Done: make_key() now uses tenant, tests/test_cache.py passes (12 passed)."),
    ]
    recs = [
        {
            "type": role,
            "uuid": f"u{i}",
            "parentUuid": f"u{i - 1}" if i else None,
            "sessionId": SID,
            "timestamp": f"2099-11-04T00:2{i}:08.000Z",  # a VM's wrong clock
            "cwd": "/repo",
            "message": {"role": role, "content": text},
        }
        for i, (role, text) in enumerate(turns)
    ]
    path = c.sources[AGENTS[0]] / f"{SID}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    os.utime(path, (4_100_000_000, 4_100_000_000))  # the same clock wrote the file: the run's clock dates it
    c.cfg.write_text(c.cfg.read_text().replace("[compress]", "[session]\nquiet_seconds = 0\n[compress]"))


def _files(c: Clone) -> list[str]:
    return sorted(p.name for p in (c.dir / ".squad/memory/cold" / AGENTS[0]).glob("*.md"))


def _headings(c: Clone) -> list[str]:
    return re.findall(r"^### .*", (c.dir / ".squad/memory/cold" / f"{AGENTS[0]}.md").read_text(), re.M)


def test_one_session_past_both_clocks_is_one_entry_after_a_merge(tmp_path: Path) -> None:
    a, b = clone_pair(tmp_path, driver=False)
    for c in (a, b):
        _transcript(c)
    a.scribed("run-once")
    a.commit()
    a.push()
    time.sleep(1.1)  # b's clock a second on: its entry of the same turns has another date
    b.scribed("run-once")
    b.commit()
    b.pull("merge")
    assert len(_files(b)) == 2 and len(set(f.rsplit("-e-", 1)[1] for f in _files(b))) == 1  # one id
    b.scribed("run-once")
    b.commit()
    b.push()
    a.pull("merge")
    a.scribed("run-once")
    assert _files(a) == _files(b) and len(_files(a)) == 1
    assert _headings(a) == _headings(b) and len(_headings(a)) == 1
