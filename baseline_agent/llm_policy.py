"""`llm`: a language model behind any OpenAI-compatible chat-completions endpoint.

Configured from the environment, as in the source design:
    API_BASE_URL   the endpoint, e.g. https://router.huggingface.co/v1 or http://localhost:8000/v1
    MODEL_NAME     the model; it is also the `model=` of the [START] log lines
    HF_TOKEN       the API key (or API_KEY, or OPENAI_API_KEY; a dummy key when none is set,
                   which suits local servers)
    LLM_TOOL_CALLS set to 1 to offer the eight actions as tools instead of asking for JSON text
                   (on the expert task also one function per help-desk tool, named by the tool;
                   see supportenv.llm)

Each step renders the observation with `supportenv.llm.render_prompt`, asks the model at
temperature 0 and reads the reply with `parse_action`; an unreadable reply becomes a
penalised invalid step. Errors of the model or the API (after the client's own retries)
propagate, so the runner records them as the episode's error; an endpoint that cannot be
reached is an `EndpointUnreachableError` naming its URL and the setting (API_BASE_URL).

`openai` is imported only when the policy is created, so the other policies work without it.
"""

from __future__ import annotations

import os
import re
from typing import Any

from supportenv.actions import Action
from supportenv.episode import Observation
from supportenv.llm import action_tools, parse_action, parse_tool_call, render_prompt

DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MAX_RETRIES = 2
DUMMY_API_KEY = "not-needed"
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"  # the openai client's own default


class EndpointUnreachableError(RuntimeError):
    """The chat-completions endpoint did not answer (refused, unresolvable, timed out)."""


def api_key_from_env() -> str:
    for name in ("HF_TOKEN", "API_KEY", "OPENAI_API_KEY"):
        if os.environ.get(name):
            return os.environ[name]
    return DUMMY_API_KEY


class LLMPolicy:
    """The Policy protocol over a chat model. `name` is the model name (one log token)."""

    name = "llm"
    stochastic = False  # temperature 0: one trial per seed

    def __init__(
        self,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        tool_calls: bool | None = None,
        max_tokens: int | None = None,
    ) -> None:
        model = model or os.environ.get("MODEL_NAME", "")
        if not model:
            raise SystemExit("the llm policy needs a model: set MODEL_NAME (and API_BASE_URL for the endpoint)")
        try:
            import openai
        except ImportError:
            raise SystemExit("the llm policy needs the openai package: pip install openai") from None
        base_url = base_url or os.environ.get("API_BASE_URL") or None
        self.base_url = base_url or OPENAI_DEFAULT_URL
        self.base_url_set = base_url is not None
        self.timeout_s, self.max_retries = timeout_s, max_retries
        self._unreachable = openai.APIConnectionError  # APITimeoutError is one too
        self.model = model
        self.name = re.sub(r"\s+", "_", model.strip())
        self.tool_calls = os.environ.get("LLM_TOOL_CALLS", "") == "1" if tool_calls is None else tool_calls
        self.max_tokens = max_tokens
        self.client = openai.OpenAI(
            api_key=api_key or api_key_from_env(),
            timeout=timeout_s,
            max_retries=max_retries,
            **({"base_url": base_url} if base_url else {}),
        )

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        # Stateless: every observation carries the whole conversation.
        self.task_id, self.split, self.seed, self.trial = task_id, split, seed, trial

    def complete(self, messages: list[dict[str, str]], task_id: str | None = None) -> Any:
        """One chat completion; API errors propagate. With tool calls, the functions offered are
        `task_id`'s (the eight actions, and on a task that takes use_tool the help-desk tools)."""
        extra: dict[str, Any] = {}
        if self.tool_calls:
            extra.update(tools=action_tools(task_id), tool_choice="required")
        if self.max_tokens:
            extra["max_tokens"] = self.max_tokens
        try:
            response = self.client.chat.completions.create(model=self.model, messages=messages, temperature=0, **extra)
        except self._unreachable as exc:
            raise EndpointUnreachableError(self.unreachable_message(exc)) from exc
        if not getattr(response, "choices", None):
            raise RuntimeError(f"the model {self.model} returned no choices")
        return response.choices[0].message

    def unreachable_message(self, exc: BaseException) -> str:
        cause = exc.__cause__
        if "timed out" in str(exc).lower() or "timeout" in type(cause).__name__.lower():
            why = f"no answer within {self.timeout_s:g}s"
        else:
            why = (str(cause) or type(cause).__name__) if cause is not None else str(exc)
        setting = "API_BASE_URL" if self.base_url_set else "API_BASE_URL is not set, so the openai default"
        return (
            f"cannot reach the model endpoint {self.base_url} ({setting}): {why}, after {self.max_retries} "
            "retries; start the model server there, or set API_BASE_URL to a reachable OpenAI-compatible "
            "URL (e.g. http://localhost:8000/v1)"
        )

    def act(self, obs: Observation) -> Action:
        message = self.complete(render_prompt(obs, tool_calls=self.tool_calls), obs.task_id)
        allowed = obs.allowed_actions or None  # an action the task does not take is an invalid step
        calls = getattr(message, "tool_calls", None) or []
        if calls:
            function = calls[0].function
            return parse_tool_call(function.name, function.arguments, allowed)
        return parse_action(message.content or "", allowed)
