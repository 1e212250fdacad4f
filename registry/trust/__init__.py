"""Trust: card signature verification, the keys that may verify a card (key policy, owners' JWKS,
the operator's trust store), the registry's own keys and its endorsements. Other packages use
only what this face exports; trust itself uses no other domain.
"""

from registry.trust.api import endorsed_card_response
from registry.trust.endorse import Endorser, attestation_digest
from registry.trust.errors import RegistryKeyUnavailable, SignatureRequired, TrustError
from registry.trust.jwks_fetcher import SafeJwksFetcher
from registry.trust.key_sealing import KeySealer
from registry.trust.keys import KeyHolder, KeyPolicy, KeyScope, OwnerKeys
from registry.trust.models import SIGNATURE_STATES, CardEndorsement, RegistryKey, SignatureCheck, TrustedKey
from registry.trust.reads import TrustReads
from registry.trust.registry_keys import RegistryKeys
from registry.trust.rows import SIGNATURE_TERM, refresh_current_trust, trust_rows, write_trust
from registry.trust.service import CatalogTrust, NoTrust, TrustService
from registry.trust.state import CardTrust

__all__ = [
    "SIGNATURE_STATES", "SIGNATURE_TERM", "CardEndorsement", "CardTrust", "CatalogTrust", "Endorser", "KeyHolder",
    "KeyPolicy", "KeyScope", "KeySealer", "NoTrust", "OwnerKeys", "RegistryKey", "RegistryKeyUnavailable",
    "RegistryKeys", "SafeJwksFetcher", "SignatureCheck", "SignatureRequired", "TrustError", "TrustReads",
    "TrustService", "TrustedKey", "attestation_digest", "endorsed_card_response", "refresh_current_trust",
    "trust_rows", "write_trust",
]
