"""A small HTTP client for the registry API, used by the catalog commands."""

from __future__ import annotations

import os
from typing import Any

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


class RegistryClient:
    """Calls the registry and turns its error envelope into CliError."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 60.0) -> None:
        import requests

        self._base = base_url.rstrip("/")
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
            raise CliError(_describe(response.status_code, payload), ExitCode.FAILED)
        return payload


def make_client(registry: str, token: str | None = None) -> RegistryClient:
    return RegistryClient(registry, token or os.environ.get("AGENTDEX_TOKEN"))


def _decode(response: Any) -> Any:
    try:
        return response.json()
    except ValueError:
        if response.status_code >= 400:
            return {"error": {"code": "http_error", "message": response.text[:200], "details": {}}}
        raise CliError(f"the registry answered {response.status_code} with a body that is not JSON") from None


def _describe(status: int, payload: Any) -> str:
    error = payload.get("error", {}) if isinstance(payload, dict) else {}
    message = f"{error.get('message', 'request failed')} (HTTP {status}, {error.get('code', 'error')})"
    for issue in error.get("details", {}).get("issues", []):
        message += (
            f"\n  {issue.get('severity')}: {issue.get('path') or '/'} [{issue.get('rule')}] {issue.get('message')}"
        )
    return message
