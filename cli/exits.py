"""Exit codes and the one place where errors become them.

Pipelines act on exit codes, so they are fixed here and nowhere else:
0 success, 1 the thing checked is bad (invalid card, invalid or missing signature,
API refused), 2 usage error, 3 a key or resource could not be resolved, 4 the
registry could not be reached.
"""

from __future__ import annotations

import enum
import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class ExitCode(enum.IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    UNRESOLVED = 3
    UNREACHABLE = 4


class CliError(Exception):
    """An error the CLI reports as one line on stderr, then exits with `exit_code`."""

    def __init__(self, message: str, exit_code: ExitCode = ExitCode.FAILED) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def exit_code_for(error: BaseException) -> ExitCode | None:
    """The exit code a pipeline should see for a known error; None for anything else (a bug)."""
    if isinstance(error, CliError):
        return error.exit_code
    # Libraries are only looked up if loaded: only then can one of their errors exist.
    signing_errors = sys.modules.get("signing.errors")
    if signing_errors is not None and isinstance(error, signing_errors.SigningError):
        return _signing_exit_code(error, signing_errors)
    registry_errors = sys.modules.get("registry.errors")
    if registry_errors is not None and isinstance(error, registry_errors.RegistryError):
        return ExitCode.FAILED
    return None


def _signing_exit_code(error: BaseException, errors: Any) -> ExitCode:
    # Keys/JWKS that could not be obtained: 3. Bad keys, algorithms, headers or options given
    # on the command line: 2. A card that cannot be signed or verified as given: 1.
    if isinstance(error, errors.KeyResolutionError):
        return ExitCode.UNRESOLVED
    if isinstance(
        error, errors.KeyFormatError | errors.UnsupportedAlgorithmError | errors.HeaderError | errors.PolicyError
    ):
        return ExitCode.USAGE
    return ExitCode.FAILED


def reports_errors(func: F) -> F:
    """Decorate a command so that CliError (and library errors) print cleanly and set the exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as error:
            # CliError, and the library's own errors (the registry's, run in-process by admin
            # commands, and signing's), say what to do: print that, not a traceback.
            code = exit_code_for(error)
            if code is None:
                raise
            click.echo(f"error: {error}", err=True)
            sys.exit(int(code))

    return wrapper  # type: ignore[return-value]
