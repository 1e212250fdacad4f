"""Trust: card signature verification, the keys that may verify a card, the registry's own keys
and its endorsements. Other packages use only this face; trust uses no other domain."""

from registry.trust.api import endorsed_card_response
from registry.trust.errors import RegistryKeyUnavailable, SignatureRequired, TrustError
from registry.trust.keys import KeyPolicy, KeyScope, OwnerKeys, SafeJwksFetcher
from registry.trust.models import SIGNATURE_STATES, CardEndorsement, RegistryKey, SignatureCheck, TrustedKey
from registry.trust.registry_keys import JWKS_PATH, Endorser, KeySealer, RegistryKeys, attestation_digest
from registry.trust.service import CatalogTrust, NoTrust, TrustReads, TrustService
from registry.trust.state import SIGNATURE_TERM, CardTrust, refresh_current_trust, trust_rows, write_trust

__all__ = [
    "JWKS_PATH",
    "SIGNATURE_STATES",
    "SIGNATURE_TERM",
    "CardEndorsement",
    "CardTrust",
    "CatalogTrust",
    "Endorser",
    "KeyPolicy",
    "KeyScope",
    "KeySealer",
    "NoTrust",
    "OwnerKeys",
    "RegistryKey",
    "RegistryKeyUnavailable",
    "RegistryKeys",
    "SafeJwksFetcher",
    "SignatureCheck",
    "SignatureRequired",
    "TrustError",
    "TrustReads",
    "TrustService",
    "TrustedKey",
    "attestation_digest",
    "endorsed_card_response",
    "refresh_current_trust",
    "trust_rows",
    "write_trust",
]
