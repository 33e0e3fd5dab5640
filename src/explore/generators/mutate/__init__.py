"""The built-in repair engine (`--agent mutate`): spectrum-based fault localisation and AST
mutation, screened against the failing tests; offline and deterministic."""

from .generator import ApplyFailed, MutateGenerator
from .operators import REGISTRY
from .options import MutateOptions

__all__ = ["REGISTRY", "ApplyFailed", "MutateGenerator", "MutateOptions"]
