"""What may be shown of a token: once, when it is made (`IssuedToken`), and afterwards without the
token or its hash (`TokenInfo`), as the API and `agentdex tokens --json` show them."""

from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

from sqlalchemy import select

from registry.auth.models import ApiToken, Principal


@dataclasses.dataclass(frozen=True)
class IssuedToken:
    token: str
    name: str
    principal: str
    scopes: tuple[str, ...]
    expires_at: dt.datetime | None = None
    domains: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        """As `agentdex tokens create --json` shows it: the only time the token is shown."""
        return {
            "token": self.token,
            "name": self.name,
            "principal": self.principal,
            "scopes": list(self.scopes),
            "expiresAt": api_time(self.expires_at),
            "domains": list(self.domains) if self.domains is not None else None,
        }


@dataclasses.dataclass(frozen=True)
class TokenInfo:
    """What may be shown of a token: never the token, nor its hash. `prefix` is its first
    characters, enough to tell which token a pipeline holds."""

    id: int
    name: str
    principal: str
    scopes: tuple[str, ...]
    prefix: str
    created_at: dt.datetime
    revoked_at: dt.datetime | None
    expires_at: dt.datetime | None = None
    last_used_at: dt.datetime | None = None
    domains: tuple[str, ...] | None = None

    @classmethod
    def of(cls, row: Any) -> TokenInfo:
        return cls(
            row.id,
            row.name,
            row.principal,
            tuple(row.scopes.split()),
            row.prefix,
            row.created_at,
            row.revoked_at,
            row.expires_at,
            row.last_used_at,
            tuple(row.domains.split()) if row.domains is not None else None,
        )

    def to_dict(self) -> dict[str, Any]:
        """As the API and `agentdex tokens --json` show it. `domains` null: the token is not narrowed."""
        return {
            "id": self.id,
            "name": self.name,
            "principal": self.principal,
            "scopes": list(self.scopes),
            "domains": list(self.domains) if self.domains is not None else None,
            "prefix": self.prefix,
            "createdAt": api_time(self.created_at),
            "lastUsedAt": api_time(self.last_used_at),
            "expiresAt": api_time(self.expires_at),
            "revokedAt": api_time(self.revoked_at),
        }


# What `TokenInfo` is read from: the token's columns but its hash, and its principal's name.
TOKEN_INFO = select(
    ApiToken.id,
    ApiToken.name,
    Principal.name.label("principal"),
    ApiToken.scopes,
    ApiToken.prefix,
    ApiToken.created_at,
    ApiToken.revoked_at,
    ApiToken.expires_at,
    ApiToken.last_used_at,
    ApiToken.domains,
).join(Principal, Principal.id == ApiToken.principal_id)


def api_time(value: dt.datetime | None) -> str | None:
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z") if value else None
