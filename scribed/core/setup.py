"""``scribed setup``: find the agents' transcript folders on this machine, propose a config for one
repository root, write it, register ``scribed mcp`` with the agents that take MCP servers, and
optionally install the systemd user unit. Idempotent: a second run finds nothing to change.

:func:`plan` only reads (a dry run prints it); :func:`apply` writes what it lists, each file
atomically and only if it still holds what :func:`plan` read. What is found, and where each tool
keeps its transcripts, is :mod:`scribed.core.setup_find`; this module turns it into the config,
the MCP registrations and the unit.
"""

from __future__ import annotations

import codecs
import dataclasses
import json
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from scribed.config import ConfigError, from_dict
from scribed.config_light import decode_config
from scribed.core import setup_mcp
from scribed.core.setup_find import ROOT_SCOPED, Found, Homes, find
from scribed.core.setup_mcp import Registration
from scribed.core.setup_unit import plan_unit, unit_text
from scribed.fsutil import UnsafePathError, atomic_write, ensure_dir


# --- the config -----------------------------------------------------------------------------------
def _in_config(found: Found, config_dir: Path, root: Path) -> Found:
    """``found`` with its path as the config at ``config_dir`` writes it (relative inside that
    folder), and, for a folder other repositories' sessions reach (:data:`ROOT_SCOPED`), the root
    as its ``workspace``."""
    if found.kind in ROOT_SCOPED:
        found = dataclasses.replace(found, workspace=_shown_in(root, config_dir))
    if found.shown.startswith("~"):
        return found
    try:
        rel = found.path.relative_to(config_dir)
    except ValueError:
        return dataclasses.replace(found, shown=str(found.path))
    return dataclasses.replace(found, shown=str(rel))


def in_config(found: Found, config_path: Path, root: Path) -> Found:
    """``found`` as the config at ``config_path`` writes it (its path relative to that file)."""
    return _in_config(found, config_path.parent.absolute(), root)


def _shown_in(root: Path, config_dir: Path) -> str:
    """The root as a config in ``config_dir`` names it: "." beside it, else absolute."""
    return "." if root == config_dir else str(root)


def config_text(root: Path, config_path: Path, found: list[Found]) -> str:
    """A new config for ``root``: its root, then one ``[[sources]]`` block per source found."""
    here = config_path.parent.absolute()
    rel_root = _shown_in(root, here)
    tools = ", ".join(dict.fromkeys(f.tool for f in found)) or "no agent"
    head = (
        f"# scribed config written by `scribed setup` for {root}: found {tools}.\n"
        "# Every key with its default: config.example.toml. Check it with `scribed check-config`.\n"
        "# Relative paths are relative to this file.\n\n"
        f"root = {json.dumps(rel_root)}\n"
    )
    return head + "".join("\n" + _in_config(f, here, root).block() for f in found)


def _same_source(a: object, kind: str, path: Path, glob: str) -> bool:
    return (
        getattr(a, "kind", None) == kind
        and getattr(a, "expanded", None) == path
        and (getattr(a, "glob", "") or "") == glob
    )


@dataclass(slots=True)
class ConfigChange:
    """What happens to the config file: ``new_text`` to write (None: nothing), or a ``problem``."""

    path: Path
    proposal: str  # the whole config a fresh setup writes (what --dry-run prints)
    new_text: str | None = None
    before: bytes | None = None
    added: list[Found] = field(default_factory=list)
    problem: str = ""


