"""SupportEnvironment: openenv's Environment interface over supportenv's pure episode
functions. One instance is one WebSocket session's episode; nothing is shared."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from openenv_adapter.models import SupportAction, SupportObservation, SupportState
from supportenv import actions as lib_actions
from supportenv import episode, replay
from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError
from supportenv.tasks import get_task
from supportenv.world import Scenario

NAME = "supportenv"
VERSION = "0.1.0"
DESCRIPTION = (
    "Customer Support AI Training Environment: work a support ticket step by step (classify, ask for "
    "facts, answer, route, escalate, resolve) with shaped step rewards; on expert_resolution also call the "
    "help desk's tools on the customer's records (use_tool). reset(task_id, split, seed)."
)
DEFAULT_TASK, DEFAULT_SPLIT, DEFAULT_SEED = "end_to_end_resolution", "train", 0
MAX_EPISODE_ID_CHARS = 128  # the same cap as env_service, so ids stay portable between the two
_README = Path(__file__).resolve().parent.parent / "README.md"
_NO_EPISODE = (
    "no episode in this session: call reset first. OpenEnv's HTTP /step gives every request a fresh "
    "environment, so play episodes over a WebSocket session (/ws), e.g. with openenv_adapter.client.SupportEnvClient"
)


class SupportEnvironment(Environment[SupportAction, SupportObservation, SupportState]):
    # Each instance owns its episode and the library has no global state.
    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self) -> None:
        super().__init__()
        self._scenario: Scenario | None = None
        self._state: episode.EpisodeState | None = None

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        task_id: str | None = None,
        split: str | None = None,
        **kwargs: Any,
    ) -> SupportObservation:
        # A misspelt option must not silently start the default task.
        if kwargs:
            raise InvalidRequestError(
                f"unknown reset options {sorted(kwargs)}; accepted: task_id, split, seed, episode_id"
            )
        episode_id = episode_id or ""
        if not isinstance(episode_id, str) or len(episode_id) > MAX_EPISODE_ID_CHARS:
            raise InvalidRequestError(f"episode_id must be a string of at most {MAX_EPISODE_ID_CHARS} characters")
        self._scenario, self._state = replay.new_episode(
            task_id or DEFAULT_TASK,
            split or DEFAULT_SPLIT,
            DEFAULT_SEED if seed is None else seed,
            episode_id,
        )
        return SupportObservation.from_library(episode.observe(self._scenario, self._state))

    def step(self, action: SupportAction, timeout_s: float | None = None, **kwargs: Any) -> SupportObservation:
        if self._scenario is None or self._state is None:
            raise EpisodeFinishedError(_NO_EPISODE)
        try:
            chosen = action.to_library()
        except InvalidActionError as exc:
            # Well-formed JSON naming an impossible action (unknown category, missing department,
            # ...) costs a penalised step with the reason in the next observation, like any
            # unparseable agent output; a message that is not an action at all is rejected by
            # openenv's own validation before it gets here.
            chosen = lib_actions.invalid(action.model_dump_json(exclude={"metadata"}, exclude_defaults=True), str(exc))
        allowed = get_task(self._state.task_id).allowed_actions
        if chosen.kind not in (*allowed, lib_actions.INVALID_KIND):
            # A kind the task does not take (use_tool outside the expert task): penalised the same way.
            why = f"task {self._state.task_id} does not take {chosen.kind}; its actions: {', '.join(allowed)}"
            chosen = lib_actions.invalid(action.model_dump_json(exclude={"metadata"}, exclude_defaults=True), why)
        result = episode.step(self._scenario, self._state, chosen)
        return SupportObservation.from_library(result.observation, result)

    @property
    def state(self) -> SupportState:
        if self._state is None:
            return SupportState()
        st = self._state
        return SupportState(
            episode_id=st.episode_id,
            step_count=st.step,
            task_id=st.task_id,
            split=st.split,
            seed=st.seed,
            max_steps=get_task(st.task_id).max_steps,
            terminated=st.terminated,
            truncated=st.truncated,
            cumulative_reward=st.cumulative_reward,
            actions=[a.to_dict() for a in st.actions],
        )

    def get_metadata(self) -> EnvironmentMetadata:
        readme = _README.read_text(encoding="utf-8") if _README.is_file() else None
        return EnvironmentMetadata(name=NAME, description=DESCRIPTION, version=VERSION, readme_content=readme)
