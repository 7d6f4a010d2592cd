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

import codecs
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from scribed.config_light import ConfigError, decode_config

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
    replaces: str = ""  # the root of an older scribed registration this one replaces (see tied_root)

    @property
    def needed(self) -> bool:
        return self.new_text is not None or bool(self.problem)


def tied_root(entry: object) -> str | None:
    """The root of a registration an older ``scribed setup`` wrote for one repository
    (``… --config CONFIG mcp --root ROOT``) in a file every repository shares; None for anything
    else (the user's own, or one that serves every repository)."""
    args = entry.get("args") if isinstance(entry, dict) else None
    if not isinstance(args, list) or len(args) < 5 or not all(isinstance(a, str) for a in args):  # noqa: PLR2004
        return None
    if args[-5] == "--config" and args[-3:-1] == ["mcp", "--root"]:
        return str(args[-1])
    return None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _json_entry(entry: dict[str, object]) -> str:
    return json.dumps({"mcpServers": {SERVER: entry}}, indent=2) + "\n"


def json_registration(
    tool: str, path: Path, entry: dict[str, object], *, replace_tied: bool = False
) -> Registration:
    """Merge ``entry`` as ``mcpServers.scribed`` into the JSON file at ``path``; ``replace_tied``:
    an older scribed registration tied to one repository (:func:`tied_root`) is replaced."""
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
    old_root = tied_root(servers.get(SERVER)) if replace_tied else None
    if SERVER in servers and old_root is None:
        return Registration(
            tool,
            path,
            snippet,
            None,
            before,
            f'it already has a different "{SERVER}" server (not overwritten)',
        )
    merged = {**data, "mcpServers": {**servers, SERVER: entry}}
    new_text = json.dumps(merged, indent=2) + "\n"
    return Registration(tool, path, snippet, new_text, before, replaces=old_root or "")


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
        text = decode_config(before, path) if before else ""
        old = tomllib.loads(text)
    except (OSError, ConfigError, tomllib.TOMLDecodeError) as exc:
        return Registration(tool, path, snippet, None, None, f"cannot read it as TOML ({exc}); left as it is")
    bom = "\ufeff" if before and before.startswith(codecs.BOM_UTF8) else ""  # kept as the file had it
    servers = old.get("mcp_servers", {})
    if isinstance(servers, dict) and isinstance(servers.get(SERVER), dict):
        have = servers[SERVER]
        if {k: have.get(k) for k in want} == want:
            return Registration(tool, path, snippet, None, before)
        replaced = _replace_tied(text, have, snippet, {**old, "mcp_servers": {**servers, SERVER: want}})
        if replaced is not None:
            return Registration(tool, path, snippet, bom + replaced, before, replaces=str(tied_root(have)))
        return Registration(
            tool,
            path,
            snippet,
            None,
            before,
            f"it already has a different [mcp_servers.{SERVER}] (not overwritten)",
        )
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
        inline = inline_edit(text, command, expected)
        if inline is not None:
            line_no, line = inline
            return Registration(
                tool, path, line + "\n", None, before,
                f"its mcp_servers is an inline table (line {line_no}), which an appended "
                f"[mcp_servers.{SERVER}] would declare twice: replace line {line_no} with this one",
            )  # fmt: skip
        return Registration(
            tool, path, _inline_entry(command) + "\n", None, before,
            "an appended table would not parse as intended: add this entry inside its mcp_servers table",
        )  # fmt: skip
    return Registration(tool, path, snippet, bom + new_text, before)


def _replace_tied(
    text: str, have: dict[str, object], snippet: str, expected: dict[str, object]
) -> str | None:
    """``text`` with the ``[mcp_servers.scribed]`` table an older setup wrote for one repository
    (found as it wrote it) replaced by ``snippet``; None when it is not that, or the result would
    not parse to ``expected``."""
    if tied_root(have) is None or set(have) - {"command", "args"}:
        return None
    command, args = have.get("command"), have.get("args")
    if not isinstance(command, str) or not isinstance(args, list):
        return None
    written = toml_entry([command, *(str(a) for a in args)])
    if text.count(written) != 1:
        return None
    new_text = text.replace(written, snippet)
    try:
        return new_text if tomllib.loads(new_text) == expected else None
    except tomllib.TOMLDecodeError:
        return None


def _inline_entry(command: list[str]) -> str:
    args = ", ".join(_toml_string(a) for a in command[1:])
    return f"{SERVER} = {{ command = {_toml_string(command[0])}, args = [{args}] }}"


def inline_edit(text: str, command: list[str], expected: dict[str, object]) -> tuple[int, str] | None:
    """Where ``mcp_servers`` is one inline table (``mcp_servers = { docs = … }``), the line that
    replaces it with the scribed entry added inside: (its 1-based number, the new line), checked
    by parsing the file with it; None when the table is not found on one line or that fails."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head = line.lstrip()
        if not head.startswith("mcp_servers") or head[len("mcp_servers") :].lstrip()[:1] != "=":
            continue
        start = line.find("{")
        end = _closing_brace(line, start) if start >= 0 else None
        if end is None:
            return None
        inner = line[start + 1 : end].strip()
        new_line = (
            f"{line[:start]}{{ {inner}{', ' if inner else ''}{_inline_entry(command)} }}{line[end + 1 :]}"
        )
        try:
            ok = tomllib.loads("\n".join([*lines[:i], new_line, *lines[i + 1 :]])) == expected
        except tomllib.TOMLDecodeError:
            ok = False
        return (i + 1, new_line) if ok else None
    return None


def _closing_brace(line: str, start: int) -> int | None:
    """The index of the ``}`` closing the ``{`` at ``start`` (strings skipped); None: not on this line."""
    depth, i, quote = 0, start, ""
    while i < len(line):
        c = line[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i if c == "}" else None
        elif c == "#":
            return None
        i += 1
    return None
