"""``scribed show SESSION`` and ``scribed doctor``: read-only commands about transcripts.

``show`` prints a session's archived (redacted) transcript, which outlives the tool's own copy.
``doctor`` reads every configured source the way compaction does and reports what it could not
place: record types no adapter knows (format drift), rollouts skipped as the tool's own work,
unreadable files; and how much the transcript archive holds. Neither writes anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from scribed.core.team import TeamReport

_ROOT_HELP = "Squad root (the folder holding .squad/)."


@click.command("show")
@click.argument("session")
@click.option("--root", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.pass_context
def show_cmd(ctx: click.Context, session: str, root: str | None) -> None:
    """Print SESSION's archived transcript (redacted), even after the tool deleted its own copy."""
    from scribed.cli.common import fail, load_config
    from scribed.tiers import transcripts

    cfg = load_config(ctx, root)
    dest = transcripts.folder(cfg, Layout(cfg.root_path))
    found = transcripts.find(dest, session)
    if not found:
        fail(f"no archived transcript for session {session!r} in {dest}", 1)
    if len({r.path for r in found}) > 1 and session not in {s for r in found for s in r.sessions}:
        names = ", ".join(sorted({s for r in found for s in r.sessions if s.startswith(session)})[:5])
        fail(f"session {session!r} is ambiguous: {names}", 2)
    out = sys.stdout.buffer
    for rec in found:
        click.echo(f"# {rec.kind} transcript {rec.source} (archived {rec.archived_at})", err=True)
        try:
            for chunk in transcripts.read_chunks(rec):
                out.write(chunk)
        except OSError as exc:
            fail(f"cannot read {rec.path}: {exc.strerror or exc}", 1)
    out.flush()


def _source_report(kind: str, folder: Path, glob: str, agent: str) -> dict[str, Any]:
    """Parse one source's files as compaction would and collect what did not fit."""
    from scribed import sources
    from scribed.sources import drift, zst

    drift.take()  # only this source's counts
    files = list(sources.discover(kind, folder, glob)) if folder.exists() else []
    sessions = warnings = 0
    unreadable: list[str] = []
    for path in files:
        parsed = sources.parse_file(kind, path, agent)
        sessions += len(parsed.sessions)
        warnings += len(parsed.warnings)
        unreadable += [w for w in parsed.warnings if "cannot read" in w or "internal error" in w]
    return {
        "kind": kind,
        "path": str(folder),
        "exists": folder.exists(),
        "files": len(files),
        "compressed": sum(1 for p in files if zst.is_zst(p)),
        "sessions": sessions,
        "warnings": warnings,
        "unreadable": unreadable[:20],
        "drift": drift.take().get(kind, {}),
    }


@click.command("doctor")
@click.option("--root", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def doctor_cmd(ctx: click.Context, root: str | None, as_json: bool) -> None:
    """Check every source as compaction reads it: unknown record types per source, skipped
    rollouts, unreadable files; and the transcript archive."""
    from scribed.cli.common import load_config
    from scribed.names import normalize_name
    from scribed.tiers import transcripts

    cfg = load_config(ctx, root)
    sources = [
        _source_report(
            s.kind, s.expanded, s.glob, normalize_name(s.agent) or s.kind.replace("squad-repl", "squad")
        )
        for s in cfg.sources
    ]
    dest = transcripts.folder(cfg, Layout(cfg.root_path))
    archived = list(transcripts.iter_archives(dest))
    report: dict[str, Any] = {
        "sources": sources,
        "archive": {
            "enabled": cfg.archive.transcripts,
            "folder": str(dest),
            "transcripts": len(archived),
            "bytes": sum(a.bytes_out for a in archived),
            "retention_days": cfg.archive.retention_days,
        },
    }
    import dataclasses

    from scribed.core import team

    team_report = team.report(Layout(cfg.root_path))
    report["team"] = dataclasses.asdict(team_report)
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    _echo_team(team_report)
    for s in sources:
        state = "" if s["exists"] else " (missing)"
        click.echo(
            f"source {s['kind']} {s['path']}{state}: {s['files']} files ({s['compressed']} zstd), "
            f"{s['sessions']} sessions, {s['warnings']} warnings"
        )
        for label, n in sorted(s["drift"].items(), key=lambda kv: (-kv[1], kv[0])):
            click.echo(f"  {label} ×{n}")
        for w in s["unreadable"]:
            click.echo(f"  {w}")
    a = report["archive"]
    click.echo(
        f"archive {a['folder']}: {a['transcripts']} transcripts, {a['bytes']} bytes"
        + ("" if a["enabled"] else " (archiving is off)")
    )


def _echo_team(t: TeamReport) -> None:
    """Team memory's problems, one line each with what to do."""
    for f in t.conflicted:
        click.echo(
            f"tier file with conflict markers: {f} — the next `scribed run-once` merges it entry by entry"
        )
    for f in t.front_matter_twice:
        click.echo(f"hot file with two front matters (a union merge): {f} — the next run keeps the newest")
    if t.stale_views:
        names = ", ".join(t.stale_views)
        click.echo(f"cold views older than their shared entries (a pull): {names} — run `scribed run-once`")
    for r in t.lost:
        click.echo(
            f"entry lost by a merge, its source gone: {r['id']} (agent {r['agent']}, session {r['session']})"
        )


def register(main: click.Group) -> None:
    """Add ``show`` and ``doctor`` to the ``scribed`` group."""
    main.add_command(show_cmd)
    main.add_command(doctor_cmd)
