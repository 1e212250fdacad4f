"""Every table of every domain, so that `Base.metadata` is complete (the migrations test, tooling)."""

from registry.audit import AuditEntry
from registry.auth import ApiToken, Principal
from registry.catalog import Agent, AgentCard, AgentTerm, TagCount, TagCountDelta
from registry.db import Base
from registry.health import HealthCheck
from registry.relay import RelayAttempt, RelayMessage, RelaySubscription
from registry.trust import CardEndorsement, RegistryKey, SignatureCheck, TrustedKey

__all__ = [
    "Agent",
    "AgentCard",
    "AgentTerm",
    "ApiToken",
    "AuditEntry",
    "Base",
    "CardEndorsement",
    "HealthCheck",
    "Principal",
    "RegistryKey",
    "RelayAttempt",
    "RelayMessage",
    "RelaySubscription",
    "SignatureCheck",
    "TagCount",
    "TagCountDelta",
    "TrustedKey",
]
