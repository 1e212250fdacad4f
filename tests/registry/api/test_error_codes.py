"""An error code is a promise about the status it comes with: a client that branches on
`error.code` never has to look at the status as well."""

from __future__ import annotations

import collections

from registry.api.errors import _status
from registry.app import create_app  # noqa: F401  (imports every package, so every error class exists)
from registry.errors import RegistryError


def _subclasses(cls: type[RegistryError]) -> set[type[RegistryError]]:
    found = set(cls.__subclasses__())
    return found.union(*(_subclasses(sub) for sub in found))


def test_each_error_code_answers_one_status() -> None:
    statuses = collections.defaultdict(set)
    for cls in _subclasses(RegistryError):
        statuses[cls.code].add((_status(cls.__new__(cls)), cls.__qualname__))  # by class: no message needed
    mixed = {code: found for code, found in statuses.items() if len({status for status, _ in found}) > 1}
    assert not mixed
