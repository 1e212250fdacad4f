"""What only ARD can fail at. `registry.api.errors` answers them, on the ARD API's routes in ARD's
envelope (`{"errorCode", "message"}`)."""

from __future__ import annotations

from registry import errors


class ArdError(errors.RegistryError):
    """Root of the discovery package's errors."""

    code = "ard_error"


class ManifestError(ArdError):
    """A domain's ARD manifest could not be found, read or used."""

    code = "manifest_error"


class CatalogPageNotFound(ArdError, errors.NotFound):
    """A page of the registry's own manifest that does not exist (`GET /ard/catalog/<n>`)."""

    code = "not_found"
