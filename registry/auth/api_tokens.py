"""`/v1/tokens`: a caller lists and revokes its own API tokens, an admin everyone's. Neither a
token nor its hash ever leaves the registry; `prefix` (its first characters) tells them apart.
Another principal's token is answered as if it did not exist (404), so ids reveal nothing."""

from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify, request

from registry.auth.api import requires
from registry.auth.tokens import TokenService
from registry.cursors import decode_cursor, encode_cursor, parse_pk
from registry.errors import NotFound
from registry.request_input import current_actor, query_choice, query_int, refuse_unknown

bp = Blueprint("tokens", __name__, url_prefix="/v1/tokens")


def _tokens() -> TokenService:
    return current_app.extensions["agentdex"].tokens


@bp.get("")
@requires(None)
def list_tokens() -> Response:
    refuse_unknown(request.args.keys(), {"includeRevoked", "limit", "cursor"}, "query parameters")
    limit = query_int("limit", 100, 1, 500)
    actor = current_actor()
    infos = _tokens().listed(
        owner=None if actor.is_admin else actor.principal_id,
        include_revoked=query_choice("includeRevoked", ("true", "false"), "false") == "true",
        after=decode_cursor(request.args.get("cursor")),
        limit=limit + 1,
    )
    more = len(infos) > limit
    infos = infos[:limit]
    return jsonify(
        {"items": [info.to_dict() for info in infos], "nextCursor": encode_cursor(infos[-1].id) if more else None}
    )


@bp.delete("/<token_id>")
@requires(None)
def revoke(token_id: str) -> Response:
    """Revoke for good, a caller's own token or any for an admin. Idempotent: a revoked token
    answers with the time it was first revoked, and `revokedNow` says whether this call did it."""
    pk = parse_pk(token_id)
    if pk is None:
        raise NotFound(f"no token with id {token_id!r}: token ids are numbers (GET /v1/tokens lists them)")
    info, now = _tokens().revoke(pk, current_actor())
    return jsonify({**info.to_dict(), "revokedNow": now})
