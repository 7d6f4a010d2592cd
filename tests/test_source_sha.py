"""Issue 15, fixed cost per session: a finished source file is hashed once, for its entries and
its ledger row alike, and the row's digest is the file's; a summary is copied without deepcopy."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest
from test_crash import backlog

from scribed import config as config_mod
from scribed.core import compact_resume, compact_session
from scribed.core.ledger import source_key
from scribed.core.results import SourceItem
from scribed.core.scribe import Scribe


@pytest.mark.parametrize("ahead", [False, True])
def test_a_finished_file_is_hashed_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ahead: bool) -> None:
    """Once by the core; with the work done ahead of the lock (Scribe.ahead), once more there: the
    lock's check that the file is still the one that work read is that hash."""
    from scribed.core import pool

    monkeypatch.setattr(pool, "wanted", lambda *_a, **_k: [])  # in this process (a worker hashes in its own)
    if not ahead:
        monkeypatch.setattr(Scribe, "ahead", lambda *_a, **_k: None)
    cfg = backlog(tmp_path, 4)
    hashed: Counter[str] = Counter()
    real = compact_session.sha256_prefix

    def spy(path: Path, length: int) -> str:
        hashed[str(path)] += 1
        return real(path, length)

    monkeypatch.setattr(compact_session, "sha256_prefix", spy)
    monkeypatch.setattr(compact_resume, "sha256_prefix", spy)
    s = Scribe(config_mod.load(str(cfg)))
    rep = s.run_once(force=True)
    files = sorted((tmp_path / "md").glob("*.md"))
    rows = {p: s.ledger.source(source_key(p)) for p in files}
    s.close()
    assert rep.compacted == 4
    assert hashed == Counter({str(p): 1 + ahead for p in files})
    for p, row in rows.items():
        assert row is not None and row.sha256 == hashlib.sha256(p.read_bytes()).hexdigest()


def test_a_part_compacted_is_hashed_up_to_its_offset(tmp_path: Path) -> None:
    cfg = backlog(tmp_path, 1)
    p = next((tmp_path / "md").glob("*.md"))
    data = p.read_bytes()
    s = Scribe(config_mod.load(str(cfg)))
    item = SourceItem(p, "markdown", "a0")
    try:
        sessions = s.compactor.sessions
        assert sessions._source_sha(item, 10) == hashlib.sha256(data[:10]).hexdigest()
        assert sessions._source_sha(item, len(data)) == hashlib.sha256(data).hexdigest()
        assert sessions._source_sha(item, len(data) + 5) == hashlib.sha256(data).hexdigest()
        p.write_bytes(data + b"more\n")  # appended: the cached digest is not the new file's
        assert sessions._source_sha(item, len(data)) == hashlib.sha256(data).hexdigest()
        assert sessions._source_sha(item) == hashlib.sha256(data + b"more\n").hexdigest()
    finally:
        s.close()


def test_a_fitted_summary_leaves_the_original_alone() -> None:
    """entry_fit.copy_summary stands for a deep copy: fitting and the guard shorten or extend the copy's
    lists."""
    from scribed.compress.entry_fit import copy_summary
    from scribed.models import Summary

    a = Summary(goal="g", decisions=["x", "y"], files=["f"], key_facts=["k"])
    before = a.model_dump()
    b = copy_summary(a)
    b.decisions.pop()
    b.files.append("z")
    b.key_facts.clear()
    assert a.model_dump() == before
    assert b.model_fields_set == a.model_fields_set
    assert copy_summary(a) == a.model_copy(deep=True)
