"""Errors of the catalog. Each subclasses the registry's root; `registry.api.errors` maps them to HTTP."""

from __future__ import annotations

from registry.errors import InvalidCard, RegistryError


class CatalogError(RegistryError):
    """Root of the catalog's own errors."""


__all__ = ["CatalogError", "InvalidCard"]
