"""Stop 45 review: how the session tells a bare word is a tool's name (:mod:`scribed.compress.used_names`).

1. An import or a pin inside an Edit or Write call (its JSON on one line, ``\\n`` and ``\\"``
   escaped) was not seen, nor a shell call running the bare program alone (``yarn``).
2. A match inside another word (``uv`` in ``uvicorn``, ``bun`` in ``ubuntu``) used up the
   occurrences read, so a later real use was never reached.
6. A capitalised word mid-sentence ("runs in Verbose mode", "set the theme to Dark", "so Tabs are
   not reintroduced") counted as a name: a capital says nothing about a mode's or a tab's word
   being a tool, so the signal is gone; a tool is run, installed, imported, pinned or configured.
"""

from __future__ import annotations

import pytest
from test_decisions_named import session

from scribed.sources.common import render_call


def call(name: str, args: object) -> tuple[str, str, str]:
    return ("assistant", render_call(name, args), name)


# (the session, the decision it states)
IN_TOOL_ARGS = [
    (
        [
            ("user", "replace requests with httpx"),
            call("Write", {"file_path": "api.py", "content": "import httpx\n\nclient = httpx.Client()\n"}),
        ],
        "replace requests with httpx",
    ),
    (
        [
            ("user", "swap out jest for vitest"),
            call(
                "Edit",
                {
                    "file_path": "package.json",
                    "old_string": '"jest": "^29.7.0"',
                    "new_string": '"vitest": "^1.6.0"',
                },
            ),
        ],
        "swap out jest for vitest",
    ),
    ([("user", "switch to yarn"), call("Bash", {"command": "yarn"})], "switch to yarn"),
]
CROWDED = [
    (
        [
            ("tool", "\n".join(f"INFO [uvicorn.access] GET /health {i}" for i in range(450))),
            ("user", "switch to uv"),
            call("Bash", {"command": "uv sync"}),
        ],
        "switch to uv",
    ),
    (
        [
            (
                "tool",
                "\n".join(f"Get:{i} http://archive.ubuntu.com/ubuntu jammy InRelease" for i in range(450)),
            ),
            ("user", "switch to bun"),
            call("Bash", {"command": "bun install"}),
        ],
        "switch to bun",
    ),
]
CAPITAL_ONLY = [
    [("user", "switch to verbose"), ("assistant", "Done: the logger now runs in Verbose mode.")],
    [("user", "switch to dark"), ("assistant", "I set the theme to Dark in settings.json.")],
    [
        ("user", "replace tabs with spaces"),
        ("assistant", "Converted the Makefile and added an editorconfig so Tabs are not reintroduced."),
    ],
]


@pytest.mark.parametrize(("said", "want"), [*IN_TOOL_ARGS, *CROWDED])
def test_a_use_the_session_makes_is_seen(said: list, want: str) -> None:  # type: ignore[type-arg]
    assert session(*said) == [(want, None)]


@pytest.mark.parametrize("said", CAPITAL_ONLY)
def test_a_capital_mid_sentence_is_no_use_as_a_name(said: list) -> None:  # type: ignore[type-arg]
    assert session(*said) == []


# Fresh phrasings, written after the fix (uses the session makes; look-alikes that are none)
FRESH_USED = [
    (
        [
            ("user", "replace axios with ky"),
            call(
                "Write",
                {
                    "file_path": "src/api.ts",
                    "content": "import ky from 'ky';\nexport const api = ky.create({});\n",
                },
            ),
        ],
        "replace axios with ky",
    ),
    (
        [
            ("user", "swap out nose for pytest"),
            call(
                "MultiEdit",
                {
                    "file_path": "requirements-dev.txt",
                    "edits": [{"old_string": "nose==1.3.7\n", "new_string": "pytest==8.2.0\n"}],
                },
            ),
        ],
        "swap out nose for pytest",
    ),
    ([("user", "switch to pnpm"), call("Bash", {"command": "pnpm"})], "switch to pnpm"),
    (
        [
            ("tool", "\n".join(f"npm WARN deprecated bunyan@1.8.{i}: old" for i in range(500))),
            ("user", "switch to bun"),
            call("Bash", {"command": "bun run build"}),
        ],
        "switch to bun",
    ),
]
FRESH_NOT_USED = [
    # a file's line a Write makes runs nothing
    [
        ("user", "switch to verbose"),
        call(
            "Write",
            {"file_path": "README.md", "content": "Run with verbose output:\n\nverbose logging is on\n"},
        ),
    ],
    [("user", "switch to compact"), ("assistant", "The table now renders in Compact mode.")],
    [
        ("user", "replace spaces with tabs"),
        call(
            "Edit",
            {
                "file_path": ".editorconfig",
                "old_string": "indent_style = space\n",
                "new_string": "indent_style = tab\n",
            },
        ),
    ],
    [("user", "switch to light"), call("Bash", {"command": "echo light"})],
]


@pytest.mark.parametrize(("said", "want"), FRESH_USED)
def test_fresh_uses_are_seen(said: list, want: str) -> None:  # type: ignore[type-arg]
    assert session(*said) == [(want, None)]


@pytest.mark.parametrize("said", FRESH_NOT_USED)
def test_fresh_look_alikes_are_no_use(said: list) -> None:  # type: ignore[type-arg]
    assert session(*said) == []
