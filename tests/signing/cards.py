"""Agent Cards for the signing tests: a rich v1.0 card and Hypothesis strategies for v1.0 cards."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st


def rich_card(skills: int = 3) -> dict[str, Any]:
    """A complete v1.0 card exercising every part of the schema, with non-ASCII text and numbers."""
    return {
        "name": "Météo Agent 天気 🌦",
        "description": "Prévisions météo — «précises» et rapides",
        "version": "2.1.0",
        "supportedInterfaces": [
            {"url": "https://meteo.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
            {
                "url": "https://meteo.example.com/rest",
                "protocolBinding": "HTTP+JSON",
                "protocolVersion": "1.0",
                "tenant": "eu",
            },
        ],
        "provider": {"organization": "Exemple SARL", "url": "https://exemple.fr"},
        "documentationUrl": "https://meteo.example.com/docs",
        "iconUrl": "https://meteo.example.com/icon.png",
        "capabilities": {
            "streaming": True,
            "pushNotifications": False,
            "extendedAgentCard": False,
            "extensions": [
                {
                    "uri": "https://ext.example.com/geo",
                    "description": "géo",
                    "required": False,
                    "params": {
                        "maxResults": 10,
                        "ratio": 0.75,
                        "large": 1e21,
                        "tiny": 1e-7,
                        "neg": -3,
                        "flags": [True, False, None],
                        "nested": {"ünïcode": "✓", "empty": {}},
                    },
                },
                {"uri": "https://ext.example.com/units", "required": True},
            ],
        },
        "securitySchemes": {
            "bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer", "bearerFormat": "JWT"}},
            "key": {"apiKeySecurityScheme": {"location": "header", "name": "X-API-Key"}},
            "oauth": {
                "oauth2SecurityScheme": {
                    "flows": {
                        "authorizationCode": {
                            "authorizationUrl": "https://auth.example.com/authorize",
                            "tokenUrl": "https://auth.example.com/token",
                            "scopes": {"read": "Lire", "write": ""},
                            "pkceRequired": False,
                        }
                    }
                }
            },
            "oidc": {
                "openIdConnectSecurityScheme": {
                    "openIdConnectUrl": "https://auth.example.com/.well-known/openid-configuration"
                }
            },
            "mtls": {"mtlsSecurityScheme": {"description": "client certificates"}},
        },
        "securityRequirements": [{"schemes": {"bearer": {"list": []}}}, {"schemes": {"oauth": {"list": ["read"]}}}],
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["application/json"],
        "skills": [
            {
                "id": f"forecast-{i}",
                "name": f"Prévision {i}",
                "description": f"Prévision à {i} jours",
                "tags": ["météo", "forecast", ""],
                "examples": ["Quel temps fera-t-il à Zürich ?"],
                "inputModes": ["text/plain"],
                "outputModes": ["application/json"],
                "securityRequirements": [{"schemes": {"key": {"list": []}}}],
            }
            for i in range(skills)
        ],
    }


def hybrid(card: dict[str, Any]) -> dict[str, Any]:
    """`card` plus the 0.3 compatibility fields an SDK server adds, and an unknown field."""
    served = copy.deepcopy(card)
    served.update(
        url=card["supportedInterfaces"][0]["url"],
        preferredTransport="JSONRPC",
        protocolVersion="0.3.0",
        security=[{"bearer": []}],
        x_vendor={"tier": "gold"},
    )
    return served


text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | text
    | st.floats(allow_nan=False, allow_infinity=False, width=64)
)
json_values = st.recursive(
    json_scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3), max_leaves=10
)
maybe_empty_text = st.sampled_from(["", "x", "Zürich", "a b", "東京"]) | text
string_lists = st.lists(maybe_empty_text, max_size=3)


@st.composite
def v1_cards(draw: st.DrawFn) -> dict[str, Any]:
    """v1.0 cards: every field optional, values possibly empty, unknown fields, Struct params."""
    card: dict[str, Any] = {
        "supportedInterfaces": draw(
            st.lists(
                st.fixed_dictionaries(
                    {"url": maybe_empty_text, "protocolBinding": st.sampled_from(["JSONRPC", "GRPC", ""])},
                    optional={"protocolVersion": st.sampled_from(["1.0", ""]), "tenant": maybe_empty_text},
                ),
                max_size=2,
            )
        )
    }
    optional = {
        "name": maybe_empty_text,
        "description": maybe_empty_text,
        "version": maybe_empty_text,
        "iconUrl": maybe_empty_text,
        "documentationUrl": maybe_empty_text,
        "provider": st.fixed_dictionaries({}, optional={"organization": maybe_empty_text, "url": maybe_empty_text}),
        "capabilities": st.fixed_dictionaries(
            {},
            optional={
                "streaming": st.booleans(),
                "pushNotifications": st.booleans(),
                "extendedAgentCard": st.booleans(),
                "extensions": st.lists(
                    st.fixed_dictionaries(
                        {},
                        optional={
                            "uri": maybe_empty_text,
                            "required": st.booleans(),
                            "description": maybe_empty_text,
                            "params": st.dictionaries(text, json_values, max_size=3),
                        },
                    ),
                    max_size=2,
                ),
            },
        ),
        "defaultInputModes": string_lists,
        "defaultOutputModes": string_lists,
        "skills": st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "id": maybe_empty_text,
                    "name": maybe_empty_text,
                    "description": maybe_empty_text,
                    "tags": string_lists,
                    "examples": string_lists,
                },
            ),
            max_size=3,
        ),
        "securitySchemes": st.dictionaries(
            st.sampled_from(["a", "b", "ü"]),
            st.fixed_dictionaries(
                {},
                optional={
                    "apiKeySecurityScheme": st.fixed_dictionaries(
                        {"location": maybe_empty_text, "name": maybe_empty_text}
                    )
                },
            ),
            max_size=2,
        ),
        "unknownField": json_values,
    }
    for name, strategy in optional.items():
        if draw(st.booleans()):
            card[name] = draw(strategy)
    return card
