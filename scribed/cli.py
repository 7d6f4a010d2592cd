"""The ``scribed`` command: a thin click layer over :class:`scribed.pipeline.Scribe`.

Exit codes: 0 ok, 1 some work failed (it stays queued for the next run), 2 usage/config error.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import click

from scribed import __version__
from scribed import config as config_mod
from scribed import log as log_mod
from scribed.config import Config, ConfigError
from scribed.fsutil import RootBusy, root_lock


def fail(msg: str, code: int = 2) -> NoReturn:
    click.echo(f"scribed: error: {msg}", err=True)
    sys.exit(code)


def load_config(ctx: click.Context, root: str | None = None) -> Config:
    try:
        cfg = config_mod.load(ctx.obj.get("config_path"))
        if root:
            cfg.root = os.path.abspath(root)
    except ConfigError as exc:
        fail(str(exc))
    log_mod.configure(cfg.log.format, cfg.log.level)
    return cfg


class Main(click.Group):
    """Turns unexpected exceptions into one line (set SCRIBED_DEBUG=1 for the traceback)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except ConfigError as exc:
            fail(str(exc))
        except RootBusy as exc:
            fail(str(exc), 1)
        except KeyboardInterrupt:
            fail("interrupted", 130)
        except Exception as exc:
            if os.environ.get("SCRIBED_DEBUG"):
                raise
            fail(f"{type(exc).__name__}: {exc}", 1)


@click.group(cls=Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--config", "config_path", metavar="PATH", help="Config file (default: see README lookup order)."
)
@click.version_option(__version__, prog_name="scribed")
@click.pass_context
def main(ctx: click.Context, config_path: str | None) -> None:
    """scribed: keeps the hot, cold and wiki tiers of agent memory."""
    ctx.ensure_object(dict)
    ctx.obj["config_path"] = config_path


def _progress(enabled: bool) -> Callable[[list[Any]], Iterator[Any]] | None:
    if not enabled:
        return None

    def wrap(items: list[Any]) -> Iterator[Any]:
        if len(items) < 20:
            yield from items
            return
        with click.progressbar(items, label="compacting", file=sys.stderr) as bar:
            yield from bar

    return wrap


@main.command("run-once")
@click.option("--root", type=click.Path(file_okay=False), help="Squad root (the folder holding .squad/).")
@click.option("--force", is_flag=True, help="Also take sessions that are not quiet yet.")
@click.option("--dry-run", is_flag=True, help="Write nothing; show what would be done.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_context
def run_once(ctx: click.Context, root: str | None, force: bool, dry_run: bool, as_json: bool) -> None:
    """Compact every finished session once, then exit."""
    from scribed.pipeline import Scribe

    cfg = load_config(ctx, root)
    scribe = Scribe(cfg, dry_run=dry_run)
    log = log_mod.get()
    try:
        progress = _progress(sys.stderr.isatty() and not as_json)
        if dry_run:
            report = scribe.run_once(force=force, progress=progress)
        else:
            lock = scribe.layout.lock
            try:
                with root_lock(lock, timeout=0):
                    report = scribe.run_once(force=force, progress=progress)
            except RootBusy:
                log.info("waiting_for_lock", lock=str(lock))
                with root_lock(lock):
                    report = scribe.run_once(force=force, progress=progress)
    finally:
        scribe.close()
    data = report.public()
    if dry_run:
        data["dry_run"] = True
    if as_json:
        click.echo(json.dumps(data, indent=2))
    else:
        for e in report.entries:
            click.echo(
                f"{e.agent:<12} {e.session[:36]:<36} {e.bytes_in:>9} → {e.bytes_out:>6} B  "
                f"ratio {e.ratio:.3f}  recall {e.recall:.2f}  {e.compressor}"
            )
        click.echo(
            f"{report.sessions} sessions: {report.compacted} compacted, {report.skipped} skipped, "
            f"{report.failed} failed" + (" (dry run: nothing written)" if dry_run else "")
        )
    sys.exit(1 if report.failed else 0)


@main.command("check-config")
@click.pass_context
def check_config(ctx: click.Context) -> None:
    """Validate the config and print where it came from."""
    cfg = load_config(ctx)
    src = cfg.path or "(defaults: no config file found)"
    click.echo(f"config ok: {src}")
    click.echo(f"root: {cfg.root_path}")
    for s in cfg.sources:
        exists = "ok" if s.expanded.exists() else "missing"
        click.echo(f"source: {s.kind} {s.expanded} agent={s.agent or '-'} ({exists})")
    click.echo(
        f"compress: {cfg.compress.backend}"
        + (f" llm={cfg.llm.model}@{cfg.llm.base_url}" if cfg.llm.configured else "")
    )


@main.command("redact")
def redact_cmd() -> None:
    """Read stdin, print it with secrets replaced by [REDACTED_SECRET]."""
    from scribed.redact import redact

    data = sys.stdin.buffer.read().decode("utf-8", "replace")
    sys.stdout.write(redact(data))
    sys.stdout.flush()


@main.command("demo")
@click.argument("folder", type=click.Path(file_okay=False))
def demo_cmd(folder: str) -> None:
    """Write a demo squad root (transcripts, a hot file, scribed.toml) into FOLDER."""
    from pathlib import Path

    from scribed import demo

    root = Path(folder)
    if root.exists() and any(root.iterdir()):
        fail(f"{root}: folder is not empty; pick a new one")
    root.mkdir(parents=True, exist_ok=True)
    demo.build(root)
    click.echo(f"demo squad root written to {root}")
    click.echo(f"next: scribed --config {root / 'scribed.toml'} run-once")


# Command groups live in their own modules; each registers onto `main`.
from scribed import cli_context  # noqa: E402

cli_context.register(main)
from scribed import cli_daemon  # noqa: E402

cli_daemon.register(main)
from scribed import cli_wiki  # noqa: E402

cli_wiki.register(main)
from scribed import cli_search  # noqa: E402

cli_search.register(main)
from scribed import mcp_server  # noqa: E402

mcp_server.register(main)
