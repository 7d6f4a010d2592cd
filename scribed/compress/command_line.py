"""What a shell command an agent ran is: its program (read past the shell wrapper, ``cd DIR &&``
and variables), whether it files an issue, and which tests it selects. Errors are paired with their
fixes by these (:mod:`scribed.compress.error_fixes`): a clean re-run of the program that failed
settles a failure only when it ran what failed, not a narrower selection (``pytest -k other``)."""

from __future__ import annotations

import re
import shlex

_SHELLS = frozenset({"bash", "sh", "zsh", "dash"})
# The tools (lowercased names) whose call is a shell command line: ``Bash pytest -q`` runs ``pytest -q``.
SHELL_TOOLS = frozenset(
    {
        "shell",
        "bash",
        "run_terminal_cmd",
        "terminal",
        "exec",
        "execute",
        "run",
        "exec_command",
        "local_shell",
        "powershell",
        "container.exec",
        "run_in_terminal",
    }
)
_SHELL_C = re.compile(r"-[a-z]{0,4}c[a-z]{0,4}$")  # -c, -lc: the command follows
_RUNS = frozenset({"exec", "run", "dlx", "x", "run-script"})
_RUN_WORDS = [["exec"], ["dlx"], ["x"]]  # a package runner's word before a tool (not a script's "run")
_WRAPPED = ("python", "python3", "uv", "poetry", "npx", "npm", "pnpm", "yarn", "git", "cargo", "go")


def program(command: str) -> str:
    """A command's program: its first word, with the sub-command of ``git``/``npm``/``python -m``
    (a runner's ``exec``/``run`` passed: ``pnpm exec vitest`` is ``pnpm vitest``), read past a
    shell's ``bash -lc`` (Codex runs every command so), ``cd DIR &&`` and ``VAR=value``: else
    every command of a session was one program, and any clean run confirmed any failure fixed."""
    words = argv(command)
    if not words:
        return ""
    at = _program_at(words)
    first = words[0].rsplit("/", 1)[-1].lower()
    if at == [0]:
        return first
    if at[0] == 0:  # the program and its sub-command
        return f"{first} {words[at[1]].lower()}"
    if first in ("python", "python3") and "-m" in words[1:-1]:
        return words[at[0]].lower()
    return words[at[0]].rsplit("/", 1)[-1].lower()


def _program_at(words: list[str]) -> list[int]:
    """The indexes in ``words`` (not empty) of the words :func:`program` names; a command's own
    arguments follow the last."""
    first = words[0].rsplit("/", 1)[-1].lower()
    if first in ("python", "python3") and "-m" in words[1:-1]:
        return [words.index("-m") + 1]  # "python -m pytest" runs what "pytest" runs
    launched = first in ("uv", "poetry", "npx") or (
        first in ("pnpm", "yarn", "npm") and words[1:2] in _RUN_WORDS
    )
    rest = [k for k, w in enumerate(words) if k and not w.startswith("-") and w not in _RUNS]
    if launched and rest:
        return [rest[0]]  # "uv run pytest", "pnpm exec vitest": the tool
    if first in _WRAPPED and rest:
        return [0, rest[0]]
    return [0]


def unwrapped(command: str) -> str:
    """A command line without the shell that runs it: ``bash -lc 'pytest -q'`` is ``pytest -q``
    (Codex runs every command so)."""
    words = command.split(None, 2)
    if words[2:] and words[0].rsplit("/", 1)[-1] in _SHELLS and _SHELL_C.match(words[1]):
        inner = words[2].strip()
        if len(inner) > 1 and inner[0] == inner[-1] and inner[0] in "'\"":
            inner = inner[1:-1].strip()
        return inner or command
    return command


def argv(command: str) -> list[str]:
    """A command's words from its program on (see :func:`program`)."""
    words = command.split()
    if words[2:] and words[0].rsplit("/", 1)[-1] in _SHELLS and _SHELL_C.match(words[1]):
        words = " ".join(words[2:]).strip("'\"").split()
    while words[:1] in (["cd"], ["pushd"]) and words[2:3] in (["&&"], [";"]):
        words = words[3:]
    while words and "=" in words[0].lstrip("=") and words[0][:1].isalpha():
        words = words[1:]
    return words


def files_issue(command: str) -> bool:
    """Whether a command files or comments an issue (``gh issue create``, ``glab issue note``,
    ``jira issue create``): it names the failure it defers, and changes nothing its check runs on."""
    return argv(command)[1:2] in (["issue"], ["issues"])


