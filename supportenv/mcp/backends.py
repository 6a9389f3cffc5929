"""Where the MCP server's episodes run: supportenv.adapters.backends' in-process or remote backend
(the one interface the Gymnasium environments use too), with a service's failures turned into a
`BackendError` that names the service and its address, which the server returns as a tool error.
grpc and the wire code are imported only when a remote backend is made."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from supportenv.actions import Action
from supportenv.adapters.backends import REMOTE_TIMEOUT_S, Backend, InProcessBackend, RemoteBackend, Transition
from supportenv.episode import Observation
from supportenv.graders import Grade

__all__ = ["SERVICE_TIMEOUT_S", "Backend", "BackendError", "Transition", "backend_factory", "describe"]

T = TypeVar("T")
SERVICE_TIMEOUT_S = REMOTE_TIMEOUT_S


class BackendError(RuntimeError):
    """The environment behind the MCP server failed (a service that cannot be reached, say)."""


class ServiceBackend(RemoteBackend):
    """RemoteBackend whose gRPC failures say which service failed, at which address."""

    def __init__(self, env_address: str, grader_address: str | None = None, timeout: float = SERVICE_TIMEOUT_S):
        import grpc  # here, not at module level: the in-process path never loads grpc

        super().__init__(env_address, timeout, grader_address)
        self._rpc_error = grpc.RpcError

    def _call(self, service: str, address: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except self._rpc_error as exc:
            code, details = exc.code(), exc.details()  # type: ignore[attr-defined]
            raise BackendError(f"the {service} service at {address} failed: {code.name}: {details}") from None

    def reset(self, task_id: str, split: str, seed: int) -> Observation:
        return self._call("env", self.address, lambda: RemoteBackend.reset(self, task_id, split, seed))

    def step(self, action: Action) -> Transition:
        return self._call("env", self.address, lambda: RemoteBackend.step(self, action))

    def grade(self) -> Grade:
        service, address = ("grader", self.grader_address) if self.grader_address else ("env", self.address)
        return self._call(service, address, lambda: RemoteBackend.grade(self))


def backend_factory(
    env_address: str | None = None, grader_address: str | None = None, timeout: float = SERVICE_TIMEOUT_S
) -> Callable[[], Backend]:
    """What makes each MCP session's backend: in-process unless `env_address` names an env service."""
    if env_address:
        return lambda: ServiceBackend(env_address, grader_address, timeout)
    return InProcessBackend


def describe(env_address: str | None, grader_address: str | None) -> str:
    """Where episodes run, for the ready line."""
    if not env_address:
        return "episodes in-process (the library)"
    graded = f"graded by the grader service at {grader_address}" if grader_address else "graded by a local replay"
    return f"episodes on the env service at {env_address}, {graded}"
