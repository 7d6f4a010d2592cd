"""A decision proposed to Squad's team log as ``squad memory write --class DECISION`` files it:
``.squad/decisions/inbox/{author}-{title slug}-{id[:8]}.md`` with Squad's front matter, so
``squad nap`` merges it into ``decisions.md`` like any other. Its ``metadata`` names the scribed
entry it came from: reading the file back (``scribed import``, before or after nap) recognises the
fact it already is, and no evidence count rises."""

from __future__ import annotations

import json
import re
import uuid

NAMESPACE = uuid.UUID("6f1c1a52-5c8e-4d0e-9a0b-5c71b3d2e7a1")  # scribed's: an id per (entry, title)
SOURCE = "scribed"
_ENTRY = re.compile(r"^[a-z]-[0-9a-f]{6,40}$")


def slugify(value: str) -> str:
    """Squad's own slug (squad-sdk memory ``slugify``): lowercase, runs of other characters to
    ``-``, trimmed, at most 64 characters."""
    slug = re.sub(r"[^a-z0-9]+", "-", value.lower()).strip("-")[:64]
    return slug or "memory"


def file_id(entry: str, title: str) -> str:
    """The inbox file's id: the same entry and title give the same id on every machine."""
    return str(uuid.uuid5(NAMESPACE, f"{entry}\0{title}"))


def file_name(entry: str, title: str, author: str) -> str:
    prefix = f"{slugify(author)}-" if author else ""
    return f"{prefix}{slugify(title)}-{file_id(entry, title)[:8]}.md"


def render(*, entry: str, title: str, author: str, created: str, text: str) -> str:
    """The file as Squad writes one (``renderMemoryFile``): front matter, a blank line, the body."""
    meta = json.dumps({"source": SOURCE, "entry": entry}, separators=(",", ":"))
    return "\n".join(
        [
            "---",
            f"id: {file_id(entry, title)}",
            "class: DECISION",
            "loadGuidance: [ALWAYS]",
            f"title: {json.dumps(title, ensure_ascii=False)}",
            f"author: {json.dumps(author or 'unknown', ensure_ascii=False)}",
            f"createdAt: {created}",
            f"metadata: {meta}",
            "---",
            "",
            text.strip(),
            "",
        ]
    )


def entry_of(metadata: str) -> str:
    """The scribed entry a governed decision's ``metadata`` names ("" for one scribed did not write)."""
    try:
        data = json.loads(metadata)
    except ValueError:
        return ""
    if not isinstance(data, dict) or data.get("source") != SOURCE:
        return ""
    entry = data.get("entry")
    return entry if isinstance(entry, str) and _ENTRY.match(entry) else ""
