"""`agentdex card publish SIGNED_CARD --agent ID | --url CARD_URL`: hand a signed card to the
registry in the same pipeline step, then hold the registry's verdict on its signatures against
the one reached here, with the keys the pipeline trusts.

The card is verified here first and is not published when it does not verify: a pipeline should
never publish a card it cannot vouch for. After publishing, every signature valid here must be
valid at the registry too; one that is not means the registry sees other keys than the pipeline
(a wrong JWKS published, or a new key not yet visible there).

Exit codes (cli.exits): 0 published and the registry agrees; 1 the card does not verify here, the
registry refused it, or it judged a signature other than valid; 3 no key here verifies the card,
or the registry could not resolve a signature's key (and nothing else disagreed); 2 usage;
4 the registry could not be reached.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

import click

from cli.card import card
from cli.card_signing import signing_errors, verification_resolver, verify_exit_code
from cli.client import RegistryClient, json_option, make_client, registry_option, segment, token_option
from cli.exits import CliError, ExitCode, reports_errors, result_printed
from cli.files import parse_json, read_bytes
from cli.output import emit

if TYPE_CHECKING:
    from signing import SignatureResult, VerificationResult

CONFLICT = "conflict"  # the registry's error code for a card URL that is already registered


@card.command("publish")
@click.argument("card_file", metavar="SIGNED_CARD")
@click.option("--agent", "agent_id", metavar="ID", help="Replace this agent's card (an id, or 8+ characters of it).")
@click.option("--url", "card_url", metavar="CARD_URL", help="Register the card for this card URL (or replace it).")
@click.option("--jwks-url", help="The agent's own JWKS URL, for the registry to verify its signatures with.")
@click.option("--jwks", "jwks", multiple=True, metavar="FILE_OR_URL", help="Trusted JWKS here (file, or https URL).")
@click.option(
    "--key", "keys", multiple=True, metavar="PUBLIC_KEY", help="Trusted key here: PEM, JWK or JWKS file, or env:VAR."
)
@click.option("--allow-origin", "origins", multiple=True, metavar="ORIGIN", help="Follow a jku on this https origin.")
@click.option("--unsafe-allow-http-loopback", is_flag=True, help="UNSAFE, for tests: plain-http JWKS on loopback.")
@registry_option
@token_option
@json_option
@reports_errors
def publish_command(
    card_file: str,
    agent_id: str | None,
    card_url: str | None,
    jwks_url: str | None,
    jwks: tuple[str, ...],
    keys: tuple[str, ...],
    origins: tuple[str, ...],
    unsafe_allow_http_loopback: bool,
    registry: str,
    token: str | None,
    as_json: bool,
) -> None:
    """Publish SIGNED_CARD to the registry, then check that the registry verifies it as you do.

    With --agent, the agent's card is replaced. With --url, the card is registered for that
    card URL; when an agent already has that URL, its card is replaced instead. The card is first
    verified here with the keys you trust (--jwks, --key, --allow-origin, as `card verify`) and is
    not published unless it verifies. Then the registry's verdict is read back: a signature valid
    here that the registry did not find valid is named, with the registry's reason.

    Exits 0 when the registry agrees, 1 when it judged a signature otherwise (or refused the
    card), 3 when it could not find the key of a signature valid here (a wrong JWKS published, or
    a key not yet visible), 2 for usage errors, 4 when the registry cannot be reached.

    \f
    Raises CliError (exit 1, 2, 3 or 4, as above).
    """
    if (agent_id is None) == (card_url is None):
        raise CliError("give either --agent ID or --url CARD_URL", ExitCode.USAGE)
    raw, local = _verified_here(card_file, jwks, keys, origins, unsafe_allow_http_loopback)
    client = make_client(registry, token)
    action, agent = _publish(client, raw, agent_id, card_url, jwks_url)
    report = client.call("GET", f"/v1/agents/{segment(agent['id'])}/signatures")
    comparisons = [_compare(mine, report["signatures"], agent) for mine in local.signatures]
    emit({"action": action, "agent": agent, "signatures": comparisons}, as_json, _say_published)
    disagreements = [c for c in comparisons if not c["agrees"]]
    if disagreements:
        result_printed()
        raise CliError(_disagreement(disagreements), _disagreement_code(disagreements), code="registry_disagrees")


def _verified_here(
    card_file: str, jwks: tuple[str, ...], keys: tuple[str, ...], origins: tuple[str, ...], unsafe: bool
) -> tuple[bytes, VerificationResult]:
    """The card's bytes and its verification here. Raises CliError when it does not verify."""
    from signing import verify_card

    raw = read_bytes(card_file, "card")
    document = parse_json(raw, card_file)
    if not isinstance(document, dict):
        raise CliError(f"{card_file}: an Agent Card must be a JSON object", ExitCode.FAILED)
    with signing_errors(), contextlib.ExitStack() as token_session:
        result = verify_card(document, verification_resolver(jwks, keys, origins, None, unsafe, token_session))
    if not result.ok:
        hint = "" if jwks or keys or origins else "; pass --key, --jwks or --allow-origin"
        raise CliError(
            f"{card_file} does not verify here, so it was not published: {result.reason}{hint}",
            verify_exit_code(result),
        )
    return raw, result


