"""The ``scribed`` command: a thin click layer over :class:`scribed.core.scribe.Scribe`.

Exit codes: 0 ok, 1 some work failed (it stays queued for the next run), 2 usage/config error;
`scribed run` exits 78 (EX_CONFIG) on a config it cannot start with (see :mod:`scribed.cli.checks`).
The group's own options (``--config``, ``--init``) are accepted before or after the subcommand.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

import click

from scribed import __version__, hint
from scribed.cli.common import fail, reader_gone
from scribed.config_light import ConfigError

# Nothing heavier is imported at the top: a spawn's `scribed context` loads this module too.

# The group's options a user may also put after the subcommand (`scribed run-once --config X`).
GROUP_VALUE_OPTIONS = ("--config",)
GROUP_FLAGS = ("--init",)


SID_COLUMN = 36  # a longer session id shows its tail, which tells sessions apart (a date)


def hoist_group_options(args: list[str]) -> list[str]:
    """Move the group's options found after the subcommand to the front, so both orders work."""
    i = 0
    while i < len(args) and args[i] != "--" and args[i].startswith("-"):
        i += 2 if args[i] in GROUP_VALUE_OPTIONS else 1
    head, tail = args[: i + 1], args[i + 1 :]
    moved: list[str] = []
    rest: list[str] = []
    j = 0
    while j < len(tail):
        a = tail[j]
        if a == "--":
            rest += tail[j:]
            break
        if a in GROUP_VALUE_OPTIONS:
            moved += tail[j : j + 2]
            j += 2
            continue
        if a in GROUP_FLAGS or any(a.startswith(o + "=") for o in GROUP_VALUE_OPTIONS):
            moved.append(a)
        else:
            rest.append(a)
        j += 1
    return moved + head + rest


# Subcommands living in their own modules, imported only when named: a spawn's `scribed context`
# loads no daemon, ledger or MCP code. Each module's register() adds its commands to the group.
LAZY: dict[str, str] = {
    "context": "context", "report": "context",
    "run": "daemon", "healthcheck": "daemon", "status": "daemon",
    "promote": "wiki", "import": "wiki", "review": "wiki", "wiki": "wiki",
    "wiki-write": "wiki", "wiki-deprecate": "wiki", "cold-remove": "cold",
    "search": "search", "mcp": "mcp_server", "show": "transcripts", "doctor": "transcripts",
    "git": "git", "setup": "setup",
}  # fmt: skip


class Main(click.Group):
    """Turns unexpected exceptions into one line (set SCRIBED_DEBUG=1 for the traceback), and
    loads a subcommand's module only when that command is named."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *LAZY})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY:
            importlib.import_module(f"scribed.cli.{LAZY[cmd_name]}").register(self)
        return self.commands.get(cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, hoist_group_options(list(args)))

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except BrokenPipeError:  # a reader that stopped early (`| head`): no error (click says 1)
            reader_gone()
        except ConfigError as exc:
            fail(str(exc))
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except Exception as exc:
            if _root_busy(exc):
                fail(str(exc), 1)
            if os.environ.get("SCRIBED_DEBUG"):
                raise
            fail(f"{type(exc).__name__}: {exc}", 1)


def _root_busy(exc: Exception) -> bool:
    """Whether ``exc`` is the root lock's RootBusyError (its module is loaded only by commands that lock)."""
    lock = sys.modules.get("scribed.core.lock")
    return lock is not None and isinstance(exc, lock.RootBusyError)


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config",
    "config_path",
    metavar="PATH",
    help="Config file (default: see docs/configuration.md for the lookup order). Also accepted after the subcommand.",
)
@click.option(
    "--init", is_flag=True, help="Create ROOT/.squad/ when it is missing (otherwise such a root is refused)."
)
@click.version_option(__version__, prog_name="scribed")
@click.pass_context
def main(ctx: click.Context, config_path: str | None, init: bool) -> None:
    """scribed: keeps the hot, cold and wiki tiers of agent memory."""
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path
    ctx.obj["init"] = init


