"""RFC 8785: the reference vectors reproduce byte for byte, and the fast encoder path always
agrees with the `rfc8785` package."""

from __future__ import annotations

import json
import struct

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from signing import CanonicalizationError, canonicalize, jcs
from tests.signing.cards import json_values, text
from tests.signing.conftest import TESTDATA, load_json

JCS = TESTDATA / "jcs"
NAMES = sorted(path.stem for path in (JCS / "input").glob("*.json"))


@pytest.mark.parametrize("name", NAMES)
def test_rfc8785_vectors_reproduce_byte_for_byte(name: str) -> None:
    value = json.loads((JCS / "input" / f"{name}.json").read_bytes())
    expected = (JCS / "output" / f"{name}.json").read_bytes()
    assert jcs(value) == expected
    assert bytes.fromhex((JCS / "outhex" / f"{name}.txt").read_text()) == expected


@pytest.mark.parametrize("name", NAMES)
def test_plain_form_of_vector_objects_is_their_jcs(name: str) -> None:
    value = json.loads((JCS / "input" / f"{name}.json").read_bytes())
    if isinstance(value, dict) and "signatures" not in value:
        assert canonicalize(value, "plain") == (JCS / "output" / f"{name}.json").read_bytes()


def _number_vectors() -> list[dict]:
    return load_json(JCS / "numbers" / "es6_number_vectors.json")


@pytest.mark.parametrize("vector", _number_vectors(), ids=lambda v: v["ieee754_hex"])
def test_es6_number_vectors(vector: dict) -> None:
    number = struct.unpack(">d", bytes.fromhex(vector["ieee754_hex"]))[0]
    if vector["expect_error"]:
        with pytest.raises(CanonicalizationError):
            jcs({"n": number})
        return
    assert jcs([number]) == f"[{vector['expected']}]".encode()
    assert jcs({"n": number}) == f'{{"n":{vector["expected"]}}}'.encode()


@pytest.mark.parametrize("bad", [{"n": 2**53}, {"n": float("nan")}, {"s": "\ud800"}, {1: "x"}, {"x": object()}])
def test_values_without_a_canonical_form_are_refused(bad: dict) -> None:
    with pytest.raises(CanonicalizationError):
        jcs(bad)


def test_nesting_is_bounded_not_a_crash() -> None:
    deep: list = []
    for _ in range(5000):
        deep = [deep]
    with pytest.raises(CanonicalizationError):
        jcs(deep)
    with pytest.raises(CanonicalizationError):
        canonicalize({"name": "x", "capabilities": {"extensions": [{"params": {"p": deep}}]}})


astral_keys = st.dictionaries(
    st.text(st.characters(min_codepoint=0xD7F0, max_codepoint=0x1F700, exclude_categories=("Cs",)), max_size=3),
    json_values,
    max_size=4,
)


@settings(max_examples=150, deadline=None)
@given(st.one_of(json_values, astral_keys, st.dictionaries(text, json_values, max_size=5)))
def test_fast_path_agrees_with_rfc8785(value: object) -> None:
    assert jcs(value) == rfc8785.dumps(value)
