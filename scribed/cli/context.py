"""``scribed context`` and ``scribed report``: read-only commands for spawn templates and sizing.

Kept apart from :mod:`scribed.cli.main` so the coordinator's hot path (one ``context`` call per spawn)
imports nothing it does not need; :func:`register` adds both commands to the main group.
Neither writes a committed file. ``report`` writes nothing; ``context`` after a pull first brings
this machine's own files up to date under the root lock (waiting at most a second: the agent's
view ``cold/{agent}.md``, the hot file a pulled entry seeds, the derived wiki index; see
:func:`scribed.core.team_sync.refresh`), and leaves every repair of a committed file to the next run.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scribed.tiers.layout import Layout

if TYPE_CHECKING:
    from scribed.config import Config
    from scribed.config_light import LightConfig

_ROOT_HELP = "Squad root (the folder holding .squad/)."


def spawn_config(ctx: click.Context, root: str | None) -> LightConfig | Config:
    """:func:`scribed.cli.common.load_config` for these read-only commands: the same lookup, checks
    and messages, but a plainly valid file is read without pydantic (see :mod:`scribed.config_light`)."""
    from scribed import config_light
    from scribed import log as log_mod
    from scribed.cli.common import check_agents, fail, require_squad

    obj = ctx.find_root().obj
    opts = obj if isinstance(obj, dict) else {}
    cfg: LightConfig | Config | None
    root = root or config_light.implied_root(opts.get("config_path"), root, init=bool(opts.get("init")))
    try:
        data, path = config_light.read(opts.get("config_path"), root)
        cfg = config_light.light(data, path)
        if cfg is None:
            from scribed import config

            cfg = config.from_dict(data, path)
        if root:
            cfg.root = os.path.abspath(root)
    except config_light.ConfigError as exc:
        fail(str(exc))
    log_mod.configure(cfg.log.format, cfg.log.level)
    check_agents(cfg)
    require_squad(cfg, bool(opts.get("init")), bool(root))
    return cfg


def _layout(ctx: click.Context, root: str | None) -> Layout:
    return Layout(Path(spawn_config(ctx, root).root_path))


AGENTS_SHOWN = 10  # a message lists this many agent names, then how many more


def agent_list(names: list[str]) -> str:
    """Agent names for a message, bounded: a root may hold hundreds."""
    more = len(names) - AGENTS_SHOWN
    return ", ".join(names[:AGENTS_SHOWN]) + (f" and {more} more" if more > 0 else "")


def no_such_agents(missing: list[str], where: Path, known: list[str], what: str) -> str:
    """The line saying no agent of these names has ``what`` under ``where``, and which agents do:
    a typo'd name is then seen as one, not measured or searched as an agent with nothing."""
    names = ", ".join(repr(n) for n in missing)
    head = (
        f"no agent named {names} has {what} under {where}"
        if len(missing) == 1
        else f"no agents named {names} have {what} under {where}"
    )
    return head + (f"; agents that do: {agent_list(known)}" if known else "; no agent has any yet")


@click.command("context")
@click.argument("agent")
@click.option("--include-cold", is_flag=True, help="Add cold history (newest entries first).")
@click.option(
    "--include-wiki",
    "wiki_topics",
    multiple=True,
    is_flag=False,
    flag_value="",
    metavar="TOPIC",
    help="Add wiki pages: the named topic (repeat, or comma-separate); alone: the index + topics the hot file and cold entries talk about.",
)
@click.option(
    "--situation",
    metavar="NAME",
    help="new-task (hot) · resume, debug (hot+cold) · spec, onboarding (hot+wiki) · post-incident (all).",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Fit the block in N bytes (0: no limit). Default: hot whole, at most 12 KB of cold and 8 KB of wiki.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["markdown", "json"]), default="markdown", show_default=True
)
@click.option("--root", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.option(
    "--query",
    default="",
    help="Fill cold/wiki with the entries and facts best matching TEXT (both if neither is asked).",
)
@click.pass_context
def context_cmd(
    ctx: click.Context,
    *,
    agent: str,
    include_cold: bool,
    wiki_topics: tuple[str, ...],
    situation: str | None,
    max_bytes: int | None,
    fmt: str,
    root: str | None,
    query: str,
) -> None:
    """Print AGENT's memory context block for a spawn prompt (hot, plus cold/wiki on request)."""
    from scribed.cli.common import fail, note
    from scribed.recall import context

    try:  # validate before reading any config, so a typo gets its own clear message
        context.check_agent(agent)
        context.check_situation(situation)
    except context.ContextError as exc:
        fail(str(exc))
    layout = _layout(ctx, root)
    from scribed.cli.spawn import refresh_cold

    refresh_cold(layout, agent)
    try:
        block = context.build(
            layout,
            agent,
            situation=situation,
            include_cold=include_cold,
            include_wiki=bool(wiki_topics),
            wiki_topics=[t for t in wiki_topics if t],
            max_bytes=max_bytes,
            query=query,
        )
    except context.ContextError as exc:
        fail(str(exc))
    if not block.hot.strip() and not block.cold and not block.wiki:
        note(
            f"no memory for {block.agent} under {layout.memory}: no hot file"
            + (", no cold entry" if block.situation or include_cold or query else "")
            + (", no wiki page" if block.situation or wiki_topics or query else "")
            + "; the block is empty"
        )
    over = context.over_limit(block, max_bytes)
    if over:
        note(over)
    if fmt == "json":
        click.echo(json.dumps(block.public(), indent=2, ensure_ascii=False))
    else:
        click.echo(block.text, nl=False)


@click.command("report")
@click.argument("agents", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help='Print {"agents": [...]}.')
@click.option("--markdown", "as_markdown", is_flag=True, help="Print the table only (no chart).")
@click.option(
    "--chart/--no-chart",
    default=None,
    help="Draw the savings as a bar chart after the table (default: on a terminal, unless --markdown).",
)
@click.option("--root", type=click.Path(file_okay=False), help=_ROOT_HELP)
@click.pass_context
def report_cmd(
    ctx: click.Context,
    *,
    agents: tuple[str, ...],
    as_json: bool,
    as_markdown: bool,
    chart: bool | None,
    root: str | None,
) -> None:
    """Per agent: what a Squad spawn loads today against the tiered spawn (charter + context)."""
    import sys

    from scribed.cli.common import fail, note
    from scribed.recall import context, report

    if as_json and as_markdown:
        fail("choose one of --json or --markdown")
    try:
        for a in agents:
            context.check_agent(a)
    except context.ContextError as exc:
        fail(str(exc))
    layout = _layout(ctx, root)
    if agents:  # a name with nothing behind it would be measured as an agent with empty files
        known = report.known_agents(layout)
        missing = [n for n in dict.fromkeys(map(context.check_agent, agents)) if n not in known]
        if missing:
            fail(
                no_such_agents(missing, layout.squad, known, "memory (a charter, history, hot or cold file)")
            )
    data = report.build(layout, list(agents))
    if not data["agents"]:
        note(f"no agents found under {layout.squad} (no charter, history, hot or cold file)")
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(report.markdown(data), nl=False)
    if chart if chart is not None else (sys.stdout.isatty() and not as_markdown):
        drawing = report.chart(data)
        if drawing:
            click.echo("\n" + drawing, nl=False)


def register(main: click.Group) -> None:
    """Add ``context`` and ``report`` to the ``scribed`` group."""
    main.add_command(context_cmd)
    main.add_command(report_cmd)
