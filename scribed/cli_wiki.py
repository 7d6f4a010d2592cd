"""CLI commands for the wiki tier: ``promote``, ``wiki-write``, ``wiki-deprecate`` and ``import``.

Kept apart from ``cli.py`` so the compaction CLI stays small; ``cli.py`` calls :func:`register`.
Exit codes as everywhere: 0 ok, 1 work failed, 2 usage error (bad name, bad date, refused import).
"""

from __future__ import annotations

import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from scribed import cli as cli_mod  # attribute access at call time: safe to import from cli.py's top
from scribed.cold import Layout
from scribed.config import Config


def _cfg(ctx: click.Context, root: str | None) -> Config:
    cfg = cli_mod.load_config(ctx, root)
    if not cfg.root_path.is_dir():
        cli_mod.fail(f"root: not a folder: {cfg.root_path}")
    return cfg


def _emit(data: dict[str, Any], as_json: bool, lines: list[str]) -> None:
    if as_json:
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        for line in lines:
            click.echo(line)


def _promote_lines(data: dict[str, Any]) -> list[str]:
    head = "dry run, nothing written: " if data["dry_run"] else ""
    out = [f"{head}promotion as of {data['as_of']} (entries before {data['cutoff']})"]
    for p in data["promoted"]:
        out.append(f"promote {p['agent']:<12} {p['entry']} {p['date'][:10]} {p['title']}")
        for f in p["facts"]:
            extra = f" (supersedes {f['superseded'][0]})" if f.get("superseded") else ""
            out.append(f"    → {f['topic']:<12} {f['action']:<8} {f['title']}{extra}")
    for a in data["archived"]:
        out.append(f"archive {a['agent']:<12} {a['entry']} {a['date'][:10]} {a['title']} (nothing durable)")
    inbox = data.get("inbox") or {}
    for a in inbox.get("applied", []):
        out.append(f"inbox   {a['file']} → {a['topic']} ({a['action']})")
    for q in inbox.get("quarantined", []):
        out.append(f"inbox   {q['file']} quarantined: {q['reason']}")
    out.append(
        f"{len(data['promoted'])} promoted, {len(data['archived'])} archived, {data['kept']} kept in cold; "
        f"topics: {', '.join(sorted(data['topics'])) or '-'}"
    )
    return out


def _as_of(value: str | None) -> datetime | None:
    """Parse --as-of (YYYY-MM-DD or ISO 8601); a bad date is the user's mistake (exit 2)."""
    from scribed.promote import parse_as_of

    if not value:
        return None
    try:
        return parse_as_of(value)
    except ValueError as exc:
        cli_mod.fail(f"--as-of: {exc}")


