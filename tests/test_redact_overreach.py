"""Stop 49: values the prose rules took that a memory reader needs, and the secrets beside them that
must still go. Each section is one judgement of ``secrets.toml``: its rule's own cases, then held-out
phrasings written after the rule and run once as it stood."""

from __future__ import annotations

import json

import pytest

from scribed.session.redact import REDACTED, find_secrets, redact


def both_ways(text: str) -> list[str]:
    """``text`` as a turn holds it, and as the archive holds it: inside a JSON string."""
    return [text, json.dumps({"type": "user", "content": f"{text}\nthanks"})]


def assert_kept(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


def assert_caught(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert REDACTED in out
        assert redact(out) == out


# 1. A licence or product key after a key word stays redacted, whatever its groups look like. A
# region or stage name written the same way (AWS1-EU01-PROD) is redacted with them: keeping it would
# also keep a share of random codes (a rule letting words-with-numbers through kept 6.6% of random
# 4x3 codes in a simulation), and a leaked key costs more than a stage name lost.
CODES_CAUGHT = [
    ("the licence key is ABCD1-EFGH2-IJKL3-MNOP4", "ABCD1-EFGH2-IJKL3-MNOP4"),  # every group one shape
    ("product key: VK7JG-NPHTM-C97JM-9MPGT-3V66T", "VK7JG-NPHTM-C97JM-9MPGT-3V66T"),  # 7J: digit, letter
    ("the license key is 3KQ7X-M2P9R-8WZ4T-H6N5J", "3KQ7X-M2P9R-8WZ4T-H6N5J"),
]
HELD_OUT_CODES_CAUGHT = [
    ("the product key is 9TW4K-BC7XQ-M2HJD-PV8R3-6YFGT", "9TW4K-BC7XQ-M2HJD-PV8R3-6YFGT"),
    ("serial key: H4JK-9PLM-X2CV-7BNQ", "H4JK-9PLM-X2CV-7BNQ"),
    ("the license key was AB1C2D-EF3G4H-IJ5K6L", "AB1C2D-EF3G4H-IJ5K6L"),
    ("activation key = QRST9-UVWX8-YZAB7-CDEF6", "QRST9-UVWX8-YZAB7-CDEF6"),
]


@pytest.mark.parametrize(("text", "secret"), CODES_CAUGHT + HELD_OUT_CODES_CAUGHT)
def test_a_machine_made_licence_code_is_still_redacted(text: str, secret: str) -> None:
    assert_caught(text, secret)


# 2. A number (a word or up to three digits) before a singular word counts what the password has
# ([allow] quantity); a plural or a second number makes a name, and a digit-free password of three
# words or 17 letters is still one.
QUANTITIES_KEPT = ["the password is two-factor", "the password must be two-factor"]
WORDS_CAUGHT = [
    ("the password is hunter-gorilla-staple", "hunter-gorilla-staple"),
    ("the password is correcthorsebatterystaple", "correcthorsebatterystaple"),
    ("my password is seven-dwarfs", "seven-dwarfs"),
]
HELD_OUT_QUANTITIES_KEPT = [
    "the passcode is six-digit",
    "the password must be three-word",
    "the password is two-step",
    "the login password is 2-factor",
    "the passphrase is four-word.",
]
HELD_OUT_WORDS_CAUGHT = [
    ("the password is velvet-lantern-orbit", "velvet-lantern-orbit"),
    ("the wifi password is purplemonkeydishwasher", "purplemonkeydishwasher"),
    ("my password is three-wolves", "three-wolves"),
    ("the passphrase is nine-lives", "nine-lives"),
]


@pytest.mark.parametrize("text", QUANTITIES_KEPT + HELD_OUT_QUANTITIES_KEPT)
def test_a_quantity_after_the_password_is_kept(text: str) -> None:
    assert_kept(text)


@pytest.mark.parametrize(("text", "secret"), WORDS_CAUGHT + HELD_OUT_WORDS_CAUGHT)
def test_a_digit_free_password_is_still_redacted(text: str, secret: str) -> None:
    assert_caught(text, secret)


# 3. A token's number is a count ([patterns] token_count): up to seven digits after a token's name
# standing alone. With a qualifier (a token for something) it is a credential; a secret's, a key's
# and a password's numbers are secrets, and so is a number of eight digits or more.
COUNTS_KEPT = ["the token is 4096", "the token was 128000", "the token is now `8192`"]
NUMBERS_CAUGHT = [
    ("the token for the CI bot is 48213", "48213"),
    ("the token is 123456789", "123456789"),
    ("the secret is 4096", "4096"),
    ("the password is 493817", "493817"),
]
HELD_OUT_COUNTS_KEPT = [
    "the token is 8192 for the summariser",
    "the token was 32,768",
    "the token is now 1000000",  # missed inside a JSON string at the first run: fixed in the rule
    "the token should be `16384`",
    "Token is 2048.",
]
HELD_OUT_NUMBERS_CAUGHT = [
    ("the token is 98765432109", "98765432109"),
    ("the token for the pager is 730215", "730215"),
    ("the API key is 5551234", "5551234"),
    ("the passcode is 48213", "48213"),
]


@pytest.mark.parametrize("text", COUNTS_KEPT + HELD_OUT_COUNTS_KEPT)
def test_a_token_count_is_kept(text: str) -> None:
    assert_kept(text)


@pytest.mark.parametrize(("text", "secret"), NUMBERS_CAUGHT + HELD_OUT_NUMBERS_CAUGHT)
def test_a_numeric_secret_is_still_redacted(text: str, secret: str) -> None:
    assert_caught(text, secret)
