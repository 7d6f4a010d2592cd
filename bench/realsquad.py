"""Real Squad teams through ``scribed import --all``: what a spawn saves, and what the import keeps.

Run: ``python bench/realsquad.py PATH… [--as-of DATE] [--json] [--workdir DIR]``

Each PATH is a Squad tree (a ``.squad`` folder, or a repo holding one), e.g. the dev set in
../shared/realdata/DEV.md. The tree is copied into a temporary root (the input is only read), the
import runs there in-process (:func:`scribed.core.importer.import_squad`, default config, every agent),
and the copy is measured:

- **saving**: per agent, 1 − (charter + the default ``scribed context AGENT`` block) / (charter +
  history.md + decisions.md), which is what Squad loads per spawn today (the README's report); an
  agent whose default spawn is empty saves nothing and is counted apart (``empty``);
- **kept**: the share of the legacy files' distinct identifiers (paths, backticked spans, ``#123``
  refs, error and code names: ``bench/peers.identifiers``) found in cold, wiki or archive
  (``kept_readable``: in cold or wiki only);
- **titled**: decisions of the decision files (``# Decision: T``, ``## DATE — T``, ``### T`` blocks
  that are not sub-sections such as Context or Rationale, nor questions or priority labels), found
  in the wiki as a ``### `` heading with the same title;
- **wiki bytes per decision**: the wiki's topic files (not the index) over the titled decisions;
- **debris**: wiki lines that carry nothing: only ``**``, a ``---`` rule, an empty list item, or a bold
  label with nothing after it (its next line is blank, a heading, another label or the end);
- **junk facts**: wiki facts titled by a question or a priority label (``P2 — …``);
- **identical**: every file of the tree (legacy and Squad's governed memory) byte-identical after
  the import, and nothing created in Squad's governed-memory paths.

A path that does not exist is skipped with a line saying so (exit 0).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for _p in (ROOT, ROOT / "bench"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

from peers import identifiers, retention  # noqa: E402

DEV_MD = "../shared/realdata/DEV.md"
GOVERNED = (
    "local",
    "policy-inbox",
    "semantic-inbox",
    "tombstones",
    "config.json",
    "index.json",
    "audit.jsonl",
)
GENERIC = {
    "context", "decision", "decisions", "why", "rationale", "consequences", "alternatives",
    "alternatives considered", "implementation", "implementation details", "implementation notes",
    "changes", "team impact", "impact", "problem", "evidence", "validation", "status", "summary", "notes",
    "risks", "background", "outcome", "details", "key decisions", "locked decisions", "implementation phases",
    "next steps", "open questions", "questions", "follow up", "follow ups", "action items", "scope",
    "approach", "options", "tradeoffs", "risks tradeoffs", "what", "how", "who", "by", "result", "results",
    "verification", "testing", "tests", "files", "files changed", "key implementation details", "archive",
    "active decisions", "tldr", "governance", "decision log",
}  # fmt: skip
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ][\d:.-]+(?:Z|[+-]\d{2}:?\d{2})?)?")
_AGENT_SUFFIX = re.compile(r"\s*\((?:[A-Z][\w .&/-]{0,40})\)\s*$")
# A question: it ends with "?", or opens like one ("Should we …", "Open question: …"). "Why X:",
# "When X, …" and "Do not X" open statements as often as questions, so they count only with the "?".
_QUESTION = re.compile(
    r"(\?[*_`\s]*$)|^(?:open questions?\b|(?:should|shall|can|could|would|will|do|does|is|are)\s+"
    r"(?:we|i|you|they|it|this|that|there|the|our|a|an)\b)",
    re.I,
)
_PRIORITY = re.compile(r"^(?:P[0-4]\b|priority\b|(?:high|medium|low)[- ]priority\b)", re.I)
_GROUPS = re.compile(
    r"^(?:(?:active|archived?|merged|recent|older|team|squad|key|past|project)\s+)?"
    r"(?:decisions|archive[sd]?|tldr|governance|index|log|backlog|learnings)\b",
    re.I,
)
_RULE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_ONLY_MARKS = re.compile(r"^\s*(?:\*\*|__|\*|_|[-*+])\s*$")
_LABEL = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*[^*]+\*\*|__[^_]+__)\s*:?\s*$")


# --- the tree ----------------------------------------------------------------------------------
def squad_of(path: Path) -> Path | None:
    """The ``.squad`` folder a PATH names (itself, or the one inside it)."""
    if path.name == ".squad" and path.is_dir():
        return path
    inner = path / ".squad"
    return inner if inner.is_dir() else None


def digests(root: Path) -> dict[str, str]:
    """sha256 of every file under ``root`` (symlinks by their target text), keyed by relative path."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(root))] = "link:" + str(p.readlink())
        elif p.is_file():
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def legacy_files(squad: Path) -> list[Path]:
    """Histories (and their archives), decisions.md (and archives) and the decisions/ folder."""
    found: set[Path] = set()
    agents = squad / "agents"
    if agents.is_dir():
        found.update(p for p in agents.glob("*/history*.md") if p.is_file())
    found.update(p for p in squad.glob("decisions*.md") if p.is_file())
    if (squad / "decisions").is_dir():
        found.update(p for p in (squad / "decisions").rglob("*.md") if p.is_file())
    return sorted(found)


