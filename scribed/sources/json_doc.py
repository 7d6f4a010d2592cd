"""One JSON document (a Squad REPL session, rewritten whole on save) read as a stream: its
top-level object's members one at a time, and one array member's items one at a time, so a 64 MB
session file is never held as bytes, text and objects at once.

It reads exactly what ``json.loads(read_text(data))`` reads: UTF-8 with bad bytes replaced (and
counted, :class:`Replaced`: damage is never silent), a BOM dropped, Python's own decoder for every
value (``NaN``, duplicate keys: the last one wins), and a document with anything but whitespace
after its object is invalid. Any invalid byte anywhere makes the whole document invalid
(:class:`InvalidDocumentError`), as it does for ``json.loads``; the caller discards what it took.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from scribed.sources.common import Readable, decode_counted

READ_CHUNK = 1 << 20
_WS = re.compile(r"[ \t\n\r]*")
_NUMBER_GOES_ON = re.compile(r"[0-9eE+.-]*")  # what may follow the part of a number read so far
_DECODER = json.JSONDecoder()


class InvalidDocumentError(ValueError):
    """The bytes are not one JSON value, as ``json.loads`` would say."""


@dataclass(slots=True)
class Replaced:
    """The bytes that were not UTF-8, read as U+FFFD: how many, and the file offset of the first."""

    n: int = 0
    first: int = -1


class _Text:
    """The document's text, decoded a chunk at a time; ``pos`` is where reading stands in ``buf``."""

    def __init__(self, fh: Readable, chunk: int, replaced: Replaced) -> None:
        self.fh, self.chunk, self.replaced = fh, chunk, replaced
        self.dec = codecs.getincrementaldecoder("utf-8")("replace")
        self.buf, self.pos, self.eof, self.first = "", 0, False, True
        self.read = 0  # bytes read so far

    def more(self, *, grow: bool = False) -> bool:
        """Read the next chunk onto what is left unread; False at the end of the file. ``grow``
        reads as much again as is unread, so a value of any size is decoded a few times, not once
        per chunk."""
        if self.eof:
            return False
        data = self.fh.read(max(self.chunk, len(self.buf) - self.pos) if grow else self.chunk)
        self.eof = not data
        held = self.dec.getstate()[0]  # a sequence the last chunk cut, decoded with this one
        text = self.dec.decode(data, final=self.eof)
        if "\ufffd" in text:  # a clean chunk pays this scan alone (none at all for ASCII text)
            self._count(held + data, self.read - len(held))
        self.read += len(data)
        if self.first and text:
            self.first = False
            text = text.removeprefix("\ufeff")
        self.buf = self.buf[self.pos :] + text
        self.pos = 0
        return True

    def _count(self, data: bytes, at: int) -> None:
        """Count the bad bytes of what this chunk decoded (``data`` less what the decoder still
        holds; it starts at file offset ``at``): a U+FFFD written in the file counts none."""
        done = data[: len(data) - len(self.dec.getstate()[0])]
        _, n, first = decode_counted(done)
        if n:
            self.replaced.n += n
            if self.replaced.first < 0:
                self.replaced.first = at + first

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end), not consumed."""
        while True:
            self.pos = _WS.match(self.buf, self.pos).end()  # type: ignore[union-attr]  # matches ""
            if self.pos < len(self.buf) or not self.more():
                return self.buf[self.pos : self.pos + 1]

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise InvalidDocumentError(f"expected {char!r}")
        self.pos += 1

    def value(self) -> object:
        """The next JSON value, decoded whole by Python's decoder (read further until it is)."""
        self.peek()
        while True:
            try:
                value, end = _DECODER.raw_decode(self.buf, self.pos)
            except (ValueError, RecursionError) as exc:
                if self.more(grow=True):
                    continue
                raise InvalidDocumentError(str(exc)) from exc
            if _NUMBER_GOES_ON.match(self.buf, end).end() == len(self.buf) and self.more(grow=True):  # type: ignore[union-attr]
                continue  # a number may go on in the next chunk ("12" of "123", "1" of "1e5")
            self.pos = end
            return value


def walk(
    fh: Readable,
    array_key: str,
    on_item: Callable[[int, object], None],
    *,
    on_array: Callable[[], None] = lambda: None,
    chunk: int = READ_CHUNK,
    replaced: Replaced | None = None,
) -> dict[str, object]:
    """Read the document in ``fh``: ``on_item(index, item)`` for each item of the top-level
    member ``array_key`` when it is an array (``on_array()`` first, at each such member: with a
    duplicate key the last one counts, as ``json.loads`` keeps it), the other members returned
    (``array_key`` too when its value is not an array). Raises :class:`InvalidDocumentError` when
    the bytes are not one JSON value, and ``TypeError`` when that value is not an object.
    ``replaced`` counts the bytes that were not UTF-8 (read as U+FFFD)."""
    text = _Text(fh, chunk, replaced if replaced is not None else Replaced())
    if text.peek() != "{":
        text.value()  # a valid document of another kind is not an object
        _end(text)
        raise TypeError("not a JSON object")
    text.pos += 1
    members: dict[str, object] = {}
    if text.peek() == "}":
        text.pos += 1
        _end(text)
        return members
    while True:
        key = text.value()
        if not isinstance(key, str):
            raise InvalidDocumentError("a key is not a string")
        text.expect(":")
        if key == array_key and text.peek() == "[":
            members.pop(key, None)
            on_array()
            _items(text, on_item)
        else:
            members[key] = text.value()
        sep = text.peek()
        text.pos += 1
        if sep == "}":
            _end(text)
            return members
        if sep != ",":
            raise InvalidDocumentError("expected ',' or '}'")


def _items(text: _Text, on_item: Callable[[int, object], None]) -> None:
    text.expect("[")
    if text.peek() == "]":
        text.pos += 1
        return
    index = 0
    while True:
        on_item(index, text.value())
        index += 1
        sep = text.peek()
        text.pos += 1
        if sep == "]":
            return
        if sep != ",":
            raise InvalidDocumentError("expected ',' or ']'")


def _end(text: _Text) -> None:
    if text.peek():
        raise InvalidDocumentError("extra data after the document")
