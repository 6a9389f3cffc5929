"""supportenv-verifiers-v1: the customer-support environment (supportenv) for verifiers 0.4's v1 stack.

verifiers resolves the taskset id `supportenv-verifiers-v1` to this package and takes the
Taskset and Harness subclasses it exports: `SupportTaskset` (the episodes, their scoring and
their tools, supportenv_verifiers_v1.taskset) and `SupportHarness` (the tool-calling chat loop
without a shell, the taskset's default harness).
"""

try:
    import supportenv  # noqa: F401
except ImportError as exc:  # the library is this repository's, not a package index's
    raise ImportError(
        "supportenv_verifiers_v1 needs the supportenv library: put the repository root on PYTHONPATH "
        "(PYTHONPATH=/path/to/the/repository)"
    ) from exc

from supportenv_verifiers_v1.harness import SupportHarness
from supportenv_verifiers_v1.taskset import SupportTaskset

__all__ = ["SupportHarness", "SupportTaskset"]
