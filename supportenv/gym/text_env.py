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
library `Action` into this space's form, and `step` also accepts an `Action` or an action dict
such as {"action_type": "mark_resolved"}.
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
from supportenv.catalog import ARTICLES, CATEGORIES, DEPARTMENTS, ISSUE_TYPE_IDS, PRIORITIES, REQUESTABLE_FIELDS
from supportenv.episode import Observation
from supportenv.errors import InvalidActionError
from supportenv.gym.backend import DEFAULT_SPLIT, DEFAULT_TASK, REMOTE_TIMEOUT_S, Session
from supportenv.tasks import get_task
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


def text_action_space() -> spaces.Dict:
    return spaces.Dict(
        {
            "kind": spaces.Discrete(len(ACTION_KINDS)),
            "category": spaces.Discrete(len(TEXT_ACTION_CHOICES["category"])),
            "priority": spaces.Discrete(len(TEXT_ACTION_CHOICES["priority"])),
            "issue_type": spaces.Discrete(len(TEXT_ACTION_CHOICES["issue_type"])),
            "fields": spaces.MultiBinary(len(REQUESTABLE_FIELDS)),
            "article": spaces.Discrete(len(TEXT_ACTION_CHOICES["article"])),
            "department": spaces.Discrete(len(TEXT_ACTION_CHOICES["department"])),
            "text": spaces.Text(MAX_ACTION_TEXT, min_length=0, charset=ACTION_CHARSET),
        }
    )


def encode_action(action: Action) -> dict[str, Any]:
    """The Dict-space form of a library action (its text is not shortened)."""
    return {
        "kind": ACTION_KINDS.index(action.kind),
        "category": TEXT_ACTION_CHOICES["category"].index(action.category),
        "priority": TEXT_ACTION_CHOICES["priority"].index(action.priority),
        "issue_type": TEXT_ACTION_CHOICES["issue_type"].index(action.issue_type),
        "fields": np.array([int(f in action.fields) for f in REQUESTABLE_FIELDS], dtype=np.int8),
        "article": TEXT_ACTION_CHOICES["article"].index(action.article_id),
        "department": TEXT_ACTION_CHOICES["department"].index(action.department),
        "text": action.text,
    }


def decode_action(action: Any) -> Action:
    """A library action from a Dict-space action (or an `Action`, or an action dict with
    "action_type"). Never raises: what cannot be read becomes an `invalid_action`; what is read
    but does not validate is turned into one by the session."""
    if isinstance(action, Action):
        return action
    try:
        if isinstance(action, Mapping) and ("action_type" in action):
            return parse(dict(action))
        kind = ACTION_KINDS[int(action["kind"])]
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
    ]
    text = to_charset("\n".join(head + turns + tail))
    dropped = 0
    while len(text) > max_chars and dropped < len(turns) - 2:
        dropped += 1
        kept = [*turns[:1], f"  ... {dropped} earlier turn(s) left out ...", *turns[1 + dropped :]]
        text = to_charset("\n".join(head + kept + tail))
    return text[:max_chars]


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
        self.action_space = text_action_space()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self._reset_session(seed, options)
        return render_observation(obs, self.max_observation_chars), info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        result, info = self._session.step(decode_action(action))
        text = render_observation(result.observation, self.max_observation_chars)
        return text, float(result.reward), bool(result.terminated), bool(result.truncated), info
