"""The built-in repair engine (`--agent mutate`): spectrum-based fault localisation and AST
mutation, screened against the failing tests; offline and deterministic."""

from .generator import ApplyFailed, MutateGenerator, MutateOptions
from .operators import REGISTRY

__all__ = ["REGISTRY", "ApplyFailed", "MutateGenerator", "MutateOptions"]