def plan_config(root: Path, config_path: Path, found: list[Found]) -> ConfigChange:
    """Write a new config, or append the sources an existing one lacks (its text otherwise kept)."""
    proposal = config_text(root, config_path, found)
    try:
        before = config_path.read_bytes()
    except FileNotFoundError:
        _validate(proposal, config_path)
        return ConfigChange(config_path, proposal, proposal, None, list(found))
    except OSError as exc:
        return ConfigChange(config_path, proposal, problem=f"cannot read it: {exc.strerror or exc}")
    if config_path.is_symlink():
        return ConfigChange(
            config_path, proposal, before=before, problem="it is a symlink (not written through)"
        )
    bom = "\ufeff" if before.startswith(codecs.BOM_UTF8) else ""  # Notepad's: kept as the file had it
    try:
        text = decode_config(before, config_path)
        cfg = from_dict(tomllib.loads(text), config_path.absolute())
    except (tomllib.TOMLDecodeError, ConfigError) as exc:
        return ConfigChange(
            config_path, proposal, before=before, problem=f"it is not a valid config ({exc}): fix it first"
        )
    if cfg.root_path != root:
        return ConfigChange(
            config_path,
            proposal,
            before=before,
            problem=f"it is the config of root {cfg.root_path}; pass --config PATH for a config of {root}",
        )
    here = config_path.parent.absolute()
    missing = [f for f in found if not any(_same_source(s, f.kind, f.path, f.glob) for s in cfg.sources)]
    if not missing:
        return ConfigChange(config_path, proposal, before=before)
    sep = "" if text.endswith("\n") else "\n"
    new_text = text + sep + "".join("\n" + _in_config(f, here, root).block() for f in missing)
    try:
        new = from_dict(tomllib.loads(new_text), config_path.absolute())
    except (tomllib.TOMLDecodeError, ConfigError):
        new = None
    if new is None or len(new.sources) != len(cfg.sources) + len(missing):
        return ConfigChange(
            config_path, proposal, before=before, added=missing,
            problem="appending [[sources]] blocks would not parse as intended (sources written inline?)",
        )  # fmt: skip
    return ConfigChange(config_path, proposal, bom + new_text, before, missing)


def _validate(text: str, path: Path) -> None:
    """Our own proposal must be a valid config (a bug here must not write a broken file)."""
    from_dict(tomllib.loads(text), path.absolute())


# --- MCP ---------------------------------------------------------------------------------------------
def registrations(
    homes: Homes, root: Path, found: list[Found], command: list[str], shared: list[str]
) -> list[Registration]:
    """``scribed mcp`` registered with each installed tool that takes MCP servers: ``command``
    in the repository's own ``.mcp.json`` (Claude Code), ``shared`` in the files one user's every
    repository shares (Copilot CLI, Codex): it finds the root from the folder the agent starts it
    in, so a second repository's setup finds it in place."""
    tools = {f.tool for f in found}
    out: list[Registration] = []
    entry: dict[str, object]
    if "Claude Code" in tools:
        entry = {"type": "stdio", "command": command[0], "args": command[1:]}
        out.append(setup_mcp.json_registration("Claude Code", root / ".mcp.json", entry))
    if "Copilot CLI" in tools:
        entry = {"type": "local", "command": shared[0], "args": shared[1:], "tools": ["*"]}
        path = homes.copilot / "mcp-config.json"
        out.append(setup_mcp.json_registration("Copilot CLI", path, entry, replace_tied=True))
    if "Codex" in tools:
        out.append(setup_mcp.toml_registration("Codex", homes.codex / "config.toml", shared))
    return out


# --- the plan and its application --------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Step:
    """One change ``apply`` makes (``text`` None: a folder), or one the user makes by hand."""

    what: str  # a line for the user: "write …", "add the MCP server … to …"
    path: Path
    text: str | None = None
    before: bytes | None = None
    problem: str = ""  # set: not written; ``snippet`` is what to paste
    snippet: str = ""


@dataclass(slots=True)
class Plan:
    """Everything ``setup`` found and would change, read-only."""

    root: Path
    config_path: Path
    found: list[Found]
    config: ConfigChange
    steps: list[Step]  # what apply writes, in order
    manual: list[Step]  # what it cannot write safely: the user pastes the snippet
    registered: list[Registration]
    unit: Path | None = None  # with --systemd: this repository's unit (or the earlier one serving it)

    @property
    def changes(self) -> bool:
        return bool(self.steps)


