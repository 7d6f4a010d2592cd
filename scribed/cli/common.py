"""Helpers every ``scribed`` subcommand shares: messages, exit codes and loading the config.

Kept apart from :mod:`scribed.cli.main` so the subcommand modules import them without an import circle.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from scribed import hint
from scribed import log as log_mod
from scribed.config_light import EX_CONFIG as EX_CONFIG  # re-exported: the CLI names it here
from scribed.config_light import ConfigError, bad_agent
from scribed.fsutil import ensure_dir

if TYPE_CHECKING:  # the config module loads pydantic: only commands that load a config pay for it
    from scribed.config import Config
    from scribed.config_light import LightConfig


def fail(msg: str, code: int = 2) -> NoReturn:
    """Each line of ``msg`` (a config error lists every problem, one a line) as an error; exit."""
    for line in msg.splitlines() or [""]:
        click.echo(f"scribed: error: {line}", err=True)
    sys.exit(code)


def warn(msg: str) -> None:
    click.echo(f"scribed: warning: {msg}", err=True)


def reader_gone() -> NoReturn:
    """The reader of stdout stopped early (``scribed status | head -1``): that is no error. Point
    stdout at /dev/null (the exit's flush must not fail again) and exit 0, quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(0)


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


def root_origin(cfg: Config | LightConfig, from_flag: bool) -> str:
    """Where the root came from, for a message: ``--root``, the config's ``root =``, or the default."""
    if from_flag:
        return "given with --root"
    if cfg.path and cfg.root_set:
        return f"set by `root =` in {cfg.path}"
    if cfg.path:
        return f"the folder of {cfg.path}, which sets no `root =`"
    return "the current folder, as no config file was found"


def root_problem(cfg: Config | LightConfig, from_flag: bool, *, init_here: bool = True) -> str | None:
    """The one-line reason a root that does not exist or is not a folder cannot be used; else None.
    ``init_here``: the command takes ``--init`` (``status`` and ``check-config`` only report)."""
    root, origin = cfg.root_path, root_origin(cfg, from_flag)
    fix = (
        "check the path"
        if from_flag
        else "fix `root =` there"
        if cfg.path and cfg.root_set
        else "add `root = DIR` there"
        if cfg.path
        else "pass --root DIR"
    )
    if root.is_symlink() and not root.exists():
        return f"root {root} is a symlink to {os.readlink(root)}, which does not exist ({origin}); {fix}"
    if not root.exists():
        init = "pass --init" if init_here else f"`{hint.cmd('--init', 'run-once')}`"
        return f"root folder {root} does not exist ({origin}); {fix}, or {init} to create it with .squad/"
    if not root.is_dir():
        return f"root {root} is not a folder ({origin}); {fix}"
    return None


def require_squad(cfg: Config | LightConfig, init: bool, from_flag: bool = False) -> None:
    """A root without ``.squad/`` is most likely a typo: refuse it (exit 2) unless ``--init``,
    which creates ``.squad/`` (and a missing root folder), never through a file."""
    squad = cfg.root_path / ".squad"
    if squad.is_dir():
        return
    root = cfg.root_path
    if init and (root.is_dir() or not (root.exists() or root.is_symlink())):
        ensure_dir(squad)
        note(f"created {squad}")
        return
    fail(
        root_problem(cfg, from_flag)
        or f"{root}: no .squad/ folder here (the root is {root_origin(cfg, from_flag)}: is that right?); "
        "pass --init to create it"
    )


def init_requested(ctx: click.Context) -> bool:
    """Whether the group's ``--init`` was given."""
    return bool(_obj(ctx).get("init"))


def no_config(ctx: click.Context, cfg: Config | LightConfig, root: str | None = None) -> str | None:
    """The one line saying no config file was found (naming the files looked for) when none was
    and no source is configured either: such a run reads only hot files, which is rarely meant."""
    from scribed.config_light import looked_for

    if cfg.path is not None or cfg.sources:
        return None
    return (
        f"no config file found (looked for {looked_for(_obj(ctx).get('config_path'), root)}), "
        "so no [[sources]] are read; pass --config FILE, or `scribed setup` writes ROOT/scribed.toml"
    )


def load_config(
    ctx: click.Context,
    root: str | None = None,
    *,
    need_squad: bool = True,
    error_code: int = 2,
) -> Config:
    """The config (``error_code`` on a file that cannot be read or validated), with ``--root``
    applied; ``need_squad``: also check agent names and refuse a root without ``.squad/``.
    A command that works on a root loads it with :func:`scribed.cli.checks.load_checked` instead,
    which also runs the validation ``scribed run`` runs."""
    from scribed import config as config_mod
    from scribed.config_light import implied_root

    hint.given(config=_obj(ctx).get("config_path"), root=root)  # what printed commands carry
    root = root or implied_root(
        _obj(ctx).get("config_path"), root, init=init_requested(ctx)
    )  # from a subfolder
    try:
        cfg = config_mod.load(_obj(ctx).get("config_path"), root)
        if root:
            cfg.root = os.path.abspath(root)
    except ConfigError as exc:
        fail(str(exc), error_code)
    log_mod.configure(cfg.log.format, cfg.log.level)
    if need_squad:
        check_agents(cfg)
        require_squad(cfg, bool(_obj(ctx).get("init")), bool(root))
    return cfg
