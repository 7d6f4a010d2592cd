"""Redaction of a file too big to hold: chunks cut at line ends, each judged with its neighbours.

A secret can span lines (a PEM key's body, ``password:`` with its value on the next line), so a
chunk redacted on its own leaks what lies past its edge: the body after a ``BEGIN`` line in the
previous chunk, the value whose name ended the previous chunk. Each chunk is therefore redacted
inside a window holding :data:`CONTEXT_CHARS` of the text before and after it, and prints only its
own part: a span that starts in the chunk prints the marker (and the next chunk skips the rest of
it); a span that started before the chunk is skipped. Memory stays about three chunks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence

from scribed.session.redact import REDACTED, secret_spans

CONTEXT_CHARS = 64 * 1024  # a secret with its name or armour is far shorter (a 4096-bit PEM: ~3.3 KB)


def redact_chunks(raw: Iterable[bytes], context: int = CONTEXT_CHARS) -> Iterator[bytes]:
    """``raw`` (chunks cut at line ends, decoded one by one, invalid UTF-8 replaced) with secrets
    replaced; a chunk that is valid UTF-8 and touches no secret comes back as the same bytes."""
    it = iter(raw)
    ahead: deque[tuple[bytes, str]] = deque()  # the chunk at hand, then enough to see ``context`` past it
    ahead_chars = 0  # of the chunks after the one at hand
    prev_tail = ""
    carry = 0  # characters at the start of the chunk inside a secret the previous chunk printed
    done = False
    while True:
        while not done and (len(ahead) <= 1 or ahead_chars < context):  # the chunk and one more, at least
            nxt = next(it, None)
            if nxt is None:
                done = True
                break
            text = nxt.decode("utf-8", "replace")
            if ahead:
                ahead_chars += len(text)
            ahead.append((nxt, text))
        if not ahead:
            return
        cur, text = ahead.popleft()
        after = "".join(t for _, t in ahead)[:context]
        if ahead:
            ahead_chars -= len(ahead[0][1])
        out, carry = _window(prev_tail, text, after, carry)
        yield cur if out is None and _is_utf8(cur) else (text if out is None else out).encode("utf-8")
        prev_tail = (prev_tail + text)[-context:] if context else ""


def _window(before: str, text: str, after: str, carry: int) -> tuple[str | None, int]:
    """``text`` redacted as a part of ``before + text + after``; None when no secret touches it.
    Also returns how far into the next chunk the last printed secret reaches."""
    window = before + text + after
    a, b = len(before), len(before) + len(text)
    pos = a + carry  # the previous chunk printed the marker of what lies before pos
    spans = [(s, e) for s, e in secret_spans(window) if e > pos and s < b]
    if not spans and not carry:
        return None, 0
    out: list[str] = []
    for s, e in spans:
        if s < pos:  # began before pos: hide the rest of it
            if pos == a and not carry:
                out.append(REDACTED)  # the previous window did not see it reach here
            pos = max(pos, e)
            continue
        out.append(window[pos:s])
        out.append(REDACTED)
        pos = e
    out.append(window[pos:b])
    return "".join(out), max(0, pos - b)


def redact_within(before: str, texts: Sequence[str], after: str) -> list[str]:
    """Each of ``texts`` redacted as a part of ``before + "\\n".join(texts) + after``: the turns of a
    session are judged together, as ``scribed redact`` judges the file that holds them (a PEM body
    whose header ended the previous turn, a value whose name did). A secret that spans turns leaves
    a marker in each; a text no secret touches comes back as the same object."""
    window = before + "\n".join(texts) + after
    spans = secret_spans(window)
    out: list[str] = []
    pos, k = len(before), 0
    for t in texts:
        a, b = pos, pos + len(t)
        while k < len(spans) and spans[k][1] <= a:
            k += 1
        parts: list[str] = []
        cur, j = a, k
        while j < len(spans) and spans[j][0] < b:
            s, e = max(spans[j][0], a), min(spans[j][1], b)
            if e > s:
                parts += (window[cur:s], REDACTED)
                cur = e
            j += 1
        out.append("".join((*parts, window[cur:b])) if parts else t)
        pos = b + 1
    return out


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
