"""Agentdex: the registry and discovery service for A2A agents."""

from setuptools import find_packages, setup

# The SDK, its OTLP/HTTP exporter and the standard instrumentations (their 0.x series moves with the SDK's 1.x).
OTEL = [
    "opentelemetry-sdk>=1.45,<2",
    "opentelemetry-exporter-otlp-proto-http>=1.45,<2",
    "opentelemetry-instrumentation-flask>=0.66b0,<1",
    "opentelemetry-instrumentation-requests>=0.66b0,<1",
    "opentelemetry-instrumentation-sqlalchemy>=0.66b0,<1",
    "opentelemetry-instrumentation-urllib3>=0.66b0,<1",
    "opentelemetry-instrumentation-wsgi>=0.66b0,<1",
]

setup(
    name="agentdex",
    version="0.1.0",
    description="Registry and discovery service for A2A (Agent2Agent) agents",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.11",
    packages=find_packages(include=["registry*", "signing*", "cli*", "migrations*"]),
    include_package_data=True,
    package_data={
        "registry.validation": ["schemas/*.json", "schemas/SOURCES.md"],
        "registry.web": ["templates/**/*", "static/**/*"],
        "migrations": ["script.py.mako"],
    },
    install_requires=[
        "flask>=3.0,<4",
        "sqlalchemy>=2.0.30,<2.2",
        "alembic>=1.13,<2",
        "apscheduler>=3.10,<4",
        "click>=8.1,<9",
        "requests>=2.32,<3",
        "rfc8785>=0.1.4,<0.2",
        "joserfc>=1.0,<2",
        "cryptography>=42",
        "jsonschema>=4.21,<5",
        # Change events (registry/events): CloudEvents 1.0 in structured JSON mode; 2.x has the `cloudevents.core` API.
        "cloudevents>=2.2,<3",
        "waitress>=3.0,<4",
        "granian>=2.5,<3",
        "orjson>=3.10,<4",
        # Ranked search (registry/retrieval): Snowball stemming, and a static word-embedding
        # model that ships inside its wheel (no download at run time).
        "PyStemmer>=3.0,<4",
        "wordllama>=0.4,<0.5",
        # registry/retrieval/embedding.py pools wordllama's token vectors itself, with the
        # tokenizer's `encode_batch_fast` (0.20 and later).
        "tokenizers>=0.20,<1",
        "numpy>=1.26,<3",
        # The approximate vector index of large catalogs (registry/retrieval/approximate.py).
        "faiss-cpu>=1.15,<2",
        # GET /metrics (registry/metrics): its multiprocess mode shares values between processes.
        "prometheus-client>=0.20,<1",
        # Domain proofs (registry/ownership): the DNS TXT challenge, and IDNA 2008 names.
        "dnspython>=2.6,<3",
        "idna>=3.6,<4",
    ],
    extras_require={
        "postgres": ["psycopg[binary]>=3.1,<4"],
        # Traces (registry/observability/otel.py), used only when OTEL_EXPORTER_OTLP_ENDPOINT is set.
        "otel": OTEL,
        # `agentdex card sign --key pkcs11:...`: keys held in a PKCS#11 token or HSM.
        "pkcs11": ["python-pkcs11>=0.10,<0.11"],
        "test": [
            "pytest>=8,<10",
            "hypothesis>=6.100,<7",
            "a2a-sdk[signing,http-server]>=1.1.4,<2",
            "uvicorn>=0.30",
            "psycopg[binary]>=3.1,<4",
            "python-pkcs11>=0.10,<0.11",
            "gunicorn>=22",
            # tests/cli/test_precommit_hook.py and test_action.py: the hook run by pre-commit itself,
            # the action's steps read from action.yml.
            "pre-commit>=4,<5",
            "pyyaml>=6,<7",
            # tests/registry/observability: the traced registry, and an OTLP receiver decoding its spans.
            *OTEL,
            "opentelemetry-proto>=1.45,<2",
            # tests/browser: drives Debian's chromium (.ci/run installs it; never a downloaded
            # browser). One minor series: each one is built against one Chromium release.
            "playwright>=1.65,<1.66",
            # The checkers .ci/run gates on are held to one minor series: a new ruff minor may
            # restyle `ruff format`, a new mypy minor may report new errors.
            "ruff>=0.17,<0.18",
            "mypy>=2.4,<2.5",
            "import-linter>=2.12,<3",
            "types-jsonschema>=4.21",
            "types-waitress>=3.0",
            # tests/registry/ownership: a DNS server on loopback answering the TXT challenge.
            "dnslib>=0.9.24,<0.10",
        ],
    },
    entry_points={"console_scripts": ["agentdex=cli.main:cli"]},
)
