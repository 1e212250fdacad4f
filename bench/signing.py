"""Signing benchmark: Agentdex `signing` side by side with the official `a2a-sdk`, same run,
same realistic v1.0 cards (2–8 KB, 1–20 skills), for Ed25519 and ES256.

    python bench/signing.py                       # 40 cards, 5 interleaved rounds
    python bench/signing.py --cards 100 --rounds 9
    python bench/signing.py --cli-runs 0          # without the command start-up rows

Rows: verify (Agentdex `verify_card` on the card as parsed JSON; the SDK's
`create_signature_verifier` on an `AgentCard` it already holds, and, for reference, with the
parse from JSON it needs first), sign (`sign_card` vs `create_agent_card_signer`), and
canonicalisation alone (Agentdex SDK form vs the SDK's canonicaliser vs `rfc8785.dumps` on the
raw dict, the floor for any RFC 8785 encoder). Keys are parsed once on both sides. Rounds are
interleaved (ours, theirs, ours, ...) so background load hits both alike; the rate is the
median round's, p50/p99 are over every call.

Then the start-up rows of `bench/cli_start.py`: wall time from process start of `agentdex card
sign` (4 KB card), `card verify`, `card validate` and `keys jwks`, as a release pipeline runs them.
"""

from __future__ import annotations

import argparse
import copy
import logging
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rfc8785  # noqa: E402
from a2a.client.card_resolver import parse_agent_card  # noqa: E402
from a2a.types import AgentCard  # noqa: E402
from a2a.utils.signing import _canonicalize_agent_card, create_agent_card_signer, create_signature_verifier  # noqa: E402
from google.protobuf.json_format import ParseDict  # noqa: E402
from jwt.api_jwk import PyJWK  # noqa: E402

from bench import cli_start  # noqa: E402
from bench.common import Table, percentile  # noqa: E402
from signing import (  # noqa: E402
    SigningKey,
    StaticKeyResolver,
    canonicalize,
    generate_key,
    private_jwk,
    public_jwk,
    sign_card,
    verify_card,
)

WORDS = (
    "route plan map traffic weather forecast invoice payroll translate summarize search schedule review "
    "deploy monitor alert ticket booking flight hotel currency exchange audit contract météo prévision "
    "Zürich 東京 データ анализ"
).split()


def make_card(rng: random.Random) -> dict[str, Any]:
    """A realistic v1.0 card: 1–20 skills, security schemes, an extension with numeric params."""

    def words(n: int) -> str:
        return " ".join(rng.choices(WORDS, k=n))

    skills = [
        {
            "id": f"skill-{i}",
            "name": words(3).title(),
            "description": words(rng.randint(5, 25)),
            "tags": rng.sample(WORDS, rng.randint(2, 5)),
            "examples": [words(6) for _ in range(rng.randint(0, 2))],
            "inputModes": ["text/plain", "application/json"],
            "outputModes": ["application/json"],
        }
        for i in range(rng.randint(1, 20))
    ]
    return {
        "name": words(3).title(),
        "description": words(40),
        "version": f"1.{rng.randint(0, 9)}.0",
        "supportedInterfaces": [
            {"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {"url": "https://agent.example.com/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
        ],
        "provider": {"organization": "Example Org", "url": "https://example.com"},
        "documentationUrl": "https://agent.example.com/docs",
        "capabilities": {
            "streaming": True,
            "pushNotifications": False,
            "extensions": [
                {
                    "uri": "https://ext.example.com/limits",
                    "params": {"maxTokens": 4096, "temperature": 0.7, "regions": ["eu", "us"]},
                }
            ],
        },
        "securitySchemes": {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "oidc": {
                "openIdConnectSecurityScheme": {
                    "openIdConnectUrl": "https://auth.example.com/.well-known/openid-configuration"
                }
            },
        },
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}],
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["application/json", "text/plain"],
        "skills": skills,
    }


def make_cards(count: int, seed: int) -> list[dict[str, Any]]:
    """`count` cards whose compact JSON is 2–8 KB (cards with few skills get a longer description)."""
    rng, cards = random.Random(seed), []
    while len(cards) < count:
        card = make_card(rng)
        while len(rfc8785.dumps(card)) < 2048:
            card["description"] += " " + " ".join(rng.choices(WORDS, k=10))
        if len(rfc8785.dumps(card)) <= 8192:
            cards.append(card)
    return cards


def to_proto(card: dict[str, Any]) -> AgentCard:
    return ParseDict(card, AgentCard(), ignore_unknown_fields=True)


