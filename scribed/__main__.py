"""``python -m scribed`` and the ``scribed`` console script.

The Python version is checked here, before :mod:`scribed.cli.main` (and its 3.11-only imports such as
``tomllib``) is loaded, so an older Python gets one clear line instead of an ImportError. Keep
this module's syntax plain (annotations quoted, nothing newer than 3.6): it must run on old Pythons.
"""

import sys

MIN_PYTHON = (3, 11)


def python_problem(version: "tuple[int, ...] | None" = None) -> "str | None":
    """The message for an unsupported Python, or None when ``version`` (default: this one) is fine."""
    v = tuple(sys.version_info[:3] if version is None else version)
    if v[:2] >= MIN_PYTHON:
        return None
    need = ".".join(str(p) for p in MIN_PYTHON)
    have = ".".join(str(p) for p in v)
    return (
        f"scribed: error: scribed needs Python {need} or newer; this is Python {have} "
        f"({sys.executable or 'python'}). Install it with a newer Python, "
        f"e.g. `python{need} -m pip install scribed-memory`."
    )


def main() -> None:
    """Check the Python version, then run the click group (a reader gone early is no error)."""
    try:
        _main()
    except BrokenPipeError:  # a reader gone early (`| head -1`) is no error: exit 0, quietly
        from scribed.cli.common import reader_gone

        reader_gone()


def _main() -> None:
    problem = python_problem()
    if problem:
        sys.stderr.write(problem + "\n")
        raise SystemExit(2)
    from scribed.cli.spawn import run  # a spawn's plain `scribed context`, without click

    code = run(sys.argv[1:])
    if code is not None:
        raise SystemExit(code)
    from scribed.cli.main import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
