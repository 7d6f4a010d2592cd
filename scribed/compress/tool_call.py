"""What a tool call did, in words: a call whose arguments are data (JSON, a patch) read by its tool
and the file it touched, the plan it set, or its short arguments; a shell call by its command. The
live hot file's last actions and an error's fix (``edited `x.py`: `the line it wrote```) read calls
through here, never their raw JSON (exploratory test 44: ~700 of the hot file's 4 KB were
``ran Edit {"file_path": …, "old_string": …}``)."""

from __future__ import annotations

import json
import re

from scribed.compress import plan as plan_mod
from scribed.compress.command_line import SHELL_TOOLS, unwrapped

SHORT_CHARS = 80  # an argument shown as it is; a longer one is data (a file's content, a prompt's text)
MAX_SHOWN = 3  # short arguments shown for a call that names no file
MIN_ALNUM = 3  # letters and digits of a written line worth showing (not a lone brace)
# A patch's file (``*** Update File: src/a.py``, ``+++ b/src/a.py``) and the lines it adds.
_PATCH_FILE = re.compile(r"^(?:\*\*\* (?:Update|Add|Delete) File: |\+\+\+ (?:b/)?)(?P<p>\S.*)$", re.M)
_ADDED = re.compile(r"^\+(?!\+\+)(?P<t>.*)$", re.M)
_REMOVED = re.compile(r"^-(?!--)(?P<t>.*)$", re.M)


def arguments(text: str, tool: str | None) -> tuple[str, object]:
    """(the call's text after its tool's name, its arguments parsed when they are JSON, else None)."""
    rest = text.strip()
    if tool and rest.startswith(tool):
        rest = rest[len(tool) :].lstrip(" :")
    if rest.startswith(("{", "[")):
        try:
            return rest, json.loads(rest)
        except ValueError:
            first = rest.split("\n", 1)[0]  # ``name {json}`` then more (a shell call's options)
            try:
                return rest, json.loads(first)
            except ValueError:
                return rest, None
    return rest, None


def _objects(args: object) -> list[dict[str, object]]:
    """The argument object and the first object of each list in it (``MultiEdit``'s edits)."""
    if not isinstance(args, dict):
        return []
    out = [args]
    out.extend(v[0] for v in args.values() if isinstance(v, list) and v and isinstance(v[0], dict))
    return out


def file_of(args: object, rest: str = "") -> str:
    """The file a call touched: an argument named for a path or file (``file_path``, ``path``,
    ``target_file``, ``notebook_path``), else a patch's file."""
    for obj in _objects(args):
        for k, v in obj.items():
            low = k.lower()
            if isinstance(v, str) and ("path" in low or "file" in low) and v.strip() and "\n" not in v:
                return v.strip()
    m = _PATCH_FILE.search(rest)
    return m.group("p").strip() if m else ""


def changed_line(args: object, rest: str = "") -> str:
    """The first line an edit wrote that was not there before (an argument named ``new…`` against
    one named ``old…``, a patch's added lines against its removed ones), when short; else ''."""
    new: list[str] = []
    old: set[str] = set()
    for obj in _objects(args):
        for k, v in obj.items():
            if isinstance(v, str):
                low = k.lower()
                if "new" in low:
                    new += v.splitlines()
                elif "old" in low:
                    old.update(x.strip() for x in v.splitlines())
    if not new and not args and rest:
        new = [m.group("t") for m in _ADDED.finditer(rest)]
        old = {m.group("t").strip() for m in _REMOVED.finditer(rest)}
    for line in new:
        s = line.strip()
        if s and s not in old and len(s) <= SHORT_CHARS and sum(c.isalnum() for c in s) >= MIN_ALNUM:
            return s
    return ""


def _plan(tool: str, args: object) -> str:
    """A call that sets a plan (a list of objects with a status): how far it is and what is current."""
    for value in args.values() if isinstance(args, dict) else [args]:
        if not (isinstance(value, list) and value and isinstance(value[0], dict)):
            continue
        if "status" not in value[0] and "state" not in value[0]:
            continue
        items = plan_mod.items_of(value)
        if items:
            plan = plan_mod.Plan(items)
            now = plan.current()
            head = f"{tool}: {len(plan.done())} of {len(items)} done"
            return f"{head}; now: {now[0].text}" if now else head
    return ""


# An argument that holds text a call writes: its file is what the action says, the text is data.
_WRITES = ("new", "old", "content", "edit", "source", "text")


def _short(args: object, path: str) -> list[str]:
    """Up to MAX_SHOWN of a call's short arguments as ``key=value`` (not its file, given apart)."""
    out = []
    for k, v in args.items() if isinstance(args, dict) else []:
        if isinstance(v, bool) or not isinstance(v, str | int | float) or v == path:
            continue
        shown = str(v).strip()
        if 0 < len(shown) <= SHORT_CHARS and "\n" not in shown:
            out.append(f"{k}={shown}")
    return out[:MAX_SHOWN]


def describe(text: str, tool: str | None) -> str:
    """A call as an action: ``ran pytest -q`` (a shell call), ``Edit docs/cli.md`` (a call on a
    file), ``TodoWrite: 1 of 3 done; now: …`` (a plan), ``Grep pattern=…, path=…`` (short
    arguments), else the tool's name with its first line when that is no data."""
    name = tool or (text.split(None, 1)[0] if text.strip() else "")
    rest, args = arguments(text, name)
    if name.lower() in SHELL_TOOLS and args is None:
        return f"ran {unwrapped(rest.split(chr(10), 1)[0].strip())}"
    if args is not None:
        planned = _plan(name, args)
        if planned:
            return planned
        path = file_of(args)
        shown = _short(args, path)
        if path:
            writes = isinstance(args, dict) and any(w in k.lower() for k in args for w in _WRITES)
            return f"{name} {path} ({', '.join(shown)})" if shown and not writes else f"{name} {path}"
        return f"{name} {', '.join(shown)}".strip()
    first = rest.split("\n", 1)[0].strip()
    if first.startswith(("***", "diff --git", "--- ")):
        path = file_of(None, rest)
        return f"{name} {path}".strip()
    return f"ran {name} {first}".strip() if first else f"ran {name}"
