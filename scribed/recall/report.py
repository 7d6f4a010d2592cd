"""``scribed report``: what Squad loads per spawn today against the tiered spawn.

Per agent:

* baseline = ``.squad/agents/{agent}/charter.md`` + ``.squad/agents/{agent}/history.md`` +
  ``.squad/decisions.md``, plus the agent's cold file and the wiki pages when they exist
  (``baseline_tokens`` = bytes / 4);
* tiered spawn = the charter + the default ``scribed context AGENT`` block, built by the same
  function the command uses (:func:`scribed.recall.context.build`), so the figure is what a spawn loads;
  ``savings_pct`` = 1 - spawn / baseline.

``baseline`` says what the baseline is, so a figure is never read against the wrong thing:
``squad`` when the agent has a Squad ``history.md`` or the repository a ``decisions.md`` (what a
Squad spawn loads today); ``scribed`` when it has neither, so the baseline is scribed's own cold
file and wiki (all of scribed's memory, as ``--include-cold --include-wiki`` would load it), not a
Squad spawn; ``none`` when there is nothing at all. The table and the chart say which.

When that block carries no memory (no hot file, or only the blank template) the spawn is empty: the agent
starts from nothing, so ``spawn_empty`` is true, ``savings_pct`` is null and the table says so
instead of claiming a saving. Averages count only agents whose spawn is not empty.

``old_noise_pct`` is the share of the baseline's dated entries (``### YYYY-MM-DD`` headings in
history.md and decisions.md) that lie outside the current session's window. The window is the
24 hours up to the reference time: the hot file's ``updated:`` (a live hot file) when there is
one, else the newest dated entry. An entry is old noise when its time is at or before
reference - 24 h; a date without a time counts as 00:00 UTC; undated headings are not counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from scribed.compress.entry import iso, parse_date, split_entries
from scribed.log import misnamed
from scribed.names import normalize_name
from scribed.recall import context
from scribed.tiers.cold import Layout
from scribed.tiers.live import MARKER, is_blank, live_fields

WINDOW = timedelta(hours=24)
_THOUSAND = 1000  # token counts print as ~1.2K from here


@dataclass(slots=True)
class AgentRow:
    agent: str
    baseline_bytes: int
    baseline_tokens: int
    old_noise_pct: float
    hot_only_bytes: int
    spawn_bytes: int
    savings_pct: float | None
    spawn_empty: bool
    cold_bytes: int
    wiki_bytes: int
    charter_bytes: int
    history_bytes: int
    decisions_bytes: int
    dated_entries: int
    old_entries: int
    window_end: str | None
    baseline: str  # squad | scribed | none (see the module docstring)


def agents_dir(layout: Layout) -> Path:
    return layout.squad / "agents"


def _agent_folder(layout: Layout, agent: str) -> Path:
    """``.squad/agents/{agent}``, matching the folder name case-insensitively."""
    base = agents_dir(layout)
    exact = base / agent
    if exact.is_dir():
        return exact
    try:
        for p in base.iterdir():
            if p.is_dir() and p.name.lower() == agent:
                return p
    except OSError:
        pass
    return exact


def known_agents(layout: Layout) -> list[str]:
    """Every agent with a charter, history, hot or cold file."""
    found: set[str] = set()
    try:
        folders = list(agents_dir(layout).iterdir()) if agents_dir(layout).is_dir() else []
    except OSError:
        folders = []
    for p in folders:
        name = normalize_name(p.name)
        if p.is_dir() and ((p / "charter.md").is_file() or (p / "history.md").is_file()):
            if name:
                found.add(name)
            else:
                misnamed(p, "agent")
    for folder in (layout.hot, layout.cold):
        try:
            files = list(folder.glob("*.md")) if folder.is_dir() else []
        except OSError:
            files = []
        for f in files:
            name = normalize_name(f.stem)
            if name and not f.name.startswith("."):
                found.add(name)
            elif not name:
                misnamed(f, "agent")
    return sorted(found)


def _size(layout: Layout, path: Path) -> tuple[int, str]:
    text = context.read_safe(layout, path)
    return len(text.encode()), text


def _hot_updated(layout: Layout, agent: str) -> datetime | None:
    text = context.read_safe(layout, layout.hot_file(agent))
    return parse_date(live_fields(text.encode()).get("updated", "")) if text else None


def noise(texts: list[str], reference: datetime | None) -> tuple[int, int, datetime | None]:
    """(dated entries, entries outside the window, the window's end) per the module docstring."""
    stamps = [e.when for t in texts for e in split_entries(t)[1] if e.when is not None]
    if not stamps:
        return 0, 0, reference
    end = reference or max(stamps)
    old = sum(1 for s in stamps if s <= end - WINDOW)
    return len(stamps), old, end


def agent_row(layout: Layout, agent: str) -> AgentRow:
    name = context.check_agent(agent)
    folder = _agent_folder(layout, name)
    charter, _ = _size(layout, folder / "charter.md")
    history, history_text = _size(layout, folder / "history.md")
    decisions, decisions_text = _size(layout, layout.squad / "decisions.md")
    cold, _ = _size(layout, layout.cold_file(name))
    wiki = sum(_size(layout, p)[0] for p in context.wiki_pages(layout).values())
    baseline = charter + history + decisions + cold + wiki
    dated, old, end = noise([history_text, decisions_text], _hot_updated(layout, name))
    block = context.build(layout, name)  # exactly what `scribed context AGENT` prints
    hot_only = block.bytes
    spawn = charter + hot_only
    empty = _spawn_empty(layout, name, block.hot)
    return AgentRow(
        agent=name,
        baseline_bytes=baseline,
        baseline_tokens=baseline // 4,
        old_noise_pct=round(100 * old / dated, 1) if dated else 0.0,
        hot_only_bytes=hot_only,
        spawn_bytes=spawn,
        savings_pct=_savings_pct(spawn, baseline, empty),
        spawn_empty=empty,
        cold_bytes=cold,
        wiki_bytes=wiki,
        charter_bytes=charter,
        history_bytes=history,
        decisions_bytes=decisions,
        dated_entries=dated,
        old_entries=old,
        window_end=iso(end) if end else None,
        baseline=_baseline_kind(history, decisions, cold + wiki),
    )


def _baseline_kind(history: int, decisions: int, scribed_files: int) -> str:
    """What the baseline measures: a Squad spawn, scribed's own memory, or nothing."""
    if history or decisions:
        return "squad"
    return "scribed" if scribed_files else "none"


def _spawn_empty(layout: Layout, agent: str, hot: str) -> bool:
    """No memory in the default spawn: no hot text, or only the blank template's labels."""
    if not hot.strip():
        return True
    path = layout.hot_file(agent)
    return MARKER not in live_fields(context.read_safe(layout, path).encode()) and is_blank(path, agent)


def _savings_pct(spawn: int, baseline: int, empty: bool) -> float | None:
    if empty:
        return None  # an empty spawn saves nothing: the agent starts without memory
    return round(100 * (1 - spawn / baseline), 1) if baseline else 0.0


def build(layout: Layout, agents: list[str] | None = None) -> dict[str, Any]:
    """``{"agents": [row, ...], "average": {...}}``; raises ContextError for a bad agent name."""
    names = [context.check_agent(a) for a in agents] if agents else known_agents(layout)
    rows = [asdict(agent_row(layout, a)) for a in dict.fromkeys(names)]
    return {"agents": rows, "average": _average(rows)}


def _average(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over the agents; savings only over agents whose default spawn loads something."""
    keys = ("baseline_bytes", "baseline_tokens", "old_noise_pct", "hot_only_bytes", "spawn_bytes")
    out: dict[str, Any] = {k: 0.0 for k in keys}
    if rows:
        out = {k: round(sum(float(r[k]) for r in rows) / len(rows), 1) for k in keys}
    saved = [float(r["savings_pct"]) for r in rows if r["savings_pct"] is not None]
    out["savings_pct"] = round(sum(saved) / len(saved), 1) if saved else None
    out["empty_spawns"] = sum(1 for r in rows if r["spawn_empty"])
    return out


def _label(row: dict[str, Any]) -> str:
    """The agent's name, marked ``*`` when its baseline is scribed's own files, not Squad's."""
    return str(row["agent"]) + ("*" if row.get("baseline") == "scribed" else "")


def _kb(n: float) -> str:
    return f"{n / 1024:.1f} KB"


def _tokens(n: float) -> str:
    return f"~{n / _THOUSAND:.1f}K tokens" if n >= _THOUSAND else f"~{n:.0f} tokens"


def _savings(v: float | None) -> str:
    return "n/a: empty spawn" if v is None else f"{v:.0f}%"


def markdown(data: dict[str, Any]) -> str:
    """The design's table, one row per agent plus the average, then a plain note naming the agents
    whose default spawn is empty."""
    lines = [
        "| Agent | Total Context | Old Noise % | Hot-Only Size | Savings |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    rows: list[dict[str, Any]] = data["agents"]
    lines.extend(
        f"| {_label(r)} | {_kb(r['baseline_bytes'])} ({_tokens(r['baseline_tokens'])}) | "
        f"{r['old_noise_pct']:.0f}% | {_kb(r['hot_only_bytes'])} | {_savings(r['savings_pct'])} |"
        for r in rows
    )
    if rows:
        a = data["average"]
        lines.append(
            f"| **Average** | {_kb(a['baseline_bytes'])} ({_tokens(a['baseline_tokens'])}) | "
            f"{a['old_noise_pct']:.0f}% | {_kb(a['hot_only_bytes'])} | {_savings(a['savings_pct'])} |"
        )
    else:
        lines.append("| _(no agents found)_ | | | | |")
    lines += _baseline_notes(rows)
    empty = [r["agent"] for r in rows if r["spawn_empty"]]
    if empty:
        lines += [
            "",
            f"The default spawn is empty for {', '.join(empty)}: `scribed context AGENT` loads no memory "
            "(no hot file, or a blank one), so no savings are claimed for "
            + ("it" if len(empty) == 1 else "them")
            + ". Hot is seeded when a session's cold entry is written (`scribed run-once`).",
        ]
    return "\n".join(lines) + "\n"


SQUAD_BASELINE = (
    "Total Context is the baseline: what a Squad spawn loads today (the agent's `charter.md` and "
    "`history.md`, `.squad/decisions.md`, plus its cold file and the wiki pages when they exist); "
    "the spawn is the charter + `scribed context AGENT`."
)


def _baseline_notes(rows: list[dict[str, Any]]) -> list[str]:
    """The paragraph naming the baseline, and the agents measured against scribed's own files."""
    if not rows:
        return []
    own = [r["agent"] for r in rows if r.get("baseline") == "scribed"]
    notes = ["", SQUAD_BASELINE]
    if own:
        notes.append(
            f"No Squad history or decisions for {', '.join(own)} (marked *): "
            f"{'its' if len(own) == 1 else 'their'} baseline is scribed's own cold file and wiki pages "
            "(all of scribed's memory, as `scribed context AGENT --include-cold --include-wiki` would load "
            "it), not a Squad spawn."
        )
    return notes


_EIGHTHS = " ▏▎▍▌▋▊▉"


def _bar(fraction: float, width: int) -> str:
    """A horizontal bar of ``fraction`` × ``width`` cells, in eighths of a cell."""
    eighths = round(max(0.0, min(1.0, fraction)) * width * 8)
    full, part = divmod(eighths, 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(width)


def chart(data: dict[str, Any], width: int = 40) -> str:
    """Per-agent savings as a terminal bar chart (0-100 %), the average last; an empty spawn says so."""
    rows: list[dict[str, Any]] = data["agents"]
    if not rows:
        return ""
    names = [_label(r) for r in rows] + ["average"]
    pad = max(len(n) for n in names)
    lines = ["Savings per spawn (Squad's baseline → charter + scribed context):"]
    for r in rows:
        v, name = r["savings_pct"], _label(r)
        sizes = f"{_kb(r['baseline_bytes'])} → {_kb(r['spawn_bytes'])}"
        if v is None:
            lines.append(f"{name:<{pad}} │{'':<{width}}│ n/a: empty spawn   {sizes}")
        else:
            lines.append(f"{name:<{pad}} │{_bar(v / 100, width)}│ {v:>5.1f}%   {sizes}")
    avg = data["average"]["savings_pct"]
    if avg is not None:
        lines.append(f"{'average':<{pad}} │{_bar(avg / 100, width)}│ {avg:>5.1f}%")
    if any(r.get("baseline") == "scribed" for r in rows):
        lines.append("* baseline: scribed's own cold file and wiki (no Squad history or decisions)")
    return "\n".join(lines) + "\n"
