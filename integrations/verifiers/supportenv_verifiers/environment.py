"""supportenv as a verifiers environment: `load_environment(**kwargs)` and the env it returns.

A rollout is one episode. The model sees supportenv.llm's prompt for the first observation,
worded for function calls (`tool_calls=True`), and acts with tool calls, one function per action
kind (and on expert_resolution one per help-desk tool); each call is read with
`supportenv.llm.parse_tool_call` (a bad one becomes the penalised invalid step the library
applies) and answered by a tool message: the next observation as `supportenv.llm.user_prompt`
renders it, which carries the step's reward and feedback. Several calls in one reply are steps in
order. A reply without a tool call is read as a JSON reply, as supportenv.llm's plain prompt asks
for it (`parse_action`), answered by a user message. The rollout ends when the episode does
(closed or out of steps).

The reward is the grader's score of the episode; `passed`, `step_reward` (the episode's summed
step rewards, the shaped learning signal) and `steps` are metrics of weight 0. The episode's
identity, its actions (as `Action.to_dict()`), step rewards and verdict are in state["supportenv"]
(ask for it with `state_columns=["supportenv"]`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from typing import Any

import verifiers as vf
from verifiers.types import AssistantMessage, Messages, State, ToolMessage, UserMessage
from verifiers.utils.message_utils import normalize_messages

from supportenv.actions import Action
from supportenv.llm import parse_action, parse_tool_call, render_prompt, user_prompt
from supportenv.tasks import get_task, task_ids
from supportenv_verifiers.dataset import build_dataset
from supportenv_verifiers.episodes import Episode, open_episode

logger = logging.getLogger(__name__)
EPISODE_OVER = "The episode has ended: no further action is taken."
NOT_APPLIED = "Not applied: the episode had already ended."


class SupportEnvironment(vf.MultiTurnEnv):
    """Tickets worked step by step with tool calls; `env_address` plays them on the gRPC env
    service (graded by `grader_address`'s grader, else by the library's replay), else in process."""

    def __init__(self, env_address: str | None = None, grader_address: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.env_address, self.grader_address = env_address, grader_address

    async def setup_state(self, state: State) -> State:
        info = state["info"]
        episode = open_episode(info["task_id"], info["split"], info["seed"], self.env_address, self.grader_address)
        state["episode"] = episode  # this rollout's own: concurrent rollouts never share an episode
        state["supportenv"] = {
            "task_id": info["task_id"],
            "split": info["split"],
            "seed": info["seed"],
            "actions": [],
            "step_rewards": [],
            "done": False,
            "score": None,
            "passed": None,
        }
        try:
            observation = await episode.reset()
        except Exception as exc:
            raise vf.InfraError(f"could not reset the episode: {_describe(exc)}") from exc
        state["allowed_actions"] = observation.allowed_actions
        # The backend's own first observation (the row's prompt in the public world; the service's
        # ticket when it runs a sealed world).
        state["prompt"] = normalize_messages(render_prompt(observation, tool_calls=True), field_name="prompt")
        return state

    async def env_response(self, messages: Messages, state: State, **kwargs: Any) -> Messages:
        reply = messages[-1]
        calls = reply.tool_calls if isinstance(reply, AssistantMessage) else None
        if not calls:
            action = parse_action(_text(reply.content), state["allowed_actions"])
            response: Messages = [UserMessage(content=await self._apply(state, action))]
        else:
            response = []
            for call in calls:
                if state["supportenv"]["done"]:
                    content = NOT_APPLIED
                else:
                    content = await self._apply(
                        state, parse_tool_call(call.name, call.arguments, state["allowed_actions"])
                    )
                response.append(ToolMessage(content=content, tool_call_id=call.id))
        if state["supportenv"]["done"]:
            state["final_env_response"] = response
        return response

    async def _apply(self, state: State, action: Action) -> str:
        """Step the episode; the next observation as the model reads it."""
        episode: Episode = state["episode"]
        try:
            outcome = await episode.step(action)
        except Exception as exc:
            raise vf.InfraError(f"the step failed: {_describe(exc)}") from exc
        record = state["supportenv"]
        record["actions"].append(action.to_dict())
        record["step_rewards"].append(outcome.reward)
        record["done"] = outcome.done
        text = user_prompt(outcome.observation, tool_calls=True)
        return f"{text}\n\n{EPISODE_OVER}" if outcome.done else text

    @vf.cleanup
    async def grade_episode(self, state: State) -> None:
        """Grade the episode however the rollout ended, then release its client."""
        episode: Episode | None = state.pop("episode", None)
        if episode is None:
            return
        try:
            if state["supportenv"]["actions"]:
                verdict = await episode.grade()
                state["supportenv"].update(score=verdict.score, passed=verdict.passed)
        except Exception as exc:
            logger.warning("grading the episode failed: %s", _describe(exc))
            state["error"] = state.get("error") or vf.InfraError(f"grading failed: {_describe(exc)}")
        finally:
            await episode.close()


def _describe(exc: Exception) -> str:
    """One line for an error: a gRPC error by its status and details, not its multi-line repr."""
    code, details = getattr(exc, "code", None), getattr(exc, "details", None)
    if callable(code) and callable(details):
        return f"{type(exc).__name__}: {getattr(code(), 'name', code())}: {details()}"
    return f"{type(exc).__name__}: {exc}"


def _text(content: Any) -> str:
    """A message's text, whether a string or content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(getattr(part, "text", "") or "" for part in content)
    return ""


