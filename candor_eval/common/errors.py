"""One shape for every user-facing error, and the exit codes of every stage.

Exit codes (each stage's ``--help`` states them): 0 ok; 1 the run finished but some calls failed (they are
recorded); 2 bad configuration or input (nothing was written).

An :class:`InputError` says *what* failed, *where* (file, row, field or box),
what was *expected*, what was *got*, and optionally a *hint* (the likely cause or
the command that fixes it). Validation happens once, at the boundary; inside,
code trusts its types.
"""
from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

EXIT_OK = 0
EXIT_CALLS_FAILED = 1
EXIT_BAD_INPUT = 2

log = logging.getLogger("candor")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one input: ``where`` names the file and row/field/box."""

    where: str
    what: str
    expected: str | None = None
    got: str | None = None

    def __str__(self) -> str:
        text = f"{self.where}: {self.what}"
        if self.expected is not None:
            text += f" (expected {self.expected}"
            text += f", got {self.got})" if self.got is not None else ")"
        elif self.got is not None:
            text += f" (got {self.got})"
        return text


class InputError(Exception):
    """Bad configuration or input; the stage exits 2 and writes nothing.

    Carries one or more :class:`Problem` so that a single message can list every
    bad file at once (e.g. all tampered files of a manifest).
    """

    def __init__(self, problems: Problem | Sequence[Problem], *, hint: str | None = None):
        self.problems = [problems] if isinstance(problems, Problem) else list(problems)
        self.hint = hint
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Callable[[list[Problem], str | None], InputError],
                                  tuple[list[Problem], str | None]]:
        """Pickled whole (its problems and hint), so an error raised in a worker process reaches
        the stage as the same error."""
        return _input_error, (self.problems, self.hint)

    @property
    def message(self) -> str:
        lines = [str(p) for p in self.problems]
        head = lines[0] if len(lines) == 1 else f"{len(lines)} problems:\n  " + "\n  ".join(lines)
        return head + (f"\nhint: {self.hint}" if self.hint else "")


def _input_error(problems: list[Problem], hint: str | None) -> InputError:
    return InputError(problems, hint=hint)


def fail(where: str, what: str, *, expected: str | None = None, got: object = None,
         hint: str | None = None) -> InputError:
    """Build an :class:`InputError` for one problem (``raise fail(...)``)."""
    return InputError(Problem(where, what, expected, None if got is None else repr(got)), hint=hint)


def run_main(main: Callable[[Sequence[str] | None], int | None], argv: Sequence[str] | None = None) -> int:
    """Run a stage's ``main`` with logging set up and errors mapped to exit codes.

    ``InputError`` prints ``error: <message>`` to stderr and returns 2; anything
    the stage returns (0 or 1) is passed through.
    """
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        code = main(argv)
    except InputError as err:
        print(f"error: {err.message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return EXIT_OK if code is None else int(code)