def _publish(
    client: RegistryClient, raw: bytes, agent_id: str | None, card_url: str | None, jwks_url: str | None
) -> tuple[str, dict[str, Any]]:
    """("registered" | "replaced" | "unchanged", the agent as the registry has it now)."""
    if agent_id is None:
        # The card's own bytes go inside the body as they are: the signatures cover them.
        fields = {"cardUrl": card_url, **({"jwksUrl": jwks_url} if jwks_url else {})}
        body = json.dumps(fields).encode()[:-1] + b', "card": ' + raw + b"}"
        try:
            return "registered", client.call_raw("POST", "/v1/agents", body)
        except CliError as error:
            # The card URL's unique constraint answers "already registered"; no look-up first.
            if error.code != CONFLICT or not isinstance(error.details.get("agentId"), str):
                raise
            agent_id = error.details["agentId"]
    return _replace(client, raw, segment(agent_id), jwks_url)


def _replace(client: RegistryClient, raw: bytes, agent: str, jwks_url: str | None) -> tuple[str, dict[str, Any]]:
    before = client.call("GET", f"/v1/agents/{agent}")
    after = client.call_raw("PUT", f"/v1/agents/{agent}/card", raw)
    unchanged = after["cardVersion"] == before["cardVersion"]
    if jwks_url is not None or unchanged:
        # Setting the JWKS URL (even to what it is) verifies the current card again: an unchanged
        # card keeps the verdict of its first upload otherwise, from before the keys changed.
        after = client.call("PATCH", f"/v1/agents/{agent}", json={"jwksUrl": jwks_url or after.get("jwksUrl")})
    return ("unchanged" if unchanged else "replaced"), after


def _compare(mine: SignatureResult, theirs: list[dict[str, Any]], agent: dict[str, Any]) -> dict[str, Any]:
    """One signature, here and at the registry. Only one valid here can disagree: the card was
    published because the policy held, and a signature that fails here is no promise."""
    from signing import Outcome

    registry = next((s for s in theirs if s.get("index") == mine.index), None)
    outcome = registry["outcome"] if registry else "missing"
    agrees = mine.outcome is not Outcome.VALID or outcome == Outcome.VALID.value
    comparison = {"index": mine.index, "kid": mine.kid, "here": mine.outcome.value, "registry": outcome}
    if not agrees:
        comparison["reason"] = _why(mine, registry, agent)
    return {**comparison, "agrees": agrees}


def _why(mine: SignatureResult, registry: dict[str, Any] | None, agent: dict[str, Any]) -> str:
    from signing import Outcome

    if registry is None:
        return f"the registry has no signature #{mine.index}: it stored another card than {mine.kid}'s"
    detail = registry.get("detail") or "no detail given"
    if registry["outcome"] == Outcome.KEY_NOT_FOUND.value:
        where = f"the JWKS at {agent['jwksUrl']}" if agent.get("jwksUrl") else "the keys the registry trusts"
        return (
            f"the registry could not resolve kid {mine.kid} ({detail}): {where} does not publish it "
            "— wrong JWKS published, or the key not yet visible there"
        )
    if registry["outcome"] == Outcome.INVALID.value:
        return (
            f"the registry found kid {mine.kid}'s signature invalid with key {registry.get('keySource')} "
            f"({detail}): the key published under that kid is not the one that signed"
        )
    return f"the registry judged kid {mine.kid}'s signature {registry['outcome']}: {detail}"


def _disagreement(disagreements: list[dict[str, Any]]) -> str:
    lines = [f"signature #{d['index']} (kid {d['kid']}): {d['reason']}" for d in disagreements]
    return "the registry does not verify the card as it verifies here:\n  " + "\n  ".join(lines)


def _disagreement_code(disagreements: list[dict[str, Any]]) -> ExitCode:
    # As `card verify`: 3 when every failure is a key that could not be found, else 1.
    if all(d["registry"] == "key_not_found" for d in disagreements):
        return ExitCode.UNRESOLVED
    return ExitCode.FAILED


def _say_published(result: dict[str, Any]) -> None:
    agent = result["agent"]
    click.echo(f"{result['action']}: {agent['name']} ({agent['id']}) card version {agent['cardVersion']}")
    for s in result["signatures"]:
        verdict = "agrees" if s["agrees"] else "DISAGREES"
        click.echo(f"  #{s['index']} kid={s['kid']}  here {s['here']}, registry {s['registry']}  {verdict}")
