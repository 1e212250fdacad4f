"""Every table of every domain, so that `Base.metadata` is complete (the migrations test, tooling)."""

from registry.a2a import A2ATask
from registry.audit import AuditEntry
from registry.auth import ApiToken, Principal
from registry.catalog import Agent, AgentCard, AgentTerm, TagCount, TagCountDelta
from registry.change_events import ChangeEvent
from registry.db import Base
from registry.discovery import ManifestListing, ManifestSource
from registry.events import EventSubscription
from registry.health import HealthCheck
from registry.jobs import JobRun
from registry.ownership import Domain
from registry.relay import RelayAttempt, RelayMessage, RelaySubscription
from registry.trust import CardEndorsement, RegistryKey, SignatureCheck, TrustedKey

__all__ = [
    "A2ATask",
    "Agent",
    "AgentCard",
    "AgentTerm",
    "ApiToken",
    "AuditEntry",
    "Base",
    "CardEndorsement",
    "ChangeEvent",
    "Domain",
    "EventSubscription",
    "HealthCheck",
    "JobRun",
    "ManifestListing",
    "ManifestSource",
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
