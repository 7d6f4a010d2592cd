"""``scribed show SESSION`` and ``scribed doctor``: read-only commands about transcripts.

``show`` prints a session's archived (redacted) transcript, which outlives the tool's own copy.
``doctor`` lists team memory's problems first, then reads every configured source the way
compaction does (:mod:`scribed.core.doctor`) and lists each warning with its file and what to do,
record types no adapter knows (format drift), rollouts skipped as the tool's own work; and how
much the transcript archive holds. Neither writes anything.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scribed import hint
from scribed.tiers.cold import Layout

if TYPE_CHECKING:
    from scribed.core.team_doctor import TeamReport

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
    if not found and len(session) < transcripts.MIN_SESSION_PREFIX:
        fail(
            f"no session is named {session!r}, and a session id prefix needs at least "
            f"{transcripts.MIN_SESSION_PREFIX} characters (`{hint.cmd('status')}` and the cold entries show ids)"
        )
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


@click.command("doctor")
@click.option("--root", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def doctor_cmd(ctx: click.Context, root: str | None, as_json: bool) -> None:
    """Team memory's problems, then every source as compaction reads it: each warning with its
    file and what to do, unknown record types, skipped rollouts; and the transcript archive."""
    import dataclasses

    from scribed.cli.checks import access_problems
    from scribed.cli.common import load_config, no_config
    from scribed.core import discovery, team_doctor
    from scribed.core.doctor import source_report
    from scribed.names import normalize_name
    from scribed.tiers import hot_seed, transcripts

    cfg = load_config(ctx, root)
    missing = no_config(ctx, cfg, root)
    read: list[set[Path]] = [set() for _ in cfg.sources]  # each file once, as compaction reads it
    for name in discovery.listed(cfg, None).kept:
        read[name.source].add(name.item.path)
    sources = [
        source_report(
            s.kind,
            s.expanded,
            s.glob,
            normalize_name(s.agent) or s.kind.replace("squad-repl", "squad"),
            max_line_bytes=cfg.session.max_line_bytes,
            scope=s.scope(cfg.root_path),
            only=read[i],
        )
        for i, s in enumerate(cfg.sources)
    ]
    dest = transcripts.folder(cfg, Layout(cfg.root_path))
    cannot = access_problems(cfg)  # what `run` refuses: scribed's user cannot write there
    try:
        archived = list(transcripts.iter_archives(dest))
        team_report = team_doctor.report(Layout(cfg.root_path))
        held = hot_seed.withheld(Layout(cfg.root_path))
    except PermissionError:
        if not cannot:
            raise
        archived, team_report, held = [], team_doctor.TeamReport([], [], [], []), []  # said: `cannot`
    report: dict[str, Any] = {
        "access": cannot,
        "sources": [{**s.to_json(), **_problem(cfg, i)} for i, s in enumerate(sources)],
        "archive": {
            "enabled": cfg.archive.transcripts,
            "folder": str(dest),
            "transcripts": len(archived),
            "bytes": sum(a.bytes_out for a in archived),
            "retention_days": cfg.archive.retention_days,
        },
        "team": dataclasses.asdict(team_report),
        "hot_withheld": [w.to_json() for w in held],
        "config": {"path": str(cfg.path) if cfg.path else None, "warning": missing or ""},
    }
    if as_json:
        click.echo(json.dumps(report, indent=2))
        return
    if missing:
        click.echo(f"warning: {missing}")
    for line in cannot:
        click.echo(f"warning: {line} (`scribed run` and `run-once` refuse this root until then)")
    team_lines = _echo_team(team_report)
    for w in held:
        click.echo(w.line())
    for s in report["sources"]:
        _echo_source(s)
        if s["problem"]:
            said = "error" if s["fatal"] else "note" if s["watched"] else "warning"
            click.echo(f"  {said}: {s['problem']}")
        if s["scope"]:
            click.echo(f"  warning: {s['scope']}")
    a = report["archive"]
    click.echo(
        f"archive {a['folder']}: {a['transcripts']} transcripts, {a['bytes']} bytes"
        + ("" if a["enabled"] else " (archiving is off)")
    )
    n = bool(missing) + len(cannot) + team_lines + len(held) + sum(s.warnings for s in sources)
    n += sum(1 for s in report["sources"] if s["problem"] and not s["watched"])
    n += sum(1 for s in report["sources"] if s["scope"])
    click.echo("no warnings" if not n else f"{n} warning{'s' * (n != 1)}, each listed above with what to do")


def _problem(cfg: Any, i: int) -> dict[str, Any]:
    """The source's problem as check-config words it: an error ``run`` refuses (a glob that can
    match no file), a warning, or a watched-for note; ``scope``: a Claude Code project folder read
    with no ``workspace`` (another repository's sessions can share it)."""
    from scribed.cli.checks import source_problem, unscoped

    p, u = source_problem(cfg, i), unscoped(cfg, i)
    return {
        "problem": p.message if p else "",
        "watched": bool(p and p.watched),
        "fatal": bool(p and p.fatal),
        "scope": u.message if u else "",
    }


ISSUES_SHOWN = 20  # per source in the text form; --json has them all


def _echo_source(s: dict[str, Any]) -> None:
    state = "" if s["exists"] else " (not there yet)" if s["watched"] else " (missing)"
    click.echo(
        f"source {s['kind']} {s['path']}{state}: {s['files']} files ({s['compressed']} zstd), "
        f"{s['sessions']} sessions, {s['warnings']} warnings"
    )
    for label, n in sorted(s["drift"].items(), key=lambda kv: (-kv[1], kv[0])):
        click.echo(f"  {label} ×{n}")
    for issue in s["issues"][:ISSUES_SHOWN]:
        where = "" if issue["file"] in issue["warning"] else f" (in {issue['file']})"
        click.echo(f"  warning: {issue['warning']}{where}")
        if issue["fix"]:
            click.echo(f"    → {issue['fix']}")
    more = len(s["issues"]) - ISSUES_SHOWN
    if more > 0:
        click.echo(f"  … and {more} more warnings (`{hint.cmd('doctor', '--json')}` lists every one)")


def _echo_team(t: TeamReport) -> int:
    """Team memory's problems, one line each with what to do; returns how many."""
    lines = [
        f"tier file with conflict markers: {f} — keep what is right and `git add` it, or run "
        f"`{hint.cmd('run-once')}`: it merges the file entry by entry and keeps both versions of the lines both sides "
        "changed (then `git add` it)"
        for f in t.conflicted
    ]
    lines += [
        f"hot file with two front matters (a union merge): {f} — the next run keeps the newest"
        for f in t.front_matter_twice
    ]
    lines += [f"cold entry file {d['why']}: {d['file']} — {d['fix']}" for d in t.damaged]
    lines += [f"memory file left out: {d['file']} — {d['why']}" for d in t.misnamed]
    if t.stale_views:
        names = ", ".join(t.stale_views)
        lines.append(
            f"cold views older than their shared entries (a pull): {names} — run `{hint.cmd('run-once')}`"
        )
    lines += [
        f"entry lost by a merge, its source gone: {r['id']} (agent {r['agent']}, session {r['session']}) — "
        f"git history may still hold it: `git log --all --stat -- .squad/memory/cold/{r['agent']}/`"
        for r in t.lost
    ]
    lines += [told_twice_line(o) for o in t.told_twice]
    if t.driver_missing:
        lines.append(f"merge driver missing: {t.driver_missing}")
    for line in lines:
        click.echo(line)
    return len(lines)


def told_twice_line(o: dict[str, Any]) -> str:
    """One session told twice (``team_doctor.told_twice``'s row) and what the next run does."""
    told = ", ".join(f"{e['id']} (lines {e['lines']})" for e in o["entries"])
    then = (
        f"merges them into one entry ({o['kept'][0]}), nothing of either lost"
        if o["merged"]
        else f"keeps the finer cut ({', '.join(o['kept'])}) and retires the others"
    )
    return (
        f"session told twice in {o['agent']}'s cold memory (two clones compacted it at different "
        f"points): {o['session']}: {told} — `{hint.cmd('run-once')}` {then}"
    )


def register(main: click.Group) -> None:
    """Add ``show`` and ``doctor`` to the ``scribed`` group."""
    main.add_command(show_cmd)
    main.add_command(doctor_cmd)
