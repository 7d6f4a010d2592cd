"""``scribed search``: full-text search over cold, wiki, archive and the transcript archive, with provenance.

Read-only on the memory files; it writes only its own index in the state folder. Kept apart from
:mod:`scribed.cli.main` so a search imports nothing of the pipeline, the LLM client or the daemon.
"""

from __future__ import annotations

import json
import sys
from datetime import date
from pathlib import Path

import click

from scribed.cli.context import _ROOT_HELP, no_such_agents
from scribed.tiers.cold import Layout


def _since(raw: str | None) -> str:
    if not raw:
        return ""
    try:
        return date.fromisoformat(raw[:10]).isoformat()
    except ValueError:
        from scribed.cli.common import fail

        fail(f"--since: {raw!r} is not a date (YYYY-MM-DD)")


@click.command("search")
@click.argument("query", nargs=-1)
@click.option("--agent", default="", help="Only this agent's entries and facts.")
@click.option(
    "--tier",
    "tiers",
    multiple=True,
    type=click.Choice(["cold", "wiki", "archive", "transcript"]),
    help="Only these tiers (repeatable); default all.",
)
@click.option("--since", default=None, help="Only entries dated on or after YYYY-MM-DD.")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--json", "as_json", is_flag=True, help='Print {"hits": [...]}.')
@click.option("--rebuild", is_flag=True, help="Recreate the index from the files first.")
@click.option("--root", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.pass_context
def search_cmd(
    ctx: click.Context,
    *,
    query: tuple[str, ...],
    agent: str,
    tiers: tuple[str, ...],
    since: str | None,
    limit: int,
    as_json: bool,
    rebuild: bool,
    root: str | None,
) -> None:
    """Search cold entries, wiki facts (superseded ones marked), archived originals and archived
    transcripts for QUERY."""
    from scribed.cli.common import fail, load_config
    from scribed.recall.search import Index, SearchError
    from scribed.session.door import redacted
    from scribed.tiers import transcripts

    text = " ".join(query).strip()
    if not text and not rebuild:
        fail("search: give a QUERY (one or more words), or --rebuild")
    cfg = load_config(ctx, root)
    layout = Layout(Path(cfg.root_path))
    since_day = _since(since)
    with Index(layout, transcripts.folder(cfg, layout)) as index:
        n = index.refresh(rebuild=rebuild)
        if not text:
            click.echo(f"index rebuilt: {n} files")
            return
        try:
            hits = index.search(text, agent=agent.lower(), tiers=tiers, since=since_day, limit=limit)
        except SearchError as exc:
            fail(str(exc))
        known = index.agents() if agent and not hits else []
    if agent and not hits and agent.lower() not in known:  # a typo'd name, not "no match"
        fail(no_such_agents([agent.lower()], layout.root, known, "anything searchable"))
    shown = redacted(text)  # a pasted secret is searched for, never echoed
    if as_json:
        click.echo(
            json.dumps({"query": shown, "hits": [h.public() for h in hits]}, indent=2, ensure_ascii=False)
        )
    elif not hits:
        click.echo(f"no match for {shown!r}", err=True)
    for h in [] if as_json else hits:
        where = f"{h.file}:{h.line}" if h.line else h.file
        mark = "" if h.status == "active" else f" [{h.status}]"
        who = " · ".join(x for x in (h.agent, h.topic, h.session, h.date, h.source) if x)
        click.echo(f"{h.tier}{mark} {where} — {h.heading}")
        click.echo(f"    {who}")
        click.echo(f"    {h.snippet}")
    sys.stdout.flush()


def register(main: click.Group) -> None:
    main.add_command(search_cmd)
