"""A small HTTP client for the registry API, used by the catalog commands."""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import quote

import click

from cli.exits import CliError, ExitCode

DEFAULT_REGISTRY = "http://127.0.0.1:8420"
WORKER_HEADER = "Agentdex-Worker"  # registry.api.service names its web process with it

registry_option = click.option(
    "--registry",
    envvar="AGENTDEX_URL",
    default=DEFAULT_REGISTRY,
    show_default=True,
    help="Base URL of the registry (env AGENTDEX_URL).",
)
token_option = click.option("--token", envvar="AGENTDEX_TOKEN", default=None, help="API token (env AGENTDEX_TOKEN).")
json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")


def segment(value: str) -> str:
    """`value` (an id, a prefix of one) as one path segment of an API URL, percent-encoded, so
    that `../tokens`, `a/b` or `x?y=1` names no agent rather than another URL.

    Raises CliError (exit 2) for "", "." and "..": no encoding keeps them one segment (HTTP
    clients and proxies resolve dot segments, RFC 3986 §5.2.4).
    """
    if not value.strip("."):
        raise CliError(f"{value!r} is not an id", ExitCode.USAGE)
    return quote(value, safe="")


def given(**values: Any) -> dict[str, Any]:
    """The query parameters or body fields that were given: None, empty and false ones are left
    out, so that the registry applies its defaults."""
    return {name: value for name, value in values.items() if value}


class RegistryClient:
    """Calls the registry and turns its error envelope into CliError."""

    def __init__(
        self, base_url: str, token: str | None = None, timeout: float = 60.0, *, token_source: str | None = None
    ) -> None:
        """`token_source` says where the token came from (`--token`, `AGENTDEX_TOKEN`), for messages."""
        import requests

        self._base = base_url.rstrip("/")
        self._token_source = (token_source or "--token") if token else None
        self._session = requests.Session()
        self._session.headers["User-Agent"] = "agentdex-cli"
        if token:
            self._session.headers["Authorization"] = f"Bearer {token}"
        self._timeout = timeout

    def call(self, method: str, path: str, *, params: Any = None, json: Any = None) -> Any:
        """Send a request; return the decoded JSON (None for 204).

        Raises CliError: exit 4 when the registry cannot be reached, 1 when it refuses.
        """
        return self._send(method, path, params=params, json=json)

    def call_raw(self, method: str, path: str, body: bytes) -> Any:
        """`call` with a body that is already JSON text."""
        return self._send(method, path, data=body, headers={"Content-Type": "application/json"})

    def worker(self) -> str | None:
        """The name of the registry's web process that this client's connection reaches (the
        connection is kept for the calls that follow); None when the registry does not say."""
        return self._response("GET", "/healthz").headers.get(WORKER_HEADER)

    def close(self) -> None:
        self._session.close()

    def _response(self, method: str, path: str, **options: Any) -> Any:
        import requests

        try:
            return self._session.request(method, self._base + path, timeout=self._timeout, **options)
        except requests.RequestException as error:
            raise CliError(f"cannot reach the registry at {self._base}: {error}", ExitCode.UNREACHABLE) from None

    def _send(self, method: str, path: str, **options: Any) -> Any:
        response = self._response(method, path, **options)
        if response.status_code == 204:
            return None
        payload = _decode(response)
        if response.status_code >= 400:
            error = _error_of(payload)
            raise CliError(
                self._refusal(response.status_code, error),
                ExitCode.FAILED,
                code=str(error.get("code") or "http_error"),
                details={"status": response.status_code, **(error.get("details") or {})},
            )
        return payload

    def _refusal(self, status: int, error: dict[str, Any]) -> str:
        described = _describe(status, error)
        if status != 401:
            return described
        # A token works only with the registry whose database created it: name the registry, and
        # where the token came from, so that a user with two registries sees which one said no.
        if self._token_source is None:
            return (
                f"the registry at {self._base} needs a token: {described}. Pass --token or set AGENTDEX_TOKEN "
                "(`agentdex tokens create`, run where that registry's database is, makes one)"
            )
        return (
            f"the registry at {self._base} refused the token from {self._token_source}: {described}. A token "
            "works only on the registry whose database made it; the CLI sends --token (else AGENTDEX_TOKEN) "
            "to --registry (else AGENTDEX_URL)"
        )


def make_client(registry: str, token: str | None = None) -> RegistryClient:
    """A client for `registry` sending `token`, else AGENTDEX_TOKEN (no token when neither is set)."""
    if token is None:
        token = os.environ.get("AGENTDEX_TOKEN") or None
        source = "AGENTDEX_TOKEN"
    else:
        source = _token_option_source()
    return RegistryClient(registry, token, token_source=source)


def _token_option_source() -> str:
    """Where click found the running command's --token: the flag, or AGENTDEX_TOKEN."""
    context = click.get_current_context(silent=True)
    if context is not None and context.get_parameter_source("token") is click.core.ParameterSource.ENVIRONMENT:
        return "AGENTDEX_TOKEN"
    return "--token"


def _error_of(payload: Any) -> dict[str, Any]:
    """The registry's error envelope, or the ARD API's (`{"errorCode", "message"}`) in its shape."""
    if not isinstance(payload, dict):
        return {}
    if "errorCode" in payload:
        return {"code": payload["errorCode"], "message": payload.get("message", "")}
    error = payload.get("error", {})
    return error if isinstance(error, dict) else {}


def _decode(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        if response.status_code >= 400:
            return {"error": {"code": "http_error", "message": response.text[:200], "details": {}}}
        raise CliError(f"the registry answered {response.status_code} with a body that is not JSON") from None


def _describe(status: int, error: dict[str, Any]) -> str:
    message = f"{error.get('message', 'request failed')} (HTTP {status}, {error.get('code', 'error')})"
    for issue in (error.get("details") or {}).get("issues", []):
        message += (
            f"\n  {issue.get('severity')}: {issue.get('path') or '/'} [{issue.get('rule')}] {issue.get('message')}"
        )
    return message
