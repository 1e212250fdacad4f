"""Exit codes and the one place where failures are printed and become them.

Pipelines act on exit codes, so they are fixed here and nowhere else:
0 success, 1 the thing checked is bad (invalid card, invalid or missing signature,
API refused), 2 usage error, 3 a key or resource could not be resolved, 4 the
registry could not be reached.

A failure is one `error: …` line on stderr; a command run with `--json` also prints
`{"error": {"code", "message"}}` on stdout, so a script that parses stdout sees it too, unless
the command printed its result first (`result_printed`): stdout stays one JSON document.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])
JSON_FLAG = "--json"
_WANTS_JSON = "agentdex.wants_json"  # ctx.meta keys: the command line asked for JSON,
_RESULT_PRINTED = "agentdex.result_printed"  # and the command printed its result


class ExitCode(enum.IntEnum):
    OK = 0
    FAILED = 1
    USAGE = 2
    UNRESOLVED = 3
    UNREACHABLE = 4


# The `code` of a failure's JSON when nothing more precise (the registry's own code) is known.
CODE_NAMES = {
    ExitCode.FAILED: "failed",
    ExitCode.USAGE: "usage",
    ExitCode.UNRESOLVED: "unresolved",
    ExitCode.UNREACHABLE: "unreachable",
}


class CliError(Exception):
    """A failure the CLI reports as one line on stderr (and JSON with `--json`), then exits with
    `exit_code`. `code` is machine-readable (the registry's error code when it refused);
    `details` go into the JSON only."""

    def __init__(
        self,
        message: str,
        exit_code: ExitCode = ExitCode.FAILED,
        *,
        code: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.exit_code = exit_code
        self.code = code or CODE_NAMES.get(exit_code, "failed")
        self.details = details or {}


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


def result_printed() -> None:
    """Record that the running command printed its result. A failure after it (`check` of an agent
    that is down, an `import` with refused cards: the result says what failed) then adds only the
    stderr line, so that stdout stays one JSON document."""
    context = click.get_current_context(silent=True)
    if context is not None:
        context.meta[_RESULT_PRINTED] = True


def fail(error: BaseException, exit_code: ExitCode, *, as_json: bool) -> NoReturn:
    """Print a failure (stderr; with `as_json` also the JSON envelope on stdout) and exit."""
    if isinstance(error, click.ClickException):
        error.show()  # click's own form: the usage line, then the problem
    else:
        click.echo(f"error: {error}", err=True)
    context = click.get_current_context(silent=True)
    if as_json and not (context is not None and context.meta.get(_RESULT_PRINTED)):
        click.echo(json.dumps({"error": _envelope(error, exit_code)}, indent=2, ensure_ascii=False))
    sys.exit(int(exit_code))


def _envelope(error: BaseException, exit_code: ExitCode) -> dict[str, Any]:
    message = error.format_message() if isinstance(error, click.ClickException) else str(error)
    envelope: dict[str, Any] = {"code": getattr(error, "code", None), "message": message}
    if not isinstance(envelope["code"], str):  # click's and signing's errors have no code of their own
        envelope["code"] = CODE_NAMES.get(exit_code, "failed")
    details = getattr(error, "details", None)
    if details:
        envelope["details"] = details
    return envelope


def reports_errors(func: F) -> F:
    """Decorate a command so that CliError (and library errors) print cleanly and set the exit code;
    a command with an `as_json` parameter set also prints them as JSON on stdout."""

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
            fail(error, code, as_json=bool(kwargs.get("as_json")) or kwargs.get("output_format") == "json")

    return wrapper  # type: ignore[return-value]


class ReportingGroup(click.Group):
    """The root command group: click's own usage errors (a missing argument, a bad option value,
    an unknown command) are printed by `fail` too, so `--json` gets its JSON for them as well.

    They happen while the command line is parsed, before any command runs, so whether JSON was
    asked for is read from the command line itself.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_WANTS_JSON] = _asks_for_json(args)
        with _usage_errors(ctx):
            return super().parse_args(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        with _usage_errors(ctx):
            return super().invoke(ctx)


@contextlib.contextmanager
def _usage_errors(ctx: click.Context) -> Iterator[None]:
    try:
        yield
    except click.ClickException as error:
        if not ctx.meta.get(_WANTS_JSON):
            raise  # click prints it as it always does
        fail(error, ExitCode.USAGE if isinstance(error, click.UsageError) else ExitCode.FAILED, as_json=True)


def _asks_for_json(args: Sequence[str]) -> bool:
    arguments = list(args)
    end = arguments.index("--") if "--" in arguments else len(arguments)  # after `--` it is a value
    head = arguments[:end]
    return (
        JSON_FLAG in head
        or "--format=json" in head
        or any(flag == "--format" and value == "json" for flag, value in zip(head, head[1:], strict=False))
    )
