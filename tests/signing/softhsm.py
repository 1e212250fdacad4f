"""A SoftHSM2 token for the PKCS#11 tests, one per test process.

The token lives in a temporary directory named by SOFTHSM2_CONF, is initialised with
`softhsm2-util` (Debian's `softhsm2`, installed by .ci/run) and gets its keys from the binding
itself, inside the token. SoftHSM reads its configuration once per process, when the library is
first initialised, so every test shares this one token.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pkcs11
from pkcs11 import Attribute, KeyType, Mechanism
from pkcs11.util.ec import encode_named_curve_parameters

MODULE = "/usr/lib/softhsm/libsofthsm2.so"
LABEL = "agentdex"
PIN = "1234"
ED25519_OID = "1.3.101.112"
P256_OID = "1.2.840.10045.3.1.7"


@dataclass(frozen=True)
class SoftHsmToken:
    """Key labels in the token: `card-key` (Ed25519, id 01), `es-key` (P-256, id 02),
    `rsa-key` (RSA-2048, id 03)."""

    module: str
    label: str
    pin: str

    def uri(self, key: str, *, pin: str | None = None) -> str:
        """The RFC 7512 URI of key `key`, with the PIN as pin-value (or `pin` verbatim, e.g. pin-source)."""
        return f"pkcs11:token={self.label};object={key}?module-path={self.module}&{pin or 'pin-value=' + self.pin}"


_token: list[SoftHsmToken] = []


def softhsm_token(root: Path) -> SoftHsmToken:
    """The process's token, created under `root` on first use."""
    if not _token:
        _token.append(_create(root))
    return _token[0]


def _create(root: Path) -> SoftHsmToken:
    (root / "tokens").mkdir()
    conf = root / "softhsm2.conf"
    conf.write_text(f"directories.tokendir = {root / 'tokens'}\nobjectstore.backend = file\nlog.level = ERROR\n")
    os.environ["SOFTHSM2_CONF"] = str(conf)  # read by the library in this process and by softhsm2-util
    subprocess.run(
        ["softhsm2-util", "--init-token", "--free", "--label", LABEL, "--so-pin", "0000", "--pin", PIN],
        check=True,
        capture_output=True,
    )
    token = pkcs11.lib(MODULE).get_token(token_label=LABEL)
    with token.open(rw=True, user_pin=PIN) as session:
        session.generate_keypair(
            KeyType.EC_EDWARDS,
            store=True,
            label="card-key",
            id=b"\x01",
            mechanism=Mechanism.EC_EDWARDS_KEY_PAIR_GEN,
            public_template={Attribute.EC_PARAMS: encode_named_curve_parameters(ED25519_OID)},
        )
        session.generate_keypair(
            KeyType.EC,
            store=True,
            label="es-key",
            id=b"\x02",
            public_template={Attribute.EC_PARAMS: encode_named_curve_parameters(P256_OID)},
        )
        session.generate_keypair(KeyType.RSA, 2048, store=True, label="rsa-key", id=b"\x03")
    return SoftHsmToken(MODULE, LABEL, PIN)
