"""Squad REPL ``.squad/sessions/{ts}_{uuid}.json``: one JSON object, rewritten whole on save.

Grouping rule. The default agent (the coordinator) gets one session holding every message, with
named agents' replies prefixed ``[name]``. Each agent that replied under a valid ``agentName``
also gets its own session (id ``<session id>/<name>``) holding, for every exchange it took part
in, the user messages of that exchange followed by its own replies. An exchange is a run of user
messages plus the agent/system messages that answer it, so when one user message is answered by
two agents, both see it; user messages no named agent answered stay only in the default
session. Replies under an invalid name stay only in the default session and the
file gets a warning. There is no end marker: quiet time decides.

Messages have no lines, so a turn's ``line`` and ``end_offset`` are the message's index + 1.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

from scribed.models import ParseResult, Role, Session, Turn
from scribed.names import normalize_name
from scribed.sources import json_doc
from scribed.sources.common import (
    Draft,
    Source,
    Tally,
    finish,
    get_str,
    parse_ts,
    safe_id,
    show,
    turn,
)

_ROLES: dict[str, Role] = {"user": "user", "agent": "assistant", "assistant": "assistant", "system": "system"}


class _Grouper:
    """Deals each message to the default session and to the named agents' own sessions; with
    ``only``, the turns of that session alone are kept (0: the default one, k: the k-th named
    agent to reply), the others being counted and not held (see :class:`Stream`)."""

    def __init__(self, src: Source, session_id: str, only: int | None = None) -> None:
        self.src, self.session_id, self.only = src, session_id, only
        self.main = Draft(agent=src.default_agent, session_id=session_id)
        self.named: dict[str, Draft] = {}
        self.order: dict[str, int] = {}  # a named agent's session's index (the default's is 0)
        self.warnings: list[str] = []
        self.invalid_seen: set[str] = set()
        self.exchange: list[Turn] = []  # the user turns of the current exchange
        self.given: set[str] = set()  # agents that already got this exchange's user turns
        self.in_replies = False

    def name(self, session_id: str) -> None:
        """The sessions' ids, once the file's own id is read (it may follow the messages)."""
        self.session_id = self.main.session_id = session_id
        for name, draft in self.named.items():
            draft.session_id = f"{session_id}/{name}"

    def agent_name(self, msg: dict[str, object]) -> str | None:
        """The message's valid ``agentName``; an invalid one is warned about once per file."""
        raw_name = get_str(msg, "agentName")
        name = normalize_name(raw_name) if raw_name else None
        if raw_name and name is None and raw_name not in self.invalid_seen:
            self.invalid_seen.add(raw_name)
            self.warnings.append(
                f"squad-repl: invalid agent name '{show(raw_name)}' in {self.src.path}; "
                f"messages kept under {self.src.default_agent}"
            )
        return name

    def user(self, text: str, ts: datetime | None, pos: int) -> None:
        """A user message: it starts a new exchange when replies came before it."""
        if self.in_replies:
            self.exchange, self.given, self.in_replies = [], set(), False
        t = turn("user", text, ts=ts, line=pos, end_offset=pos)
        if self.only is None or self.only == 0:
            self.main.turns.append(t)
        if self.only != 0:  # a named agent's session may take it
            self.exchange.append(t)

    def reply(self, role: Role, name: str | None, text: str, ts: datetime | None, pos: int) -> None:
        """An agent or system message: in the default session, and a named agent's in its own."""
        default = self.src.default_agent
        self.in_replies = True
        if self.only is None or self.only == 0:
            shown = f"[{name}] {text}" if name and name != default and role == "assistant" else text
            self.main.turns.append(turn(role, shown, ts=ts, line=pos, end_offset=pos))
        if role != "assistant" or name is None or name == default:
            return
        draft = self.named.get(name)
        if draft is None:
            draft = self.named[name] = Draft(agent=name, session_id="")
            self.order[name] = len(self.named)
        if self.only is not None and self.only != self.order[name]:
            return  # another pass reads this agent's session
        if name not in self.given:
            self.given.add(name)
            draft.turns.extend(replace(t) for t in self.exchange)  # own copies: redaction edits turns
        draft.turns.append(turn("assistant", text, ts=ts, line=pos, end_offset=pos))


def parse(src: Source) -> ParseResult:
    """Read one Squad REPL session file as a stream (:mod:`scribed.sources.json_doc`): one message
    at a time, so memory follows the turns kept, not the file."""
    return _parse(src, None)[0]


