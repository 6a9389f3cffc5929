"""`SupportEnv-v0`: a readable text observation and a structured action (for LLM or text agents).

Observation: `spaces.Text`, a plain-ASCII rendering of the library's `Observation` (ticket, tier,
sentiment, triage so far, latest customer message, conversation, facts revealed, knowledge-base
matches, policy, instructions, steps left, the last step's reward and its parts, last feedback);
see `render_observation`.

Action: `spaces.Dict` with
    kind        Discrete(8)    index into `ACTION_KINDS`
    category    Discrete(7)    ""  + CATEGORIES        (index 0 means "not given")
    priority    Discrete(5)    ""  + PRIORITIES
    issue_type  Discrete(26)   ""  + ISSUE_TYPE_IDS
    fields      MultiBinary(11) over REQUESTABLE_FIELDS
    article     Discrete(34)   ""  + article ids
    department  Discrete(7)    ""  + DEPARTMENTS
    text        Text(0..512)   the question, message, reason, note or summary, by kind
(`TEXT_ACTION_CHOICES` lists the values of every index.) Only the parameters of the chosen kind
are used. Any action of the space is handled: one that does not validate (a classification with no
category, an answer with empty text, ...) becomes a penalised `invalid_action` step whose error
shows in the next observation's feedback; `step` never raises for it. `encode_action` turns a
library `Action` into this space's form, and `step` also accepts an `Action`, an action dict
such as {"action_type": "mark_resolved"}, or a reply as JSON text, as a language model writes it
(read with `supportenv.llm.parse_action`, e.g. '{"action": "mark_resolved", "summary": "Done"}').

The expert task (expert_resolution, the one task that takes use_tool): an env made for it has
    kind        Discrete(9)    ACTION_KINDS + use_tool (`TOOL_ACTION_KINDS`)
    tool        Discrete(11)   ""  + the help desk's tool names (`supportenv.tools.TOOL_NAMES`)
    arguments   Text(0..512)   the tool's arguments as a JSON object, e.g. '{"order_id": "ORD-123456"}'
besides the keys above; `encode_action(action, tools=True)` gives that form. A use_tool action may
also come as JSON text ('{"action": "use_tool", "tool": "look_up_order", "arguments": {"order_id":
"ORD-123456"}}'), an action dict or an `Action`. Its observation adds the actions the task takes,
the tools, and the last tool call's result (status, message, data as JSON); `info["tool_result"]`
has that result as a dict after a tool call. On any other task use_tool is a penalised invalid
step, and the observation and action space are those of the source designs, unchanged.
"""

from __future__ import annotations

import json
import string
import unicodedata
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from supportenv.actions import ACTION_KINDS, Action, invalid, parse
from supportenv.catalog import (
    ARTICLES,
    CATEGORIES,
    DEPARTMENTS,
    ISSUE_TYPE_IDS,
    PRIORITIES,
    REQUESTABLE_FIELDS,
    TOOL_KIND,
)
from supportenv.episode import Observation
from supportenv.errors import InvalidActionError
from supportenv.gym.backend import DEFAULT_SPLIT, DEFAULT_TASK, REMOTE_TIMEOUT_S, Session
from supportenv.llm import compact_json, parse_action
from supportenv.tasks import get_task
from supportenv.tools import TOOL_NAMES, TOOLS
from supportenv.world import SPLITS

MAX_ACTION_TEXT = 512
MAX_OBSERVATION_CHARS = 16384
SEED_RANGE = 2**31
ACTION_CHARSET = string.ascii_letters + string.digits + string.punctuation + " "
OBSERVATION_CHARSET = ACTION_CHARSET + "\n"
_OBS_CHARS = frozenset(OBSERVATION_CHARSET)
# Typographic characters and their plain-ASCII forms.
_FOLD = {
    "\u2018": "'",
    "\u2019": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u2013": "-",
    "\u2014": "-",
    "\u2026": "...",
    "\u00a0": " ",
}

