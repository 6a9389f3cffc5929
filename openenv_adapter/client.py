"""SupportEnvClient: openenv's own EnvClient (a WebSocket session per client), typed with
this environment's models.

    from openenv_adapter.client import SupportEnvClient
    from openenv_adapter.models import SupportAction

    with SupportEnvClient(base_url="http://localhost:8000").sync() as env:
        result = env.reset(task_id="issue_classification", split="test", seed=7)
        result = env.step(SupportAction(kind="classify_issue", category="billing", priority="high"))
        print(result.reward, result.observation.reward_breakdown, env.state().step_count)
"""

from __future__ import annotations

from typing import Any

from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from openenv_adapter.models import SupportAction, SupportObservation, SupportState


class SupportEnvClient(EnvClient[SupportAction, SupportObservation, SupportState]):
    def _step_payload(self, action: SupportAction) -> dict[str, Any]:
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[SupportObservation]:
        observation = SupportObservation(
            **payload.get("observation", {}), reward=payload.get("reward"), done=payload.get("done", False)
        )
        return StepResult(
            observation=observation,
            reward=payload.get("reward"),
            done=payload.get("done", False),
            metadata=payload.get("metadata"),
        )

    def _parse_state(self, payload: dict[str, Any]) -> SupportState:
        return SupportState(**payload)
