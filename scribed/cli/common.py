"""Helpers every ``scribed`` subcommand shares: messages, exit codes and loading the config.

Kept apart from :mod:`scribed.cli.main` so the subcommand modules import them without an import circle.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from scribed import log as log_mod
from scribed.config_light import ConfigError, bad_agent
from scribed.fsutil import ensure_dir

if TYPE_CHECKING:  # the config module loads pydantic: only commands that load a config pay for it
    from scribed.config import Config
    from scribed.config_light import LightConfig


def fail(msg: str, code: int = 2) -> NoReturn:
    click.echo(f"scribed: error: {msg}", err=True)
    sys.exit(code)


def warn(msg: str) -> None:
    click.echo(f"scribed: warning: {msg}", err=True)


def note(msg: str) -> None:
    """Say on stderr why an output is empty (stdout stays what scripts parse)."""
    click.echo(f"scribed: {msg}", err=True)


def _obj(ctx: click.Context) -> dict[str, Any]:
    obj = ctx.find_root().obj
    return obj if isinstance(obj, dict) else {}


def check_agents(cfg: Config | LightConfig) -> None:
    """Sources' agent names, checked before anything looks at the root (a config error comes first)."""
    problem = bad_agent(cfg)
    if problem:
        fail(problem)


def require_squad(cfg: Config | LightConfig, init: bool) -> None:
    """A root without ``.squad/`` is most likely a typo: refuse it (exit 2) unless ``--init``."""
    squad = cfg.root_path / ".squad"
    if squad.is_dir():
        return
    if init:
        ensure_dir(squad)
        note(f"created {squad}")
        return
    fail(f"{cfg.root_path}: no .squad/ folder here (is root right?); pass --init to create it")


def load_config(ctx: click.Context, root: str | None = None, *, need_squad: bool = True) -> Config:
    from scribed import config as config_mod

    try:
        cfg = config_mod.load(_obj(ctx).get("config_path"))
        if root:
            cfg.root = os.path.abspath(root)
    except ConfigError as exc:
        fail(str(exc))
    log_mod.configure(cfg.log.format, cfg.log.level)
    if need_squad:
        check_agents(cfg)
        require_squad(cfg, bool(_obj(ctx).get("init")))
    return cfg
