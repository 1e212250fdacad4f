"""Typed SQLAlchemy models. Import from here so that every table is registered on `Base.metadata`."""

from registry.db import Base
from registry.audit import AuditEntry
from registry.auth.models import ApiToken, Principal
from registry.catalog.models import Agent, AgentCard, AgentTerm, TagCount, TagCountDelta
from registry.health.models import HealthCheck
from registry.relay.models import RelayAttempt, RelayMessage, RelaySubscription
from registry.trust.models import CardEndorsement, RegistryKey, SignatureCheck, TrustedKey

__all__ = [
    "Agent", "AgentCard", "AgentTerm", "ApiToken", "AuditEntry", "Base", "CardEndorsement", "HealthCheck", "Principal",
    "RegistryKey", "RelayAttempt", "RelayMessage", "RelaySubscription", "SignatureCheck", "TagCount", "TagCountDelta",
    "TrustedKey",
]
