"""URLs in cards must be RFC 3986 absolute URLs with a valid host and port; an unfilled template
placeholder (`https://<AGENT_HOST>/a2a`) is its own error. Checked in every URL field of every
card version, and as properties: Hypothesis' own RFC 3986 URL strategy is always accepted (and
read as `urllib.parse` reads it), a control character anywhere is always refused."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.provisional import urls

from registry.validation import UrlParts, UrlProblem, check_url_syntax, validate_card
from tests.registry.validation import sample_cards

PLACEHOLDER, INVALID = "url-template-placeholder", "url-invalid"

# Every URL field of each flavour's sample card, as (card factory, JSON pointer).
URL_FIELDS = [
    (sample_cards.v10, "/supportedInterfaces/0/url"),
    (sample_cards.v10, "/provider/url"),
    (sample_cards.v10, "/securitySchemes/oidc/openIdConnectSecurityScheme/openIdConnectUrl"),
    (sample_cards.v10, "/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/tokenUrl"),
    (sample_cards.v03, "/url"),
    (sample_cards.v03, "/additionalInterfaces/1/url"),
    (sample_cards.v03, "/documentationUrl"),
    (sample_cards.v03, "/iconUrl"),
    (sample_cards.v03, "/securitySchemes/oidc/openIdConnectUrl"),
    (sample_cards.hybrid, "/url"),
]

VALID = {
    "https://agent.example.com/a2a": ("agent.example.com", None),
    "http://localhost:10103/": ("localhost", 10103),
    "https://[2001:db8::1]:8443/rpc": ("2001:db8::1", 8443),
    "https://192.0.2.7/a2a?x=1#top": ("192.0.2.7", None),
    "https://bücher.example/é": ("bücher.example", None),  # an IDN host and an IRI path
    "https://agent.example.com./a2a": ("agent.example.com.", None),
    "https://a.example.com/%7Euser/;v=1": ("a.example.com", None),
}
PLACEHOLDERS = [
    "https://<AGENT_HOST>/a2a",
    "https://{host}/a2a",
    "https://{{ agent_host }}:8080/a2a",
    "https://${AGENT_HOST}/a2a",
    "https://%AGENT_HOST%/a2a",
    "https://[YOUR_HOST]/a2a",
    "https://AGENT_HOST/a2a",
    "https://agent.example.com/<tenant>/a2a",
    "https://agent.example.com/agents/{agentId}",
]
INVALID_URLS = {
    "https://agent_1.example.com/a2a": "not a valid host name",
    "https://-agent.example.com/": "not a valid host name",
    f"https://{'a' * 64}.example.com/": "not a valid host name",
    f"https://{'a.' * 127}com/": "not a valid host name",
    "https://256.0.0.1/": "neither an IPv4 address nor a host name",
    "https://10.0.0/": "neither an IPv4 address nor a host name",
    "https://[2001:db8::g]/": "not an IPv6 address",
    "https://[::1/": "not a host with an optional :port",
    "https://agent.example.com:0/": "port",
    "https://agent.example.com:65536/": "port",
    "https://agent.example.com:80x/": "port",
    "https://user:secret@agent.example.com/": "credentials",
    "https://agent.example.com/a b": "space",
    "https://agent.example.com/a\x00b": "control character",
    "https://agent.example.com/\u202ea2a": "invisible formatting character",
    "https://agent.example.com/a^b": "percent-encode",
    "https://agent.example.com/100%": "percent-encode",
    "https:///a2a": "no host",
    "agent.example.com/a2a": "not an absolute URL",
}


def _at(card: dict[str, Any], path: str, value: str) -> None:
    *parents, last = path[1:].split("/")
    target: Any = card
    for segment in parents:
        target = target[int(segment)] if isinstance(target, list) else target[segment]
    target[int(last) if isinstance(target, list) else last] = value


@pytest.mark.parametrize(("url", "expected"), VALID.items())
def test_valid_urls_parse_with_their_host_and_port(url: str, expected: tuple[str, int | None]) -> None:
    parts = check_url_syntax(url)
    assert isinstance(parts, UrlParts) and (parts.host, parts.port) == expected


@pytest.mark.parametrize("url", PLACEHOLDERS)
def test_template_placeholders_have_their_own_rule(url: str) -> None:
    problem = check_url_syntax(url)
    assert isinstance(problem, UrlProblem) and problem.rule == PLACEHOLDER
    assert "template placeholder" in problem.reason


@pytest.mark.parametrize(("url", "reason"), INVALID_URLS.items())
def test_invalid_urls_say_what_is_wrong(url: str, reason: str) -> None:
    problem = check_url_syntax(url)
    assert isinstance(problem, UrlProblem) and problem.rule == INVALID
    assert reason in problem.reason


@pytest.mark.parametrize(("good", "path"), URL_FIELDS, ids=[f"{g.__name__}{p}" for g, p in URL_FIELDS])
def test_every_url_field_reports_placeholders_and_invalid_urls(good: Any, path: str) -> None:
    assert validate_card(good()).valid
    for value, rule in (("https://<AGENT_HOST>/a2a", PLACEHOLDER), ("https://agent.example.com:99999/a2a", INVALID)):
        card = good()
        _at(card, path, value)
        report = validate_card(card)
        assert not report.valid
        url_issues = [(i.rule, i.severity) for i in report.issues if i.path == path and i.rule.startswith("url-")]
        assert url_issues == [(rule, "error")]


def test_a_control_character_is_shown_escaped_in_the_message() -> None:
    card = sample_cards.v10()
    _at(card, "/supportedInterfaces/0/url", "https://agent.example.com/\x00")
    (issue,) = [i for i in validate_card(card).issues if i.rule == INVALID]
    assert "\x00" not in issue.message and "\\u0000" in issue.message


@given(urls())
def test_every_rfc_3986_url_hypothesis_makes_is_accepted_as_urllib_reads_it(url: str) -> None:
    parts = check_url_syntax(url)
    assert isinstance(parts, UrlParts), parts
    reference = urlsplit(url)
    assert (parts.scheme, parts.host.lower(), parts.port) == (reference.scheme, reference.hostname, reference.port)


@given(urls(), st.data())
def test_a_control_character_or_whitespace_anywhere_is_refused(url: str, data: st.DataObject) -> None:
    where = data.draw(st.integers(min_value=len("http"), max_value=len(url)))
    bad = data.draw(st.sampled_from(["\x00", "\t", "\n", "\r", " ", "\x7f", "\x85", "\u00a0", "\u2028"]))
    problem = check_url_syntax(url[:where] + bad + url[where:])
    assert isinstance(problem, UrlProblem) and problem.rule == INVALID


@given(
    st.sampled_from(["<{}>", "{{{{{}}}}}", "${{{}}}", "%{}%"]),
    # A name that starts like a %XX escape (`%AB…%`) is read as one: such names are left out.
    st.from_regex(r"[G-Z_][A-Z_]{1,19}", fullmatch=True).filter(lambda name: name.strip("_")),
)
def test_a_placeholder_for_the_host_is_always_named(shape: str, name: str) -> None:
    problem = check_url_syntax(f"https://{shape.format(name)}:8080/a2a")
    assert isinstance(problem, UrlProblem) and problem.rule == PLACEHOLDER


@given(st.text())
def test_any_text_is_judged_without_raising(text: str) -> None:
    assert isinstance(check_url_syntax(text), (UrlParts, UrlProblem))
