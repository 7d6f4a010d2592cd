"""Shared test setup: the options an in-process CLI call recorded for printed commands
(:mod:`scribed.hint`) are forgotten before each test, as a new process would."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scribed import hint


@pytest.fixture(autouse=True)
def _fresh_hints() -> Iterator[None]:
    hint.given()
    yield
    hint.given()