# Flags whose value picks which tests run: pytest -k/-m, go -run, cargo --package/--test, jest -t,
# mocha/playwright --grep, dotnet --filter, vitest -t/--testNamePattern, tox -e; a program's own
# ones where another program reads the flag otherwise (cargo's -p is a package, pytest's a plugin).
_FILTER_FLAGS = frozenset((
    "-k", "-m", "-t", "-g", "--run", "-run", "--grep", "--filter", "--package", "--test",
    "--tests", "--spec", "--testNamePattern", "--test-name-pattern", "--only", "-e", "--env",
))  # fmt: skip
_OWN_FILTER_FLAGS = {"cargo test": frozenset(("-p",))}
# Flags whose value is left out of the run: what they name is not run ("not" + it, below).
_EXCLUDE_FLAGS = frozenset(("--deselect", "--ignore", "--skip", "--exclude"))
_ALL = re.compile(r"^\.?/?(?:\.\.\.)?$")  # ".", go's "./...": everything ("./pkg/x/..." is pkg/x)
_SELECTOR_WORDS = re.compile(r"[A-Za-z_][\w.-]{2,}")
_KEYWORDS = frozenset(("and", "or", "not"))
MIN_PART_CHARS = 3  # a path's part this long names something ("a" or "ui" is in every text)


def selection(command: str) -> frozenset[str]:
    """What a command's own arguments select, lowercased: paths and test ids (a word with ``/``,
    ``.`` or ``::``) and the values of filter flags (``-k expr``, ``-run Name``); empty when it
    runs everything (``pytest``, ``go test ./...``, ``npm test``). Other flags and their values
    (``--maxfail 1``, ``-q``) select nothing."""
    words = argv(command)
    if not words:
        return frozenset()
    rest = " ".join(words[_program_at(words)[-1] + 1 :])
    try:
        args = shlex.split(rest)  # a quoted filter is one value: -k 'not slow'
    except ValueError:  # an unclosed quote
        args = rest.split()
    out: set[str] = set()
    own = _OWN_FILTER_FLAGS.get(program(command), frozenset())
    it = iter(args)
    for w in it:
        if w in ("&&", "||", ";", "|") or w.startswith((">", "2>")):
            break  # the next command, or where the output goes
        flag, eq, value = w.partition("=")
        if flag in _FILTER_FLAGS or flag in own:
            out.add((value if eq else next(it, "")).lower())
        elif flag in _EXCLUDE_FLAGS:
            out.add("not " + (value if eq else next(it, "")).lower())
        elif not w.startswith("-") and w not in _RUNS and any(c in w for c in "/.:") and not _ALL.search(w):
            out.add(w.lower())
    out.discard("")
    return frozenset(out)


# Test runners (a program, or its sub-command): a run selects tests, and another selection of
# the same runner says nothing of the tests that failed. Another program run again with other
# arguments is taken as the same check (a build, a server, a device tool: the agent went on).
TEST_RUNNERS = frozenset((
    "pytest", "py.test", "unittest", "tox", "nox", "jest", "vitest", "mocha", "ava", "tap", "jasmine",
    "karma", "playwright", "cypress", "rspec", "minitest", "phpunit", "pest", "ctest", "bats", "test",
))  # fmt: skip


def covers(rerun: str, failed: str, error: str) -> bool:
    """Whether ``rerun`` (the failing program run again) ran what ``failed`` ran, so that running
    clean it shows ``error`` gone: for a test runner (:data:`TEST_RUNNERS`; ``go test``, ``cargo
    test``, ``npm test`` by their sub-command), when it selects everything, the same tests, or
    tests ``error`` or the failing command names (``pytest tests/test_api.py`` after
    ``tests/test_api.py::test_x`` failed); not a narrower, other selection (``pytest -k other``,
    another test file)."""
    if program(rerun).rsplit(" ", 1)[-1] not in TEST_RUNNERS:
        return True
    picked, before = selection(rerun), selection(failed)
    if not picked or picked == before or (before and before < picked and not _excludes(picked)):
        return True  # everything, the same, or more (and nothing left out)
    low = error.lower()
    return not _excludes(picked) and any(_named_in(s, low) for s in picked)


def _excludes(picked: frozenset[str]) -> bool:
    """Whether a selection leaves tests out by name (``-k 'not x'``, ``--deselect x``)."""
    return any(s.startswith("not ") or " not " in s for s in picked)


def _named_in(selector: str, hay: str) -> bool:
    """Whether a selector (a path, a test id, a filter expression) names what ``hay`` holds: a
    test id's test (another test of the same file is another selection), a path or its last
    part (a file, a package), or a word of a filter expression."""
    path = selector.removeprefix("./").removesuffix("/...").rstrip("/")
    if "::" in path:
        return path.rsplit("::", 1)[-1] in hay
    if path in hay:
        return True
    if "/" in path or "." in path:
        last = path.rsplit("/", 1)[-1]
        return len(last) >= MIN_PART_CHARS and last in hay
    return any(w in hay for w in _SELECTOR_WORDS.findall(selector) if w not in _KEYWORDS)
