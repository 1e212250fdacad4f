"""The Flask application factory: a list of `register_*` calls."""

from __future__ import annotations

from typing import Any

from flask import Flask, Response
from flask.json.provider import DefaultJSONProvider
from flask.sessions import SessionInterface
from werkzeug.middleware.proxy_fix import ProxyFix

from registry import jsontext
from registry.a2a import bp as a2a
from registry.api import audit, service, wellknown
from registry.api.errors import exception_response, register_error_handlers
from registry.auth import api_tokens as tokens
from registry.catalog import api as agents
from registry.catalog import api_tags as catalog
from registry.container import Services, build_services
from registry.discovery.crawl import api as manifest_listings
from registry.discovery.publish import api as ard_manifest
from registry.discovery.search import api as ard_search
from registry.events import api as events
from registry.health import api as health
from registry.metrics.api import register_metrics
from registry.observability import RequestIdMiddleware
from registry.ownership import agents_bp as ownership_agents_bp
from registry.ownership import domains_bp
from registry.relay import api as relay
from registry.relay import api_ingress as relay_ingress
from registry.request_input import check_url
from registry.settings import Settings
from registry.trust import api as trust
from registry.web import bp as web


def create_app(settings: Settings | None = None, services: Services | None = None) -> Flask:
    """Build the web app. Pass `services` to share them (tests, the embedded server)."""
    settings = settings or (services.settings if services else Settings.from_env())
    app = Flask(__name__, static_folder=None)  # the web catalog's blueprint serves /static
    register_config(app, settings)
    register_services(app, services or build_services(settings))
    register_error_handlers(app)
    register_input_bounds(app)
    register_blueprints(app)
    register_tracing(app)  # Flask's own requests; the relay ingress below has a span of its own
    register_relay_ingress(app)
    register_metrics(app, app.extensions["agentdex"].metrics)  # after the ingress: it times it too
    register_request_ids(app)  # every answer carries X-Request-Id: the ingress's, errors' too
    register_proxies(app, settings)  # outermost: every layer below sees the public scheme and host
    return app


def register_config(app: Flask, settings: Settings) -> None:
    app.config.update(
        MAX_CONTENT_LENGTH=settings.max_body_bytes,
        JSON_SORT_KEYS=False,
        SECRET_KEY=settings.secret_key,
    )
    app.json = FastJsonProvider(app)
    app.session_interface = NoSessions()


def register_proxies(app: Flask, settings: Settings) -> None:
    """Behind `forwarded_hops` reverse proxies, the request's scheme and host are the public ones
    (absolute URLs in the ARD manifest, relay URLs), unless AGENTDEX_PUBLIC_URL names them."""
    if settings.forwarded_hops:
        hops = settings.forwarded_hops
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops, x_port=hops)  # type: ignore[method-assign]


class FastJsonProvider(DefaultJSONProvider):
    """Flask's JSON (compact, keys in insertion order) through `registry.jsontext`. Dates,
    dataclasses and the like still go through Flask's own `default`, so their rendering is Flask's."""

    sort_keys = False
    compact = True

    def dumps(self, obj: Any, **kwargs: Any) -> str:
        return jsontext.dumps(obj, default=self.default).decode("utf-8")

    def loads(self, s: str | bytes, **kwargs: Any) -> Any:
        return jsontext.loads(s)

    def response(self, *args: Any, **kwargs: Any) -> Response:
        obj = self._prepare_response_obj(args, kwargs)
        return Response(jsontext.dumps(obj, default=self.default), mimetype=self.mimetype)


class NoSessions(SessionInterface):
    """The API authenticates every request with a bearer token and keeps no cookie session, so
    no request pays for opening and signing one."""

    def open_session(self, app: Flask, request: Any) -> Any:
        return self.make_null_session(app)

    def save_session(self, app: Flask, session: Any, response: Any) -> None:
        return None


def register_services(app: Flask, services: Services) -> None:
    app.extensions["agentdex"] = services


def register_input_bounds(app: Flask) -> None:
    """Query strings are bounded before any view reads them (JSON bodies by the strict reader);
    U+0000 in the URL is refused before the blueprints' own preprocessors run (registered later)."""
    app.url_value_preprocessor(check_url)


def register_blueprints(app: Flask) -> None:
    app.register_blueprint(agents.bp)
    app.register_blueprint(catalog.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(trust.bp)
    app.register_blueprint(wellknown.bp)
    app.register_blueprint(service.bp)
    app.register_blueprint(relay.bp)
    app.register_blueprint(events.bp)
    app.register_blueprint(tokens.bp)
    app.register_blueprint(audit.bp)
    app.register_blueprint(domains_bp)
    app.register_blueprint(ownership_agents_bp)
    app.register_blueprint(a2a)
    app.register_blueprint(ard_manifest.bp)
    app.register_blueprint(ard_search.bp)
    app.register_blueprint(manifest_listings.bp)
    app.register_blueprint(web)


def register_relay_ingress(app: Flask) -> None:
    """`POST /relay/<id>` answered in front of Flask (see `registry.relay.api_ingress`)."""
    services = app.extensions["agentdex"]
    traced = services.tracing.server_spans
    app.wsgi_app = relay_ingress.RelayIngressEndpoint(app.wsgi_app, services, exception_response, traced)  # type: ignore[method-assign]


def register_tracing(app: Flask) -> None:
    """Server spans for the app's requests when tracing is on (`registry.observability`)."""
    app.extensions["agentdex"].tracing.instrument_app(app)


def register_request_ids(app: Flask) -> None:
    app.wsgi_app = RequestIdMiddleware(app.wsgi_app)  # type: ignore[method-assign]