def plan(
    root: Path,
    *,
    homes: Homes,
    config_path: Path,
    command: list[str],
    mcp: bool = True,
    systemd: bool = False,
) -> Plan:
    """What ``scribed setup`` would do for ``root``; reads only. ``command`` starts scribed (its
    executable, or the interpreter and ``-m scribed``)."""
    root = root.absolute()
    found = find(homes, root)
    cfg = plan_config(root, config_path.absolute(), found)
    steps: list[Step] = []
    manual: list[Step] = []
    if not (root / ".squad").is_dir():
        steps.append(
            Step(f"create {root / '.squad'}/ (scribed's memory lives in .squad/memory/)", root / ".squad")
        )
    if cfg.problem:
        manual.append(Step(f"config {cfg.path}", cfg.path, problem=cfg.problem, snippet=cfg.proposal))
    elif cfg.new_text is not None:
        what = "write" if cfg.before is None else f"add {len(cfg.added)} [[sources]] to"
        steps.append(Step(f"{what} {cfg.path} ({_tools(cfg.added)})", cfg.path, cfg.new_text, cfg.before))
    serve = [*command, "--config", str(cfg.path), "mcp", "--root", str(root)]
    regs = registrations(homes, root, found, serve, [*command, "mcp"]) if mcp else []
    for r in regs:
        what = f'register MCP server "{setup_mcp.SERVER}" for {r.tool} in {r.path}'
        if r.replaces:
            what = (
                f'replace MCP server "{setup_mcp.SERVER}" for {r.tool} in {r.path} (it served only '
                f"{r.replaces}; the new one serves the repository the agent runs in)"
            )
        if r.problem:
            manual.append(Step(what, r.path, problem=r.problem, snippet=r.snippet))
        elif r.new_text is not None:
            steps.append(Step(what, r.path, r.new_text, r.before, snippet=r.snippet))
    unit_path: Path | None = None
    if systemd:
        unit = plan_unit(homes.config, command, cfg.path, root)
        unit_path = unit.path
        if unit.problem:
            manual.append(
                Step(
                    f"systemd user unit {unit.path}",
                    unit.path,
                    problem=unit.problem,
                    snippet=unit_text(command, cfg.path, unit.path.name),
                )
            )
        elif unit.new_text is not None:
            steps.append(
                Step(f"install the systemd user unit {unit.path}", unit.path, unit.new_text, unit.before)
            )
    return Plan(root, cfg.path, found, cfg, steps, manual, regs, unit_path)


def _tools(found: list[Found]) -> str:
    return ", ".join(f"{f.tool} {f.kind}" for f in found) or "no sources"


@dataclass(frozen=True, slots=True)
class Applied:
    step: Step
    ok: bool
    problem: str = ""


def apply(p: Plan) -> list[Applied]:
    """Make the plan's changes, each file atomically and only if it still holds what was read."""
    out: list[Applied] = []
    for step in p.steps:
        try:
            if step.text is None:
                ensure_dir(step.path)
            else:
                _write(step)
        except (OSError, _ChangedError) as exc:
            why = str(exc) if isinstance(exc, _ChangedError) else str(exc.strerror or exc)
            out.append(Applied(step, False, why))
            continue
        out.append(Applied(step, True))
    return out


class _ChangedError(Exception):
    """The file changed between the plan and the write: left as it is now."""


def _write(step: Step) -> None:
    assert step.text is not None
    try:
        now: bytes | None = step.path.read_bytes()
        mode: int | None = step.path.stat().st_mode & 0o777
    except FileNotFoundError:
        now, mode = None, None
    if now != step.before:
        raise _ChangedError(f"{step.path} changed since it was read; run `scribed setup` again")
    if step.path.is_symlink():
        raise UnsafePathError(40, "refusing to write through a symlink", str(step.path))
    atomic_write(step.path, step.text)
    if mode is not None:
        os.chmod(step.path, mode)  # the user's file keeps its mode (atomic_write makes 0600)