def decision_files(squad: Path) -> list[Path]:
    return [p for p in legacy_files(squad) if "/agents/" not in str(p)]


def _lines_outside_fences(text: str) -> Iterator[str]:
    fence = ""
    for line in text.splitlines():
        m = _FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip(" `~"):
                fence = ""
            continue
        if m:
            fence = m.group(1)
            continue
        yield line


def norm_title(text: str) -> str:
    """A title compared loosely: date and trailing ``(Agent)`` dropped, markdown and punctuation too."""
    text = _DATE.sub(" ", text)
    text = re.sub(r"^\s*(?:\d+[.)]\s+)?(?:decision\s*:\s*)?", "", text, flags=re.I)
    text = _AGENT_SUFFIX.sub("", text.strip())
    text = re.sub(r"[`*_\[\]()#>~|]", " ", text.casefold())
    text = re.sub(r"[^\w]+", " ", text).replace("_", " ")
    return " ".join(text.split())


def is_junk(title: str) -> bool:
    bare = re.sub(r"^[\s:—–\-·|]+", "", _DATE.sub("", title)).strip(" *_`")
    return bool(_QUESTION.search(bare) or _PRIORITY.match(bare))


def titled_decisions(text: str) -> list[str]:
    """Decision titles of a decisions file, in order. A heading owns the headings below it (they are
    its sub-sections) when it is a decision: ``# Decision: T`` or another ``#`` heading of a merged
    inbox file (not a file title such as "# Team Decisions", nor one over dated ``##`` decisions),
    ``## DATE — T``, an undated ``##`` with no ``###`` under it, or a ``###`` block. Generic section
    names (Context, Rationale, …), questions and priority labels are never counted."""
    heads = []
    for line in _lines_outside_fences(text):
        m = _HEADING.match(line)
        if m:
            heads.append((len(m.group(1)), m.group(2)))
    out: list[str] = []
    owner = 0
    for i, (level, raw) in enumerate(heads):
        if owner and level > owner:
            continue
        owner = 0
        t = norm_title(raw)
        if not t or t in GENERIC:
            continue
        kids = []
        for lv, r in heads[i + 1 :]:
            if lv <= level:
                break
            kids.append((lv, r))
        title = re.sub(r"^[\W_]+", "", _DATE.sub("", raw)).strip()
        dated = bool(_DATE.search(raw))
        if level == 1:
            over_dated = any(lv == 2 and _DATE.search(r) and norm_title(r) for lv, r in kids)
            if not re.match(r"\s*decision\s*:", raw, re.I) and (_GROUPS.match(title) or over_dated):
                continue
        elif level == 2 and (
            (dated and not t) or _GROUPS.match(title) or (not dated and any(lv == 3 for lv, _ in kids))
        ):
            continue
        owner = level
        if not is_junk(raw):
            out.append(raw)
    return out


def wiki_titles(wiki: Path) -> tuple[set[str], list[str]]:
    """Normalised ``###`` headings of the wiki's topic files, and the raw titles."""
    norms: set[str] = set()
    raws: list[str] = []
    if not wiki.is_dir():
        return norms, raws
    for p in sorted(wiki.glob("*.md")):
        if p.name == "index.md":
            continue
        for line in _lines_outside_fences(p.read_text(encoding="utf-8", errors="replace")):
            if line.startswith("### "):
                raw = re.sub(r"^\d{4}-\d{2}-\d{2}:\s*", "", line[4:].strip())
                raws.append(raw)
                norms.add(norm_title(raw))
    return norms, raws


