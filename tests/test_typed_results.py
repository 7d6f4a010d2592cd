"""Issue 14: the core's writes return typed records, not dicts, and no ``Any`` leaks from a public
function of ``scribed.core``, ``scribed.tiers`` or the tier features (``curate``, ``recall``, ``squad``) except the ones listed here, each with its reason."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
from collections.abc import Iterator

import scribed.core
import scribed.curate
import scribed.recall
import scribed.squad
import scribed.tiers
from scribed.core.results import (
    FactReport,
    FactResult,
    InboxApplied,
    InboxQuarantined,
    InboxResult,
    PinnedFact,
    PromotedEntry,
    ReviewItem,
)

_LEDGER = "a ledger row, one key per SQLite column"
_AUDIT = "an audit-log line, a JSON object read back as written"
_PROPOSAL = "a proposal's fact as the proposals JSON file stores it"
_REPORT = "scribed report's JSON document"
_SYNC = "the team sync's state file (.scribed/cold-sync.json), a JSON object read back as written"
LEFT = {
    "scribed.core.wikisync.sync:state": _SYNC,
    "scribed.core.sync_state.load_state:return": _SYNC,
    "scribed.core.sync_state.save_state:state": _SYNC,
    "scribed.core.ledger.Ledger.add_entry:fields": _LEDGER,
    "scribed.core.ledger.Ledger.add_entries:rows": _LEDGER,
    "scribed.core.ledger_rebuild.rebuild_rows:return": _LEDGER,
    "scribed.core.import_units.Unit.ledger_row:return": _LEDGER,
    "scribed.core.status.LedgerStatus.__init__:retrying": _LEDGER,
    "scribed.tiers.audit.AuditLog.append:records": _AUDIT,
    "scribed.tiers.audit.append:rows": _AUDIT,
    "scribed.tiers.audit.read:return": _AUDIT,
    "scribed.tiers.audit.history:return": _AUDIT,
    "scribed.tiers.wiki.AuditSink.append:records": _AUDIT,
    "scribed.curate.review.fact_dict:return": _PROPOSAL,
    "scribed.curate.review.fact_of:data": _PROPOSAL,
    "scribed.curate.review.Proposal.__init__:fact": _PROPOSAL,
    "scribed.recall.report.build:return": _REPORT,
    "scribed.recall.report.markdown:data": _REPORT,
    "scribed.recall.report.chart:data": _REPORT,
}
_ANY = re.compile(r"\bAny\b")


def _public_annotations() -> Iterator[tuple[str, str]]:
    for pkg in (scribed.core, scribed.tiers, scribed.curate, scribed.recall, scribed.squad):
        for info in pkgutil.iter_modules(pkg.__path__):
            mod = importlib.import_module(f"{pkg.__name__}.{info.name}")
            for name, obj in vars(mod).items():
                if name.startswith("_") or getattr(obj, "__module__", None) != mod.__name__:
                    continue
                funcs = [(name, obj)] if inspect.isfunction(obj) else []
                if inspect.isclass(obj):
                    funcs += [
                        (f"{name}.{k}", v)
                        for k, v in vars(obj).items()
                        if inspect.isfunction(v) and (not k.startswith("_") or k == "__init__")
                    ]
                for qual, f in funcs:
                    for arg, ann in inspect.get_annotations(f).items():
                        yield f"{mod.__name__}.{qual}:{arg}", str(ann)


def test_no_any_leaks_from_public_functions_but_the_listed_ones() -> None:
    found = {key for key, ann in _public_annotations() if _ANY.search(ann)}
    assert found - LEFT.keys() == set(), "a new Any in a public signature: type it, or list it with why"
    assert LEFT.keys() - found == set(), "typed now: drop it from LEFT"


def test_records_print_the_keys_the_dicts_printed() -> None:
    plain = FactReport("ops", "note", "Cron", "added", "Cron")
    assert list(plain.to_json()) == ["topic", "kind", "title", "action", "block"]
    rev = FactReport("ops", "decision", "Cron", "added", "Cron", "old", ("Old",), "")
    assert rev.to_json()["superseded"] == ["Old"] and "superseded_by" not in rev.to_json()
    fact = FactResult("worf", "2026-12-01", "w-1", plain).to_json()
    assert list(fact) == ["topic", "agent", "date", "entry", "kind", "title", "action", "block"]
    archived = PromotedEntry("data", "e-1", "2026-01-01", "t", "a.md.gz")
    assert "facts" not in archived.to_json() and "topics" not in archived.to_json()
    assert ReviewItem("p-1", "unknown").to_json() == {"id": "p-1", "result": "unknown"}
    assert ReviewItem("p-1", "rejected", "ops", "").to_json()["title"] == "", "an empty title is printed"
    assert PinnedFact("data", "decisions", "t", "added").to_json().get("by") is None
    inbox = InboxResult((InboxApplied("a.md", "worf", plain),), (InboxQuarantined("b.md", "bad"),))
    assert json.dumps(inbox.to_json()) == json.dumps(
        {
            "applied": [{"file": "a.md", "agent": "worf", **plain.to_json()}],
            "quarantined": [{"file": "b.md", "reason": "bad"}],
            "warnings": [],
        }
    )
