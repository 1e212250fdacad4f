"""Who is calling: principals, their API tokens, the acting `Actor` (with the domains its
token is narrowed to: `Actor.require_domain(host)`) and the `requires` decorator of the write
endpoints. Plumbing every domain may use; it knows none of them."""

from registry.auth.actor import Actor, OutsideTokenDomains
from registry.auth.api import bearer_actor, requires
from registry.auth.models import ApiToken, Principal
from registry.auth.tokens import TokenExpired, TokenRevoked, TokenService

__all__ = [
    "Actor",
    "ApiToken",
    "OutsideTokenDomains",
    "Principal",
    "TokenExpired",
    "TokenRevoked",
    "TokenService",
    "bearer_actor",
    "requires",
]
