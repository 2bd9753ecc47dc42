"""One exception tree for odyssey.

Every error a user can cause derives from :class:`OdysseyError`. Messages say
what went wrong, where (file:line when known), and how to fix it. Only the CLI
turns these into printed messages and exit codes.
"""

from __future__ import annotations


class OdysseyError(Exception):
    """Base of every error odyssey raises on purpose."""

    exit_code: int = 2


class KernelParseError(OdysseyError):
    """The C source cannot be read, preprocessed or parsed."""


class UnknownSizeError(KernelParseError):
    """A ``-D NAME=VALUE`` whose NAME is not a size parameter (``#define NAME <integer>``) of
    the kernel."""


class NoScopError(KernelParseError):
    """The source has no ``#pragma scop`` / ``#pragma endscop`` region."""


class UnsupportedConstructError(KernelParseError):
    """A construct inside the scop that odyssey does not model (while loop, call, pointer...)."""


class NotAffineError(UnsupportedConstructError):
    """A loop bound, guard or subscript that is not affine in iterators and size parameters."""


class UnknownArrayError(KernelParseError):
    """An array used in the scop that is not declared with a known shape and element type."""


class IllegalMappingError(OdysseyError):
    """The kernel (or a requested design) cannot be mapped to a systolic array."""


class DesignNotFoundError(OdysseyError):
    """A design id that the kernel's design space does not contain."""


class TilingError(OdysseyError):
    """A tiling factor that is missing, out of range, or violates divisibility."""


class PlatformError(OdysseyError):
    """A platform description that is missing or malformed."""


class CodegenError(OdysseyError):
    """The generator cannot produce a design for the given input."""


class SimulationError(OdysseyError):
    """Compiling or running a generated design's simulation failed."""

    exit_code = 1


class DescriptorError(OdysseyError):
    """A ``descriptor.json`` that does not match its schema (``docs/descriptor.md``)."""


class ModelError(OdysseyError):
    """A performance model cannot be built or evaluated."""


class SolverError(OdysseyError):
    """A mathematical-programming solver failed or is unavailable."""


class TunerError(OdysseyError):
    """A tuner was configured or driven incorrectly."""


class NetworkError(OdysseyError):
    """A network workload table that is missing, unknown or malformed."""


class ReportError(OdysseyError):
    """The input of ``odyssey report`` is not something a report can be made of."""


class StudyError(OdysseyError):
    """An architecture study that is unknown, misconfigured, or cannot run."""


class OutputPathError(OdysseyError):
    """An output file or folder that cannot be written (checked before any work starts)."""
