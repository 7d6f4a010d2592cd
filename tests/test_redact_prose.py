"""Secrets a user states in prose that the last review found kept: an unspaced user/password pair
after a login word, a letters-only password after "password is", a qualifier of five words or more
between the name and the verb, a title-case or all-caps verb. Each found in the decoded text and in
the raw JSON-escaped bytes of a transcript line alike; the look-alikes (paths, states of a
password) come back unchanged."""

from __future__ import annotations

import json
import time

import pytest

from scribed.session.redact import REDACTED, find_secrets, redact, rules


def both_ways(text: str) -> list[str]:
    """``text`` as a turn holds it, and as the archive holds it: inside a JSON string."""
    return [text, json.dumps({"type": "user", "content": f"{text}\nthanks"})]


SECRETS = [
    # 1. an unspaced user/password pair after a login or credentials word
    ("the grafana login for staging is admin/Sunflower-Twilight-42", "Sunflower-Twilight-42"),
    ("creds: bob/Hunter2-Zebra", "Hunter2-Zebra"),
    ("The credentials are deploy/Tq8wE3rT6yU1.", "Tq8wE3rT6yU1"),
    ("login: root/Zx8cV7bN6mQ5", "Zx8cV7bN6mQ5"),
    # 2. a letters-only password after the verb
    ("my password is sunflower", "sunflower"),
    ("the db password is hunter", "hunter"),
    ("password: correcthorsebattery", "correcthorsebattery"),
    ("pw: sunflower", "sunflower"),
    ("the passwd = moonbeam", "moonbeam"),
    # 3. a qualifier of five words or more
    ("the password for the staging grafana admin account is Paperclip-Moonbeam-19", "Paperclip-Moonbeam-19"),
    ("the token for the nightly build job in the CI system was u+Zx3y_k9QwErTy7AsDf", "u+Zx3y_k9QwErTy7AsDf"),
    ("the password for the wifi in the second floor office is `letmein`", "letmein"),
    # 4. a title-case or all-caps verb
    ("Password Is Hunter2-Zebra", "Hunter2-Zebra"),
    ("PASSWORD IS Hunter2-Zebra", "Hunter2-Zebra"),
    ("The Password Was Qw7!pL2#xZ9", "Qw7!pL2#xZ9"),
]

KEPT = [
    # paths after a login word: an extension, more than two parts, or no password's shape
    "the login is src/app/main.py",
    "login is origin/main",
    "the login fix is on feature/login-form",
    "the login is feature/login-form",
    "login: api/v2",
    "the login is docs/README.md",
    "creds: ~/.aws/credentials",
    "the login is auth/handlers/oauth2.py",
    "login is us-east-1/prod",
    # a password's state, not its value
    "the password is wrong",
    "password is required",
    "the password is incorrect",
    "the password is invalid.",
    "The password is expired",
    "the password is missing",
    "the password is set",
    "the password is empty",
    "the password is stored in vault",
    "the password is the same",
    # a long qualifier crossing into another clause
    "reset the password for the account if the build is green",
    "I rotated the password for staging and the deploy is fine",
]


