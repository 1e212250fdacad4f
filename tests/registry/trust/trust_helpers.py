"""The official a2a-sdk as a peer for the trust tests: it signs agents' cards and verifies the
registry's endorsements; plus a loopback server that accepts connections and never answers."""

from __future__ import annotations

import copy
import logging
import socket
import threading
from typing import Any

from a2a.client.card_resolver import parse_agent_card
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.types import AgentCard
from a2a.utils.signing import create_agent_card_signer, create_signature_verifier
from google.protobuf.json_format import ParseDict
from jwt.api_jwk import PyJWK
from jwt.exceptions import PyJWKError

from signing import SigningKey, private_jwk

logging.getLogger("a2a").setLevel(logging.ERROR)  # the SDK warns about every card fragment


def sdk_signed(card: dict[str, Any], key: SigningKey, **header: str) -> dict[str, Any]:
    """`card` signed by a2a-sdk's `create_agent_card_signer`, as the SDK's server serves it."""
    proto = ParseDict(copy.deepcopy(card), AgentCard(), ignore_unknown_fields=True)
    protected = {"alg": key.algorithm.value, "kid": key.kid, "typ": "JOSE", **header}
    signer = create_agent_card_signer(PyJWK(private_jwk(key)), protected)  # type: ignore[arg-type]
    return agent_card_to_dict(signer(proto))


def sdk_verify(card: dict[str, Any], jwks: dict[str, Any], algorithms: tuple[str, ...] = ("EdDSA", "ES256")) -> None:
    """What a client does with an endorsed card: a2a-sdk's verifier with the keys of the
    registry's `/.well-known/jwks.json`. Raises SignatureVerificationError."""
    by_kid = {key["kid"]: key for key in jwks["keys"]}

    def key_provider(kid: str | None, jku: str | None) -> PyJWK:
        if kid not in by_kid:
            raise PyJWKError(f"kid {kid} is not a registry key")  # the SDK then tries the next signature
        return PyJWK(by_kid[kid])

    create_signature_verifier(key_provider, list(algorithms))(parse_agent_card(copy.deepcopy(card)))


class SilentServer:
    """Accepts TCP connections on loopback and never answers (a JWKS endpoint that hangs)."""

    def __init__(self) -> None:
        self._socket = socket.create_server(("127.0.0.1", 0))
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._socket.getsockname()[1]}"

    def _accept(self) -> None:
        self._socket.settimeout(0.1)
        while not self._stop.is_set():
            try:
                self._held.append(self._socket.accept()[0])
            except TimeoutError:
                continue
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        for conn in self._held:
            conn.close()
        self._socket.close()