def debris_lines(text: str) -> list[str]:
    """Lines of a wiki file that carry nothing (see the module docstring)."""
    lines = list(_lines_outside_fences(text))
    out = []
    for i, line in enumerate(lines):
        if _RULE.match(line) or _ONLY_MARKS.match(line):
            out.append(line)
        elif _LABEL.match(line):
            nxt = next((ln for ln in lines[i + 1 :] if ln.strip()), "") if i + 1 < len(lines) else ""
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if not following.strip() or not nxt or nxt.startswith("#") or _LABEL.match(nxt):
                out.append(line)
    return out


def memory_text(memory: Path, *, archive: bool) -> str:
    """Everything scribed wrote that a reader (or a search) can reach: cold and wiki, and the archive."""
    parts = []
    for sub in ("cold", "wiki"):
        folder = memory / sub
        if folder.is_dir():
            parts += [p.read_text(encoding="utf-8", errors="replace") for p in sorted(folder.glob("*.md"))]
    arch = memory / ".scribed" / "archive"
    if archive and arch.is_dir():
        for p in sorted(arch.rglob("*")):
            if p.is_file():
                data = p.read_bytes()
                if p.name.endswith(".gz"):
                    try:
                        data = gzip.decompress(data)
                    except (OSError, EOFError):
                        continue
                parts.append(data.decode("utf-8", "replace"))
    return "\n".join(parts)


# --- one repo ----------------------------------------------------------------------------------
def run_import(root: Path, as_of: datetime | None) -> tuple[dict[str, Any] | None, str]:
    from scribed import log as log_mod
    from scribed.config import from_dict
    from scribed.core.importer import ImportRefusedError, import_squad

    log_mod.configure("json", "error")
    try:
        return import_squad(from_dict({"root": str(root)}), None, as_of=as_of).to_json(), ""
    except ImportRefusedError as exc:
        return None, f"refused: {exc}"


def spawn_savings(root: Path) -> dict[str, Any]:
    """Per agent with a history: saving of the default spawn against charter + history + decisions."""
    from scribed.recall import report
    from scribed.tiers.cold import Layout

    rows = report.build(Layout(root))["agents"]
    per: dict[str, float | None] = {}
    for r in rows:
        if not r["history_bytes"]:
            continue
        base = r["charter_bytes"] + r["history_bytes"] + r["decisions_bytes"]
        per[r["agent"]] = None if r["spawn_empty"] else round(100 * (1 - r["spawn_bytes"] / base), 1)
    saved = [v for v in per.values() if v is not None]
    return {
        "agents": per,
        "saving_pct": round(sum(saved) / len(saved), 1) if saved else None,
        "saving_min_pct": min(saved) if saved else None,
        "empty": sum(1 for v in per.values() if v is None),
    }


def measure(root: Path, before: dict[str, str]) -> dict[str, Any]:
    squad = root / ".squad"
    memory = squad / "memory"
    legacy = legacy_files(squad)
    idents: dict[str, str] = {}
    for p in legacy:
        idents.update(identifiers(p.read_text(encoding="utf-8", errors="replace")))
    kept = retention(idents, memory_text(memory, archive=True))
    readable = retention(idents, memory_text(memory, archive=False))
    decisions: dict[str, str] = {}
    for p in decision_files(squad):
        for t in titled_decisions(p.read_text(encoding="utf-8", errors="replace")):
            decisions.setdefault(norm_title(t), t)
    norms, raws = wiki_titles(memory / "wiki")
    found = [t for t in decisions if t in norms]
    wiki_bytes = 0
    debris: list[str] = []
    if (memory / "wiki").is_dir():
        for p in sorted((memory / "wiki").glob("*.md")):
            if p.name != "index.md":
                text = p.read_text(encoding="utf-8", errors="replace")
                wiki_bytes += len(text.encode())
                debris += debris_lines(text)
    after = digests(squad)
    changed = sorted(k for k, v in before.items() if after.get(k) != v)
    created = sorted(k for k in after if k not in before and _governed(k))
    return {
        **spawn_savings(root),
        "legacy_files": len(legacy),
        "identifiers": len(idents),
        "kept": round(kept, 4) if kept is not None else None,
        "kept_readable": round(readable, 4) if readable is not None else None,
        "titled_decisions": len(decisions),
        "titled_in_wiki": len(found),
        "titled_share": round(len(found) / len(decisions), 3) if decisions else None,
        "missing_titles": [decisions[t] for t in decisions if t not in norms][:8],
        "wiki_bytes": wiki_bytes,
        "wiki_bytes_per_decision": round(wiki_bytes / len(decisions)) if decisions else None,
        "debris_lines": len(debris),
        "debris_sample": sorted(set(debris))[:5],
        "junk_facts": sum(1 for t in raws if is_junk(t)),
        "junk_sample": [t for t in raws if is_junk(t)][:5],
        "changed_files": changed[:10],
        "governed_created": created[:10],
        "identical": not changed and not created,
    }


