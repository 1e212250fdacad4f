"""Who may speak for an agent (issue 33): proven domains (O1), the registration policy, review and
claiming (O2), token lifecycle (O3). Other packages import this face only.

`DomainRegistry.covers(principal_id, host)` / `owner_of(host)`: pass the card URL itself when you
have it (`https://a.example.com/...` counts as `a.example.com` whatever the port; a plain-http URL
as `host:port`), or a name normalised by `host_of_url`.
"""

from registry.ownership.api_agents import SCHEMAS as AGENTS_OPENAPI_SCHEMAS
from registry.ownership.api_agents import agents_openapi_paths
from registry.ownership.api_agents import bp as agents_bp
from registry.ownership.api_domains import bp as domains_bp
from registry.ownership.domains import DomainRegistry
from registry.ownership.domains_model import Domain
from registry.ownership.domains_names import host_of_url, normalize_domain
from registry.ownership.domains_openapi import SCHEMAS as DOMAINS_OPENAPI_SCHEMAS
from registry.ownership.domains_openapi import openapi_paths as domains_openapi_paths
from registry.ownership.domains_wiring import DomainServices, build_domains
from registry.ownership.errors import InvalidDomain, OwnershipError
from registry.ownership.policy import NotDomainOwner
from registry.ownership.policy_wiring import AgentPolicy, build_agent_policy

DOMAIN_RECHECK = "domain-recheck"

__all__ = [
    "AGENTS_OPENAPI_SCHEMAS",
    "agents_openapi_paths",
    "AgentPolicy",
    "NotDomainOwner",
    "agents_bp",
    "build_agent_policy",
    "DOMAINS_OPENAPI_SCHEMAS",
    "DOMAIN_RECHECK",
    "Domain",
    "DomainRegistry",
    "DomainServices",
    "InvalidDomain",
    "OwnershipError",
    "build_domains",
    "domains_bp",
    "domains_openapi_paths",
    "host_of_url",
    "normalize_domain",
]