class Bench:
    """Times each callable over every card, in rounds; keeps per-call latencies and round rates."""

    def __init__(self, rounds: int) -> None:
        self.rounds = rounds
        self.rows: list[tuple[str, int, float, float, float, str]] = []

    def compare(
        self, what: str, ours: Callable[[int], object], theirs: dict[str, Callable[[int], object]], count: int
    ) -> None:
        """Interleaved rounds of `ours` and each of `theirs`; the first of `theirs` is the ratio's base."""
        runs = {"agentdex": ours, **theirs}
        samples: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in runs}
        for fn in runs.values():  # warm-up
            for i in range(min(count, 5)):
                fn(i)
        for _ in range(self.rounds):
            for name, fn in runs.items():
                latencies, rates = samples[name]
                start = time.perf_counter()
                for i in range(count):
                    t = time.perf_counter_ns()
                    fn(i)
                    latencies.append((time.perf_counter_ns() - t) / 1000)
                rates.append(count / (time.perf_counter() - start))
        base = statistics.median(samples[next(iter(theirs))][1])
        for name in runs:
            latencies, rates = samples[name]
            rate = statistics.median(rates)
            self.rows.append(
                (
                    f"{what}: {name}",
                    len(latencies),
                    rate,
                    percentile(latencies, 50),
                    percentile(latencies, 99),
                    f"{rate / base:.2f}x",
                )
            )
        print(f"  {what}: done", flush=True)

    def print(self, command: str, note: str) -> None:
        print()
        print(f"{'what':<56} {'how many':>9} {'rate/s':>9} {'p50 us':>9} {'p99 us':>9} {'vs SDK':>8}")
        for what, count, rate, p50, p99, ratio in self.rows:
            print(f"{what:<56} {count:>9} {rate:>9.0f} {p50:>9.0f} {p99:>9.0f} {ratio:>8}")
        print(f"\n{note}\nreproduce: {command}")


def bench_algorithm(bench: Bench, alg: str, key: SigningKey, cards: list[dict[str, Any]]) -> None:
    n = len(cards)
    signed = [sign_card(card, key) for card in cards]
    resolver = StaticKeyResolver([key.public])
    sdk_public = PyJWK(public_jwk(key))
    sdk_verifier = create_signature_verifier(lambda kid, jku: sdk_public, [alg])
    signed_protos = [parse_agent_card(copy.deepcopy(card)) for card in signed]
    for proto in signed_protos:
        sdk_verifier(proto)  # the SDK accepts what Agentdex signed
    assert all(verify_card(card, resolver).ok for card in signed)
    bench.compare(
        f"verify {alg}",
        lambda i: verify_card(signed[i], resolver),
        {
            "a2a-sdk (AgentCard in hand)": lambda i: sdk_verifier(signed_protos[i]),
            "a2a-sdk (parse JSON + verify)": lambda i: sdk_verifier(parse_agent_card(copy.deepcopy(signed[i]))),
        },
        n,
    )
    signer = create_agent_card_signer(PyJWK(private_jwk(key)), {"alg": alg, "kid": key.kid, "typ": "JOSE"})
    blank = [to_proto(card) for card in cards]

    def sdk_sign(i: int) -> object:
        proto = blank[i]
        del proto.signatures[:]  # keep every run signing an unsigned card, as `sign_card` does
        return signer(proto)

    bench.compare(f"sign {alg}", lambda i: sign_card(cards[i], key), {"a2a-sdk": sdk_sign}, n)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cards", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--cli-runs", type=int, default=20, help="runs of each command for the start-up rows")
    args = parser.parse_args()
    logging.getLogger("a2a").setLevel(logging.ERROR)
    cards = make_cards(args.cards, args.seed)
    sizes = sorted(len(rfc8785.dumps(card)) for card in cards)
    skills = sorted(len(card["skills"]) for card in cards)
    print(
        f"{len(cards)} cards, {sizes[0]}–{sizes[-1]} bytes (median {sizes[len(sizes) // 2]}), "
        f"{skills[0]}–{skills[-1]} skills; {args.rounds} rounds",
        flush=True,
    )
    bench = Bench(args.rounds)
    for alg in ("EdDSA", "ES256"):
        bench_algorithm(bench, alg, generate_key(alg), cards)
    protos = [to_proto(card) for card in cards]
    assert all(canonicalize(card) == _canonicalize_agent_card(to_proto(card)).encode() for card in cards)
    bench.compare(
        "canonicalize",
        lambda i: canonicalize(cards[i]),
        {
            "a2a-sdk": lambda i: _canonicalize_agent_card(protos[i]),
            "rfc8785.dumps(raw dict), floor": lambda i: rfc8785.dumps(cards[i]),
        },
        len(cards),
    )
    command = (
        f"python bench/signing.py --cards {args.cards} --rounds {args.rounds} --seed {args.seed} "
        f"--cli-runs {args.cli_runs}"
    )
    bench.print(
        command,
        "rate = median round; 'vs SDK' = rate / the first a2a-sdk row of the group "
        "(for canonicalize, the SDK's canonicaliser; rfc8785 on the raw dict is the floor).",
    )
    if args.cli_runs:
        print("\ncommand start-up, wall time from process start to exit (ms):", flush=True)
        table = Table()
        cli_start.measure(table, args.cli_runs)
        table.print(command)


if __name__ == "__main__":
    main()
