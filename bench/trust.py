"""Trust benchmark: registering signed cards through the HTTP API, with verification (owner keys
pinned with `POST /v1/keys`) and endorsement (stored at registration, `AGENTDEX_PUBLIC_URL` set),
and what that costs as a share of registration.

    python bench/trust.py                          # SQLite, 10,000 cards (Ed25519 and ES256)
    python bench/trust.py --cards 2000 --postgres postgresql+psycopg://postgres@127.0.0.1:5432/bench

Rows: signed cards registered one per request (verification + endorsement included); the same
number of unsigned cards without a public URL (no verification work, no endorsement) as the
control; endorsed-card reads. The share is measured twice: from the rates of the two runs (an
upper bound: it also counts storing checks and endorsements and the larger signed bodies), and
from the server's CPU time per card against the in-process cost of `verify_card` and of the
endorsement on the same cards (canonical form shared, as the server does). Every phase is bounded; the server stops at the end.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.catalog import make_card  # noqa: E402
from bench.common import (  # noqa: E402
    Table,
    add_database_options,
    each_database,
    registry_server,
    reset_postgres,
    server_cpu_seconds,
)
from bench.http_load import Http, post_cards  # noqa: E402
from registry.trust import attestation_digest  # noqa: E402
from signing import (  # noqa: E402
    CardPayloads,
    SigningKey,
    StaticKeyResolver,
    generate_key,
    parse_jwks,
    public_jwks,
    sign_card,
    verify_card,
)

PUBLIC_URL = "https://registry.bench.example"
PHASE_TIMEOUT = 900.0  # seconds: a phase that takes longer is reported as failed, never waited on forever


def owner_keys(per_alg: int) -> list[SigningKey]:
    return [generate_key(alg) for alg in ("EdDSA", "ES256") for _ in range(per_alg)]


def signed_items(rng: random.Random, keys: list[SigningKey], start: int, count: int) -> list[dict[str, Any]]:
    return [
        {
            "card": sign_card(make_card(rng, n), keys[n % len(keys)]),
            "cardUrl": f"https://agent{n}.example.com/.well-known/agent-card.json",
        }
        for n in range(start, start + count)
    ]


def unsigned_items(rng: random.Random, start: int, count: int) -> list[dict[str, Any]]:
    return [
        {"card": make_card(rng, n), "cardUrl": f"https://agent{n}.example.com/.well-known/agent-card.json"}
        for n in range(start, start + count)
    ]


def register(port: int, token: str, items: list[dict[str, Any]], clients: int) -> tuple[float, list[float], float]:
    """(wall seconds, latencies in ms, server CPU seconds) for one request per card."""
    cpu0 = server_cpu_seconds(port)
    wall, latencies = post_cards(port, token, items, clients, timeout=PHASE_TIMEOUT)
    return wall, latencies, server_cpu_seconds(port) - cpu0


def read_endorsed(port: int, ids: list[str], table: Table, label: str) -> None:
    http, latencies = Http(port), []
    t0 = time.perf_counter()
    for agent_id in ids:
        t1 = time.perf_counter()
        status, card = http.request("GET", f"/v1/agents/{agent_id}/card?endorsed=true")
        latencies.append((time.perf_counter() - t1) * 1000)
        assert status == 200 and card["signatures"][-1]["header"]["agentdex"]["signature"]["state"] == "verified"
    table.add(f"{label}: read endorsed card (stored signature)", len(ids), time.perf_counter() - t0, latencies)


def in_process_costs(items: list[dict[str, Any]], keys: list[SigningKey]) -> tuple[float, float]:
    """Milliseconds per card of verification (`verify_card` with the pinned keys) and of the
    endorsement (attestation digest + signature), sharing the canonical form as the server does."""
    resolver, registry_key = StaticKeyResolver(parse_jwks(public_jwks(keys)), source="owner"), generate_key("EdDSA")
    verifying = endorsing = 0.0
    for item in items:
        t0 = time.perf_counter()
        payloads = CardPayloads(item["card"])
        assert verify_card(item["card"], resolver, payloads=payloads).ok
        t1 = time.perf_counter()
        claims = {
            "registry": PUBLIC_URL,
            "validated": True,
            "cardUrl": item["cardUrl"],
            "source": "pushed",
            "fetchedFrom": None,
            "fetchedAt": "2026-01-01T00:00:00Z",
            "signature": {"state": "verified", "kids": [registry_key.kid], "checkedAt": "2026-01-01T00:00:00Z"},
        }
        sign_card(
            item["card"],
            registry_key,
            jku=f"{PUBLIC_URL}/.well-known/jwks.json",
            header_extras={"agentdexAttestation": attestation_digest(claims)},
            unprotected_header={"agentdex": claims},
            payloads=payloads,
        )
        verifying, endorsing = verifying + t1 - t0, endorsing + time.perf_counter() - t1
    return verifying / len(items) * 1000, endorsing / len(items) * 1000


def run(database_url: str, label: str, cards: int, clients: int, table: Table, notes: list[str]) -> None:
    rng = random.Random(11)
    keys = owner_keys(8)
    signed = signed_items(rng, keys, 0, cards)
    os.environ["AGENTDEX_PUBLIC_URL"] = PUBLIC_URL  # endorsements are made and stored at registration
    with registry_server(database_url) as (port, token, _env):
        status, _ = Http(port, token).request("POST", "/v1/keys", {"jwks": public_jwks(keys)})
        assert status == 201, status
        Http(port).request("GET", "/.well-known/jwks.json")  # the first registry key exists before timing
        wall, latencies, cpu = register(port, token, signed, clients)
        table.add(f"{label}: register signed card, verify + endorse, {clients} conns", cards, wall, latencies)
        ids = [
            agent["id"] for agent in Http(port).request("GET", "/v1/agents?signature=verified&limit=200")[1]["items"]
        ]
        read_endorsed(port, ids * 5, table, label)
    control_label = f"{label}: register unsigned card, no endorsement, {clients} conns"
    os.environ.pop("AGENTDEX_PUBLIC_URL")
    if database_url.startswith("postgresql"):
        reset_postgres(database_url)
    else:
        database_url = database_url.replace(".db", "-control.db")
    with registry_server(database_url) as (port, token, _env):
        control_wall, control_latencies, control_cpu = register(port, token, unsigned_items(rng, cards, cards), clients)
        table.add(control_label, cards, control_wall, control_latencies)
    verify_ms, endorse_ms = in_process_costs(signed[: min(cards, 2000)], keys)
    per_card_ms = cpu / cards * 1000
    notes += [
        f"{label}: server CPU per signed registration {per_card_ms:.2f} ms, per unsigned control "
        f"{control_cpu / cards * 1000:.2f} ms",
        f"{label}: in process, verification {verify_ms:.2f} ms/card ({verify_ms / per_card_ms:.0%} of the server CPU per "
        f"registration), endorsement {endorse_ms:.2f} ms/card ({endorse_ms / per_card_ms:.0%})",
        f"{label}: wall-clock share of all trust work (vs the control run; also counts storing the checks and "
        f"endorsements, the owner-key lookup and the larger signed bodies): {max(0.0, 1 - control_wall / wall):.0%}",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=16, help="client connections")
    add_database_options(parser)
    args = parser.parse_args()
    table, notes = Table(), []
    for url, label in each_database(args):
        run(url, label, args.cards, args.clients, table, notes)
    table.print("python " + " ".join(sys.argv))
    print(
        "\n".join(
            [
                "",
                *notes,
                f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs",
            ]
        )
    )


if __name__ == "__main__":
    main()
