"""The systemd user unit ``scribed setup --systemd`` installs: ``deploy/scribed-user.service`` with
``ExecStart`` running this scribed with the config setup wrote. Read-only: :mod:`scribed.core.setup`
writes it."""

from __future__ import annotations

import contextlib
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path


def _unit_template() -> str:
    """deploy/scribed-user.service: shipped in the wheel as scribed/_deploy/, or the source tree's."""
    import importlib.resources

    with contextlib.suppress(OSError, ModuleNotFoundError):
        return (importlib.resources.files("scribed") / "_deploy" / "scribed-user.service").read_text()
    return (Path(__file__).parents[2] / "deploy" / "scribed-user.service").read_text()


def _systemd_quote(arg: str) -> str:
    if re.fullmatch(r"[A-Za-z0-9_./:=@%+-]+", arg):
        return arg.replace("%", "%%")
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%") + '"'


LEGACY_UNIT = "scribed.service"  # what setup installed before a repository had a unit of its own


def unit_name(root: Path) -> str:
    """``scribed-<folder>-<8 hex>.service``: one unit per repository, so two repositories on one
    machine each keep their daemon (the hash tells two folders of one name apart)."""
    resolved = str(root.resolve())
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", root.resolve().name).strip("-.")[:40] or "root"
    return f"scribed-{slug}-{hashlib.sha256(resolved.encode()).hexdigest()[:8]}.service"


def unit_text(command: list[str], config_path: Path, name: str = LEGACY_UNIT) -> str:
    """The user unit with ``ExecStart`` running this scribed with this config (the template's
    header, which says how to install it by hand, replaced by what is left to do)."""
    exec_start = " ".join(_systemd_quote(a) for a in [*command, "--config", str(config_path), "run"])
    body = _unit_template().split("[Unit]", 1)[1]
    short = name.removesuffix(".service")
    lines = [
        f"# scribed as a user service, written by `scribed setup` (config: {config_path}):",
        f"#   systemctl --user daemon-reload && systemctl --user enable --now {short}",
        '#   loginctl enable-linger "$USER"     # optional: keep it running after logout',
        f"#   journalctl --user -u {short} -f",
        "[Unit]",
    ]
    for line in body.splitlines()[1:]:
        if line.startswith("ExecStart="):
            lines.append(f"ExecStart={exec_start}")
        elif not line.startswith("# pip install --user puts the command here"):
            lines.append(line)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class FileChange:
    """A whole file ``setup`` writes (the systemd unit), or why it leaves it."""

    path: Path
    new_text: str | None
    before: bytes | None
    problem: str = ""


def plan_unit(config_home: Path, command: list[str], config_path: Path, root: Path) -> FileChange:
    """Install the repository's unit (:func:`unit_name`) under ``config_home`` (XDG), unless a
    different one is there; the ``scribed.service`` an earlier setup installed for this same
    config counts as installed (two units on one root would be two daemons)."""
    folder = config_home / "systemd" / "user"
    with contextlib.suppress(OSError):
        if (folder / LEGACY_UNIT).read_text() == unit_text(command, config_path):
            return FileChange(folder / LEGACY_UNIT, None, (folder / LEGACY_UNIT).read_bytes())
    name = unit_name(root)
    path = folder / name
    text = unit_text(command, config_path, name)
    try:
        before = path.read_bytes()
    except FileNotFoundError:
        return FileChange(path, text, None)
    except OSError as exc:
        return FileChange(path, None, None, f"cannot read it: {exc.strerror or exc}")
    if before.decode("utf-8", "replace") == text:
        return FileChange(path, None, before)
    return FileChange(path, None, before, "a different unit is installed there (not overwritten)")
