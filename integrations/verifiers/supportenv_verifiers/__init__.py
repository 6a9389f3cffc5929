"""supportenv-verifiers: the customer-support environment (supportenv) for PrimeIntellect's verifiers.

`vf.load_environment("supportenv-verifiers", **kwargs)` imports this package and calls its
`load_environment`; see `supportenv_verifiers.environment` for what a rollout is and the kwargs.
"""

try:
    import supportenv  # noqa: F401
except ImportError as exc:  # the library is this repository's, not a package index's
    raise ImportError(
        "supportenv_verifiers needs the supportenv library: run from the repository root, or put it on "
        "PYTHONPATH (PYTHONPATH=/path/to/the/repository)"
    ) from exc

from supportenv_verifiers.environment import SupportEnvironment, load_environment

__all__ = ["SupportEnvironment", "load_environment"]
