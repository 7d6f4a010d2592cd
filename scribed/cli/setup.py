"""``scribed setup``: the thin command over :mod:`scribed.core.setup` (which finds, plans and writes)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import click

from scribed.cli.common import fail


def scribed_command() -> list[str]:
    """How an agent or systemd starts this scribed: the ``scribed`` on PATH when it is this one,
    else this interpreter with ``-m scribed`` (a venv not on the agents' PATH still works)."""
    exe = shutil.which("scribed")
    if exe and Path(exe).resolve().parent == Path(sys.executable).resolve().parent:
        return [str(Path(exe).absolute())]
    here = Path(sys.executable).parent / "scribed"
    if here.is_file() and os.access(here, os.X_OK):
        return [str(here)]
    return [sys.executable, "-m", "scribed"]


# deploy/compose.yaml reads these variables; deploy/ is in scribed's source tree, not in the wheel.
# SCRIBED_UID, not UID: bash's UID is readonly (`UID=1000 docker …` fails before docker runs).
COMPOSE = (
    "SQUAD_ROOT={root} CLAUDE_PROJECTS={claude} CODEX_SESSIONS={codex} COPILOT_STATE={copilot} "
    "SCRIBED_UID=$(id -u) docker compose -f deploy/compose.yaml up -d --build"
)


def _compose_line(p: Any) -> str:
    """The compose command with this machine's folders (deploy/compose.yaml reads these variables)."""
    import shlex

    by_kind = {f.kind: str(f.path) for f in reversed(p.found)}  # the first of each kind
    return COMPOSE.format(
        root=shlex.quote(str(p.root)),
        **{k: shlex.quote(by_kind.get(k, "/dev/null")) for k in ("claude", "codex", "copilot")},
    )


def default_root(here: Path) -> tuple[Path, str]:
    """The root ``setup`` picks without ``--root``, and why: the nearest folder from ``here`` up
    holding ``.squad/`` (inside the repository), else the git top level, else ``here``. Run from
    ``repo/src/api`` it must not create a second root there."""
    here = here.absolute()
    top = next((d for d in (here, *here.parents) if (d / ".git").exists()), None)
    for d in (here, *here.parents):
        if (d / ".squad").is_dir():
            return d, "the nearest folder holding .squad/" if d != here else "the current folder"
        if d == top:
            break
    if top is not None:
        return top, "the git top level" if top != here else "the current folder"
    return here, "the current folder (not in a git repository)"


@click.command("setup")
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    help="The repository to set up (it gets .squad/ if it has none). Default: the nearest folder "
    "up from here holding .squad/, else the git top level, else the current folder.",
)
@click.option("--home", type=click.Path(file_okay=False), help="Home folder to look in (default: yours).")
@click.option("--dry-run", is_flag=True, help="Print the config and every change; write nothing.")
@click.option("--no-mcp", is_flag=True, help="Do not register `scribed mcp` with the agents.")
@click.option("--systemd", is_flag=True, help="Also install the systemd user unit (not started).")
@click.option("--docker", is_flag=True, help="Also print the docker compose line for these folders.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def setup_cmd(
    ctx: click.Context,
    *,
    root: str | None,
    home: str | None,
    dry_run: bool,
    no_mcp: bool,
    systemd: bool,
    docker: bool,
    as_json: bool,
) -> None:
    """Find the agents' transcript folders on this machine, write a config for ROOT with them,
    register `scribed mcp` with Claude Code, Copilot CLI and Codex, and optionally install the
    systemd user unit. Every change is listed; a second run changes nothing."""
    from scribed.core import setup, setup_find

    obj = ctx.find_root().obj
    explicit = obj.get("config_path") if isinstance(obj, dict) else None
    where, chosen = (Path(root).absolute(), "") if root else default_root(Path.cwd())
    if where.exists() and not where.is_dir():
        fail(f"--root {where} is not a folder")
    if not where.exists():
        fail(f"--root {where} does not exist (setup sets up an existing repository)")
    homes = setup_find.Homes.of(Path(home) if home else None, os.environ)
    config_path = Path(explicit).absolute() if explicit else where / "scribed.toml"
    command = scribed_command()
    p = setup.plan(
        where, homes=homes, config_path=config_path, command=command, mcp=not no_mcp, systemd=systemd
    )
    applied = [] if dry_run else setup.apply(p)
    if as_json:
        click.echo(json.dumps({**_json(p, applied, dry_run, docker), "root_chosen": chosen}, indent=2))
    else:
        _print(p, applied, dry_run, docker, systemd, chosen=chosen)
    sys.exit(1 if any(not a.ok for a in applied) else 0)