@pytest.mark.parametrize(("text", "secret"), SECRETS)
def test_a_secret_stated_in_prose_is_redacted(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert REDACTED in out
        assert redact(out) == out


@pytest.mark.parametrize("text", KEPT)
def test_a_path_or_a_passwords_state_is_kept(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


@pytest.mark.parametrize(
    "text",
    [
        "password is " * 50_000,
        "the password for a b c d e f g h is " * 20_000,
        "login is a/" * 100_000,
        "creds: a/" * 100_000,
        "for the " * 200_000 + "password is x",
    ],
    ids=lambda t: f"{t[:12]!r}x{len(t)}",
)
def test_prose_floods_stay_linear(text: str) -> None:
    t0 = time.perf_counter()
    redact(text)
    assert time.perf_counter() - t0 < 15.0


def test_gates_are_lowercase_and_none_begins_another() -> None:
    """The engine finds every gate in one pass, in lower, UPPER and Title case, reporting the longest
    at a place (secrets.toml's header)."""
    gates = {g for r in rules() if r.kind == "scan" for g in r.gate}
    assert all(g == g.lower() for g in gates), gates
    assert not [(a, b) for a in gates for b in gates if a != b and b.startswith(a)]


# Held out: written after the rules, from none of their examples; what they showed is below.
HELD_OUT_SECRETS = [
    ("ok so the vpn password is marmalade", "marmalade"),
    ("Her passphrase was bluebird.", "bluebird"),
    ("the root pw is kangaroo, don't tell anyone", "kangaroo"),
    ("btw the wifi password is Pumpernickel", "Pumpernickel"),
    ("The admin password is now snowflake", "snowflake"),
    ("the old password was wombat and the new one is on the sticky note", "wombat"),
    ("my passwd is tortoise!", "tortoise"),
    ("Password is Lighthouse", "Lighthouse"),
    ("the ssh passphrase for the build box is cucumber", "cucumber"),
    ("Staging DB password: orangutan", "orangutan"),
    ("pw=gooseberry", "gooseberry"),
    ("The Password Is Avocado", "Avocado"),
    ("the login for the nas is admin/Mango-Tree-77", "Mango-Tree-77"),
    ("the credentials were ops/Blue7Whale!", "Blue7Whale"),
    pytest.param(
        "the password for the shared jenkins account on the old build server is Zx8cV7-Quokka",
        "Zx8cV7-Quokka",
        marks=pytest.mark.xfail(strict=True, reason="nine words after the preposition: the bound is eight"),
    ),
]
HELD_OUT_KEPT = [
    "the password is hashed with argon2 before it is stored",
    "the password is too weak",
    "make sure the password is long enough",
    "the password is optional for local runs",
    "The password was rotated yesterday.",
    "the password is whatever you set in .env",
    "if the password is blank we fall back to the keyring",
    "the password is never logged",
    "the password is masked in the UI",
    "the password is unknown to me",
    "The password was changed.",
    "the password is generated at startup",
    "the passphrase is case sensitive",
    "my password is in the keychain",
    "the password is correct but login still fails",
    "the login is main/develop",
    "the login for the app is handled in auth/session.ts",
    "the password is Unicode-safe",
    "the password is plaintext in the config",
    "the password is temporary",
]


@pytest.mark.parametrize(("text", "secret"), HELD_OUT_SECRETS)
def test_held_out_secrets(text: str, secret: str) -> None:
    for form in both_ways(text):
        assert secret not in redact(form)


@pytest.mark.parametrize("text", HELD_OUT_KEPT)
def test_held_out_prose_is_kept(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


# Stop 44, held out: the rules were written from five users' phrasings (a modal before the verb, a
# setting verb and "to", a pair before a login phrase, a word then an afterthought, a default
# pair); these are other people's words for the same things, and mechanism names that are no secret.
HELD_OUT_SECRETS_44 = [
    ("the wifi password will be Tangerine-Otter-51 from monday", "Tangerine-Otter-51"),
    ("The root password should now be Kx4-Harbor-Mist", "Kx4-Harbor-Mist"),
    ("your passphrase must be Qz7!Lantern for the demo", "Qz7!Lantern"),
    ("I changed my password to Wv8-Ember-Quill yesterday", "Wv8-Ember-Quill"),
    ("please update the staging token to u+Zx3y_k9QwErTy7AsDf", "u+Zx3y_k9QwErTy7AsDf"),
    ("we rotated the api key for prod to AKx9Lm2Qw8Rt4Zp7", "AKx9Lm2Qw8Rt4Zp7"),
    ("just set the db passphrase to 'plum orchard'", "plum orchard"),
    ("Setting the Password To Hq2!mV9zTr now", "Hq2!mV9zTr"),
    ("then change your vpn password to marzipan.", "marzipan"),
    ("try root/Quartz-Lily-37 to sign in", "Quartz-Lily-37"),
    pytest.param(
        "use deploy/Tq8wE3rT6yU1 and log in as usual",
        "Tq8wE3rT6yU1",
        marks=pytest.mark.xfail(
            strict=True, reason="only 'to' before a login phrase: an ' and ' gate costs every text"
        ),
    ),
    ("the vpn password is hibiscus lol", "hibiscus"),
    ("my pw is tangerine fyi", "tangerine"),
    ("login: guest/guest", "guest/guest"),
    ("creds: root/root", "root/root"),
]
HELD_OUT_KEPT_44 = [
    "the password is scrypt",
    "the password is pbkdf2",
    "the password is kerberos",
    "The password is Keycloak.",
    "the password is ldap btw",
    "login: sso/keycloak",
    "creds: okta/saml",
    "the password should be strong",
    "the password must be at least 12 characters",
    "the token will be refreshed automatically",
    "the password should be rotated every 90 days",
    "the secret should be stored in vault",
    "the password can be anything",
    "set the password to expire after 90 days",
    "change the password to something stronger",
    "set the token to null",
    "reset the password to the default",
    "set the password length to 16",
    "set max tokens to 4096",
    "I set the password to the one in 1Password",
    "use src/login.py to log in",
    "use oauth/oidc to sign in",
    "the password is wrong btw",
    "login: origin/main",
]


@pytest.mark.parametrize(("text", "secret"), HELD_OUT_SECRETS_44)
def test_held_out_secrets_stop_44(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        kept = secret.split("/")[-1]  # a default pair loses its password half
        assert f"/{kept}" not in out if "/" in secret else secret not in out, out
        assert redact(out) == out


@pytest.mark.parametrize("text", HELD_OUT_KEPT_44)
def test_held_out_prose_is_kept_stop_44(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


# Stop 45: the last review's defects. A user and password after a login verb and "with" or "as"
# (unspaced, spaced or with a colon), a password given to an environment variable's name by "set
# ... to", and a value that says how a password is kept (a standard's name before a participle).
SECRETS_45 = [
    ("log in with admin/Sunflower-Twilight-42", "Sunflower-Twilight-42"),
    ("log in with admin / Sunflower-Twilight-42", "Sunflower-Twilight-42"),
    ("sign in with deploy/Tq8wE3rT6yU1", "Tq8wE3rT6yU1"),
    ("sign in as root / Zx8cV7bN6mQ5", "Zx8cV7bN6mQ5"),
    ("log in with admin:Sunflower-Twilight-42", "Sunflower-Twilight-42"),
    ("set MY_PASSWORD to Hunter2-Zebra", "Hunter2-Zebra"),
    ("set DB_PASSWORD to hunter2zebra", "hunter2zebra"),
    ("the login should be admin / Hunter2-Zebra", "Hunter2-Zebra"),
]

# A default credential (a user whose password is its name) is a credential: anyone reading it can
# log in. After a login word, a login name or a login verb, its password half goes, however the
# pair is spelt.
DEFAULT_LEADS_45 = ["the login is ", "creds are ", "login: ", "log in with ", "sign in as "]
DEFAULT_SPELLINGS_45 = ["admin/admin", "admin:admin", "admin / admin"]

KEPT_45 = [
    # a mechanism, a schedule or a length: how a password is kept, not what it is
    "the password will be AES-256 encrypted",
    "the password will be hashed with bcrypt",
    "the token will be rotated daily",
    "the password should be at least 12 characters",
    "the password should be SHA-512 hashed",
    "the token is HMAC-SHA256 signed",
    "the password should be 12+ characters",
    # a login verb without a pair
    "log in with SSO",
    "sign in as root to check the logs",
    "log in with your GitHub account",
    "log in as admin and open the users page",
    # a login verb before a path, a page, a date, a ratio, or two words
    "sign in as admin / users page loads",
    "log in with email/password",
    "sign in with Google / GitHub",
    "log in on 12/06 with SSO",
    "logged in with 3/4 of the team",
    "after you log in with SSO open src/admin/users.py",
    # an environment variable given no value, or one that is no secret's
    "set MY_PASSWORD to the value from the vault",
    "set LOG_LEVEL to debug",
    "set DB_PASSWORD_FILE to /run/secrets/db",
    "set MAX_TOKENS to 4096",
]


@pytest.mark.parametrize(("text", "secret"), SECRETS_45)
def test_stop_45_leaks_are_redacted(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert REDACTED in out
        assert redact(out) == out


@pytest.mark.parametrize("pair", DEFAULT_SPELLINGS_45)
@pytest.mark.parametrize("lead", DEFAULT_LEADS_45)
def test_a_default_pair_loses_its_password_however_spelt(lead: str, pair: str) -> None:
    expected = lead + pair[: -len("admin")] + REDACTED
    for form, want in zip(both_ways(lead + pair), both_ways(expected), strict=True):
        assert redact(form) == want


@pytest.mark.parametrize("text", KEPT_45)
def test_stop_45_look_alikes_are_kept(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


# Stop 45, held out: written after the rules above, from none of their examples, and run once as
# they stood; the misses are marked with why, not answered by a rule written for them.
HELD_OUT_SECRETS_45 = [
    ("you can log into the jenkins box with ci-bot/Wq3!zX8#vB", "Wq3!zX8#vB"),
    ("I signed in as deploy / Marble-Otter-93 and it worked", "Marble-Otter-93"),
    ("Log in using root:Plk9-Vesper-Quay", "Plk9-Vesper-Quay"),
    ("to reproduce, sign into grafana as admin/Qx7-Lantern-Fog then open the dashboard", "Qx7-Lantern-Fog"),
    ("please set SMTP_PASSWORD to Rv5-Copper-Wren before running it", "Rv5-Copper-Wren"),
    ("set the `REDIS_PASSWORD` to Nx2!Tidal-Moss in .env", "Nx2!Tidal-Moss"),
    ("Authenticated as svc-backup/Yt6-Prairie-Glow", "Yt6-Prairie-Glow"),
    ("just change STAGING_API_KEY to Zx8cV7bN6mQ5 and redeploy", "Zx8cV7bN6mQ5"),
    pytest.param(
        "The default is guest:guest, so log in with that",
        "guest:guest",
        marks=pytest.mark.xfail(strict=True, reason="a default pair with no login word before it"),
    ),
    pytest.param(
        "log in to https://grafana.internal:3000 with admin / Gx8-Raven-Tide",
        "Gx8-Raven-Tide",
        marks=pytest.mark.xfail(
            strict=True, reason="where one logs in is words without a colon: a URL ends it"
        ),
    ),
    pytest.param(
        "we log in as admin with password Hunter2-Zebra",
        "Hunter2-Zebra",
        marks=pytest.mark.xfail(strict=True, reason="'with password X' names a password without a verb"),
    ),
    pytest.param(
        "update DB_PASS to Qm4-Birch-Lake",
        "Qm4-Birch-Lake",
        marks=pytest.mark.xfail(
            strict=True, reason="a bare `pass` is no secret's name in a sentence (a verb too)"
        ),
    ),
]
HELD_OUT_KEPT_45 = [
    "log in with the admin account and check /var/log/auth.log",
    "sign in as the deploy user / service account first",
    "Log in with GitHub/GitLab OAuth",
    "set API_KEY_PATH to ~/.config/key",
    "set the SECRET_KEY to a random 50-char string",
    "the token will be HS256-signed",
    "the password will be double hashed",
    "logged in as admin/superuser on staging",
    "sign in with SAML/OIDC via Okta",
    "log in with v2/api credentials",
    "the key will be RSA-4096 generated with ssh-keygen",
    "log in with 2FA/TOTP",
    "set TOKEN_TTL to 3600",
    "I logged in as root at 09/14 and saw the 2/3 failures",
]


@pytest.mark.parametrize(("text", "secret"), HELD_OUT_SECRETS_45)
def test_held_out_secrets_stop_45(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert redact(out) == out


@pytest.mark.parametrize("text", HELD_OUT_KEPT_45)
def test_held_out_prose_is_kept_stop_45(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


# Stop 45, the review of the above: "a standard's name before a participle" kept any value of
# capitals and digits before any participle, real passwords included. Only a mechanism's name
# (perhaps with a size) or a size in bits or bytes, before a participle that says how a secret is
# kept, is no value. And look-alikes of a pair after a login verb: a placeholder key, a snake_case
# name, numbered accounts, a port, a role and its title.
SECRETS_45_REVIEW = [
    ("the password is OCEAN-42 shared with the team", "OCEAN-42"),
    ("the staging password is KOALA-2024 shared with the contractors via 1Password", "KOALA-2024"),
    ("the api key is ZX81QK7P9 stored with the other keys", "ZX81QK7P9"),
    ("the wifi password is GUEST-2024 printed by the router", "GUEST-2024"),
    ("the root password is 58213 encrypted with our GPG key", "58213"),
    ("the admin password is ADMIN-7781 protected by 2FA", "ADMIN-7781"),
    ("the token is AB12CD34 signed by the CA", "AB12CD34"),
    ("the db password is hunter-7 saved with the deploy notes", "hunter-7"),
    ("the password is WINTER24 changed by Piotr this morning", "WINTER24"),
    ("the password is TIGER-88 hidden.", "TIGER-88"),
    ("the password is 9931-7720 frozen.", "9931-7720"),
    ("the password is SHA256-Q7x9 hashed", "SHA256-Q7x9"),
]
KEPT_45_REVIEW = [
    "the password will be AES-256 encrypted",
    "the password is hashed with bcrypt",
    "the key is 256-bit",
    "the token is HMAC-SHA256 signed with the app key",
    "the password is AES-256-GCM encrypted",
    "the secret is 32-byte generated",
    "The token is EdDSA signed, so rotate the key",
    "the secret is base64 encoded",
    "set OPENAI_API_KEY to sk-...",
    "set OPENAI_API_KEY to sk-…",
    "set STRIPE_SECRET_KEY to sk_test_xxx",
    "set API_KEY to <your-key>",
    "set API_KEY to YOUR_KEY_HERE",
    "log in with user/user_list endpoint",
    "log in as user1/user2",
    "log in as admin:8080",
    # a role and its title: a letters-only word is no password after a login verb, title case or not
    "log in as editor/Editor",
]


@pytest.mark.parametrize(("text", "secret"), SECRETS_45_REVIEW)
def test_stop_45_review_leaks_are_redacted(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert redact(out) == out


@pytest.mark.parametrize("text", KEPT_45_REVIEW)
def test_stop_45_review_look_alikes_are_kept(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


# Held out from the review's fix: written after it, run once as it stood; the miss is marked with
# why, not answered by a rule written for it.
HELD_OUT_SECRETS_45_REVIEW = [
    ("the vpn password is MARLIN-5150 encrypted at rest", "MARLIN-5150"),
    ("the backup key is RSA-Kx49Q generated last week", "RSA-Kx49Q"),  # stop 46: prose-key-is
    ("the db token is AES256xQ9 signed off by ops", "AES256xQ9"),
    ("the redis password is Kite-2049 protected by the firewall", "Kite-2049"),
    ("log in as svc3/Pq8-Harbor-11", "Pq8-Harbor-11"),
    ("sign into the router as admin:48213911", "48213911"),
    ("set SENTRY_AUTH_TOKEN to sntrys_Zx8cV7bN6mQ5 before the release", "sntrys_Zx8cV7bN6mQ5"),
    ("the shared password is BASE64-Q2x8 encoded by the script", "BASE64-Q2x8"),
]
HELD_OUT_KEPT_45_REVIEW = [
    "the password is 256-bit AES encrypted before upload",
    "the session token is ES256-signed and short-lived",
    "the refresh token is HS512 signed with the shared secret",
    "set GITHUB_TOKEN to ghp_… from your settings page",
    "log in as tester1 / tester2 to compare the views",
    "log into postgres as postgres:5432",
    "log in with auth/auth_callback handler",
    "the key is ChaCha20-Poly1305 encrypted",
]


@pytest.mark.parametrize(("text", "secret"), HELD_OUT_SECRETS_45_REVIEW)
def test_held_out_secrets_stop_45_review(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert redact(out) == out


@pytest.mark.parametrize("text", HELD_OUT_KEPT_45_REVIEW)
def test_held_out_prose_is_kept_stop_45_review(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


# Stop 46: shapes a reviewer found kept. A user:password pair before a login phrase, a pair after a
# login word's qualifier and a colon, a camelCase or snake_case setting set "to" two words, a key
# stated in a sentence, a PIN after a colon or a verb. And what must stay: ports, times, line
# numbers, ratios, a mechanism's name, a key that is a digest, an id or a point (the code the
# reviewer listed, `getpass()`, `console.log('Logging in with email:', …)`, is in allow_tests).
SECRETS_46 = [
    ("use admin:Xq7-pelican to log in", "Xq7-pelican"),
    ("login for grafana: admin/Hunter-pelican", "Hunter-pelican"),
    ("set dbPassword to tangerine-orbit", "tangerine-orbit"),
    ("set db_password to tangerine-orbit", "tangerine-orbit"),
    ("set the apiKey to tangerine-orbit", "tangerine-orbit"),
    ("set the db-password to tangerine-orbit", "tangerine-orbit"),
    ("the backup key is RSA-Kx49Q generated last week", "RSA-Kx49Q"),
    ("door PIN: 48213", "48213"),
    ("pin: 7731", "7731"),
]
KEPT_46 = [
    "the backup key is AES-256 encrypted",
    "the backup key is bcrypt hashed",
    "port: 8080",
    "connect to localhost:5432",
    "listening on :3000",
    "line 42: unexpected indent",
    "at 12:30 the build broke",
    "Ratio: 0.98",
    "use localhost:8080 to log in",
    "use mode:interactive to log in",
    "set the token to auto-refresh every hour",
    "the key is to cache the parsed config",
    "the primary key is userId2",
    "led_pin: 13",
]


@pytest.mark.parametrize(("text", "secret"), SECRETS_46)
def test_stop_46_leaks_are_redacted(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert REDACTED in out
        assert redact(out) == out


def test_a_digit_free_passphrase_after_a_colon_goes_whole() -> None:
    """Four words of letters after `password:` are the passphrase, not prose: all of it goes."""
    text = "password: correct horse battery staple"
    for form, want in zip(both_ways(text), both_ways("password: " + REDACTED), strict=True):
        assert redact(form) == want


@pytest.mark.parametrize("text", KEPT_46)
def test_stop_46_look_alikes_are_kept(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


# Held out from stop 46's rules: written after them, from none of their examples, and run once as
# they stood; the miss is marked with why, not answered by a rule written for it. Look-alikes that
# reach no rule of this stop (no break of it made them fail) were left out.
HELD_OUT_SECRETS_46 = [
    ("you can use svc-deploy:Mq4-tern-71 to log into the dashboard", "Mq4-tern-71"),
    ("Try guest2:Plover-88 to sign on", "Plover-88"),
    ("jenkins login for the nightly job: ci/Qz7-Heron-2", "Qz7-Heron-2"),
    ("credentials to the vpn: alice/Fjord-Lamp5", "Fjord-Lamp5"),
    ("set mongoPassword to violet-canyon", "violet-canyon"),
    ("I changed the rabbitmq_password to amber-sparrow.", "amber-sparrow"),
    ("update the stripeSecret to Kq2-Moor-9", "Kq2-Moor-9"),
    ("rotate the `awsSecretKey` to sapphire-dune", "sapphire-dune"),
    ("the laptop recovery key was Hq7-Ze92-Lm4 printed on a sticker", "Hq7-Ze92-Lm4"),
    ("the wallet's master key is Xr9QpL2mZ", "Xr9QpL2mZ"),
    ("safe PIN: 90817", "90817"),
    ("the alarm pin is 4455", "4455"),
    ("Pin number for the card = 772310", "772310"),  # a strict xfail until stop 47
]
HELD_OUT_KEPT_46 = [
    "use redis.internal:6379 to log in",
    "use ldap:kerberos to sign in",
    "login for the staging grafana: feature/sso-login",
    "set apiKeyHeader to X-Api-Key",
    "the sort key is createdAt2",
    "the key is Cmd+Shift+P",
    "the key is SHA256",
    "the encryption key is 256-bit generated by KMS",
    "the key is X25519 derived from the seed",
    "the backup key is stored in 1Password",
    "the key is UTF-8",
    "pin: 8",
    "the pin is 7 on the board",
    "the build number is 48213",
    "error code: 40413",
]


@pytest.mark.parametrize(("text", "secret"), HELD_OUT_SECRETS_46)
def test_held_out_secrets_stop_46(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert redact(out) == out


@pytest.mark.parametrize("text", HELD_OUT_KEPT_46)
def test_held_out_prose_is_kept_stop_46(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


# Stop 47: the last review's leaks (a key or a PIN named with a qualifier, a two-word passphrase, a
# key after a colon) and its over-redaction (a setting's number after a token's name).
SECRETS_47 = [
    ("the PIN for the safe is 9045", "9045"),
    ("the API key for staging is q8Zr2mT1", "q8Zr2mT1"),
    ("password for the build box: hunter2hunter", "hunter2hunter"),
    ("the password is tangerine-orbit", "tangerine-orbit"),
    ("my passphrase is correct-horse-battery-staple", "correct-horse-battery-staple"),
    ("backup key: RSA-Kx49Q", "RSA-Kx49Q"),
]
KEPT_47 = [
    "set maxToken to 4096",
    "set MAX_TOKEN to 4096",
    "the token limit is 4096",
    "the key is to retry with backoff",
    "the password field is required",
    "Pin the version to 3.11",
    "the secret to fast builds is caching",
]


@pytest.mark.parametrize(("text", "secret"), SECRETS_47)
def test_stop_47_leaks_are_redacted(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert REDACTED in out
        assert redact(out) == out


@pytest.mark.parametrize("text", KEPT_47)
def test_stop_47_settings_and_sayings_are_kept(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)


def test_a_setting_number_after_a_password_name_is_still_a_pin() -> None:
    """The count judgement is the token's: a password set to a number of four digits is a PIN."""
    for form in both_ways("set the admin password to 48213"):
        assert "48213" not in redact(form)


# Held out from stop 47's rules: written before the rules were (the first twelve and fourteen before
# any, the rest after a first design that met those), each run once as the rules stood; a miss is
# marked with why. The rules were then redesigned for speed (a name read forwards from a gate, not a
# qualifier read back from every ':' and '='), and all were run again. Those no break of this stop's
# rules made fail (met by older rules: "the card's PIN is 4417", "backup key: see the runbook") were
# left out.
HELD_OUT_SECRETS_47 = [
    ("the PIN on my debit card is 60318", "60318"),
    ("Garage door pin code for the side entrance: 20494", "20494"),
    ("the unlock PIN for the tablet = 5521", "5521"),
    ("our vault key for prod is Tm4Wq9Lx", "Tm4Wq9Lx"),
    ("the signing key for releases: Hx83-pQv7", "Hx83-pQv7"),
    ("my wifi password is marmalade-lantern", "marmalade-lantern"),
    ("the passphrase for the backup disk is velvet-compass", "velvet-compass"),
    ("encryption key: Pz7-Kq2mWx", "Pz7-Kq2mWx"),
    ("the access key = Lq9Ze3Rt", "Lq9Ze3Rt"),
    ("the password for my laptop should be olive-harbor", "olive-harbor"),
    ("PIN for the alarm panel was 73105", "73105"),  # lost by the redesign (no blank before it): " for "
    ("recovery key: Jw5Tn8Qp", "Jw5Tn8Qp"),
    ("the guest wifi password is saffron-meadow", "saffron-meadow"),
    ("ATM pin for the joint account = 90210", "90210"),
    ("the deploy key for the mirror: Gk2-Rm8Tz", "Gk2-Rm8Tz"),
    ("my vpn passphrase should be lunar-thicket", "lunar-thicket"),
    ("the SIM pin on my work phone is 1357", "1357"),
    ("license key: QW3E-R5TY-8UIO", "QW3E-R5TY-8UIO"),  # a code: groups of one length, capitals and digits
    ("the master key = Vb7Nq2Lp", "Vb7Nq2Lp"),
]
# Written after the licence-key rule (stop 48), not from it: codes of capitals and digits in
# groups of one length are secrets after a key word; mechanism names, formats and ids are not.
GROUPED_CODES_48 = [
    ("the product key for the workstation is 7HG2K-9XW4P-QM3RT-V8N6B-J2C4D", "7HG2K-9XW4P-QM3RT-V8N6B-J2C4D"),
    ("serial key = AB12-CD34-EF56-GH78", "AB12-CD34-EF56-GH78"),
    ("our activation key was K7P2M-9Q4XW-3W8RT", "K7P2M-9Q4XW-3W8RT"),
    ("the licence key: 4F7G2H-9K3L8M-2N5P7Q", "4F7G2H-9K3L8M-2N5P7Q"),
]
GROUPED_KEPT_48 = [
    "the signing key: ECDSA-P256",
    "sort key: ISO-8601-DATE",
    "the key is SHA-256-HMAC",
    "the key: X509-V3-EXT",
    "the primary key is ORDER-ID-2024",
    "the key is AAAA-BBBB-CCCC",
    "the partition key: 2024-11-05",
]


@pytest.mark.parametrize(("text", "secret"), GROUPED_CODES_48)
def test_a_licence_shaped_code_after_a_key_word_is_a_secret(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert redact(out) == out


@pytest.mark.parametrize("text", GROUPED_KEPT_48)
def test_names_formats_and_ids_after_a_key_word_are_kept(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form


HELD_OUT_KEPT_47 = [
    "set CLAUDE_MAX_TOKEN to 200000",
    "the PIN for the status LED is 13",
    "the PIN for the release was 2025-03-14",
    "the PIN for the LED strip: 12",
    "the pin for the docs build = 2024.06",
    "sort key: createdAt2",
    "the public key: Ab3xYz9Q7",
    "the key for the lookup: itemId",
    "the signing key: ECDSA-P256",
    "the password is user-defined",
    "the passphrase is case-sensitive.",
    "the password for the kiosk is auto-generated",
    "the password is lower-case",
    "the password is time-limited",
    "the passphrase is space-separated",
    "the password is plain-text",
    "the password is salt-hashed",
    "the password is two-factor",  # a strict xfail until stop 49 ([allow] quantity)
    "the token for each request is single-use",
]


@pytest.mark.parametrize(("text", "secret"), HELD_OUT_SECRETS_47)
def test_held_out_secrets_stop_47(text: str, secret: str) -> None:
    for form in both_ways(text):
        out = redact(form)
        assert secret not in out, out
        assert redact(out) == out


@pytest.mark.parametrize("text", HELD_OUT_KEPT_47)
def test_held_out_prose_is_kept_stop_47(text: str) -> None:
    for form in both_ways(text):
        assert redact(form) == form, find_secrets(form)
