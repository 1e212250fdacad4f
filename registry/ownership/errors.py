"""Ownership's errors: one root, a subclass per failure. Each also subclasses the generic error
whose HTTP status it shares, so `registry.api.errors` answers them without a table of its own."""

from __future__ import annotations

from registry.errors import InvalidRequest, NotFound, RegistryError


class OwnershipError(RegistryError):
    """Root of ownership's errors."""

    code = "ownership_error"


class InvalidDomain(OwnershipError, InvalidRequest):
    """Not a domain the registry can prove: a URL, an IP address or a port where plain http is off."""

    code = "invalid_domain"


class DomainNotFound(OwnershipError, NotFound):
    code = "domain_not_found"


class ProofFailed(OwnershipError, InvalidRequest):
    """A challenge was checked and does not hold; the subclass (and `code`) says what was found
    instead, `details` the URL or record name that was asked and what came back."""

    code = "proof_failed"


class ChallengeNotFound(ProofFailed):
    code = "challenge_not_found"  # HTTP 404 (or another error status); no TXT record; no such name


class ChallengeMismatch(ProofFailed):
    code = "challenge_mismatch"  # something else is served where the challenge should be


class ChallengeUnreachable(ProofFailed):
    code = "challenge_unreachable"  # timeout, refused connection or address, TLS, DNS server failure


class ProofMethodUnavailable(ProofFailed):
    code = "proof_method_unavailable"  # DNS for an IP address