class Stream:
    """A Squad REPL file's sessions one at a time, each read by a pass of its own over the file:
    the default agent's, then each named agent's. A named agent's replies are in two sessions
    (its own and the default one), so a parse of the whole file holds its text about twice;
    this holds one session. Iterate it again for a second reading; :meth:`result` gives the
    file's warnings (a file-level one goes to the first session a pass keeps), size and end."""

    def __init__(self, src: Source) -> None:
        self.src = src
        self.warnings: list[str] = []
        self.size = 0
        self.stamp: tuple[int, int] | None = None  # (size, mtime_ns) at the first pass

    def result(self, sessions: list[Session]) -> ParseResult:
        return ParseResult(sessions=sessions, warnings=list(self.warnings), size=self.size)

    def __iter__(self) -> Iterator[Session]:
        self.warnings = []
        k, count = 0, 1
        while k < count:
            st = os.stat(self.src.path)
            if self.stamp is None:
                self.stamp = (st.st_size, st.st_mtime_ns)
            elif self.stamp != (st.st_size, st.st_mtime_ns):  # Squad rewrites the file on save
                raise OSError(f"{self.src.path} changed while it was read")
            got, n = _parse(self.src, k)
            count = n if k == 0 else count  # a file grown since: the caller's briefs tell
            self.size = got.size
            self.warnings.extend(w for w in got.warnings if w not in self.warnings)
            kept = got.sessions
            del got
            while kept:  # each let go before the next pass: one session held, not two
                yield kept.pop(0)
            k += 1


def _parse(src: Source, only: int | None) -> tuple[ParseResult, int]:
    """:func:`parse`, keeping only session ``only``'s turns when given; and how many sessions the
    file deals messages to (the default one and each named agent's)."""
    reader = _Reader(src, only)
    bad = json_doc.Replaced()
    with src.path.open("rb") as raw:
        fh = _Counted(raw)
        try:
            members: dict[str, object] | None = json_doc.walk(
                fh, "messages", reader.message, on_array=reader.restart, replaced=bad
            )
        except (json_doc.InvalidDocumentError, TypeError):
            members = None
        while fh.read(json_doc.READ_CHUNK):  # an invalid document's size is still the file's
            pass
    reader.size, reader.content = fh.size, fh.content
    if not reader.content:
        return finish(src, [], Tally(src.kind, src.path), size=reader.size, had_content=False), 1
    if members is None or "messages" in members or reader.g is None:
        return ParseResult(
            sessions=[],
            warnings=[f"{src.kind}: not a Squad REPL session object in {src.path}"],
            size=reader.size,
        ), 1
    g, tally = reader.g, reader.tally
    if bad.n:  # the session is kept, each bad byte read as U+FFFD: said once, with its line
        tally.replaced(_line_at(src.path, bad.first), bad.n)
    stem_id = src.path.stem.rsplit("_", 1)[-1]
    g.name(safe_id(members.get("id")) or safe_id(stem_id) or src.path.stem)
    created = parse_ts(members.get("createdAt"))
    last = parse_ts(members.get("lastActiveAt"))
    result = finish(
        src,
        [g.main, *g.named.values()],
        tally,
        warnings=g.warnings,
        size=reader.size,
        unit="message",
        had_content=reader.messages > 0,
    )
    for s in result.sessions:
        # Whole-session times from the envelope beat the file's mtime when messages lack them.
        if not any(t.ts for t in s.turns):
            s.start = created or last or s.start
            s.end = last or created or s.end
    return result, 1 + len(g.named)


def _line_at(path: Path, offset: int) -> int:
    """The line of the file holding byte ``offset`` (the file is read again up to it: only a
    damaged file is, so a clean one never counts its lines)."""
    lines, left = 1, offset
    with path.open("rb") as fh:
        while left > 0 and (data := fh.read(min(left, json_doc.READ_CHUNK))):
            lines += data.count(b"\n")
            left -= len(data)
    return lines


class _Counted:
    """A binary file read through: how many bytes came, and whether one was not whitespace (what
    ``bytes.strip()`` removes)."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.size = 0
        self.content = False

    def read(self, n: int = -1, /) -> bytes:
        data = self.fh.read(n)
        self.size += len(data)
        self.content = self.content or bool(data.strip())
        return data


class _Reader:
    """Deals the messages of the (last) ``messages`` array to a :class:`_Grouper` as they are read;
    counts the bytes read and whether any of them is not whitespace."""

    def __init__(self, src: Source, only: int | None = None) -> None:
        self.src, self.only = src, only
        self.g: _Grouper | None = None
        self.tally = Tally(src.kind, src.path)
        self.messages = 0
        self.size = 0
        self.content = False

    def restart(self) -> None:
        """A ``messages`` array begins: with a duplicate key only the last one counts."""
        self.g, self.tally, self.messages = (
            _Grouper(self.src, "", self.only), Tally(self.src.kind, self.src.path), 0,
        )  # fmt: skip

    def message(self, index: int, msg: object) -> None:
        g, tally = self.g, self.tally
        assert g is not None  # restart() came first
        self.messages += 1
        pos = index + 1
        if not isinstance(msg, dict):
            tally.bad(pos)
            return
        raw_role = msg.get("role")
        content = msg.get("content")
        role = _ROLES.get(raw_role) if isinstance(raw_role, str) else None
        if role is None or not isinstance(content, str):
            tally.bad(pos)
            return
        text = content.strip()
        if not text:
            return
        ts = parse_ts(msg.get("timestamp"))
        name = g.agent_name(msg)
        if role == "user":
            g.user(text, ts, pos)
        else:
            g.reply(role, name, text, ts, pos)
