"""The systemd user unit ``scribed setup --systemd`` installs: ``deploy/scribed-user.service`` with
``ExecStart`` running this scribed with the config setup wrote. Read-only: :mod:`scribed.core.setup`
writes it."""

from __future__ import annotations

import contextlib
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


def unit_text(command: list[str], config_path: Path) -> str:
    """The user unit with ``ExecStart`` running this scribed with this config (the template's
    header, which says how to install it by hand, replaced by what is left to do)."""
    exec_start = " ".join(_systemd_quote(a) for a in [*command, "--config", str(config_path), "run"])
    body = _unit_template().split("[Unit]", 1)[1]
    lines = [
        f"# scribed as a user service, written by `scribed setup` (config: {config_path}):",
        "#   systemctl --user daemon-reload && systemctl --user enable --now scribed",
        '#   loginctl enable-linger "$USER"     # optional: keep it running after logout',
        "#   journalctl --user -u scribed -f",
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


def plan_unit(config_home: Path, command: list[str], config_path: Path) -> FileChange:
    """Install the unit under ``config_home`` (XDG), unless a different one is there."""
    path = config_home / "systemd" / "user" / "scribed.service"
    text = unit_text(command, config_path)
    try:
        before = path.read_bytes()
    except FileNotFoundError:
        return FileChange(path, text, None)
    except OSError as exc:
        return FileChange(path, None, None, f"cannot read it: {exc.strerror or exc}")
    if before.decode("utf-8", "replace") == text:
        return FileChange(path, None, before)
    return FileChange(path, None, before, "a different unit is installed there (not overwritten)")