TEXT_ACTION_CHOICES: dict[str, tuple[str, ...]] = {
    "kind": ACTION_KINDS,
    "category": ("", *CATEGORIES),
    "priority": ("", *PRIORITIES),
    "issue_type": ("", *ISSUE_TYPE_IDS),
    "article": ("", *(a.article_id for a in ARTICLES)),
    "department": ("", *DEPARTMENTS),
}
# The expert task's action space: one more kind, and the tool call's tool and arguments.
TOOL_ACTION_KINDS = (*ACTION_KINDS, TOOL_KIND)
TOOL_CHOICES = ("", *TOOL_NAMES)
# The parameters each kind uses; the others in a Dict action are ignored.
_PARAMS = {
    "classify_issue": ("category", "priority", "issue_type"),
    "ask_for_more_info": ("fields", "text"),
    "respond_with_solution": ("text", "article_id"),
    "suggest_knowledge_base": ("article_id",),
    "assign_department": ("department", "text"),
    "escalate_to_human": ("text",),
    "request_callback": ("text",),
    "mark_resolved": ("text",),
}


def text_action_space(tools: bool = False) -> spaces.Dict:
    """The Dict action space; with `tools` (a task that takes use_tool), with use_tool as kind 8
    and the keys "tool" and "arguments"."""
    extra: dict[str, spaces.Space[Any]] = {}
    if tools:
        extra = {
            "tool": spaces.Discrete(len(TOOL_CHOICES)),
            "arguments": spaces.Text(MAX_ACTION_TEXT, min_length=0, charset=ACTION_CHARSET),
        }
    return spaces.Dict(
        {
            "kind": spaces.Discrete(len(TOOL_ACTION_KINDS if tools else ACTION_KINDS)),
            "category": spaces.Discrete(len(TEXT_ACTION_CHOICES["category"])),
            "priority": spaces.Discrete(len(TEXT_ACTION_CHOICES["priority"])),
            "issue_type": spaces.Discrete(len(TEXT_ACTION_CHOICES["issue_type"])),
            "fields": spaces.MultiBinary(len(REQUESTABLE_FIELDS)),
            "article": spaces.Discrete(len(TEXT_ACTION_CHOICES["article"])),
            "department": spaces.Discrete(len(TEXT_ACTION_CHOICES["department"])),
            "text": spaces.Text(MAX_ACTION_TEXT, min_length=0, charset=ACTION_CHARSET),
            **extra,
        }
    )


def encode_action(action: Action, tools: bool | None = None) -> dict[str, Any]:
    """The Dict-space form of a library action (its text is not shortened). With `tools` (the
    expert task's space; by default only for a use_tool action) it has "tool" and "arguments" too."""
    tools = action.kind == TOOL_KIND if tools is None else tools
    encoded = {
        "kind": TOOL_ACTION_KINDS.index(action.kind),
        "category": TEXT_ACTION_CHOICES["category"].index(action.category),
        "priority": TEXT_ACTION_CHOICES["priority"].index(action.priority),
        "issue_type": TEXT_ACTION_CHOICES["issue_type"].index(action.issue_type),
        "fields": np.array([int(f in action.fields) for f in REQUESTABLE_FIELDS], dtype=np.int8),
        "article": TEXT_ACTION_CHOICES["article"].index(action.article_id),
        "department": TEXT_ACTION_CHOICES["department"].index(action.department),
        "text": action.text,
    }
    if tools:
        encoded["tool"] = TOOL_CHOICES.index(action.tool)
        encoded["arguments"] = json.dumps(dict(action.arguments)) if action.kind == TOOL_KIND else ""
    return encoded


def decode_action(action: Any) -> Action:
    """A library action from a Dict-space action (or an `Action`, or an action dict with
    "action_type"). Never raises: what cannot be read becomes an `invalid_action`; what is read
    but does not validate is turned into one by the session."""
    if isinstance(action, Action):
        return action
    if isinstance(action, str):  # a reply as a language model writes it
        return parse_action(action)
    try:
        if isinstance(action, Mapping) and ("action_type" in action):
            return parse(dict(action))
        kind = TOOL_ACTION_KINDS[int(action["kind"])]
        if kind == TOOL_KIND:
            return _tool_action(action)
        values = {
            "category": _choice(action, "category"),
            "priority": _choice(action, "priority"),
            "issue_type": _choice(action, "issue_type"),
            "article_id": _choice(action, "article"),
            "department": _choice(action, "department"),
            "fields": _fields(action["fields"]),
            "text": str(action["text"]),
        }
        return Action(kind, **{name: values[name] for name in _PARAMS[kind]})
    except InvalidActionError as exc:
        return invalid(_raw(action), str(exc))
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        return invalid(_raw(action), f"could not read the action: {type(exc).__name__}: {exc}")


