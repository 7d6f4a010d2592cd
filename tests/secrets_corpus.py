"""Fake secrets and look-alikes shared by the redactor tests and benchmarks.

Every value is a fixed literal that *looks* real (right prefix, length and alphabet) but was
generated for this file and grants nothing. Keep the API stable: other tests and
``bench/redact_speed.py`` import ``Secret``, ``SECRETS`` and ``LOOKALIKES``.

* ``SECRETS``: each line must lose ``value`` (and every string in ``extra``) and gain
  ``[REDACTED_SECRET]``.
* ``LOOKALIKES``: each text must come back byte-identical.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Secret:
    """A fake secret embedded in a realistic line.

    ``value`` is the exact secret text that must be gone after redaction; ``extra`` lists other
    fragments of the same secret that must be gone too (e.g. every body line of a PEM block).
    """

    name: str
    line: str
    value: str
    extra: tuple[str, ...] = field(default=())


_PEM = (
    "Ml9wSVymHUd4xRIBzjn1xjVGkvcfpOuo2D06DFMbnQZ1giQT0xHNqH1Ql/H6AnDd",
    "NSBY7uH+WzFlOyT1IXglmYyja56vVDMvI5yKc9Fm+9eYtfC+CCh+8VE/1Q86WbAi",
    "ERWaROvUbYxh8HUSN2J2n0qxY6QXTUhDI/HfGXf8Rp4yk7iHkQlbhRqicx2e5IRF",
    "84ITNLj9w8zRh5LpZf3xdY8FgiJr5brGGBcEVQsLsEB3JLsCoUlGNlYeqcbUNzC5",
    "PggvBLcaovzCa3L8BNwIeTisZMYJzYZoDLcW0SmjUnecRBtuwSoQkA8ylqYHKewi",
    "JVeIOW9ddq+hXfLR6fuO3E5hTvOyJtaGUXdpSWCa154+ORzERVbnTRGpJQWeDw1I",
)
_PEM_TAIL = "q1Zr8w=="


def _pem(kind: str, nl: str = "\n", headers: str = "") -> str:
    """A PEM block with the fixed body lines above (no randomness)."""
    body = nl.join(_PEM) + nl + _PEM_TAIL
    return f"-----BEGIN {kind}-----{nl}{headers}{body}{nl}-----END {kind}-----"


SECRETS: list[Secret] = [
    # --- AI providers -------------------------------------------------------------------------
    Secret(
        "openai_legacy",
        "OPENAI_API_KEY=sk-kfhfgtKAQWYm85EZgslmBp65HpUbz04IfkvXL9M9Z6QuSgBM",
        "sk-kfhfgtKAQWYm85EZgslmBp65HpUbz04IfkvXL9M9Z6QuSgBM",
    ),
    Secret(
        "openai_project",
        'export OPENAI_API_KEY="sk-proj-c2Tg7FFKeTcDLtQYbJpy9Kzf2z5PX3Y8sW3Puqz4MRZz3W5VHc-eprSwUkqa__'
        'NdOmBmBSlIrbUjtV9XGbFqpGVSboDUk0pYkAvAkaKUnNyP"',
        "sk-proj-c2Tg7FFKeTcDLtQYbJpy9Kzf2z5PX3Y8sW3Puqz4MRZz3W5VHc-eprSwUkqa__"
        "NdOmBmBSlIrbUjtV9XGbFqpGVSboDUk0pYkAvAkaKUnNyP",
    ),
    Secret(
        "openai_service_account",
        "client = OpenAI(api_key='sk-svcacct-Hj_kavmdc9XdfCowZwNZKlK8xm-Ap3mEZ-ptnnIhMW4LkU82wTtn1AEPyQMX"
        "WrmbFyGy07vyjsP8mKcKmyL7fLIOFE', timeout=30)",
        "sk-svcacct-Hj_kavmdc9XdfCowZwNZKlK8xm-Ap3mEZ-ptnnIhMW4LkU82wTtn1AEPyQMXWrmbFyGy07vyjsP8mKcKmyL7fLIOFE",
    ),
    Secret(
        "anthropic_api",
        "  ANTHROPIC_API_KEY: sk-ant-api03-Z9dzguVKCwN-YqAWA3AskRb-HgjeQosI5NB7Gv-b_TKUoXWtzofKrcL2Du0M6-"
        "3XlhY4hCjIqNREX6a426B-jKn1yP84cAA",
        "sk-ant-api03-Z9dzguVKCwN-YqAWA3AskRb-HgjeQosI5NB7Gv-b_TKUoXWtzofKrcL2Du0M6-3XlhY4hCjIqNREX6a426B-"
        "jKn1yP84cAA",
    ),
    Secret(
        "anthropic_admin",
        "curl https://api.anthropic.com/v1/organizations/users -H 'x-api-key: sk-ant-admin01-B8aldMgIaRiIuNhJa5"
        "T6ky0RhKdgtkFM71h4ALHZoHYRNbo51vNsVipSEsQL8JjRlwHnVKjtL5PfXrOJKpsVSr66pZwLlAA'",
        "sk-ant-admin01-B8aldMgIaRiIuNhJa5T6ky0RhKdgtkFM71h4ALHZoHYRNbo51vNsVipSEsQL8JjRlwHnVKjtL5PfXrOJKpsVSr66"
        "pZwLlAA",
    ),
    Secret(
        "huggingface",
        "$ huggingface-cli login --token hf_DEePaPxzn2MJAwDHJ9ZRijWy9uEaVEC8DL --add-to-git-credential",
        "hf_DEePaPxzn2MJAwDHJ9ZRijWy9uEaVEC8DL",
    ),
    Secret(
        "groq",
        "Using provider groq with key 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 (from env)",
        "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",
    ),
    Secret(
        "replicate",
        "REPLICATE_API_TOKEN=r8_K1wO8reJL7BXb8t7NcHwinCIWQU9l76aQcAuG",
        "r8_K1wO8reJL7BXb8t7NcHwinCIWQU9l76aQcAuG",
    ),
    Secret(
        "xai",
        "headers = {'Authorization': 'Bearer xai-QA6WbhYC2L6zKLRDngEnC5sDTpOv1yzckPl0Ue5GAi5U85hKlsF6Aa3XYw8q"
        "xLYKQNnX2DuzjR2L7QAA'}",
        "xai-QA6WbhYC2L6zKLRDngEnC5sDTpOv1yzckPl0Ue5GAi5U85hKlsF6Aa3XYw8qxLYKQNnX2DuzjR2L7QAA",
    ),
    # --- Code hosting and package registries ----------------------------------------------------
    Secret(
        "github_ghp",
        "remote: https://ghp_cLJ09hUoYm9YnE7uOesvcZrG9yxrfYjaUwx7@github.com/acme/widgets.git",
        "ghp_cLJ09hUoYm9YnE7uOesvcZrG9yxrfYjaUwx7",
    ),
    Secret(
        "github_gho",
        'curl -H "Authorization: token gho_6rYPH91qDAQwKuBJSm1nX8wU0UXU7zOOg6Nu" https://api.github.com/user',
        "gho_6rYPH91qDAQwKuBJSm1nX8wU0UXU7zOOg6Nu",
    ),
    Secret(
        "github_ghu",
        '{"token": "ghu_l89nWfQHi15hX7IseEO7YX2myHlSMqeYL6mP", "expires_in": 28800}',
        "ghu_l89nWfQHi15hX7IseEO7YX2myHlSMqeYL6mP",
    ),
    Secret(
        "github_ghs",
        "::add-mask::ghs_ZdDkv2ASXuZslu5YtRBoA2duJZ4tQHUCkG9b",
        "ghs_ZdDkv2ASXuZslu5YtRBoA2duJZ4tQHUCkG9b",
    ),
    Secret(
        "github_ghr",
        "refresh with ghr_4hMr5RhFYSlw5ps2GKZ4HqGGgDsNHwV2urMu before it expires",
        "ghr_4hMr5RhFYSlw5ps2GKZ4HqGGgDsNHwV2urMu",
    ),
    Secret(
        "github_fine_grained_pat",
        "gh auth login --with-token <<< github_pat_1136G1EG7IA9ZVXADHII7O_IH02ImmZw0Vt46WNNfhS8ECxiF3XnTZ2ZI"
        "DGs8nz4Q10Y6dRO0Frkeq32iZ",
        "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",
    ),
    Secret(
        "gitlab_pat",
        'curl --header "PRIVATE-TOKEN: glpat-D37f0QiEV3DIv8sSLl8l" "https://gitlab.example.com/api/v4/projects"',
        "glpat-D37f0QiEV3DIv8sSLl8l",
    ),
    Secret(
        "npm_npmrc",
        "//registry.npmjs.org/:_authToken=npm_LSmEMMAs7tLxtzrMQKXkVZJgH6BzL8hECOfp",
        "npm_LSmEMMAs7tLxtzrMQKXkVZJgH6BzL8hECOfp",
    ),
    Secret(
        "pypi",
        "password = pypi-AgEIcHlwaS5vcmcp9T8u5mM9sZZ8yA0AwkypjBtyY47F7NqTO3SF1uKELpn0O--8A4iyDj_UgwgFbmXKxVWdF"
        "VIjAaoTywhNlAkOG58mRMShMo92zTalqkX9899wTJ8dlF1tGIq7QcatrYLHoTLaTekFAv3",
        "pypi-AgEIcHlwaS5vcmcp9T8u5mM9sZZ8yA0AwkypjBtyY47F7NqTO3SF1uKELpn0O--8A4iyDj_UgwgFbmXKxVWdFVIjAaoTywhN"
        "lAkOG58mRMShMo92zTalqkX9899wTJ8dlF1tGIq7QcatrYLHoTLaTekFAv3",
    ),
    # --- Cloud ------------------------------------------------------------------------------------
    Secret("aws_access_key_id", "aws_access_key_id = AKIAZEMVACERX5VTB7B7", "AKIAZEMVACERX5VTB7B7"),
    Secret(
        "aws_sts_access_key_id",
        '        "AccessKeyId": "ASIAX3LFGYQ6C4XZYWAX",',
        "ASIAX3LFGYQ6C4XZYWAX",
    ),
    Secret(
        "aws_secret_access_key_ini",
        "aws_secret_access_key = 6iFhrH9d3EGnl8cWKdKQlOUGrcMCYo5N5EGwjbaa",
        "6iFhrH9d3EGnl8cWKdKQlOUGrcMCYo5N5EGwjbaa",
    ),
    Secret(
        "aws_secret_access_key_json",
        '        "SecretAccessKey": "g2QHvJlRcYmDx3RiyUfOPK3YCbP04aE5vCZ9rlpp",',
        "g2QHvJlRcYmDx3RiyUfOPK3YCbP04aE5vCZ9rlpp",
    ),
    Secret(
        "aws_credentials_csv",
        "deploy-bot,AKIAZEMVACERX5VTB7B7,xQIhHaJ+/lKAFszb2mhDu89zLGh6Sff9W2vBfm0m",
        "xQIhHaJ+/lKAFszb2mhDu89zLGh6Sff9W2vBfm0m",
    ),
    Secret(
        "google_api_key",
        "GET https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key=AIza0C2_a-pqWMD_dFbABpZQ9Z4Vtx"
        "fVVhGcpkU",
        "AIza0C2_a-pqWMD_dFbABpZQ9Z4VtxfVVhGcpkU",
    ),
    Secret(
        "google_oauth",
        "access token: ya29.a0z88MCZUFhlx0YzKbUTqOZVlHf25RPRbFZwIHZAoBEf6CdvCzvEmDS-kkFVMvABK8A4iI_xMhGsGlMKsDj"
        "ial5wQjuKLJu6XprIa_S4HLwwNYzB-sJZ6qPlmIXbhQKaeq5wMu3vayp4nmIpT8tRc7P2",
        "ya29.a0z88MCZUFhlx0YzKbUTqOZVlHf25RPRbFZwIHZAoBEf6CdvCzvEmDS-kkFVMvABK8A4iI_xMhGsGlMKsDjial5wQjuKLJu6X"
        "prIa_S4HLwwNYzB-sJZ6qPlmIXbhQKaeq5wMu3vayp4nmIpT8tRc7P2",
    ),
    Secret(
        "digitalocean",
        "doctl auth init -t dop_v1_68d81b5c63bd2df4724750b5d8266e57dba63f806682cd78281b4c93aea880dc",
        "dop_v1_68d81b5c63bd2df4724750b5d8266e57dba63f806682cd78281b4c93aea880dc",
    ),
    # --- SaaS -------------------------------------------------------------------------------------
    Secret(
        "slack_bot",
        "SLACK_BOT_TOKEN=xoxb-962147027203-7448517152733-DaQrdxIRbN0PgiEriw5pj74V",
        "xoxb-962147027203-7448517152733-DaQrdxIRbN0PgiEriw5pj74V",
    ),
    Secret(
        "slack_user",
        '{"ok": true, "access_token": "xoxp-151914792868-393766142981-0710354764132-a2a8156b09a3d10566ffe1f49bd5f165"}',
        "xoxp-151914792868-393766142981-0710354764132-a2a8156b09a3d10566ffe1f49bd5f165",
    ),
    Secret(
        "slack_webhook",
        "curl -X POST -d @msg.json https://hooks.slack.com/services/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",
        "TX4YW118J/BNQT0619Q6V/oMjRhOcx0QePBgW4GdOUUAvI",
    ),
    Secret(
        "discord_webhook",
        "webhook_url: https://discord.com/api/webhooks/8236461558752454849/WfpctjAJ4x1HwvtTlLPhNkDK5_OUTPxTCxX"
        "MFaLci9djCKvvpsaZQVswNG-JcPH49U0_",
        "WfpctjAJ4x1HwvtTlLPhNkDK5_OUTPxTCxXMFaLci9djCKvvpsaZQVswNG-JcPH49U0_",
    ),
    Secret(
        "sendgrid",
        "SENDGRID_API_KEY='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'",
        "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",
    ),
    Secret(
        "stripe_sk_live",
        'stripe.api_key = "sk_live_LnRJeZUjfTWe45JjP0cDPYrplSRuQMkZpJQXZ1sBLaGWgQV0CH475mYUCaitOF10L4OPwtz8sCEtqT'
        'vNPTz0zniFXhFIumJWGwr"',
        "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"
        "WGwr",
    ),
    Secret(
        "stripe_rk_live",
        "restricted key rk_live_4gTvUaWore2MflgL145LxUv3lbzRyg95paRU8VtHkUt5LH7cejjZyouSD8DdZr7DaKrWOJcmBzCRvYD5"
        "rRSpMVb35xrDlNgzWth was revoked",
        "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"
        "gzWth",
    ),
    Secret(
        "stripe_sk_test",
        "| STRIPE_SECRET | sk_test_7P2gDeD0coAZMjJlf1MhsTbe |",
        "sk_test_7P2gDeD0coAZMjJlf1MhsTbe",
    ),
    Secret(
        "stripe_pk_live",
        "<script>Stripe('pk_live_wqGIhg3mN3gFYanqg8N0ffuF');</script>",
        "pk_live_wqGIhg3mN3gFYanqg8N0ffuF",
    ),
    Secret(
        "twilio",
        "Created Twilio API key SKb98dd33e53bc03f52a9a9c0b350fd585 for project acme",
        "SKb98dd33e53bc03f52a9a9c0b350fd585",
    ),
    Secret(
        "mailgun",
        "curl -s --user 'api:key-4ef08a76fef3dcaf30e22bde96246d04' https://api.mailgun.net/v3/mg.example.com/messages",
        "key-4ef08a76fef3dcaf30e22bde96246d04",
    ),
    Secret(
        "linear",
        "LINEAR_API_KEY lin_api_2jue2KIOKYW29KwPpEfNHJ1cRY9iuUPsFRnTv77V loaded",
        "lin_api_2jue2KIOKYW29KwPpEfNHJ1cRY9iuUPsFRnTv77V",
    ),
    Secret(
        "age_identity",
        "# created: 2024-05-01T10:00:00Z\nAGE-SECRET-KEY-1AV5PSD7C3AWXI6NS1191SN918KO77ZHLT6XLE2P5YL82Z0SXL71R1BOCG9",
        "AGE-SECRET-KEY-1AV5PSD7C3AWXI6NS1191SN918KO77ZHLT6XLE2P5YL82Z0SXL71R1BOCG9",
    ),
    # --- Tokens and headers -----------------------------------------------------------------------
    Secret(
        "jwt_cookie",
        "Set-Cookie: session=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1Xzg4MTIiLCJyb2xlIjoiYWRtaW4iLCJle"
        "HAiOjE3NjcyMjU2MDB9.2HwltfCdh4zveu2huDYiWLe91myPxXn_XurDMh7FdxU; Path=/; HttpOnly",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1Xzg4MTIiLCJyb2xlIjoiYWRtaW4iLCJleHAiOjE3NjcyMjU2MDB9."
        "2HwltfCdh4zveu2huDYiWLe91myPxXn_XurDMh7FdxU",
    ),
    Secret(
        "bearer_header",
        'curl -sS -H "Authorization: Bearer woViVfIJclBunOtOadMhqjNfx2fj7wHzJMbL8AYn" https://api.example.com/v2/me',
        "woViVfIJclBunOtOadMhqjNfx2fj7wHzJMbL8AYn",
    ),
    Secret(
        "basic_header",
        "> Authorization: Basic YWRtaW46UzNjcjN0UGFzcyE=",
        "YWRtaW46UzNjcjN0UGFzcyE=",
    ),
    Secret(
        "docker_config_auth",
        '{"auths": {"registry.example.com": {"auth": "ZGVwbG95OmdocF9jTEowOWhVb1ltOVluRTd1T2VzdmNackc5eXhyZllq'
        'YVV3eDc="}}}',
        "ZGVwbG95OmdocF9jTEowOWhVb1ltOVluRTd1T2VzdmNackc5eXhyZllqYVV3eDc=",
    ),
    # --- Private keys -----------------------------------------------------------------------------
    Secret("pem_rsa", _pem("RSA PRIVATE KEY"), _PEM[2], extra=(*_PEM, _PEM_TAIL)),
    Secret("pem_ec", "key.pem:\n" + _pem("EC PRIVATE KEY") + "\n", _PEM[0], extra=(*_PEM, _PEM_TAIL)),
    Secret(
        "pem_openssh",
        "```\n" + _pem("OPENSSH PRIVATE KEY") + "\n```",
        _PEM[5],
        extra=(*_PEM, _PEM_TAIL),
    ),
    Secret(
        "pem_pkcs8_json_escaped",
        '  "private_key": "' + _pem("PRIVATE KEY", nl="\\n") + '\\n",',
        _PEM[3],
        extra=(*_PEM, _PEM_TAIL),
    ),
    Secret(
        "pem_encrypted",
        _pem("ENCRYPTED PRIVATE KEY"),
        _PEM[1],
        extra=(*_PEM, _PEM_TAIL),
    ),
    Secret(
        "pem_pgp",
        _pem("PGP PRIVATE KEY BLOCK", headers="Version: GnuPG v2\n\n"),
        _PEM[4],
        extra=(*_PEM, _PEM_TAIL),
    ),
    Secret(  # an Aider chat history: each line of a pasted user message starts with "#### "
        "pem_aider_prefixed",
        "\n".join("#### " + ln for ln in _pem("OPENSSH PRIVATE KEY").splitlines()),
        _PEM[2],
        extra=(*_PEM, _PEM_TAIL),
    ),
    Secret(  # quoted in markdown: each line starts with "> "
        "pem_quoted",
        "\n".join("> " + ln for ln in _pem("RSA PRIVATE KEY").splitlines()),
        _PEM[4],
        extra=(*_PEM, _PEM_TAIL),
    ),
    Secret(  # a file read with line numbers (Claude Code's Read tool), found by review
        "pem_read_line_numbers",
        "\n".join(f"{i:>6}→{ln}" for i, ln in enumerate(_pem("PRIVATE KEY").splitlines(), 1)),
        _PEM[1],
        extra=(*_PEM, _PEM_TAIL),
    ),
    Secret(  # nested quotes, and a diff's removed lines
        "pem_nested_quote_and_diff",
        "\n".join("> > " + ln for ln in _pem("RSA PRIVATE KEY").splitlines())
        + "\n"
        + "\n".join("- " + ln for ln in _pem("EC PRIVATE KEY").splitlines()),
        _PEM[3],
        extra=(*_PEM, _PEM_TAIL),
    ),
    Secret(
        "pem_truncated",
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(_PEM[:3]) + "\n[... output truncated ...]",
        _PEM[2],
        extra=_PEM[:3],
    ),
    # --- Credentials in URLs ----------------------------------------------------------------------
    Secret(
        "url_postgres",
        "DATABASE_URL=postgres://app:Xk9mP2vL7qR4@db.internal:5432/app?sslmode=require",
        "Xk9mP2vL7qR4",
    ),
    Secret(
        "url_mysql",
        "sqlalchemy.url = mysql+pymysql://root:s3cr3tR00t@127.0.0.1:3306/shop",
        "s3cr3tR00t",
    ),
    Secret("url_redis", "CELERY_BROKER_URL=redis://:Rj8vK2mQ9xLp@redis:6379/0", "Rj8vK2mQ9xLp"),
    Secret("url_amqp", "connecting to amqp://guest:G7hT2kLm9Q@rabbit:5672/ ...", "G7hT2kLm9Q"),
    Secret(
        "url_mongodb_srv",
        'MONGO_URI="mongodb+srv://admin:Mn4bV8cX2zLk@cluster0.ab1cd.mongodb.net/test?retryWrites=true&w=majority"',
        "Mn4bV8cX2zLk",
    ),
    Secret(
        "url_https",
        "git clone https://deploy:Tq8wE3rT6yU1@git.example.com/org/repo.git",
        "Tq8wE3rT6yU1",
    ),
    # --- Assignments ------------------------------------------------------------------------------
    Secret("env_password", "DB_PASSWORD=hunter2xyz", "hunter2xyz"),
    Secret(
        "env_password_quoted_space",
        "DB_PASSWORD='correct horse battery staple'",
        "correct horse battery staple",
    ),
    Secret("json_password", '{"username": "admin", "password": "hunter2"}', "hunter2"),
    Secret("yaml_passwd", "  passwd: Tr0ub4dor&3", "Tr0ub4dor&3"),
    Secret("ini_pwd", "pwd = Zq7!kP2@xR", "Zq7!kP2@xR"),
    Secret("shell_export_token", "export API_TOKEN=abc123def", "abc123def"),
    Secret(
        "python_kwarg_password",
        'conn = psycopg2.connect(host="db", user="app", password="s3cr3t-P4ss")',
        "s3cr3t-P4ss",
    ),
    Secret(
        "yaml_client_secret", 'client_secret: "GOCSPX-1a2B3c4D5e6F7g8H9i0J"', "GOCSPX-1a2B3c4D5e6F7g8H9i0J"
    ),
    Secret(
        "oauth_json_access_token",
        '{"access_token": "2YotnFZFEjr1zCsicMWpAA", "token_type": "bearer", "expires_in": 3600}',
        "2YotnFZFEjr1zCsicMWpAA",
    ),
    Secret(
        "python_api_key_hex",
        'API_KEY = "ab483b7d5d42f82352f7d28ac9ae893b"',
        "ab483b7d5d42f82352f7d28ac9ae893b",
    ),
    Secret("shell_apikey", "export APIKEY=G3quVMRW0QZIty9J", "G3quVMRW0QZIty9J"),
    Secret("go_access_key", 'accessKey := "Dku4FojLe641LoOC"', "Dku4FojLe641LoOC"),
    Secret("php_private_key", "'private_key' => 'LxyBNMyjVBOK',", "LxyBNMyjVBOK"),
    Secret("yaml_auth_entropy", 'auth: "amDBeaEJa76XsPRfWvyCnzBf"', "amDBeaEJa76XsPRfWvyCnzBf"),
    Secret("credentials_entropy", "credentials = PMeFEwGs42LkyKEEeylq", "PMeFEwGs42LkyKEEeylq"),
    Secret("xml_password", "<password>Xy9#mK2$pL</password>", "Xy9#mK2$pL"),
    Secret("properties_password", "spring.datasource.password=Sp1ngP4ss!", "Sp1ngP4ss!"),
    Secret(
        "cli_password_flag", "docker login -u ci --password 9fK2mX7qL3vB registry.example.com", "9fK2mX7qL3vB"
    ),
    Secret(
        "django_secret_key",
        "SECRET_KEY = 'django-insecure-7%v!x2k#q9@m$w4z&8p^r0t*y6u(1s)3e'",
        "django-insecure-7%v!x2k#q9@m$w4z&8p^r0t*y6u(1s)3e",
    ),
    Secret("curl_user", "curl -u admin:S3cr3t!Pw https://jenkins.internal/api/json", "S3cr3t!Pw"),
    Secret(
        "markdown_password",
        "- **Password**: `Wq3!zX8#vB`",
        "Wq3!zX8#vB",
    ),
    Secret(
        "github_token_hex40",
        "GITHUB_TOKEN: cffb69e61aee5a9ec3b8ded8dc7ea3a427900323",
        "cffb69e61aee5a9ec3b8ded8dc7ea3a427900323",
    ),
    Secret("numeric_password", "MYSQL_ROOT_PASSWORD=84712093", "84712093"),
    Secret(
        "query_access_token", "GET /api/v1/me?access_token=Yh7Kq2Lm9XwP4Rz&format=json", "Yh7Kq2Lm9XwP4Rz"
    ),
    # --- Shapes an adversarial pass found missing (issue 13) ----------------------------------
    Secret(
        "vault_hvs_bare",
        "vault login hvs.2AVHLVRuu8ylGHUX76NtpdyPM9GpgCSn847uDj3RRid5Y67FIcNWX6fDCO8M4Es0ePToLXWhzsGrQNk2Yf3"
        "hvtcjfIO",
        "hvs.2AVHLVRuu8ylGHUX76NtpdyPM9GpgCSn847uDj3RRid5Y67FIcNWX6fDCO8M4Es0ePToLXWhzsGrQNk2Yf3hvtcjfIO",
    ),
    Secret(
        "docker_pat_bare",
        "echo dckr_pat_VMvspEWvRv0lJrrhq9FknZ1ZYJd | docker login -u acme --password-stdin",
        "dckr_pat_VMvspEWvRv0lJrrhq9FknZ1ZYJd",
    ),
    Secret(
        "npm_bare",
        "npm whoami failed for npm_QF5vVanURLJ8aZin9mnHAqY1ds5vzH5KUbyT",
        "npm_QF5vVanURLJ8aZin9mnHAqY1ds5vzH5KUbyT",
    ),
    Secret(
        "sendgrid_bare",
        "rotated 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 yesterday",
        "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",
    ),
    Secret(
        "google_client_secret_bare",
        "the OAuth client uses 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 for the web flow",
        "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",
    ),
    Secret(
        "atlassian_api_token",
        "curl -s https://acme.atlassian.net/rest/api/3/myself -H 'X-Token: ATATT3xFfGF0lGHUX76NtpdyPM9GpgCSn847"
        "uDj3RRid5Y67FIcNWX6fDCO8M4Es0ePToLXWhzsGrQNk2Yf3hvtcjfIOVMvspEWvRv0lJrrhq9FknZ1ZYJd-QaBbqBzA1GhLQZdXvA"
        "xiFATEmGOZyEdPQKLc5MmdC4xjbFj0lkkVE2VapfrIfatT5LZ4cxmW=FDF511A6'",
        "ATATT3xFfGF0lGHUX76NtpdyPM9GpgCSn847uDj3RRid5Y67FIcNWX6fDCO8M4Es0ePToLXWhzsGrQNk2Yf3hvtcjfIOVMvspEWvRv"
        "0lJrrhq9FknZ1ZYJd-QaBbqBzA1GhLQZdXvAxiFATEmGOZyEdPQKLc5MmdC4xjbFj0lkkVE2VapfrIfatT5LZ4cxmW=FDF511A6",
    ),
    Secret(
        "okta_ssws",
        'curl -H "Authorization: SSWS 00pr58VdupGFr5Gb2z_eapSlsa8RhaAW_raGMSIZW8" https://acme.okta.com/api/v1/users',
        "00pr58VdupGFr5Gb2z_eapSlsa8RhaAW_raGMSIZW8",
    ),
    Secret(
        "heroku_hrku",
        "heroku auth:token -> HRKU-AAgKLYPFrD7l3K6nrjf8OS0QZlFexNzTzNOXOE6HfcPIRTrYF7NdMqmrnarl",
        "HRKU-AAgKLYPFrD7l3K6nrjf8OS0QZlFexNzTzNOXOE6HfcPIRTrYF7NdMqmrnarl",
    ),
    Secret(
        "aws_secret_after_space",
        "aws configure set aws_secret_access_key xDBBnizwrfh7ieju8Mk+pmF4wWGYvsq73Dgroa7R --profile ci",
        "xDBBnizwrfh7ieju8Mk+pmF4wWGYvsq73Dgroa7R",
    ),
    Secret("aws_key_id_after_space", "key id AKIAZEMVACERX5VTB7B7 (ci user)", "AKIAZEMVACERX5VTB7B7"),
    Secret(
        "url_token_user",
        "git remote set-url origin https://onLhQiqRA5pekg96OYRW8jdq@github.com/acme/widgets.git",
        "onLhQiqRA5pekg96OYRW8jdq",
    ),
    Secret(
        "url_token_hex40",
        "cloning https://f6dfc4d0e1af2a97812fa014ec81a7bba1dbe64f@github.com/acme/infra.git",
        "f6dfc4d0e1af2a97812fa014ec81a7bba1dbe64f",
    ),
    Secret("mysql_p_flag", "mysql -h db.internal -u root -p38zbDuePgF1a shop < dump.sql", "38zbDuePgF1a"),
    Secret("sshpass_p_flag", "sshpass -p 'fj8U4oBwSWoO' ssh deploy@10.0.0.5 uptime", "fj8U4oBwSWoO"),
    Secret("redis_cli_a_flag", "redis-cli -h cache.internal -a dK0Utqw5AdaWxS ping", "dK0Utqw5AdaWxS"),
    Secret(
        "netrc_line",
        "machine api.github.com login octocat password Uu3bELzHTflBfuOJ",
        "Uu3bELzHTflBfuOJ",
    ),
    Secret(
        "netrc_multiline",
        "$ cat ~/.netrc\nmachine ftp.example.com\n  login deploy\n  password fnmeky4zrfxtndvjjv7j",
        "fnmeky4zrfxtndvjjv7j",
    ),
    Secret("pgpass_line", "$ cat ~/.pgpass\ndb.internal:5432:shop:app:Xk9mP2vL7qR4", "Xk9mP2vL7qR4"),
    Secret(
        "cookie_header", "Cookie: sessionid=4pzMH2mN7m6q3K4Um64W1GRU; theme=dark", "4pzMH2mN7m6q3K4Um64W1GRU"
    ),
    Secret(
        "set_cookie_header",
        "< Set-Cookie: connect.sid=s%3AYywt89enRKhVx99mPhn2441Rx0HkloWo; Path=/; HttpOnly",
        "s%3AYywt89enRKhVx99mPhn2441Rx0HkloWo",
    ),
    Secret(
        "curl_cookie_flag",
        "curl -b 'sessionid=a8f3k2l9m4n7p1q6r0s5' https://shop.example.com/cart",
        "a8f3k2l9m4n7p1q6r0s5",
    ),
    Secret("yaml_next_line", "database:\n  password:\n    Zx8cV7bN6mQ5wE\n  user: app", "Zx8cV7bN6mQ5wE"),
    Secret(
        "token_split_across_lines",
        "echo ghp_0rJlmtP0iy3LVKe2wXzGW\nFowp38lRg7e3rfM | gh auth login --with-token",
        "Fowp38lRg7e3rfM",
        extra=("ghp_0rJlmtP0iy3LVKe2wXzGW",),
    ),
    Secret(
        "compound_key_hex",
        "SHOP_CURSOR_KEY=3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d",
        "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d",
    ),
    Secret(
        "k8s_secret_data",
        "apiVersion: v1\nkind: Secret\ndata:\n  db-pass: ZGVwbG95OlMzY3IzdFB3IQ==\n",
        "ZGVwbG95OlMzY3IzdFB3IQ==",
    ),
    # --- Credential files and values without digits (issue 31) --------------------------------
    Secret("pgpass_app_user", "$ cat ~/.pgpass\ndb.internal:5432:shop:app_user:Qm7vR2xK9pLw", "Qm7vR2xK9pLw"),
    Secret(  # Claude Code's Read tool numbers each line
        "pgpass_read_tool",
        "     1→db.internal:5432:shop:app_user:Vb6nM3qZ8rTy\n     2→*:*:*:backup:Hs4kP9wL2dFq",
        "Vb6nM3qZ8rTy",
        extra=("Hs4kP9wL2dFq",),
    ),
    Secret(
        "pgpass_cat_n",
        "$ cat -n ~/.pgpass\n     1\tlocalhost:*:billing:report:PlumOrchardLantern",
        "PlumOrchardLantern",
    ),
    Secret(
        "netrc_digit_inside_word",
        "machine ci.example.com login deploy password hunter2LongerSecret",
        "hunter2LongerSecret",
    ),
    Secret(
        "netrc_letters_only",
        "machine ftp.example.com\n  login deploy\n  password SunflowerMeadowTwilight",
        "SunflowerMeadowTwilight",
    ),
    Secret(
        "git_credentials",
        "$ cat ~/.git-credentials\nhttps://octocat:QuietHarborMorningFog@github.com",
        "QuietHarborMorningFog",
    ),
    Secret(
        "npmrc_auth_token_letters",
        "//registry.npmjs.org/:_authToken=PlumOrchardLanternRiver",
        "PlumOrchardLanternRiver",
    ),
    Secret(
        "pypirc_password_letters",
        "[pypi]\nusername = __token__\npassword: VelvetCanyonSummitDrift",
        "VelvetCanyonSummitDrift",
    ),
    Secret("env_password_letters", "DB_PASSWORD=SunflowerMeadowTwilight", "SunflowerMeadowTwilight"),
    Secret("assignment_camel_password", "password = mySecretPassword", "mySecretPassword"),
    Secret(
        "yaml_passphrase_words",
        "database:\n  password: velvet harbor lantern quartz\n  user: app",
        "velvet harbor lantern quartz",
    ),
    Secret("secret_letters", "SECRET=ThisIsMyVerySecretValue", "ThisIsMyVerySecretValue"),
    Secret("api_key_letters", "api_key = kestrelMarbleSummitCanyon", "kestrelMarbleSummitCanyon"),
]

LOOKALIKES: list[tuple[str, str]] = [
    ("git_sha", "commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39\nAuthor: Jane Doe <jane.doe@example.com>"),
    ("short_shas", "a1b2c3d fix: handle empty input (#1234)\n9f8e7d6c5b4a merge branch 'main'"),
    ("uuid", "request_id=550e8400-e29b-41d4-a716-446655440000 trace_id=7c9e6679-7425-40de-944b-e07fc1f90ae7"),
    ("sha256_label", "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"),
    (
        "sha256_equals",
        "sha256=2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae  dist/app.tar.gz",
    ),
    (
        "sha256_json",
        '{"sha256": "fcde2b2edba56bf408601fb721fe9b5c338d10ee429ea04fae5511b68fbf8fb9", "size": 4096}',
    ),
    ("md5sum", "d41d8cd98f00b204e9800998ecf8427e  empty.txt"),
    (
        "digest_names",
        'checksum: cffb69e61aee5a9ec3b8ded8dc7ea3a427900323\n"etag": "\\"33a64df551425fcc55e4d42a148795d9f25f89d4\\""'
        "\nhash = 9b74c9897bac770ffc029102a200c5de\ndigest: sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    ),
    ("sha1", "sha1: 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"),
    ("semver", "bumped version 1.2.3 -> 1.3.0-rc.1+build.5 (was v0.9.12)"),
    ("issue_numbers", "Fixes #1234, see PR #5678 and GH-42"),
    (
        "long_path",
        "/home/u/.cache/pip/wheels/ab/cd/ef0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab/"
        "some_long-package_name-1.0.0-py3-none-any.whl",
    ),
    (
        "docker_overlay_path",
        "/var/lib/docker/overlay2/3d9f8c1a2b4e6f7081726354aabbccddeeff00112233445566778899aabbcc/diff",
    ),
    ("identifier", "def get_api_key_from_env() -> str | None:\n    return os.environ.get('API_KEY')"),
    ("token_expiry", "TOKEN_EXPIRY_SECONDS = 3600"),
    ("max_tokens", "resp = client.messages.create(model=model, max_tokens=2048, temperature=0.2)"),
    ("token_count", "token_count: 512\ntokens: 8192\nnum_tokens=17"),
    ("usage_json", '"usage": {"input_tokens": 1234, "output_tokens": 567, "cache_read_input_tokens": 0}'),
    (
        "base64_image",
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    ),
    (
        "url_plain",
        "see https://github.com/org/repo/pull/12 and https://docs.python.org/3/library/re.html#re.sub",
    ),
    (
        "docker_digest",
        "FROM python@sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 AS base",
    ),
    (
        "npm_integrity",
        '"integrity": "sha512-v2kDEe57lecTulaDIuNTPy3Ry4gLGJ6Z1O3vE1krgXZNrsQ+LFTGHVxVjcXPs17LhbZVGedAJv8XZ1tvj5FvSg=="',
    ),
    ("iso_timestamp", "2024-05-01T12:34:56.789Z INFO worker-3 started in 1.25s"),
    ("ip_addresses", "connecting to 10.0.12.34:5432 and [2001:db8::1]:443 from 192.168.1.10"),
    ("email", "Signed-off-by: Jane Doe <jane.doe@example.com>"),
    ("sk_words", "we use task-sk-learn and the sk-learn-compatible-estimator-interface; ask-me-anything"),
    ("prose_token", "the token is refreshed every hour, so no need to set a password for the user"),
    ("placeholder_angle", "password=<your password>"),
    ("placeholder_env", "PASSWORD=${PASSWORD}\ntoken: $TOKEN\nAPI_KEY=${{ secrets.API_KEY }}"),
    (
        "placeholder_masks",
        'password: ***\napi_key: None\nsecret: null\npassword: ""\ntoken: [REDACTED_SECRET]',
    ),
    ("placeholder_changeme", "password=changeme\nPOSTGRES_PASSWORD=password"),
    ("type_annotations", "def login(user: str, password: str, token: Optional[str] = None) -> Token:"),
    ("code_refs", "token = get_token()\npassword=password\napi_key=settings.API_KEY\nself.secret = secret"),
    ("ssh_url_no_password", "ssh://git@github.com:22/org/repo.git and git@github.com:org/repo.git"),
    ("key_lambda", "sorted(items, key=lambda x: x[1]); id = Column(Integer, primary_key=True)"),
    ("cache_key_hex", '{"key": "d41d8cd98f00b204e9800998ecf8427e", "value": 1}'),
    ("go_struct_tag", 'Token string `json:"token"`\nPassword string `json:"password,omitempty"`'),
    (
        "pip_hash",
        "pydantic==2.7.1 \\\n    --hash=sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    ),
    (
        "auth_header_templates",
        'Authorization: Bearer $TOKEN\nheaders={"Authorization": f"Bearer {token}"}\n-H "Authorization: Bearer ${API_KEY}"',
    ),
    ("env_pwd", "PWD=/home/user/project\nOLDPWD=/tmp\nHOME=/home/user"),
    ("grep_passwd", "grep: /etc/passwd: Permission denied"),
    ("k8s_secret_ref", "valueFrom:\n  secretKeyRef:\n    name: db-secret\n    key: password"),
    ("arn", "arn:aws:iam::123456789012:role/deploy-role"),
    (
        "names_not_secret",
        "bypass: true\ncompass=north\nauthor: Jane\npassword_min_length = 12\noauth: enabled",
    ),
    (
        "cli_token_file",
        "gh auth login --with-token < token.txt; app --token-file /run/secrets/token --verbose",
    ),
    ("use_password_flag", "use the --password flag or --token option to pass it"),
    ("css_colors", "color: #ff00aa; background: #0a0b0c;"),
    ("yaml_key_value", "- key: environment\n  value: production\n- key: region\n  value: eu-west-1"),
    ("comparisons", "if token == expected_token and password != '':\n    ok = token_len >= 3"),
    ("jwt_prefix_only", "JWTs start with eyJ because base64 of '{\"' is eyJ."),
    # --- Near misses of the newer rules ---------------------------------------------------------
    ("git_log_graph", "* 9fceb02 (HEAD -> main, origin/main) Merge: 1d2c3b4 5e6f7a8\n| * a1b2c3d4e5f6 fix"),
    (
        "git_object_ids",
        "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39",
    ),
    (
        "uuid_fields",
        '{"id": "550e8400-e29b-41d4-a716-446655440000", "session_id": "7c9e6679-7425-40de-944b-e07fc1f90ae7"}',
    ),
    (
        "base64_json_blob",
        '{"data": "SGVsbG8sIHdvcmxkISBUaGlzIGlzIGEgYmFzZTY0IGJsb2Iu", "encoding": "base64"}',
    ),
    (
        "sha512_sri",
        "sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUdBeoGlODJ6+SfaPg==",
    ),
    (
        "etag_header",
        'ETag: W/"0815-3f2a9c1d8e7b6a5f4e3d2c1b0a"\nX-Request-Id: 7c9e6679-7425-40de-944b-e07fc1f90ae7',
    ),
    (
        "partition_keys",
        'cache_key = "d41d8cd98f00b204e9800998ecf8427e"\nidempotency_key: 550e8400-e29b-41d4-a716-446655440000',
    ),
    ("bare_key_hex", '"key": "9b74c9897bac770ffc029102a200c5de"'),
    ("timestamps_colons", "12:34:56 INFO started at 2024-05-01T12:34:56.789Z on 10.0.12.34:5432"),
    ("mac_ipv6", "ether 00:1a:2b:3c:4d:5e and inet6 fe80::1c2b:3aff:fe4d:5e6f%en0"),
    ("shell_p_flags", "mkdir -p /tmp/build && ssh -p 2222 deploy@host && docker run -p 8080:80 app"),
    ("mysql_prompt", "mysql -u root -p shop   # prompts for the password"),
    ("curl_cookie_jar", "curl -b cookies.txt -c cookies.txt https://example.com/login"),
    (
        "cookie_plain",
        "Cookie: theme=dark; lang=en-US\nSet-Cookie: consent=yes; Path=/; Max-Age=31536000; SameSite=Lax",
    ),
    ("yaml_nested_password", "password:\n  min_length: 12\n  require_digit: true\ntoken:\n  - ttl: 3600"),
    (
        "url_user_only",
        "https://jane.doe@example.com/calendar and ssh://git@gitlab.example.com:2222/org/repo.git",
    ),
    ("netrc_prose", "the machine learning model needs a password reset before login"),
    ("pgpass_docs", "# hostname:port:database:username:password\nlocalhost:*:*:postgres:*"),
    ("wrapped_prose", "see the ghp_ prefix\nand the gho_ prefix in the GitHub docs"),
    (
        "k8s_no_data",
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db-secret\n  namespace: production\ntype: Opaque",
    ),
    (
        "vendor_names",
        "heroku_region: eu\nSLACK_CHANNEL=#deploys\nstripe_api_version: 2024-06-20\nokta_domain: acme",
    ),
    ("prefix_words", "task-sk-learn, monkey-patch, shelf_hf_data, udp.port, the AKIA prefix, xoxb- tokens"),
    (
        "hex_digests_named",
        "sha1sum: 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12\nblake2b=786a02f742015903c6c6fd852552d272",
    ),
    # --- Near misses of the issue-31 shapes --------------------------------------------------
    ("prose_after_token_name", "token: Handled at the gateway\nsecret: Stored in the vault, not here."),
    ("prose_password_field", "the password field is required\nPassword: Must be at least 8 characters"),
    ("code_refs_no_digit", "password = userPassword\nconst token = confirmToken\npassword := newPassword"),
    (
        "pgpass_read_tool_docs",
        "     1→# hostname:port:database:username:password\n     2→localhost:*:*:postgres:*",
    ),
    ("npmrc_placeholder", "//npm.pkg.github.com/:_authToken=${NPM_TOKEN}\nalways-auth=true"),
    ("pypirc_placeholder", "[pypi]\nusername = __token__\npassword = <your PyPI token>"),
    (
        "git_credentials_docs",
        "credential.helper store writes https://user:token@host lines to ~/.git-credentials",
    ),
    ("netrc_placeholder", "machine api.example.com login bob password $NETRC_PASSWORD"),
]


_HEX = "0123456789abcdef"
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_WORDS = ["deploy", "cache", "worker", "ledger", "session", "summary", "report", "index", "build", "release"]


def lookalike_corpus(n: int = 2000, seed: int = 13) -> list[str]:
    """``n`` deterministic look-alikes: hashes, UUIDs, base64 data, git SHAs, ids, versions, paths,
    ports and times in the contexts transcripts show them in. None of them is a secret."""
    rng = random.Random(seed)

    def hx(k: int) -> str:
        return "".join(rng.choice(_HEX) for _ in range(k))

    def b64(k: int) -> str:
        return "".join(rng.choice(_B64) for _ in range(k))

    def uuid() -> str:
        return f"{hx(8)}-{hx(4)}-4{hx(3)}-a{hx(3)}-{hx(12)}"

    def word() -> str:
        return rng.choice(_WORDS)

    makers = [
        lambda: f"commit {hx(40)}\nAuthor: Dev <dev@example.com>",
        lambda: f"{hx(7)} fix({word()}): handle empty input (#{rng.randint(1, 9999)})",
        lambda: f"Merge: {hx(7)} {hx(7)}",
        lambda: f"sha256:{hx(64)}",
        lambda: f"sha256={hx(64)}  dist/{word()}-1.{rng.randint(0, 9)}.tar.gz",
        lambda: f"{hx(32)}  {word()}.txt",
        lambda: f'"etag": "{hx(32)}"',
        lambda: f"checksum: {hx(40)}",
        lambda: f"digest: sha256:{hx(64)}",
        lambda: f"request_id={uuid()} trace_id={uuid()}",
        lambda: f'{{"id": "{uuid()}", "status": "ok"}}',
        lambda: f"session {uuid()} finished in {rng.random() * 9:.2f}s",
        lambda: f"data:image/png;base64,{b64(120)}==",
        lambda: f'{{"blob": "{b64(80)}", "encoding": "base64"}}',
        lambda: f"integrity sha512-{b64(86)}==",
        lambda: f"docker pull python@sha256:{hx(64)}",
        lambda: f"/var/lib/docker/overlay2/{hx(64)}/diff",
        lambda: f"~/.cache/pip/wheels/{hx(2)}/{hx(2)}/{hx(56)}",
        lambda: f"https://github.com/acme/{word()}/commit/{hx(40)}",
        lambda: f"https://example.com/{word()}?page={rng.randint(1, 99)}&sort=asc",
        lambda: f"v{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}-rc.{rng.randint(1, 5)}",
        lambda: (
            f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} listening on 10.0.{rng.randint(0, 255)}.{rng.randint(1, 254)}:{rng.randint(1024, 65535)}"
        ),
        lambda: f"object {hx(40)} type commit tree {hx(40)}",
        lambda: f'ETag: W/"{hx(32)}"',
        lambda: f'cache_key = "{hx(32)}"',
        lambda: f"idempotency_key: {uuid()}",
        lambda: f'"key": "{hx(32)}"',
        lambda: f"max_tokens={rng.choice([256, 1024, 4096])} token_count: {rng.randint(1, 9000)}",
        lambda: f"mkdir -p /tmp/{word()} && ssh -p {rng.randint(1024, 9999)} deploy@{word()}.internal",
        lambda: f"Cookie: theme=dark; lang=en-US; seen={rng.randint(0, 1)}",
        lambda: f"{b64(64)}",
        lambda: f"pid={rng.randint(100, 99999)} worker-{rng.randint(1, 8)} rss={rng.randint(10, 900)}MB",
        lambda: f"- key: {word()}\n  value: {word()}-{rng.randint(1, 9)}",
        lambda: f"git checkout -b fix/{word()}-{rng.randint(1, 999)} origin/main",
        lambda: f"password_min_length = {rng.randint(8, 20)}; token_ttl: {rng.randint(60, 86400)}",
    ]
    return [rng.choice(makers)() for _ in range(n)]
