"""LazyPattern (redaction's module-level patterns, compiled on first use) acts as re.compile does."""

from __future__ import annotations

import re
import subprocess
import sys

from scribed.session.redact_values import LazyPattern

TEXT = "a=1; b = 22 && key=abc, x==y"


def test_each_method_matches_re_compile() -> None:
    for pattern, flags in ((r"(\w+)\s*=\s*(\w+)", 0), (r"[A-Z]+", re.IGNORECASE), (r";|&&", 0)):
        want = re.compile(pattern, flags)
        for make_first in ("match", "fullmatch", "search", "finditer", "findall", "sub", "split"):
            lazy = LazyPattern(pattern, flags)
            getattr(lazy, make_first)  # any method may be the first one called
            for pos in (0, 3):
                assert _m(lazy.match(TEXT, pos)) == _m(want.match(TEXT, pos))
                assert _m(lazy.search(TEXT, pos)) == _m(want.search(TEXT, pos))
                assert _m(lazy.fullmatch(TEXT, pos, 4)) == _m(want.fullmatch(TEXT, pos, 4))
                assert lazy.findall(TEXT, pos) == want.findall(TEXT, pos)
                assert [_m(m) for m in lazy.finditer(TEXT, pos)] == [_m(m) for m in want.finditer(TEXT, pos)]
            assert lazy.sub("_", TEXT, 2) == want.sub("_", TEXT, 2)
            assert lazy.sub(lambda m: m.group(0).upper(), TEXT) == want.sub(
                lambda m: m.group(0).upper(), TEXT
            )
            assert lazy.split(TEXT, 1) == want.split(TEXT, 1)


def test_after_the_first_call_the_compiled_methods_answer() -> None:
    lazy = LazyPattern(r"\d+")
    assert "search" not in vars(lazy)
    assert lazy.search("x1") is not None
    assert vars(lazy)["search"].__self__ == re.compile(r"\d+")


def test_importing_redaction_compiles_none_of_them() -> None:
    code = (
        "import scribed.session.redact as r, scribed.session.redact_values as v, scribed.session.redact_context as c\n"
        "import scribed.session.redact_pem as p\n"
        "lazy = [o for m in (v, c, p) for o in vars(m).values() if isinstance(o, v.LazyPattern)]\n"
        "print(len(lazy), sum('match' in vars(o) for o in lazy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert int(out[0]) > 30 and out[1] == "0", out


def _m(m: re.Match[str] | None) -> tuple[int, int, tuple[str | None, ...]] | None:
    return None if m is None else (m.start(), m.end(), m.groups())