def _tool_action(action: Mapping[str, Any]) -> Action:
    index = int(action["tool"])
    if not 0 <= index < len(TOOL_CHOICES):
        raise IndexError(f"tool index {index} is out of range 0..{len(TOOL_CHOICES) - 1}")
    tool = TOOL_CHOICES[index]
    text = str(action.get("arguments", "") or "").strip()
    try:
        arguments = json.loads(text) if text else {}
    except json.JSONDecodeError as exc:
        raise InvalidActionError(f"use_tool's arguments must be a JSON object of strings: {exc}") from None
    if not isinstance(arguments, dict):
        raise InvalidActionError(f"use_tool's arguments must be a JSON object, got {type(arguments).__name__}")
    bad = [k for k, v in arguments.items() if isinstance(v, bool) or not isinstance(v, str | int | float)]
    if bad:
        raise InvalidActionError(f"use_tool's argument values must be strings (or numbers): {', '.join(bad)}")
    if not tool:
        raise InvalidActionError(f"use_tool needs a tool, one of {', '.join(TOOL_NAMES)}")
    return parse({"action_type": TOOL_KIND, "tool": tool, "arguments": {k: str(v) for k, v in arguments.items()}})


def _fields(bits: Any) -> tuple[str, ...]:
    flags = np.asarray(bits).ravel()
    if flags.shape != (len(REQUESTABLE_FIELDS),):
        raise ValueError(f"fields needs {len(REQUESTABLE_FIELDS)} flags, got {flags.shape[0]}")
    return tuple(f for f, bit in zip(REQUESTABLE_FIELDS, flags, strict=True) if bit)


def _choice(action: Mapping[str, Any], key: str) -> str:
    index = int(action[key])
    if index < 0:
        raise IndexError(f"{key} index {index} is negative")
    return TEXT_ACTION_CHOICES[key][index]


def _raw(action: Any) -> str:
    try:
        return json.dumps(action, sort_keys=True, default=lambda v: v.tolist() if hasattr(v, "tolist") else str(v))
    except (TypeError, ValueError):
        return repr(action)


def to_charset(text: str) -> str:
    """Plain ASCII from the observation's charset: accents folded, tabs to spaces, others '?'."""
    if all(c in _OBS_CHARS for c in text):
        return text
    out = []
    for c in text:
        if c in _OBS_CHARS:
            out.append(c)
        elif c in "\t\r\x0b\x0c":
            out.append(" ")
        elif c in _FOLD:
            out.append(_FOLD[c])
        else:
            folded = "".join(d for d in unicodedata.normalize("NFKD", c) if d in _OBS_CHARS)
            out.append(folded or "?")
    return "".join(out)


def render_observation(obs: Observation, max_chars: int = MAX_OBSERVATION_CHARS) -> str:
    """A readable rendering of the observation. When it is too long the oldest turns after the
    opening message are left out (the latest is always kept), and as a last resort it is cut."""
    dash = "-"
    facts = ", ".join(f"{name}={value}" for name, value in obs.revealed_facts) or "none"
    kb = "; ".join(f"{a} {title} ({score:.3f})" for a, title, score in obs.kb_matches) or (
        "none" if obs.category else "none until classified"
    )
    reward = "none"  # before the agent's first step
    if obs.step:
        parts = ", ".join(f"{name} {value:+.2f}" for name, value in obs.last_reward_breakdown)
        reward = f"{obs.last_reward:+.2f}" + (f" ({parts})" if parts else "")
    head = [
        f"Ticket {obs.ticket_id} | task {obs.task_id} | step {obs.step} of {obs.max_steps}, "
        f"{obs.steps_left} left | cost so far ${obs.cost_so_far:.2f}",
        f"Customer: {obs.customer_tier} tier, {obs.customer_tenure_days} days, revenue "
        f"${obs.customer_total_revenue:,.2f} | sentiment {obs.sentiment_label} ({obs.sentiment_score:+.2f})",
        f"Triage: category {obs.category or dash}, issue type {obs.issue_type or dash}, "
        f"priority {obs.priority or dash} | escalated: {'yes' if obs.escalated else 'no'} | "
        f"department: {obs.assigned_department or dash} | callback: {'yes' if obs.callback_scheduled else 'no'}",
        f"Customer message: {obs.customer_message}",
        "Conversation:",
    ]
    turns = [f"  [{n}] {speaker}: {text}" for speaker, text, n in obs.history]
    tail = [
        f"Facts revealed: {facts}",
        f"Knowledge-base suggestions for the category set: {kb}",
        "Policy:",
        *(f"  - {rule}" for rule in obs.policy),
        f"Instructions: {obs.task_instructions}",
        f"Requestable fields: {', '.join(obs.requestable_fields)}",
        f"Issue types: {', '.join(obs.issue_types)}",
        f"Last reward: {reward}",
        f"Last feedback: {obs.last_action_feedback or 'none'}",
        *(_tool_lines(obs) if TOOL_KIND in (obs.allowed_actions or get_task(obs.task_id).allowed_actions) else []),
    ]
    text = to_charset("\n".join(head + turns + tail))
    dropped = 0
    while len(text) > max_chars and dropped < len(turns) - 2:
        dropped += 1
        kept = [*turns[:1], f"  ... {dropped} earlier turn(s) left out ...", *turns[1 + dropped :]]
        text = to_charset("\n".join(head + kept + tail))
    return text[:max_chars]


