"""In-process environment with the first source design's interface, for users who
want no server at all: reset() -> observation, step(action) -> (observation, reward,
done, info), state() -> snapshot."""

from __future__ import annotations

from typing import Any

from supportenv.actions import parse
from supportenv.episode import EpisodeState, Observation, observe, step
from supportenv.errors import EpisodeFinishedError
from supportenv.graders import Grade, grade_state
from supportenv.replay import new_episode
from supportenv.world import Scenario


class SupportEnv:
    # The episode's key as the user gave it (typed Any, as the entry points that check it are:
    # a bad one is refused by new_episode's own error, on the compiled build too).
    task_id: Any
    split: Any
    seed: Any

    def __init__(self, task_id: Any = "end_to_end_resolution", split: Any = "train", seed: Any = 0) -> None:
        self.task_id, self.split, self.seed = task_id, split, seed
        self._scenario: Scenario | None = None
        self._state: EpisodeState | None = None

    def reset(self, seed: Any = None, task_id: Any = None, split: Any = None, episode_id: str = "") -> Observation:
        self.task_id = task_id or self.task_id
        self.split = split or self.split
        self.seed = self.seed if seed is None else seed
        self._scenario, self._state = new_episode(self.task_id, self.split, self.seed, episode_id)
        return observe(self._scenario, self._state)

    def step(self, action: Any) -> tuple[Observation, float, bool, dict[str, Any]]:
        if self._scenario is None or self._state is None:
            raise EpisodeFinishedError("call reset() before step()")
        result = step(self._scenario, self._state, parse(action))
        info = {
            "terminated": result.terminated,
            "truncated": result.truncated,
            "reward_breakdown": dict(result.breakdown),
            "cumulative_reward": self._state.cumulative_reward,
            "feedback": self._state.last_feedback,
        }
        return result.observation, result.reward, result.terminated or result.truncated, info

    def state(self) -> dict[str, Any]:
        """The full internal snapshot, hidden scenario included (for analysis and grading)."""
        if self._scenario is None or self._state is None:
            raise EpisodeFinishedError("call reset() first")
        snapshot = self._state.to_dict()
        snapshot["scenario"] = self._scenario.to_dict()
        return snapshot

    def grade(self) -> Grade:
        if self._scenario is None or self._state is None:
            raise EpisodeFinishedError("call reset() first")
        return grade_state(self._scenario, self._state)
