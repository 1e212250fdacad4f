"""Where agents were found: the domains whose ARD manifest the registry crawls, and which entry of
which manifest listed which agent (ARD v0.91 §5.2, web ingestion).

`manifest_sources` is a leased work queue like `agents` (`next_crawl_at` + a lease pair): any
worker re-crawls a domain when it is due. `manifest_listings` is the provenance: one row per
identifier a domain's manifest lists (nested catalogs included), the agent it became, and whether
the crawl registered that agent itself (`owned`): only then may a later crawl update it or
deprecate it when the entry disappears. An agent its owner deletes keeps its listing (agent NULL),
so a scheduled re-crawl does not bring it back.
"""

from __future__ import annotations

import datetime as dt

from sqlalchemy import Boolean, ForeignKey, Integer, String, UniqueConstraint, text
from sqlalchemy.orm import Mapped, mapped_column

from registry.db import Base
from registry.db.types import UtcDateTime


class ManifestSource(Base):
    """A domain whose manifest is crawled, and the state of its last crawl."""

    __tablename__ = "manifest_sources"

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    domain: Mapped[str] = mapped_column(String(300), unique=True)  # scheme://host[:port]
    manifest_url: Mapped[str] = mapped_column(String(2048))
    found_via: Mapped[str] = mapped_column(String(20))  # a `Located.via`
    owner_id: Mapped[int | None] = mapped_column(
        ForeignKey("principals.id", ondelete="SET NULL"), nullable=True, index=True
    )
    created_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    next_crawl_at: Mapped[dt.datetime] = mapped_column(UtcDateTime(), index=True)
    crawl_lease_owner: Mapped[str | None] = mapped_column(String(100), nullable=True)
    crawl_lease_until: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    crawled_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
    crawl_failures: Mapped[int] = mapped_column(Integer, server_default=text("0"))
    crawl_error: Mapped[str | None] = mapped_column(String(500), nullable=True)
    etag: Mapped[str | None] = mapped_column(String(500), nullable=True)
    last_modified: Mapped[str | None] = mapped_column(String(100), nullable=True)
    # How many catalog documents the last read fetched: a 304 of the root is trusted only when
    # it was the only one (nested catalogs by `url` can change behind an unchanged root).
    documents: Mapped[int] = mapped_column(Integer, server_default=text("1"))


class ManifestListing(Base):
    """One identifier a domain's manifest lists, and the agent it became."""

    __tablename__ = "manifest_listings"
    __table_args__ = (UniqueConstraint("source_pk", "identifier"),)

    pk: Mapped[int] = mapped_column(Integer, primary_key=True)
    source_pk: Mapped[int] = mapped_column(ForeignKey("manifest_sources.pk", ondelete="CASCADE"))
    identifier: Mapped[str] = mapped_column(String(500))
    agent_pk: Mapped[int | None] = mapped_column(
        ForeignKey("agents.pk", ondelete="SET NULL"), nullable=True, index=True
    )
    catalog_url: Mapped[str] = mapped_column(String(2048))  # the document that lists it
    entry_url: Mapped[str | None] = mapped_column(String(2048), nullable=True)  # None: inline `data`
    entry_sha256: Mapped[str] = mapped_column(String(64))
    owned: Mapped[bool] = mapped_column(Boolean)
    listed: Mapped[bool] = mapped_column(Boolean)
    deprecated: Mapped[bool] = mapped_column(Boolean)  # by the crawl, when it disappeared
    first_listed_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    last_listed_at: Mapped[dt.datetime] = mapped_column(UtcDateTime())
    delisted_at: Mapped[dt.datetime | None] = mapped_column(UtcDateTime(), nullable=True)