def _tool_lines(obs: Observation) -> list[str]:
    """The expert task's part of the observation: the actions it takes, the tools, the last result."""
    result = obs.tool_result
    shown = "none (the last action was not a tool call)"
    if result is not None:
        shown = f"{result.tool}: {result.status}: {result.message}" + (
            f" | data: {compact_json(result.data)}" if result.data else ""
        )
    return [
        f"Allowed actions: {', '.join(obs.allowed_actions or get_task(obs.task_id).allowed_actions)}",
        "Tools (use_tool; * = needs the customer verified first): "
        + ", ".join(f"{t.name}({', '.join(t.arguments)}){'*' if t.needs_verification else ''}" for t in TOOLS),
        f"Last tool result: {shown}",
    ]


class _SessionEnv(gymnasium.Env):
    """What both adapters share: construction, seeding, reset options, the backend session."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        task_id: str = DEFAULT_TASK,
        split: str = DEFAULT_SPLIT,
        remote: str | None = None,
        render_mode: str | None = None,
        remote_timeout: float = REMOTE_TIMEOUT_S,
    ) -> None:
        get_task(task_id)  # UnknownTaskError now rather than at the first reset
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.task_id, self.split, self.remote, self.render_mode = task_id, split, remote, render_mode
        self._session = Session(task_id, split, remote, remote_timeout)

    @property
    def last_observation(self) -> Observation | None:
        """The library's structured Observation behind the latest observation."""
        return self._session.observation

    @property
    def episode_seed(self) -> int:
        """The scenario seed of the current episode."""
        return self._session.seed

    def _reset_session(self, seed: int | None, options: dict[str, Any] | None) -> tuple[Observation, dict[str, Any]]:
        super().reset(seed=seed)
        # A given seed is the scenario's seed; otherwise the next one comes from np_random, so a
        # training loop that resets without a seed works through ever new tickets.
        episode_seed = seed if seed is not None else int(self.np_random.integers(0, SEED_RANGE))
        return self._session.reset(episode_seed, options)

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self._session.observation is None:
            return None
        return render_observation(self._session.observation) + "\n"

    def close(self) -> None:
        self._session.close()
        super().close()


class SupportTextEnv(_SessionEnv):
    """Text observations, structured actions; see the module docstring."""

    def __init__(
        self,
        task_id: str = DEFAULT_TASK,
        split: str = DEFAULT_SPLIT,
        remote: str | None = None,
        render_mode: str | None = None,
        remote_timeout: float = REMOTE_TIMEOUT_S,
        max_observation_chars: int = MAX_OBSERVATION_CHARS,
    ) -> None:
        super().__init__(task_id, split, remote, render_mode, remote_timeout)
        self.max_observation_chars = max_observation_chars
        self.observation_space = spaces.Text(max_observation_chars, min_length=1, charset=OBSERVATION_CHARSET)
        self.action_space = text_action_space(tools=TOOL_KIND in get_task(task_id).allowed_actions)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self._reset_session(seed, options)
        return render_observation(obs, self.max_observation_chars), info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        result, info = self._session.step(decode_action(action))
        text = render_observation(result.observation, self.max_observation_chars)
        return text, float(result.reward), bool(result.terminated), bool(result.truncated), info
