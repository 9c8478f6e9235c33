"""Exceptions raised by indexcheck's library code; the CLI maps each class to an exit code.

The core never imports click; the CLI prints ``str(error)`` as one line, which says what is
wrong and how to fix it. :class:`IndexcheckError` is the base, never raised directly:

- :class:`SheetNotVerifiedError`: exit 1, an evidence sheet run fails its hash chain;
- :class:`InputError`: exit 2, the user's input is wrong (``SampleTooLargeError``,
  ``SpecError``, ``DataFileError`` with ``NotAFileError``/``NestingTooDeepError``/
  ``VectorTypeError``, ``OutputOverInputError``, ``DimensionMismatchError``,
  ``MissingDependencyError``, ``ModelNotInstalledError``, ``FilterError``);
- :class:`BackendError`: exit 3, the check could not finish (``BackendUnavailableError``,
  ``AuthError``, ``RateLimitError``, ``IncompleteResultError``, ``EmbedderOutputError``,
  ``OutputError`` with ``DiskFullError``), and :class:`BugError` (our code failed on a
  Ray worker; the message says to report it).
:class:`TransientError` is no IndexcheckError: one failed request, retried by the caller.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_CHECK_FAILED = 1
EXIT_INPUT = 2
EXIT_COULD_NOT_FINISH = 3


class IndexcheckError(Exception):
    """Base class; ``exit_code`` tells the CLI how to end."""

    exit_code: int = EXIT_COULD_NOT_FINISH


class InputError(IndexcheckError):
    """The input is wrong; the user can fix it (exit 2)."""

    exit_code = EXIT_INPUT


class SampleTooLargeError(InputError):
    """A ``--sample`` larger than the corpus; ``corpus_size`` says how many chunks it has."""

    def __init__(self, message: str, corpus_size: int) -> None:
        super().__init__(message)
        self.corpus_size = corpus_size


class SpecError(InputError):
    """An unknown or malformed store or embedder spec."""


class DataFileError(InputError):
    """A data file is missing, unreadable, lacks a column, or holds no rows."""


class NotAFileError(DataFileError):
    """A path that should be a regular file is a FIFO, a device, a socket or a folder
    (refused without reading it: a FIFO would block, /dev/zero never ends)."""


class NestingTooDeepError(DataFileError):
    """JSON or TOML nested deeper than the parser can follow (Python's recursion limit)."""


class RecordTooLargeError(DataFileError):
    """One record of a file (a line, a CSV field, a whole JSON document) is over the
    record limit (``--max-record-bytes``); refused in bounded memory, naming where."""


class VectorTypeError(DataFileError):
    """A store's vector column holds strings, bytes, nested lists or other non-numbers."""


class OutputOverInputError(InputError):
    """An output path is, or lies inside, one of the run's inputs (or another output)."""


class DimensionMismatchError(InputError):
    """Vectors of two different dimensions were to be compared."""


class MissingDependencyError(InputError):
    """An optional dependency is not installed."""

    def __init__(self, what: str, extra: str, package: str | None = None) -> None:
        pkg = package or extra
        super().__init__(
            f"{what} needs the '{pkg}' package; run: pip install 'indexcheck[{extra}]'"
        )
        self.extra = extra


class ModelNotInstalledError(InputError):
    """The embedded default model is absent or its files fail their checksum."""


class BugError(IndexcheckError):
    """A bug in indexcheck's own code where the traceback cannot be raised here (a Ray
    worker): exit 3, reported as a bug to file, never as an outage."""


class SheetNotVerifiedError(IndexcheckError):
    """An evidence sheet run does not verify (a row, count, file hash or signature does not
    match what was written): nothing is exported, compared or revised (exit 1)."""

    exit_code = EXIT_CHECK_FAILED


class FilterError(InputError):
    """A metadata filter is malformed, names a field no chunk has, or uses an operator
    the store cannot express; the message names the offending part."""


class BackendError(IndexcheckError):
    """The check could not finish because a backend failed (exit 3)."""

    exit_code = EXIT_COULD_NOT_FINISH


class BackendUnavailableError(BackendError):
    """The backend could not be reached, timed out or kept failing."""


class AuthError(BackendError):
    """The backend refused the credentials."""


class RateLimitError(BackendError):
    """The backend kept answering 429 after every retry."""


class IncompleteResultError(BackendError):
    """The backend returned fewer items than were asked for."""


class EmbedderOutputError(BackendError):
    """The embedder returned vectors that cannot be compared (NaN, infinite, all zero):
    no verdict on the index can rest on them."""


class OutputError(BackendError):
    """An output file could not be written after the work was done (disk full, I/O error);
    its path was checked before the work, so this is a run that could not finish."""


class DiskFullError(OutputError):
    """An output could not be written because the disk or the quota is full."""


class TransientError(Exception):
    """Raised by a provider for one failed request that may succeed if retried.

    Not an :class:`IndexcheckError`: the retry loop in the embedder base catches it
    and, once retries are exhausted, turns it into :class:`RateLimitError` or
    :class:`BackendUnavailableError`.
    """

    def __init__(
        self, message: str, *, rate_limited: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.rate_limited = rate_limited
        self.retry_after = retry_after