def _progress(enabled: bool) -> Callable[[list[Any]], Iterator[Any]] | None:
    """A TTY bar over the backlog's files that counts their bytes (its ETA is the bytes' rate)."""
    if not enabled:
        return None
    from scribed import log as log_mod

    def size(item: Any) -> int:
        try:
            return int(item.path.stat().st_size)
        except OSError:
            return 0

    def wrap(items: list[Any]) -> Iterator[Any]:
        yield from log_mod.progress(items, "compacting", unit="file", enabled=True, size=size)

    return wrap


@main.command("run-once")
@click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
@click.option("--force", is_flag=True, help="Also take sessions that are not quiet yet.")
@click.option("--dry-run", is_flag=True, help="Write nothing; show what would be done.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def run_once(ctx: click.Context, root: str | None, force: bool, dry_run: bool, as_json: bool) -> None:
    """Compact every finished session once, then exit."""
    from scribed.cli.checks import load_checked
    from scribed.cli.common import init_requested, no_config, note
    from scribed.core.scribe import Scribe

    cfg = load_checked(ctx, root, warnings=True)
    scribe = Scribe(cfg, dry_run=dry_run)
    try:
        with _signals_as_interrupt():
            report = scribe.run(force=force, progress=_progress(sys.stderr.isatty() and not as_json))
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (a service manager, `timeout`)
        _interrupted(scribe, exc, dry_run)
    finally:
        scribe.close()
    data = report.public()
    if dry_run:
        data["dry_run"] = True
    held = _withheld(cfg)
    data["hot_withheld"] = [w.to_json() for w in held]
    missing = no_config(ctx, cfg, root)
    if missing and not report.files and not init_requested(ctx):
        fail(missing)  # nothing read, nothing found: not a success to report as "0 sessions"
    if missing:
        note(missing)
    if not report.files:
        why = (
            "(the source warnings say why)"
            if report.source_warnings
            else f"(see `{hint.cmd('check-config')}`)"
            if cfg.sources
            else "(no [[sources]] in the config)"
        )
        note(f"nothing to compact: no transcript and no hot file found {why}")
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        for e in report.entries:
            sid = e.session if len(e.session) <= SID_COLUMN else "…" + e.session[1 - SID_COLUMN :]
            click.echo(
                f"{e.agent:<12} {sid:<{SID_COLUMN}} {e.bytes_in:>9} → {e.bytes_out:>6} B  "
                f"ratio {e.ratio:.3f}  recall {e.recall:.2f}  {e.compressor}"
            )
        click.echo(
            f"{report.sessions} sessions: {report.compacted} compacted, {report.skipped} skipped, "
            f"{report.failed} failed" + (" (dry run: nothing written)" if dry_run else "")
        )
        for line in report.why_not(time.time()):
            click.echo(line)
        for w in held:
            click.echo(w.line())
    sys.exit(0 if report.ok else 1)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread where Ctrl-C raises KeyboardInterrupt: the run unwinds
    the same clean way (the open batch rolled back, the pool closed, the lock released)."""


@contextlib.contextmanager
def _signals_as_interrupt() -> Iterator[None]:
    """While a run works, SIGTERM stops it as Ctrl-C does (it killed the process silently: exit
    143, nothing said); a second one is ignored so that the cleanup runs to its end. Both wait for
    a write in progress to rename its temp file (:func:`scribed.fsutil.interrupt`)."""
    from scribed.fsutil import interrupt, interrupts_kept

    def on_term(_signum: int, _frame: object) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        interrupt(_Terminated())

    def on_int(_signum: int, _frame: object) -> None:
        interrupt(KeyboardInterrupt())

    try:
        before = signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # not the main thread (an embedding caller's): nothing to install
        yield
        return
    before_int = signal.getsignal(signal.SIGINT)
    if before_int is signal.default_int_handler:  # not when it is ignored (started with `&`, nohup)
        signal.signal(signal.SIGINT, on_int)
    try:
        with interrupts_kept((KeyboardInterrupt,)):
            yield
    finally:
        signal.signal(signal.SIGTERM, before)
        signal.signal(signal.SIGINT, before_int)


def _interrupted(scribe: Any, exc: KeyboardInterrupt, dry_run: bool) -> None:
    """One line: what the interrupted run saved (the batches it committed) and that a rerun goes
    on from there; exit 128 + the signal (143 SIGTERM, 130 SIGINT)."""
    from scribed.log import get as get_logger

    sig = signal.SIGTERM if isinstance(exc, _Terminated) else signal.SIGINT
    n = scribe.last_report.compacted if scribe.last_report is not None else 0
    get_logger().info("run_interrupted", signal=sig.name, compacted=n, dry_run=dry_run or None)
    if dry_run:
        said = "a dry run: nothing written"
    else:
        said = (
            f"{n} session{'s' * (n != 1)} saved; `{hint.cmd('run-once')}` again continues with the rest "
            "(nothing is compacted twice)"
        )
    click.echo(f"scribed: interrupted by {sig.name}: {said}", err=True)
    sys.exit(128 + sig)


def _withheld(cfg: Any) -> list[Any]:
    """Hot files an edit keeps from their seeds (said on every run until it is dealt with)."""
    from scribed.tiers.cold import Layout
    from scribed.tiers.hot_seed import withheld

    return withheld(Layout(cfg.root_path))


@main.command("check-config")
@click.option(
    "--root",
    type=click.Path(file_okay=False),
    help="Squad root to check (its scribed.toml is looked for first; it overrides the config's root).",
)
@click.option("--strict", is_flag=True, help="Exit 1 on warnings too (a source path that does not exist).")
@click.pass_context
def check_config(ctx: click.Context, root: str | None, strict: bool) -> None:
    """Validate the config as `scribed run` does (same errors, same words), print where it came
    from and check that its paths exist. Exit 2 on what `run` refuses (which exits 78 there)."""
    from scribed.cli import checks
    from scribed.cli.common import init_requested, load_config, note, warn

    cfg = load_config(ctx, root, need_squad=False)
    found = checks.enforce(cfg, from_flag=bool(root), init=init_requested(ctx), daemon="warn")
    listings = [checks.listing(cfg, i) for i in range(len(cfg.sources))]  # what a run logs of each
    warnings = [p.message for p in found if not p.watched]
    warnings += [w for ls in listings if ls is not None for w in ls.warnings]
    src = cfg.path or "(defaults: no config file found)"
    click.echo(f"config ok: {src}" if not warnings else f"config valid, {len(warnings)} warning(s): {src}")
    click.echo(f"root: {cfg.root_path}")
    for s, ls in zip(cfg.sources, listings, strict=True):
        if ls is not None:
            state = f"{ls.files} file{'s' * (ls.files != 1)}"
            if ls.warnings:
                state += f", {len(ls.warnings)} warning{'s' * (len(ls.warnings) != 1)} below"
        elif os.path.exists(s.expanded):
            state = "not a folder"
        else:
            state = "not there yet, watched for" if checks.watched_for(s.kind, s.expanded) else "missing"
        click.echo(f"source: {s.kind} {s.expanded} agent={s.agent or '-'} ({state})")
    click.echo(
        f"compress: {cfg.compress.backend}"
        + (f" llm={cfg.llm.model}@{cfg.llm.base_url}" if cfg.llm.configured else "")
    )
    click.echo(f"promotion: {cfg.promote.schedule} {cfg.promote.timezone}")
    if not cfg.sources:
        note("no [[sources]] configured: only the hot files are compacted (`scribed setup` finds them)")
    for w in warnings:
        warn(w)
    for p in found:
        if p.watched:
            note(p.message)
    sys.exit(1 if strict and warnings else 0)


@main.command("redact")
def redact_cmd() -> None:
    """Read stdin, print it with secrets replaced by [REDACTED_SECRET]."""
    from scribed.session.door import redacted

    data = sys.stdin.buffer.read().decode("utf-8", "replace")
    sys.stdout.write(redacted(data))
    sys.stdout.flush()


@main.command("demo")
@click.argument("folder", type=click.Path(file_okay=False))
def demo_cmd(folder: str) -> None:
    """Write a demo squad root (transcripts, a hot file, scribed.toml) into FOLDER."""
    import shlex
    from pathlib import Path

    from scribed.cli import demo

    root = Path(folder)
    if root.exists() and any(root.iterdir()):
        fail(f"{root}: folder is not empty; pick a new one")
    root.mkdir(parents=True, exist_ok=True)
    demo.build(root)
    click.echo(f"demo squad root written to {root}")
    click.echo(f"next: scribed --config {shlex.quote(str(root / 'scribed.toml'))} run-once")
