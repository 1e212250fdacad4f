"""Who is calling: principals, their API tokens, the acting `Actor` and the `requires` decorator
of the write endpoints. Plumbing every domain may use; it knows none of them."""

from registry.auth.api import bearer_actor, requires
from registry.auth.models import ApiToken, Principal
from registry.auth.tokens import Actor, TokenService

__all__ = ["Actor", "ApiToken", "Principal", "TokenService", "bearer_actor", "requires"]
