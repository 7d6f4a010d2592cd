"""``scribed context AGENT`` without click: the spawn's fast path (issue 15: ≤ 150 ms a spawn).

A coordinator runs ``scribed context`` at every agent spawn; importing click and building the
command group costs about as much as the command's own work. :func:`run` handles only a plain
call (the options below, each given once, a valid config, a root with ``.squad/``, an agent and a
situation that pass their checks) and prints what the click command would print, byte for byte.
Anything else (``--help``, ``--init``, ``--query``, which needs the search index, a repeated option,
any error) returns None before a byte is written, and the click command runs as before, so every message
and exit code stays the click command's own. ``tests/test_spawn.py`` compares the two.
"""

from __future__ import annotations

import codecs
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scribed.recall.context import Context
    from scribed.tiers.layout import Layout

VALUE_OPTIONS = ("--config", "--root", "--situation", "--max-bytes", "--format")
FLAGS = ("--include-cold",)
WIKI = "--include-wiki"  # repeatable; alone (the next word an option, or none) it means no topic
FORMATS = ("markdown", "json")


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The options of a plain ``context`` call (``--config`` before or after it), or None."""
    opts: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        name, eq, value = a.partition("=")
        if name in VALUE_OPTIONS and (positional or name == "--config"):  # the group takes only --config
            if not eq:
                if i + 1 >= len(argv):
                    return None
                i += 1
                value = argv[i]
            if name in opts or value.startswith("-"):
                return None
            opts[name] = value
        elif a in FLAGS and positional and a not in opts:
            opts[a] = True
        elif name == WIKI and positional:
            if not eq and argv[i + 1 : i + 2] and not argv[i + 1].startswith("-"):  # click's rule too,
                i += 1  # but for a lone '-' (a topic to click): that one is handed over below
                value = argv[i]
            opts.setdefault(WIKI, []).append(value)
        elif a.startswith("-") or not a:
            return None
        else:
            positional.append(a)
        i += 1
    if len(positional) != 2 or positional[0] != "context":  # noqa: PLR2004 (the command and AGENT)
        return None
    raw = opts.get("--max-bytes")  # not given: the default budgets (None)
    if (
        not (raw is None or (raw.isascii() and raw.isdigit()))
        or opts.get("--format", "markdown") not in FORMATS
    ):
        return None
    opts["--max-bytes"] = None if raw is None else int(raw)
    opts["agent"] = positional[1]
    return opts


def _utf8(stream: Any) -> bool:
    try:
        return stream is not None and codecs.lookup(stream.encoding).name == "utf-8"
    except (AttributeError, LookupError, TypeError):
        return False


def _block(opts: dict[str, Any]) -> tuple[Context, Path] | None:
    """The block the click command would print, or None when the click command must run."""
    from scribed import config_light
    from scribed.names import normalize_name
    from scribed.recall import context
    from scribed.tiers.layout import Layout

    try:  # checked first, as the click command does: its message wins over a config's
        context.check_agent(opts["agent"])
        context.check_situation(opts.get("--situation"))
        root = opts.get("--root") or config_light.implied_root(opts.get("--config"), None)
        data, path = config_light.read(opts.get("--config"), root)
    except (context.ContextError, config_light.ConfigError):
        return None
    cfg = config_light.light(data, path)
    if cfg is None or any(s.agent and normalize_name(s.agent) is None for s in cfg.sources):
        return None
    if root:
        cfg.root = os.path.abspath(root)
    layout = Layout(Path(cfg.root_path))
    if not (layout.root / ".squad").is_dir():
        return None
    refresh_cold(layout, opts["agent"])
    try:
        block = context.build(
            layout,
            opts["agent"],
            situation=opts.get("--situation"),
            include_cold=bool(opts.get("--include-cold")),
            include_wiki=WIKI in opts,
            wiki_topics=[t for t in opts.get(WIKI, ()) if t],
            max_bytes=opts["--max-bytes"],
        )
    except context.ContextError:
        return None
    return block, layout.memory


def _texts(opts: dict[str, Any], block: Context, memory: Path) -> tuple[str, str]:
    """(stdout, stderr) as the click command writes them."""
    from scribed.recall import context as context_mod

    err = ""
    if not block.hot.strip() and not block.cold and not block.wiki:
        cold = bool(block.situation or opts.get("--include-cold"))
        wiki = bool(block.situation or WIKI in opts)
        err = (
            f"scribed: no memory for {block.agent} under {memory}: no hot file"
            + (", no cold entry" if cold else "")
            + (", no wiki page" if wiki else "")
            + "; the block is empty\n"
        )
    over = context_mod.over_limit(block, opts["--max-bytes"])
    if over:
        err += f"scribed: {over}\n"
    if opts.get("--format") == "json":
        import json

        return json.dumps(block.public(), indent=2, ensure_ascii=False) + "\n", err
    return block.text, err


def refresh_cold(layout: Layout, agent: str) -> None:
    """A pull since the last run changed the agent's shared entries: sync its view first (a few
    ``stat`` calls when nothing changed; see :func:`scribed.core.team_sync.refresh`)."""
    from scribed.names import normalize_name
    from scribed.tiers.layout import branch_moved, store_newer

    name = normalize_name(agent)
    if name is not None and (store_newer(layout.cold, name) or (layout.on_branch and branch_moved(layout))):
        from scribed.core.team_sync import refresh

        refresh(layout, name)


def run(argv: list[str]) -> int | None:
    """Print the context block for a plain ``scribed context`` call and return its exit code;
    None (having written nothing) when the click command must handle ``argv``."""
    if not (_utf8(sys.stdout) and _utf8(sys.stderr)) or "SCRIBED_DEBUG" in os.environ:
        return None
    opts = parse(argv)
    if opts is None:
        return None
    try:
        built = _block(opts)
        if built is None:
            return None
        out, err = _texts(opts, *built)
    except KeyboardInterrupt:
        sys.stderr.write("scribed: error: interrupted\n")
        return 130
    except Exception:  # the click command runs again and reports it in its own words
        return None
    if "\x1b" in out or "\x1b" in err:  # click strips ANSI codes unless writing to a terminal
        return None
    try:
        if err:
            sys.stderr.write(err)
            sys.stderr.flush()
        sys.stdout.write(out)
        sys.stdout.flush()
    except BrokenPipeError:  # a reader that stopped early (`| head`): no error, as every command
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's flush finds no pipe
        return 0
    return 0
