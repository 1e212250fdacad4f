"""What trust reports to a caller (translated to HTTP by `registry.api.errors`)."""

from __future__ import annotations

from registry.errors import RegistryError


class TrustError(RegistryError):
    """Root of the trust domain's errors."""

    code = "trust_error"


class SignatureRequired(TrustError):
    """The operator requires a valid signature (AGENTDEX_REQUIRE_SIGNATURES) and the card has none."""

    code = "signature_required"


class RegistryKeyUnavailable(TrustError):
    """The registry's own signing key cannot be loaded (key file missing, secret key changed)."""

    code = "registry_key_unavailable"
