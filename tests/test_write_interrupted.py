"""A signal that stops a run (SIGTERM, Ctrl-C) lands between bytecodes, anywhere: inside
``mkstemp`` after the temp file exists, it left the file behind although the run said it stopped
cleanly (seen once in CI's slow tier). The run's handlers wait for the write to finish."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from scribed import fsutil
from scribed.cli.main import _signals_as_interrupt, _Terminated
from scribed.tiers import live


@pytest.fixture(autouse=True)
def _ctrl_c_raises() -> Iterator[None]:
    """Ctrl-C as an interactive shell leaves it (CI runs the suite in the background, with SIGINT
    ignored: the run then leaves it ignored, :func:`test_an_ignored_ctrl_c_stays_ignored`)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def _signal_inside_mkstemp(monkeypatch: pytest.MonkeyPatch, sig: signal.Signals) -> None:
    """``mkstemp`` that creates its file, then takes ``sig`` before it returns (the handler runs
    at the next Python call, as it would inside the real one's ``abspath``)."""
    real: Callable[..., Any] = tempfile.mkstemp

    def mkstemp(*args: Any, **kwargs: Any) -> Any:
        made = real(*args, **kwargs)
        os.kill(os.getpid(), sig)
        _a_python_call()
        return made

    monkeypatch.setattr(tempfile, "mkstemp", mkstemp)


def _a_python_call() -> None:
    """Gives the interpreter its check for pending signals."""


@pytest.mark.parametrize(
    ("sig", "raised"), [(signal.SIGTERM, _Terminated), (signal.SIGINT, KeyboardInterrupt)]
)
def test_a_signal_inside_a_write_waits_for_its_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sig: signal.Signals, raised: type[BaseException]
) -> None:
    target = tmp_path / "cold" / "picard.md"
    target.parent.mkdir()
    target.write_bytes(b"old\n")
    _signal_inside_mkstemp(monkeypatch, sig)
    with pytest.raises(raised), _signals_as_interrupt():
        fsutil.atomic_write(target, b"new\n")
    assert target.read_bytes() == b"new\n"  # the write went to its end
    assert sorted(p.name for p in target.parent.iterdir()) == ["picard.md"]  # no temp file left


def test_the_handlers_are_put_back(tmp_path: Path) -> None:
    term, intr = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with _signals_as_interrupt():
        assert signal.getsignal(signal.SIGINT) is not intr
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == (term, intr)


def _term_then_call() -> None:
    os.kill(os.getpid(), signal.SIGTERM)
    _a_python_call()
    pytest.fail("the interrupt waited with no write in progress")


def test_outside_a_write_the_interrupt_is_raised_at_once() -> None:
    with pytest.raises(_Terminated), _signals_as_interrupt():
        _term_then_call()


def test_an_ignored_ctrl_c_stays_ignored() -> None:
    """A run started with ``&`` or under nohup ignores SIGINT: the run does not take it back."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with _signals_as_interrupt():
            assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, before)


class _Dies:
    """Takes SIGTERM while Python collects it: the handler's exception is one Python swallows
    ("Exception ignored in …", seen in CI inside a WeakValueDictionary's callback)."""

    def __del__(self) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        _a_python_call()


def _swallowed_then_a_safe_point() -> None:
    d = _Dies()
    del d
    fsutil.check_interrupt()
    pytest.fail("the swallowed interrupt was lost: the run went on as if no signal came")


def test_an_interrupt_python_swallowed_is_raised_at_the_next_safe_point() -> None:
    with pytest.raises(_Terminated), _signals_as_interrupt():
        _swallowed_then_a_safe_point()


@pytest.mark.parametrize(("seen", "want"), [(b"old\n", b"new\n"), (b"read before\n", b"old\n")])
def test_a_signal_inside_a_compare_and_swap_waits_for_its_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seen: bytes, want: bytes
) -> None:
    """A hot file's compare-and-swap (:func:`scribed.tiers.live.swap`) is shielded as any write:
    renamed when the file still holds what was read, else its temp file removed, then stopped."""
    mem = tmp_path / "memory"
    target = mem / "hot" / "picard.md"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"old\n")
    _signal_inside_mkstemp(monkeypatch, signal.SIGTERM)
    with pytest.raises(_Terminated), _signals_as_interrupt():
        live.swap(target, seen, b"new\n", base=mem)
    assert target.read_bytes() == want
    assert sorted(p.name for p in target.parent.iterdir()) == ["picard.md"]  # no temp file left


def test_a_write_whose_condition_fails_at_its_rename_leaves_the_file(tmp_path: Path) -> None:
    """``only_if`` is asked last, the new bytes whole in the temp file: the compare of a
    compare-and-swap as near its rename as it can be; False leaves the file and no temp file."""
    target = tmp_path / "picard.md"
    target.write_bytes(b"old\n")
    temps: list[list[bytes]] = []

    def still() -> bool:
        temps.append([p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith(fsutil.TMP_PREFIX)])
        return False

    with pytest.raises(fsutil.NotReplaced):
        fsutil.atomic_write(target, b"new\n", only_if=still)
    assert temps == [[b"new\n"]]
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["picard.md"]
    fsutil.atomic_write(target, b"new\n", only_if=lambda: True)
    assert target.read_bytes() == b"new\n"
