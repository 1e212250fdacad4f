"""Safe outbound HTTP: the one client every outbound call of the registry goes through."""

from registry.outbound.client import SafeHttpClient
from registry.outbound.errors import (
    OutboundBadResponse,
    OutboundConnectionError,
    OutboundError,
    OutboundInvalidJson,
    OutboundInvalidUrl,
    OutboundRefused,
    OutboundTimeout,
    OutboundTlsError,
    OutboundTooLarge,
    OutboundTooManyRedirects,
)
from registry.outbound.policy import OutboundPolicy
from registry.outbound.response import OutboundResponse

__all__ = [
    "OutboundBadResponse",
    "OutboundConnectionError",
    "OutboundError",
    "OutboundInvalidJson",
    "OutboundInvalidUrl",
    "OutboundPolicy",
    "OutboundRefused",
    "OutboundResponse",
    "OutboundTimeout",
    "OutboundTlsError",
    "OutboundTooLarge",
    "OutboundTooManyRedirects",
    "SafeHttpClient",
]