async def grade_score(state: State) -> float:
    """The grader's score of the episode, 0..1 (0 when it could not be graded)."""
    return float(state.get("supportenv", {}).get("score") or 0.0)


async def passed(state: State) -> float:
    return 1.0 if state.get("supportenv", {}).get("passed") else 0.0


async def step_reward(state: State) -> float:
    return float(sum(state.get("supportenv", {}).get("step_rewards", ())))


async def steps(state: State) -> float:
    return float(len(state.get("supportenv", {}).get("actions", ())))


def seed_range(num_examples: int, seed_start: int, seeds: Iterable[int] | None) -> list[int]:
    chosen = [int(s) for s in seeds] if seeds is not None else list(range(seed_start, seed_start + num_examples))
    if not chosen:
        raise ValueError("no seeds: give num_examples >= 1 or a non-empty seeds list")
    return chosen


def load_environment(
    tasks: str | list[str] | None = None,
    split: str = "train",
    num_examples: int = 50,
    seeds: list[int] | None = None,
    seed_start: int = 0,
    eval_split: str | None = "test",
    num_eval_examples: int | None = None,
    eval_seeds: list[int] | None = None,
    env_address: str | None = None,
    grader_address: str | None = None,
    **kwargs: Any,
) -> SupportEnvironment:
    """The environment, as `vf.load_environment("supportenv-verifiers", **kwargs)` builds it.

    tasks: task ids (a list, or "a,b"); default the three source tasks. The dataset has one row per
    task and seed of `split`: seeds `seed_start`.. `seed_start + num_examples - 1`, or `seeds`.
    The eval dataset likewise of `eval_split` (None: none; evaluate then uses the dataset): seeds
    `eval_seeds`, else `seeds`, else `num_eval_examples` (default num_examples) from `seed_start`.
    env_address: "HOST:PORT" of the gRPC env service to play on (default: in process);
    grader_address: its grader service (default: grade by replaying with the library).
    Other kwargs go to verifiers' MultiTurnEnv (e.g. max_turns, timeout_seconds).
    """
    chosen = task_ids(tasks)
    train_seeds = seed_range(num_examples, seed_start, seeds)
    if eval_seeds is None and seeds is not None and num_eval_examples is None:
        eval_seeds = seeds  # the same seed numbers of the other split: a different ticket each
    test_seeds = seed_range(num_eval_examples or num_examples, seed_start, eval_seeds)
    rubric = vf.Rubric(funcs=[grade_score, passed, step_reward, steps], weights=[1.0, 0.0, 0.0, 0.0])
    env_args = {
        "tasks": list(chosen),
        "split": split,
        "seeds": train_seeds,
        "eval_split": eval_split,
        "eval_seeds": test_seeds if eval_split else None,
        "env_address": env_address,
        "grader_address": grader_address,
    }
    kwargs.setdefault("max_turns", max(get_task(t).max_steps for t in chosen) + 1)  # the episode ends first
    return SupportEnvironment(
        env_address=env_address,
        grader_address=grader_address,
        dataset=lambda: build_dataset(chosen, split, train_seeds),
        eval_dataset=(lambda: build_dataset(chosen, eval_split, test_seeds)) if eval_split else None,
        rubric=rubric,
        env_args=json.loads(json.dumps(env_args)),
        **kwargs,
    )
