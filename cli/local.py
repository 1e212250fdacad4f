"""Commands that work on the registry's database directly (tokens, registry keys, serve, worker):
settings from the environment, and the services built on them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cli.exits import CliError, ExitCode

if TYPE_CHECKING:
    from registry.container import Services
    from registry.settings import Settings


def load_settings() -> Settings:
    """Settings from `AGENTDEX_*`. Raises CliError (exit 2) naming the bad variable."""
    from registry.settings import Settings, SettingsError

    try:
        return Settings.from_env()
    except SettingsError as error:
        raise CliError(f"configuration: {error}", ExitCode.USAGE) from None


def local_services() -> Services:
    """The registry's services on its configured database, creating the schema if it is empty."""
    from registry.container import build_services
    from registry.migrate import is_empty, upgrade

    services = build_services(load_settings())
    if is_empty(services.engine):
        upgrade(services.engine)
    return services
