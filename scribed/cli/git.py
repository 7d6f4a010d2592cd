"""``scribed git setup`` (make this clone's team memory merge cleanly) and ``scribed git
merge-file`` (the merge driver git runs for tier files; see :mod:`scribed.core.gitsetup`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import click

from scribed import hint
from scribed.cli import common as cli_mod


@click.group("git")
def git_group() -> None:
    """Team memory in git: setup and the merge driver."""


@git_group.command("setup")
@click.option("--root", type=click.Path(file_okay=False), default=None, help="Squad root (default: config).")
@click.option("--json", "as_json", is_flag=True, help="Print the changes as JSON.")
@click.pass_context
def setup_cmd(ctx: click.Context, root: str | None, as_json: bool) -> None:
    """Write .gitattributes, this clone's merge driver and .squad/memory/.gitignore (idempotent)."""
    from scribed.cli.checks import load_checked
    from scribed.core.gitsetup import GitSetupError
    from scribed.core.scribe import Scribe

    cfg = load_checked(ctx, root)
    if not cfg.root_path.is_dir():
        cli_mod.fail(f"root: not a folder: {cfg.root_path}")
    scribe = Scribe(cfg)
    try:
        got = scribe.git_setup()
    except GitSetupError as exc:
        cli_mod.fail(str(exc))
    finally:
        scribe.close()
    if as_json:
        click.echo(json.dumps({"changes": got.changes, "commit": got.commit}))
        return
    for line in got.changes:
        click.echo(line)
    if scribe.layout.on_branch:
        click.echo(
            f"nothing to change: stateBackend={scribe.layout.backend!r} keeps the tiers on the squad-state "
            "branch, and scribed merges that branch itself (no driver, no .gitattributes)"
        )
        return
    click.echo(f"{len(got.changes)} change(s)" if got.changes else "nothing to change: already set up")
    if got.commit:  # removals and their replacements are staged together: commit them together
        click.echo(f"to commit them, in {got.top}:\n  {got.commit}")


@git_group.command("merge-file")
@click.argument("base", type=click.Path(dir_okay=False))
@click.argument("ours", type=click.Path(dir_okay=False))
@click.argument("theirs", type=click.Path(dir_okay=False))
@click.argument("path", default="")
def merge_file_cmd(base: str, ours: str, theirs: str, path: str) -> None:
    """Merge THEIRS into OURS against BASE entry by entry (git runs this: %O %A %B %P). Exit 1 on a
    true conflict (the same lines changed two ways): both versions between markers, git reports it."""
    from scribed.fsutil import atomic_write, read_text
    from scribed.tiers import git_merge

    kind = git_merge.kind_of(path or ours)
    if not kind:  # not a tier file: git's own text merge
        raise SystemExit(subprocess.run(["git", "merge-file", ours, base, theirs], check=False).returncode)
    old, mine, other = (read_text(Path(p)) for p in (base, ours, theirs))
    old, mine, other = (git_merge.repair(kind, x) or x for x in (old, mine, other))
    got = git_merge.merge_file(kind, mine, other, old)
    atomic_write(Path(ours), got.marked if got.conflicts else got.text)
    if got.conflicts:
        click.echo(
            f"scribed: {path or ours}: changed two ways on both sides: {', '.join(got.conflicts)}. Both "
            "versions are in the file between conflict markers: keep what is right, then git add it "
            f"(or run `{hint.cmd('run-once')}`, which keeps both)",
            err=True,
        )
        raise SystemExit(1)


def register(main: click.Group) -> None:
    main.add_command(git_group)
