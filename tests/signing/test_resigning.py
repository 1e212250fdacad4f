"""Re-signing is idempotent: the same kid replaces its own signature in place, other kids are
kept, and `append` keeps both, so a pipeline that runs again produces the same bytes."""

from __future__ import annotations

import json

from signing import SigningKey, sign_card
from signing.jws import parse_header
from tests.signing.cards import rich_card


def kids(card: dict) -> list[str | None]:
    return [parse_header(s["protected"]).kid for s in card["signatures"]]


def test_signing_twice_with_one_key_gives_identical_bytes_and_one_signature(keys: dict[str, SigningKey]) -> None:
    once = sign_card(rich_card(), keys["EdDSA"])
    twice = sign_card(once, keys["EdDSA"])
    assert json.dumps(twice, ensure_ascii=False) == json.dumps(once, ensure_ascii=False)
    assert len(twice["signatures"]) == 1


def test_another_key_adds_a_second_signature(keys: dict[str, SigningKey]) -> None:
    signed = sign_card(sign_card(rich_card(), keys["EdDSA"]), keys["ES256"])
    assert kids(signed) == [keys["EdDSA"].kid, keys["ES256"].kid]


def test_append_keeps_a_signature_under_the_same_kid(keys: dict[str, SigningKey]) -> None:
    once = sign_card(rich_card(), keys["EdDSA"])
    assert kids(sign_card(once, keys["EdDSA"], append=True)) == [keys["EdDSA"].kid] * 2


def test_a_replaced_signature_keeps_its_place_and_drops_its_duplicates(keys: dict[str, SigningKey]) -> None:
    ed, es = keys["EdDSA"], keys["ES256"]
    card = sign_card(sign_card(sign_card(rich_card(), ed), es), ed, append=True)
    assert kids(sign_card(card, ed)) == [ed.kid, es.kid]
    assert kids(sign_card(card, es, kid=ed.kid)) == [ed.kid, es.kid]  # an explicit kid is the kid that counts


def test_an_unreadable_signature_entry_is_kept(keys: dict[str, SigningKey]) -> None:
    card = {**rich_card(), "signatures": [{"protected": "%%%", "signature": "x"}]}
    assert sign_card(card, keys["EdDSA"])["signatures"][0] == {"protected": "%%%", "signature": "x"}
