# Agentdex on the embedded default (SQLite at /data/agentdex.db). For PostgreSQL set
# AGENTDEX_DATABASE_URL and AGENTDEX_SECRET_KEY, run `agentdex db upgrade` once, then run
# `gunicorn "registry.wsgi:app"` for the web and `agentdex worker` for the jobs.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 \
    AGENTDEX_DATABASE_URL=sqlite:////data/agentdex.db

WORKDIR /app
COPY setup.py README.md ./
COPY registry ./registry
COPY signing ./signing
COPY cli ./cli
COPY migrations ./migrations
RUN pip install --no-cache-dir '.[postgres,otel]' gunicorn \
 && useradd --create-home --uid 10001 agentdex \
 && mkdir /data && chown agentdex /data

USER agentdex
VOLUME ["/data"]
EXPOSE 8420
CMD ["agentdex", "serve", "--host", "0.0.0.0", "--port", "8420"]