def _json(p: Any, applied: list[Any], dry_run: bool, docker: bool) -> dict[str, Any]:
    from scribed.core import setup

    done = {a.step.path: a for a in applied}
    return {
        "root": str(p.root),
        "dry_run": dry_run,
        "found": [
            {
                "tool": f.tool,
                "kind": f.kind,
                "path": str(f.path),
                "files": f.files,
                "note": f.note,
                "suggest": setup.in_config(f, p.config_path, p.root).suggestion(),
            }
            for f in p.found
        ],
        "config": {"path": str(p.config_path), "proposal": p.config.proposal},
        "changes": [
            {
                "change": s.what,
                "path": str(s.path),
                "applied": bool(done.get(s.path) and done[s.path].ok),
                "problem": done[s.path].problem if s.path in done else "",
            }
            for s in p.steps
        ],
        "manual": [
            {"change": s.what, "path": str(s.path), "why": s.problem, "snippet": s.snippet} for s in p.manual
        ],
        **({"docker": _compose_line(p)} if docker else {}),
    }


def _print(
    p: Any, applied: list[Any], dry_run: bool, docker: bool, systemd: bool, *, chosen: str = ""
) -> None:
    from scribed.core import setup

    why = f" ({chosen}, chosen as the root; --root DIR picks another)" if chosen else ""
    click.echo(f"scribed setup for {p.root}{why}")
    if not p.found:
        click.echo("found no agent's transcripts (Claude Code, Copilot CLI, Codex, Aider, SpecStory)")
    for f in p.found:
        note = f" ({f.note})" if f.note else ""
        click.echo(f"found {f.tool}: {f.path}, {f.files} transcript file{'s' * (f.files != 1)}{note}")
        suggestion = setup.in_config(f, p.config_path, p.root).suggestion()
        click.echo("".join(f"  {ln}\n" for ln in suggestion.splitlines()), nl=False)
    if dry_run:
        click.echo(f"\nconfig {p.config_path}:")
        click.echo("".join(f"  {ln}\n" if ln else "\n" for ln in p.config.proposal.splitlines()), nl=False)
        for r in p.registered:
            click.echo(f"\nMCP registration for {r.tool} in {r.path}:")
            click.echo("".join(f"  {ln}\n" for ln in r.snippet.splitlines()), nl=False)
    click.echo("")
    failed = {a.step.path: a.problem for a in applied if not a.ok}
    if not p.steps and not p.manual:
        parts = [
            "the config",
            *(["the MCP registrations"] if p.registered else []),
            *(["the unit"] if systemd else []),
        ]
        listed = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
        click.echo(f"nothing to change: {listed} {'are' if len(parts) > 1 else 'is'} in place")
    for s in p.steps:
        mark = "would " if dry_run else "failed to " if s.path in failed else ""
        click.echo(f"{mark}{s.what}" + (f": {failed[s.path]}" if s.path in failed else ""))
    for s in p.manual:
        click.echo(f"not written: {s.what}: {s.problem}; to do it by hand, put this there:")
        click.echo("".join(f"  {ln}\n" for ln in s.snippet.splitlines()), nl=False)
    if dry_run and p.steps:
        click.echo("dry run: nothing written (run without --dry-run to make these changes)")
    if p.registered and importlib.util.find_spec("mcp") is None:
        click.echo(
            "note: `scribed mcp` needs the MCP SDK, not installed here: pip install 'scribed-memory[mcp]'"
        )
    if docker:
        click.echo(f"docker (from a scribed source checkout, where deploy/ is): {_compose_line(p)}")
    _next(p, dry_run, systemd)


def _next(p: Any, dry_run: bool, systemd: bool) -> None:
    """The commands to run next, each pasteable: the config's path shell-quoted (a repository
    under "My Repo" split it in two)."""
    import shlex

    if dry_run:
        return
    cfg = shlex.quote(str(p.config_path))
    click.echo(f"next: scribed --config {cfg} run-once   # compact what is finished now")
    if systemd and p.unit is not None:
        name = p.unit.name.removesuffix(".service")
        click.echo(f"      systemctl --user daemon-reload && systemctl --user enable --now {name}")
    else:
        click.echo(f"      scribed --config {cfg} run   # or keep it running: scribed setup --systemd")


def register(main: click.Group) -> None:
    """Add ``setup`` to the ``scribed`` group."""
    main.add_command(setup_cmd)