def register(main: click.Group) -> None:
    """Add the wiki commands to the ``scribed`` group."""

    @main.command("promote")
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option(
        "--as-of", "as_of", metavar="DATE", help="Age entries as of DATE (YYYY-MM-DD or ISO; default now)."
    )
    @click.option("--dry-run", is_flag=True, help="Print the plan (entries, facts, topics); write nothing.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def promote_cmd(
        ctx: click.Context, root: str | None, as_of: str | None, dry_run: bool, as_json: bool
    ) -> None:
        """Move cold entries older than cold.ttl_days into the wiki (facts) and the archive."""
        from scribed.promote import promote

        cfg = _cfg(ctx, root)
        when = _as_of(as_of)
        data = promote(cfg, as_of=when, dry_run=dry_run)
        _emit(data, as_json, _promote_lines(data))

    @main.command("wiki-write")
    @click.argument("topic")
    @click.option("--agent", required=True, help="The author (an agent name).")
    @click.option("--title", default="", help="Block title (default: the text's first line).")
    @click.option(
        "--file", "file_", type=click.Path(dir_okay=False, exists=True), help="Read the text from FILE."
    )
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def wiki_write(
        ctx: click.Context,
        topic: str,
        agent: str,
        title: str,
        file_: str | None,
        root: str | None,
        as_json: bool,
    ) -> None:
        """Add a fact to wiki/TOPIC.md from FILE or stdin, stamped with its author and today's date."""
        from scribed.fsutil import root_lock
        from scribed.promote import write_agent_fact
        from scribed.wiki import WikiError, valid_topic

        if valid_topic(topic) is None:
            cli_mod.fail(f"bad topic name {topic!r} (lowercase letters, digits, '-' and '_'; not 'index')")
        cfg = _cfg(ctx, root)
        if file_:
            raw = Path(file_).read_bytes()
        elif sys.stdin is None or sys.stdin.isatty():
            cli_mod.fail("no text: pass --file FILE or pipe the text on stdin")
        else:
            raw = sys.stdin.buffer.read()
        text = raw.decode("utf-8", "replace")
        layout = Layout(cfg.root_path)
        try:
            with root_lock(layout.lock):
                data = write_agent_fact(layout, topic, agent, text, title=title)
        except WikiError as exc:
            cli_mod.fail(str(exc))
        _emit(
            data, as_json, [f"wiki/{data['topic']}.md: {data['action']} “{data['title']}” by {data['agent']}"]
        )

    @main.command("wiki-deprecate")
    @click.argument("topic")
    @click.argument("title")
    @click.option("--agent", required=True, help="Who deprecates it (an agent name).")
    @click.option("--reason", default="", help="Why it no longer holds.")
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.pass_context
    def wiki_deprecate(
        ctx: click.Context, topic: str, title: str, agent: str, reason: str, root: str | None, as_json: bool
    ) -> None:
        """Mark the block TITLE of wiki/TOPIC.md deprecated (it is kept, not deleted)."""
        from scribed.fsutil import root_lock
        from scribed.promote import deprecate
        from scribed.wiki import WikiError

        cfg = _cfg(ctx, root)
        layout = Layout(cfg.root_path)
        try:
            with root_lock(layout.lock):
                data = deprecate(layout, topic, title, agent, reason=reason)
        except WikiError as exc:
            cli_mod.fail(str(exc))
        _emit(data, as_json, [f"wiki/{data['topic']}.md: “{data['block']}” is now {data['status']}"])

    @main.command("import")
    @click.argument("agents", nargs=-1)
    @click.option("--all", "all_", is_flag=True, help="Every agent under .squad/agents/, and decisions.md.")
    @click.option("--as-of", "as_of", metavar="DATE", help="Age entries as of DATE (default now).")
    @click.option("--dry-run", is_flag=True, help="Show what would be imported; write nothing.")
    @click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
    @click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
    @click.pass_context
    def import_cmd(
        ctx: click.Context,
        agents: tuple[str, ...],
        all_: bool,
        as_of: str | None,
        dry_run: bool,
        as_json: bool,
        root: str | None,
    ) -> None:
        """Seed cold and wiki from a legacy Squad repo (history.md, decisions.md); never changes them."""
        from scribed.importer import ImportRefused, import_squad

        if bool(agents) == all_:
            cli_mod.fail("name the agents to import, or pass --all (not both)")
        cfg = _cfg(ctx, root)
        when = _as_of(as_of)
        try:
            data = import_squad(cfg, None if all_ else list(agents), dry_run=dry_run, as_of=when)
        except ImportRefused as exc:
            cli_mod.fail(str(exc))
        head = "dry run, nothing written: " if dry_run else ""
        lines = [f"{head}import of {', '.join(data['agents']) or 'no agents'} as of {data['as_of']}"]
        lines += [f"cold    {c['agent']:<12} {c['date'][:10]} {c['title']}" for c in data["cold"]]
        lines += [
            f"wiki    {c['agent']:<12} {c['date'][:10]} {c['title']} → {', '.join(c['topics'])}"
            for c in data["promoted"]
        ]
        lines += [f"archive {c['agent']:<12} {c['date'][:10]} {c['title']}" for c in data["archived"]]
        lines += [
            f"pinned  {p['agent']:<12} → {p['topic']}: {p['title']} ({p['action']})" for p in data["pinned"]
        ]
        lines.append(
            f"{len(data['cold'])} to cold, {len(data['promoted'])} to wiki, {len(data['archived'])} archived, "
            f"{len(data['pinned'])} pinned, {data['skipped']} already imported"
        )
        for w in data["warnings"]:
            click.echo(f"scribed: warning: {w}", err=True)
        _emit(data, as_json, lines)