def _governed(rel: str) -> bool:
    parts = Path(rel).parts
    return len(parts) >= 2 and parts[0] == "memory" and parts[1] in GOVERNED


def run_path(path: Path, work: Path, as_of: datetime | None) -> dict[str, Any]:
    squad = squad_of(path)
    if squad is None:
        return {"path": str(path), "skipped": "no .squad folder"}
    root = work / "root"
    shutil.copytree(squad, root / ".squad", symlinks=True)
    before = digests(root / ".squad")
    t0 = time.perf_counter()
    data, refused = run_import(root, as_of)
    secs = round(time.perf_counter() - t0, 2)
    if data is None:
        return {"path": str(path), "skipped": refused}
    out = {
        "path": str(path),
        "repo": path.name if path.name != ".squad" else path.parent.name,
        "seconds": secs,
    }
    out |= {k: len(data[k]) for k in ("cold", "promoted", "archived", "pinned")}
    out["warnings"] = len(data["warnings"])
    out |= measure(root, before)
    return out


# --- output ------------------------------------------------------------------------------------
HEADER = (
    "| repo | saving (min) | empty | kept (readable) | titled in wiki | wiki B/decision | debris | junk facts "
    "| identical |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
)


def _f(v: float | None, fmt: str = "{:.3f}") -> str:
    return "n/a" if v is None else fmt.format(v)


def fmt_row(r: dict[str, Any]) -> str:
    if "skipped" in r:
        return f"| {r['path']} | skipped: {r['skipped']} | | | | | | | |"
    return (
        f"| {r['repo']} | {_f(r['saving_pct'], '{:.1f}%')} ({_f(r['saving_min_pct'], '{:.1f}%')}) | "
        f"{r['empty']} | {_f(r['kept'])} ({_f(r['kept_readable'])}) | "
        f"{r['titled_in_wiki']}/{r['titled_decisions']} | {_f(r['wiki_bytes_per_decision'], '{:.0f}')} | "
        f"{r['debris_lines']} | {r['junk_facts']} | {'yes' if r['identical'] else 'NO'} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("paths", nargs="*", metavar="PATH", help="Squad trees (.squad folders or repos)")
    ap.add_argument("--as-of", metavar="DATE", help="age entries as of DATE (default now)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    ap.add_argument("--workdir", metavar="DIR", help="keep the temp roots here (default: removed)")
    args = ap.parse_args(argv)
    as_of = None
    if args.as_of:
        from scribed.compress.entry import parse_date

        as_of = parse_date(args.as_of)
        if as_of is None:
            ap.error(f"--as-of: bad date {args.as_of!r}")
    out = sys.stderr if args.json else sys.stdout
    existing = []
    for p in args.paths:
        if Path(p).exists():
            existing.append(Path(p))
        else:
            print(f"skipped: {p} not found", file=out)
    if not existing:
        msg = f"no Squad tree found; the dev set is described in {DEV_MD} (nothing measured)"
        print(json.dumps({"message": msg, "repos": []}) if args.json else msg)
        return 0
    base = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="scribed-realsquad-"))
    results = []
    try:
        if not args.json:
            print(HEADER, flush=True)
        for i, p in enumerate(existing, start=1):
            work = base / f"repo{i}"
            shutil.rmtree(work, ignore_errors=True)
            work.mkdir(parents=True)
            r = run_path(p, work, as_of)
            results.append(r)
            if not args.json:
                print(fmt_row(r), flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(base, ignore_errors=True)
    if args.json:
        stamp = (as_of or datetime.now(UTC)).isoformat()
        print(json.dumps({"as_of": stamp, "repos": results}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
