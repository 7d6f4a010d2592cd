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
# ([allow] quantity) when the word is a unit a password is made of or checked in (factor, digit,
# character, word…); any other word after a number may be the password (a review found "42-zebra",
# "2-Fast" and "3-blindmouse" kept by a first rule that took any singular word), and a digit-free
# password of three words or 17 letters is still one.
QUANTITIES_KEPT = ["the password is two-factor", "the password must be two-factor"]
WORDS_CAUGHT = [
    ("the password is hunter-gorilla-staple", "hunter-gorilla-staple"),
    ("the password is correcthorsebatterystaple", "correcthorsebatterystaple"),
    ("my password is seven-dwarfs", "seven-dwarfs"),
    ("the password is 42-zebra", "42-zebra"),
    ("the password is 7-dragon", "7-dragon"),
    ("the password is 2-Fast", "2-Fast"),
    ("the wifi password is 3-blindmouse", "3-blindmouse"),
    ("my password is 4-square", "4-square"),
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


# 3. A token's number stays redacted, whatever it looks like: "the token is 4096" may be a model's
# count, but "the api token is 9876543", "the session token is 1234567" and "my RSA token is 493817"
# are credentials written the same way (a review found a rule keeping up to seven digits after
# "token" kept them all). A count is kept where it is written as one: `max_tokens: 4096`.
NUMBERS_CAUGHT = [
    ("the token for the CI bot is 48213", "48213"),
    ("the token is 123456789", "123456789"),
    ("the secret is 4096", "4096"),
    ("the password is 493817", "493817"),
    ("the api token is 9876543", "9876543"),
    ("the bot token is 8812345", "8812345"),
    ("the GitHub token is 1234567", "1234567"),
    ("the session token is 1234567", "1234567"),
    ("my token is 0042137", "0042137"),
    ("my RSA token is 493817", "493817"),
    ("the API key is 5551234", "5551234"),
    ("the passcode is 48213", "48213"),
]


@pytest.mark.parametrize(("text", "secret"), NUMBERS_CAUGHT)
def test_a_numeric_secret_is_still_redacted(text: str, secret: str) -> None:
    assert_caught(text, secret)


@pytest.mark.xfail(strict=True, reason="a token's count in a sentence reads as a credential's number")
def test_a_token_count_in_a_sentence_is_kept() -> None:
    assert_kept("the token is 4096")


def test_a_token_count_written_as_a_setting_is_kept() -> None:
    assert_kept("max_tokens: 4096")
