"""Typed SQLAlchemy models. Import from here so that every table is registered on `Base.metadata`."""

from registry.db import Base
from registry.models.audit import AuditEntry
from registry.models.auth import ApiToken, Principal
from registry.models.catalog import Agent, AgentCard, AgentTerm, TagCount, TagCountDelta
from registry.models.health import HealthCheck
from registry.models.relay import RelayAttempt, RelayMessage, RelaySubscription
from registry.models.trust import CardEndorsement, RegistryKey, SignatureCheck, TrustedKey

__all__ = [
    "Agent", "AgentCard", "AgentTerm", "ApiToken", "AuditEntry", "Base", "CardEndorsement", "HealthCheck", "Principal",
    "RegistryKey", "RelayAttempt", "RelayMessage", "RelaySubscription", "SignatureCheck", "TagCount", "TagCountDelta",
    "TrustedKey",
]
