"""Registering ``scribed mcp`` with the agents that take MCP servers, in their own config files.

Each tool keeps its servers in a file of its own format:

* Claude Code: the project's ``.mcp.json`` at the repository root, ``{"mcpServers": {NAME: {"type":
  "stdio", "command", "args"}}}`` (project scope: the file is meant to be committed; Claude Code
  asks before it starts a server it finds there).
* Copilot CLI: ``$COPILOT_HOME/mcp-config.json`` (default ``~/.copilot``), ``{"mcpServers": {NAME:
  {"type": "local", "command", "args", "tools": ["*"]}}}``.
* Codex: ``$CODEX_HOME/config.toml`` (default ``~/.codex``), a ``[mcp_servers.NAME]`` table with
  ``command`` and ``args``.

A registration is merged, never overwritten: other servers and keys stay as they are. When the
file cannot be changed safely (it does not parse, it is a symlink, ``scribed`` already names a
different server there, a TOML layout an appended table would break), the exact snippet is
returned for the user to paste instead. Nothing here writes: :func:`plan` says what to write and
:mod:`scribed.core.setup` writes it.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

SERVER = "scribed"


@dataclass(frozen=True, slots=True)
class Registration:
    """One tool's registration: the new text of its file, or why the user must paste ``snippet``."""

    tool: str
    path: Path
    snippet: str  # the entry as it goes in the file (JSON or TOML)
    new_text: str | None  # the whole file with the entry merged; None: nothing to write
    before: bytes | None  # the file as read (None: it did not exist), to check nothing changed since
    problem: str = ""  # why it is not written (then the user pastes the snippet)

    @property
    def needed(self) -> bool:
        return self.new_text is not None or bool(self.problem)


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _json_entry(entry: dict[str, object]) -> str:
    return json.dumps({"mcpServers": {SERVER: entry}}, indent=2) + "\n"


def json_registration(tool: str, path: Path, entry: dict[str, object]) -> Registration:
    """Merge ``entry`` as ``mcpServers.scribed`` into the JSON file at ``path``."""
    snippet = _json_entry(entry)
    if path.is_symlink():
        return Registration(tool, path, snippet, None, None, "it is a symlink (not written through)")
    try:
        before = _read(path)
    except OSError as exc:
        return Registration(tool, path, snippet, None, None, f"cannot read it: {exc.strerror or exc}")
    if before is None or not before.strip():
        return Registration(tool, path, snippet, snippet, before)
    try:
        data = json.loads(before)
    except ValueError as exc:  # JSON with comments (JSONC) included: rewriting would lose them
        return Registration(tool, path, snippet, None, before, f"not plain JSON ({exc}); left as it is")
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        return Registration(tool, path, snippet, None, before, "its mcpServers is not an object")
    if servers.get(SERVER) == entry:
        return Registration(tool, path, snippet, None, before)
    if SERVER in servers:
        return Registration(
            tool,
            path,
            snippet,
            None,
            before,
            f'it already has a different "{SERVER}" server (not overwritten)',
        )
    merged = {**data, "mcpServers": {**servers, SERVER: entry}}
    return Registration(tool, path, snippet, json.dumps(merged, indent=2) + "\n", before)


def _toml_string(s: str) -> str:
    return json.dumps(s)  # a JSON string is a TOML basic string (same escapes)


def toml_entry(command: list[str]) -> str:
    args = ", ".join(_toml_string(a) for a in command[1:])
    return f"[mcp_servers.{SERVER}]\ncommand = {_toml_string(command[0])}\nargs = [{args}]\n"


def toml_registration(tool: str, path: Path, command: list[str]) -> Registration:
    """Append ``[mcp_servers.scribed]`` to the TOML file at ``path``, checked by parsing the result:
    the file's other text (comments, order) stays byte for byte."""
    snippet = toml_entry(command)
    want = {"command": command[0], "args": command[1:]}
    if path.is_symlink():
        return Registration(tool, path, snippet, None, None, "it is a symlink (not written through)")
    try:
        before = _read(path)
        old = tomllib.loads(before.decode("utf-8")) if before else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return Registration(tool, path, snippet, None, None, f"cannot read it as TOML ({exc}); left as it is")
    servers = old.get("mcp_servers", {})
    if isinstance(servers, dict) and isinstance(servers.get(SERVER), dict):
        have = servers[SERVER]
        if {k: have.get(k) for k in want} == want:
            return Registration(tool, path, snippet, None, before)
        return Registration(
            tool,
            path,
            snippet,
            None,
            before,
            f"it already has a different [mcp_servers.{SERVER}] (not overwritten)",
        )
    text = before.decode("utf-8") if before else ""
    sep = "" if not text else "\n" if text.endswith("\n") else "\n\n"
    new_text = (
        f"{text}{sep}# added by `scribed setup`: spawns read their memory through these tools\n{snippet}"
    )
    try:
        new = tomllib.loads(new_text)
    except tomllib.TOMLDecodeError:
        new = None
    expected = {**old, "mcp_servers": {**(servers if isinstance(servers, dict) else {}), SERVER: want}}
    if new != expected:  # e.g. mcp_servers written as an inline table: an appended table breaks it
        return Registration(
            tool, path, snippet, None, before, "an appended table would not parse as intended"
        )
    return Registration(tool, path, snippet, new_text, before)
