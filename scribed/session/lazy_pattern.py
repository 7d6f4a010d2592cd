"""A regex compiled on its first use (the redactor's patterns: most texts reach few of them)."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator


class LazyPattern:
    """A ``str`` regex compiled on its first use. A spawn imports these modules to redact a few
    short texts, which reach few of the module's patterns; compiling them all at import cost it
    ~10 ms. The first call puts the compiled pattern's own methods on the instance, so later calls
    cost what a module-level ``re.compile`` costs."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags

    def _load(self) -> re.Pattern[str]:
        p = re.compile(self.pattern, self.flags)
        for name in ("match", "fullmatch", "search", "finditer", "findall", "sub", "split"):
            self.__dict__[name] = getattr(p, name)  # found before the class's methods from now on
        return p

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self._load().match(string, pos, endpos)

    def fullmatch(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self._load().fullmatch(string, pos, endpos)

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        return self._load().search(string, pos, endpos)

    def finditer(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[str]]:
        return self._load().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        return self._load().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        return self._load().sub(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        return self._load().split(string, maxsplit)
