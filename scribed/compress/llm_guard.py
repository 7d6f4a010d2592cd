"""Model output → :class:`~scribed.models.Summary`, and nothing more.

The reply is untrusted: it is never acted on, only searched for one JSON object that looks like a
summary, coerced from the shapes small models produce, and validated. Failures are
:class:`BadOutputError` with a short reason that never quotes the output.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from scribed.compress.content import content_free
from scribed.models import Summary

LIST_FIELDS = (
    "decisions",
    "files",
    "errors",
    "commands",
    "open_items",
    "knowledge",
    "key_points",
    "key_facts",
)
TEXT_FIELDS = ("goal", "outcome")
TEXT_MAX_CHARS = 10_000  # a goal or outcome longer than this is cut (the entry is capped later anyway)


class BadOutputError(Exception):
    """The model answered, but not with a usable summary; ``reason`` is the LlmError reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_THINK_BLOCK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_THINK_OPEN = re.compile(r"^\s*<(think|thinking|reasoning)>", re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?|```")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_CAMEL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def _strip_wrappers(text: str) -> str:
    text = _THINK_BLOCK.sub("", text)
    # An unterminated leading <think>: drop the tag; the JSON (if any) is found after it.
    text = _THINK_OPEN.sub("", text, count=1)
    return _FENCE.sub("", text).strip()


def _unclosed(text: str) -> bool:
    """True when a JSON object starts but its braces never balance (cut-off output)."""
    start = text.find("{")
    if start < 0:
        return False
    depth, in_str, esc = 0, False, False
    for ch in text[start:]:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return False
    return depth > 0


def _json_objects(text: str) -> tuple[list[Any], list[int]]:
    """Every decodable JSON value starting at a top-level ``{``, and where decoding failed."""
    dec = json.JSONDecoder()
    found: list[Any] = []
    failed: list[int] = []
    i = text.find("{")
    while i >= 0:
        try:
            obj, end = dec.raw_decode(text, i)
        except ValueError:
            failed.append(i)
            i = text.find("{", i + 1)
            continue
        found.append(obj)
        i = text.find("{", end)
    return found, failed


def _norm_key(key: str) -> str:
    return _CAMEL.sub(r"_\1", key.strip()).lower().replace(" ", "_").replace("-", "_")


def _item_text(item: Any) -> str:
    if isinstance(item, str):
        return _BULLET.sub("", item).strip()
    if isinstance(item, dict):
        return "; ".join(f"{k}: {v}" for k, v in item.items() if v not in (None, "", [], {}))
    if item is None:
        return ""
    return str(item)


def _coerce(obj: dict[str, Any]) -> dict[str, Any]:
    """Accept the shapes small models produce: lists as strings, text as lists, odd keys."""
    data = {_norm_key(str(k)): v for k, v in obj.items()}
    out: dict[str, Any] = {}
    for name in LIST_FIELDS:
        value = data.get(name)
        if value is None:
            continue
        if isinstance(value, str):
            items = [_item_text(line) for line in value.splitlines()]
        elif isinstance(value, list):
            items = [_item_text(i) for i in value]
        elif isinstance(value, dict):
            items = [_item_text({k: v}) for k, v in value.items()]
        else:
            items = [_item_text(value)]
        # A placeholder ("None", "N/A", "Not done in this session.") names nothing: the section is
        # left empty, so it is omitted, not printed with a placeholder (issue 30).
        out[name] = list(dict.fromkeys(i for i in items if i and not content_free(i)))
    for name in TEXT_FIELDS:
        value = data.get(name)
        if value is None:
            continue
        if isinstance(value, list):
            value = "; ".join(t for t in (_item_text(i) for i in value) if t)
        elif not isinstance(value, str):
            value = _item_text(value)
        text = " ".join(value.split())
        out[name] = text if len(text) <= TEXT_MAX_CHARS else text[: TEXT_MAX_CHARS - 1].rstrip() + "…"
    return out


def parse_summary(content: str | None) -> Summary:
    """Model text → Summary, or :class:`BadOutputError` naming what was wrong."""
    text = _strip_wrappers(content or "")
    if not text:
        raise BadOutputError("empty output")
    objects, failed = _json_objects(text)
    cut_off = any(_unclosed(text[p:]) for p in failed[:50])
    if not objects:
        if cut_off:
            raise BadOutputError("truncated output (unclosed JSON)")
        if text.lstrip().startswith("["):
            raise BadOutputError("off-format output: not a JSON object")
        raise BadOutputError("non-JSON output")
    fields = set(TEXT_FIELDS) | set(LIST_FIELDS)
    dicts = [o for o in objects if isinstance(o, dict)]
    # Prefer the last object that looks like a summary: reasoning before it may hold braces.
    candidates = [d for d in dicts if fields & {_norm_key(str(k)) for k in d}]
    if not candidates:
        if cut_off:
            raise BadOutputError("truncated output (unclosed JSON)")
        raise BadOutputError(
            "off-format output: no summary fields" if dicts else "off-format output: not a JSON object"
        )
    # Raise outside the except block: the ValidationError quotes model output.
    summary: Summary | None = None
    loc = "object"
    try:
        summary = Summary.model_validate(_coerce(candidates[-1]))
    except ValidationError as exc:
        loc = ".".join(str(p) for p in exc.errors()[0]["loc"]) or loc
    if summary is None:
        raise BadOutputError(f"off-format output: {loc}")
    if not (summary.goal or summary.outcome or any(getattr(summary, n) for n in LIST_FIELDS)):
        raise BadOutputError("off-format output: empty summary")
    return summary


def try_parse(content: str | None) -> tuple[Summary | None, str]:
    """parse_summary as a value: (summary, "") or (None, reason), with no exception in flight."""
    try:
        return parse_summary(content), ""
    except BadOutputError as bad:
        return None, bad.reason
