"""Talking to an OpenAI-compatible endpoint: which key to send, a bounded client, a reachability
probe, and the classification of failures into short reasons that are safe to log.

The openai exceptions can quote response bodies that echo the prompt, so every reason here is
built from status codes and exception types only.
"""

from __future__ import annotations

import contextlib
import email.utils
import json
import os
import time
from collections.abc import Mapping
from http import HTTPStatus
from urllib.parse import urlsplit

import openai

from scribed.compress import llm_http
from scribed.config import LlmCfg

DEFAULT_BASE_URL = "https://api.openai.com/v1"
PLACEHOLDER_KEY = "sk-no-key-required"


def _host(base_url: str) -> str:
    try:
        return (urlsplit(base_url or DEFAULT_BASE_URL).hostname or "").lower()
    except ValueError:
        return ""


def is_openai_host(base_url: str) -> bool:
    """True for OpenAI's own API (and Azure OpenAI), where an OpenAI key belongs."""
    host = _host(base_url)
    return host == "api.openai.com" or host.endswith(".openai.azure.com")


def resolve_api_key(cfg: LlmCfg, environ: Mapping[str, str]) -> str:
    """The key from ``cfg.api_key_env``, but never an OpenAI key for somebody else's server.

    A local or third-party endpoint configured with the default ``OPENAI_API_KEY`` would
    otherwise receive the user's real OpenAI key. Local servers need no key, so a
    placeholder is returned whenever there is none to send.
    """
    name = cfg.api_key_env.strip()
    value = (environ.get(name) or "").strip() if name else ""
    if not value:
        return PLACEHOLDER_KEY
    if is_openai_host(cfg.base_url):
        return value
    upper = name.upper()
    if upper == "OPENAI_API_KEY" or (value.startswith("sk-") and "OPENAI" in upper):
        return PLACEHOLDER_KEY
    return value


def make_client(cfg: LlmCfg, environ: Mapping[str, str], timeout: float | None = None) -> openai.OpenAI:
    """An openai client that only uses what we pass it.

    openai 3.x reads OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID, OPENAI_PROJECT_ID and
    OPENAI_CUSTOM_HEADERS (whose Authorization would override ``api_key``) from the process
    environment by itself, so the key is also pinned as an explicit header and the org and
    project ids are dropped for non-OpenAI hosts. Its own retries are off: we retry. Its HTTP
    client turns each request's timeout into a total deadline and caps the answer's size.
    """
    key = resolve_api_key(cfg, environ)
    base_url = cfg.base_url or DEFAULT_BASE_URL
    seconds = timeout if timeout is not None else cfg.timeout_seconds
    client = openai.OpenAI(
        base_url=base_url,
        api_key=key,
        timeout=seconds,
        max_retries=0,
        default_headers={"Authorization": f"Bearer {key}"},
        http_client=llm_http.bounded_client(base_url, cfg.max_response_bytes, seconds),
    )
    if not is_openai_host(cfg.base_url):
        client.organization = None
        client.project = None
    return client


def probe(cfg: LlmCfg, timeout: float = 3.0, environ: Mapping[str, str] | None = None) -> str | None:
    """None when the endpoint answers ``GET /models``, else a short reason (for backend "auto").

    Any HTTP answer but an auth failure or a 5xx counts as reachable: some servers have no
    /models route yet serve chat completions fine. ``timeout`` is a total deadline, as for calls.
    """
    if not cfg.configured:
        return "llm not configured (base_url and model)"
    env: Mapping[str, str] = environ if environ is not None else os.environ
    timeout = min(timeout, cfg.timeout_seconds)
    try:
        client = make_client(cfg, env, timeout=timeout)
        with llm_http.deadline(timeout):
            client.models.list(timeout=timeout)
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403) or exc.status_code >= HTTPStatus.INTERNAL_SERVER_ERROR:
            return status_reason(exc.status_code)
        return None
    except openai.APITimeoutError:
        return f"timeout after {timeout:.1f}s"
    except openai.APIConnectionError as exc:
        return connection_reason(exc)
    except Exception as exc:  # a garbled answer still means "not usable"
        return f"probe failed ({type(exc).__name__})"
    return None


# --- error classification ------------------------------------------------------------------


def status_reason(code: int) -> str:
    """A short, safe reason for an HTTP status (the body is never quoted)."""
    if code == HTTPStatus.TOO_MANY_REQUESTS:
        return "rate limited (429)"
    if code >= HTTPStatus.INTERNAL_SERVER_ERROR:
        return f"server error {code}"
    if code in (401, 403):
        return f"unauthorized ({code})"
    if code == HTTPStatus.NOT_FOUND:
        return "not found (404): check base_url and model"
    return f"bad request ({code})"


def connection_reason(exc: BaseException) -> str:
    """A short reason for a failed connection, from the first cause we recognise."""
    cause: BaseException | None = exc.__cause__
    while cause is not None:
        if isinstance(cause, llm_http.ResponseTooLarge):
            return str(cause)
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if type(cause).__name__ == "DecodingError":
            return "undecodable response"
        name = type(cause).__name__
        if name == "RemoteProtocolError":
            return "connection closed by server"
        if name == "ConnectError":
            text = str(cause).lower()
            if "refused" in text:
                return "connection refused"
            if "name" in text or "resolution" in text or "nodename" in text:
                return "host not found"
            return "cannot connect"
        cause = cause.__cause__
    return "connection error"


def _error_text(exc: openai.APIStatusError) -> str:
    """Lower-cased message plus body, for classification only (never logged)."""
    return f"{exc.message} {json.dumps(exc.body, default=str) if exc.body is not None else ''}".lower()


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: connection trouble, a timeout, a conflict, rate limiting or a 5xx."""
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 409, 429) or exc.status_code >= HTTPStatus.INTERNAL_SERVER_ERROR
    return False


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (Retry-After / retry-after-ms), if any."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        with contextlib.suppress(ValueError):
            return max(0.0, float(raw_ms) / 1000)
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format", "structured output")
_UNSUPPORTED_WORDS = ("unsupported", "not supported", "not implemented")
_VALIDATION_WORDS = ("should be", "validation", "invalid", *_UNSUPPORTED_WORDS)


def format_rejected(exc: openai.APIStatusError) -> bool:
    """An error that says the server can't do this response_format (so fall back, don't fail).

    Mostly a 4xx; llama-cpp-python's server answers a json_schema request with a 500 whose body is
    a validation message ("Input should be 'text' or 'json_object'"), so that shape counts too.
    """
    text = _error_text(exc)
    if exc.status_code == HTTPStatus.INTERNAL_SERVER_ERROR:
        return any(w in text for w in _FORMAT_WORDS) and any(w in text for w in _VALIDATION_WORDS)
    if exc.status_code not in (400, 404, 415, 422, 501):
        return False
    if any(w in text for w in _FORMAT_WORDS):
        return True
    return exc.status_code in (422, 501) and any(w in text for w in _UNSUPPORTED_WORDS)


def wants_max_completion_tokens(exc: openai.APIStatusError) -> bool:
    """A newer OpenAI model that refuses ``max_tokens`` and asks for ``max_completion_tokens``."""
    text = _error_text(exc)
    return (
        exc.status_code == HTTPStatus.BAD_REQUEST and "max_tokens" in text and "max_completion_tokens" in text
    )


def context_exceeded(exc: openai.APIStatusError) -> bool:
    """The prompt was longer than the model's context window."""
    text = _error_text(exc)
    return "context" in text and any(w in text for w in ("length", "too long", "exceed", "maximum"))
