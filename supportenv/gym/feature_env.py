"""`SupportEnvFeatures-v0`: a numeric feature vector and discrete macro-actions for classic RL.

Observation: `spaces.Box(float32)` from `FeatureEncoder` (the public observation only; see
`supportenv.gym.features` for the block layout, `env.unwrapped.feature_names` for every dimension).
Action: `spaces.Discrete(85)` over `MACRO_ACTIONS` (classify as issue i, ask for fact f, answer
issue i, assign department d, escalate, callback, resolve, gather every needed fact). Reward: the
environment's step reward; `info` has the reward breakdown, the macro-action's label, and once the
episode ends the grader's `score` and `passed`.

The expert task (expert_resolution) is refused, at construction and as a reset option, with an
error naming the text env (`SupportEnv-v0`), which takes it: its cases are settled by tool calls
on the customer's records, whose arguments (an order id, an amount, a subscription id, an address)
come from what the records and the customer revealed. Macro-actions for them would either hide
that choice inside the macro (an oracle: "make the needed change") or need features of
structured records and a parameterised action space this fixed Discrete/Box pair does not have.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from supportenv.catalog import TOOL_KIND
from supportenv.gym.backend import DEFAULT_SPLIT, DEFAULT_TASK, REMOTE_TIMEOUT_S
from supportenv.gym.features import DEFAULT_BUCKETS, MACRO_ACTIONS, N_MACRO_ACTIONS, FeatureEncoder, macro_action
from supportenv.gym.text_env import _SessionEnv
from supportenv.tasks import get_task


def check_feature_task(task_id: str) -> None:
    """Raise ValueError for a task the macro-actions cannot play (one that takes use_tool)."""
    if TOOL_KIND in get_task(task_id).allowed_actions:
        raise ValueError(
            f"SupportEnvFeatures-v0 does not take task {task_id}: its cases need tool calls (use_tool) "
            "with arguments read from the records, which the macro-actions do not offer; use the text env "
            f"SupportEnv-v0 (gymnasium.make('SupportEnv-v0', task_id='{task_id}')), which takes use_tool"
        )


class SupportFeatureEnv(_SessionEnv):
    """Feature vectors, macro-actions; see the module docstring."""

    action_labels: tuple[str, ...] = MACRO_ACTIONS

    def __init__(
        self,
        task_id: str = DEFAULT_TASK,
        split: str = DEFAULT_SPLIT,
        remote: str | None = None,
        render_mode: str | None = None,
        remote_timeout: float = REMOTE_TIMEOUT_S,
        n_buckets: int = DEFAULT_BUCKETS,
    ) -> None:
        check_feature_task(task_id)
        super().__init__(task_id, split, remote, render_mode, remote_timeout)
        self.encoder = FeatureEncoder(n_buckets)
        self.feature_names = self.encoder.names
        self.observation_space = spaces.Box(self.encoder.low, self.encoder.high, dtype=np.float32)
        self.action_space = spaces.Discrete(N_MACRO_ACTIONS)
        self._last_kind = ""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if options and options.get("task_id"):
            check_feature_task(options["task_id"])
        obs, info = self._reset_session(seed, options)
        self._last_kind = ""
        return self.encoder.encode(obs, self._last_kind), info

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        index = int(np.asarray(action).item())
        if not 0 <= index < N_MACRO_ACTIONS:
            raise ValueError(f"action {index} is not a macro-action index 0..{N_MACRO_ACTIONS - 1}")
        if self._session.observation is None:
            raise RuntimeError("call reset() before step()")
        result, info = self._session.step(macro_action(index, self._session.observation))
        self._last_kind = self._session.actions[-1].kind
        info["macro_action"] = MACRO_ACTIONS[index]
        features = self.encoder.encode(result.observation, self._last_kind)
        return features, float(result.reward), bool(result.terminated), bool(result.truncated), info
