"""The episode: its state, the transition for all eight actions, and the observation.

`advance` (and `step`, which adds the observation) is a pure function of (scenario, state,
action) apart from updating `state` in place (callers that need the old state pass a copy).
Everything the next step needs lives in EpisodeState. Episodes are started and rebuilt from
their keys in `supportenv.replay`; grading happens afterwards, on the finished trajectory
(`supportenv.graders`), never inside a step.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from functools import cache, lru_cache
from typing import Any

from supportenv import casework, content, customer, figures
from supportenv.actions import ACTION_KINDS, INVALID_KIND, TOOL_KIND, Action
from supportenv.catalog import (
    ACTION_COSTS,
    ARTICLE_CATEGORY,
    ARTICLES_BY_ID,
    IDENTITY_FACT,
    ISSUE_TYPES_BY_ID,
    VERIFIED_CHANGE_ISSUES,
)
from supportenv.errors import EpisodeFinishedError, InvalidActionError
from supportenv.memo import cached_by_text
from supportenv.records import picklable
from supportenv.rewards import reward
from supportenv.solutions import (
    announcements,
    first_steps_said,
    puts_a_choice,
    sentences_of,
    waits_for_a_fact,
    without_fact_questions,
)
from supportenv.tasks import EXPERT_TASK_ID, get_task
from supportenv.text import is_polite, is_rude, judge, verdict
from supportenv.tools import (
    CHANGE,
    IDENTITY_PROOFS,
    OK,
    REFUSED,
    TOOLS_BY_NAME,
    Change,
    Desk,
    ToolCall,
    ToolResult,
    run_valid_call,
)
from supportenv.world import NEW_ADDRESS, TAKEOVER, Scenario, tokenize


@dataclass
class EpisodeState:
    task_id: str
    split: str
    seed: int
    episode_id: str
    sentiment: float
    patience: int
    step: int = 0
    category: str = ""
    issue_type: str = ""
    priority: str = ""
    first_category: str = ""
    first_issue_type: str = ""
    first_priority: str = ""
    classified_at: int = 0
    revealed: list[str] = field(default_factory=list)
    unknown_asks: int = 0
    repeated_asks: int = 0
    # Questions for facts the customer cannot give or the case does not need, by fact name.
    needless_asks: list[str] = field(default_factory=list)
    # Needed facts still missing when an answer was given (in the order first found missing).
    answered_without: list[str] = field(default_factory=list)
    # Issues that must be escalated whose safe first steps the agent has already given, and
    # the steps that gave them.
    interim_answers: list[str] = field(default_factory=list)
    interim_steps: int = 0
    repeated_fields: int = 0  # fields asked for again after the customer gave them
    courtesy_steps: int = 0  # messages carrying out an offer the customer accepted (not counted as slow)
    courtesy_cost: float = 0.0  # and what those cost
    solved_intents: list[str] = field(default_factory=list)
    responses: int = 0
    rude: int = 0
    polite: int = 0
    personalised: int = 0
    wrong_solutions: int = 0
    articles: list[str] = field(default_factory=list)
    department: str = ""
    transfers: int = 0
    escalated: bool = False
    escalations: int = 0
    callback: bool = False
    cost: float = 0.0
    violations: list[str] = field(default_factory=list)
    terminated: bool = False
    truncated: bool = False
    customer_left: bool = False
    rewards: list[float] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)
    # (speaker, text, step); speaker is "customer", "agent" or "system".
    history: list[tuple[str, str, int]] = field(default_factory=list)
    last_feedback: str = ""
    # The named parts of the last step's reward (rewards[-1]); empty before the first step.
    last_breakdown: tuple[tuple[str, float], ...] = ()
    # The help desk's tools (tasks that allow use_tool): whether the customer was verified, the
    # changes made to the records as (tool, target, value), and the last tool call's result.
    verified: bool = False
    changes: list[tuple[str, str, str]] = field(default_factory=list)
    tool_result: ToolResult | None = None
    refused_changes: int = 0  # changes policy refused (tools.REFUSED)
    changes_not_found: int = 0  # changes that named a record not on the account (tools.NOT_FOUND)
    pushed_back: bool = False  # a judgement family's customer pushed back on what the records show
    # The step at which the money taken wrongly that the customer never noticed was refunded (0: not yet).
    unnoticed_refunded_at: int = 0
    # The step the customer said whose the sign-in its locked account does not recognise was (0: not yet).
    sign_in_told_at: int = 0

    @property
    def desk(self) -> Desk:
        return Desk(self.verified, tuple(Change(*c) for c in self.changes))

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    @property
    def last_reward(self) -> float:
        """The last step's reward; 0 before the first step."""
        return self.rewards[-1] if self.rewards else 0.0

    @property
    def cumulative_reward(self) -> float:
        return rounded(sum(self.rewards, 0.0), 6)

    def to_dict(self) -> dict[str, Any]:
        # Fresh containers: the dict must never alias this state's lists.
        out = {f.name: (list(v) if isinstance(v := getattr(self, f.name), list) else v) for f in fields(self)}
        out["actions"] = [a.to_dict() for a in self.actions]
        out["history"] = [list(turn) for turn in self.history]
        out["last_breakdown"] = [list(part) for part in self.last_breakdown]
        out["changes"] = [list(c) for c in self.changes]
        out["tool_result"] = asdict(self.tool_result) if self.tool_result else None
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeState:
        data = dict(data)
        data["actions"] = [Action.from_dict(a) for a in data["actions"]]
        data["history"] = [tuple(turn) for turn in data["history"]]
        data["last_breakdown"] = tuple([(name, value) for name, value in data.get("last_breakdown", ())])
        data["changes"] = [tuple(c) for c in data.get("changes", ())]
        data["tool_result"] = ToolResult(**data["tool_result"]) if data.get("tool_result") else None
        return cls(**data)


@dataclass(frozen=True)
class Observation:
    ticket_id: str
    task_id: str
    customer_message: str
    history: tuple[tuple[str, str, int], ...]
    sentiment_label: str
    sentiment_score: float
    customer_tier: str
    customer_tenure_days: int
    customer_total_revenue: float
    category: str
    issue_type: str
    priority: str
    kb_matches: tuple[tuple[str, str, float], ...]  # (article_id, title, score)
    revealed_facts: tuple[tuple[str, str], ...]
    requestable_fields: tuple[str, ...]
    issue_types: tuple[str, ...]
    policy: tuple[str, ...]
    task_instructions: str
    step: int
    max_steps: int
    steps_left: int
    cost_so_far: float
    escalated: bool
    assigned_department: str
    callback_scheduled: bool
    last_action_feedback: str
    # The last step's reward and its named parts (StepResult.reward and .breakdown of that step).
    last_reward: float
    last_reward_breakdown: tuple[tuple[str, float], ...]
    # What the last step's tool call returned (tasks that allow use_tool); None after any other action.
    tool_result: ToolResult | None = None
    allowed_actions: tuple[str, ...] = ()  # the action kinds the task takes


@dataclass(frozen=True)
class StepResult:
    observation: Observation
    reward: float
    terminated: bool
    truncated: bool
    breakdown: tuple[tuple[str, float], ...]


@lru_cache(maxsize=4096)
def _round(value: float, digits: int) -> float:
    return round(value, digits)


def rounded(value: float, digits: int) -> float:
    """round(value, digits), cached: a float's round() converts it to decimal and back, which
    made it the costliest arithmetic of a step, and episodes see few distinct values. A zero is
    its own rounding (as the cache would not tell -0.0 from 0.0)."""
    return value if value == 0 else _round(value, digits)


def sentiment_label(score: float) -> str:
    if score <= -0.5:
        return "angry"
    if score < -0.2:  # a little below zero reads as neutral, as a person would say it
        return "frustrated"
    if score < 0.4:
        return "neutral"
    return "satisfied"


def solved_all(scenario: Scenario, state: EpisodeState) -> bool:
    """Every issue the agent must answer itself has been answered."""
    return all(i in state.solved_intents for i in scenario.expected.solvable)


def missing_facts(scenario: Scenario, state: EpisodeState, issues: list[str] | None = None) -> list[str]:
    """The facts this case needs (or, given `issues`, those issues need) that the customer
    has not given yet."""
    if issues is None:
        missing = [f for f in scenario.expected.facts if f not in state.revealed]
        return [f for f in missing if not _proven_otherwise(scenario, state, f)] if missing else missing
    needed = dict.fromkeys(f for i in issues for f in ISSUE_TYPES_BY_ID[i].required_facts)
    return [f for f in needed if f not in state.revealed]


def _proven_otherwise(scenario: Scenario, state: EpisodeState, fact: str) -> bool:
    """An identity proof the case needs only to verify the customer (no article asks for it) is
    not missing once the customer gave the other one: either verifies it (audit round 55: a card's
    last four digits verified a cancellation, yet the order id was held missing)."""
    if scenario.impostor and fact == NEW_ADDRESS:
        return True  # (where nothing is sent: an impostor's new address is not missing, though asking is no waste)
    if fact not in IDENTITY_PROOFS or scenario.task_id != EXPERT_TASK_ID or scenario.impostor:
        return False  # (an impostor's first proof did not match: the other is asked for too)
    if any(fact in issue.required_facts for issue in scenario.intents):
        return False
    return any(proof in state.revealed for proof in IDENTITY_PROOFS)


def unsolved(scenario: Scenario, state: EpisodeState) -> list[str]:
    """The issues the agent must answer itself that are still unanswered."""
    return [i for i in scenario.expected.solvable if i not in state.solved_intents]


def offered_article_fits(scenario: Scenario, article_id: str) -> bool:
    """An article the agent may send once the customer said yes to an offer: one of the ticket's
    categories (the guide offered on the side, say password tips for a locked account)."""
    return ARTICLE_CATEGORY.get(article_id) in {issue.category for issue in scenario.intents}


def open_issues(scenario: Scenario, state: EpisodeState) -> list[str]:
    """The issues still open: unanswered ones, and those to escalate until the escalation (as the
    customer knows them: not a takeover on the records it has not heard of)."""
    pending = (
        []
        if state.escalated
        else [i for i in scenario.expected.escalate_intents if not _unheard_of(scenario, state, i)]
    )
    return [*unsolved(scenario, state), *pending]


def _unheard_of(scenario: Scenario, state: EpisodeState, issue: str) -> bool:
    """The issue is one the customer never raised nor heard of: the takeover of a sign-in on its records
    that it has not been asked about."""
    return issue == TAKEOVER and scenario.unknown_sign_in == "stranger" and not state.sign_in_told_at


def start_state(scenario: Scenario, episode_id: str = "") -> EpisodeState:
    """The state before anyone acted: the customer's opening message, its mood and patience.
    Facts whose values the customer already wrote count as given."""
    opening = scenario.opening_message
    return EpisodeState(
        task_id=scenario.task_id,
        split=scenario.split,
        seed=scenario.seed,
        episode_id=episode_id or f"{scenario.task_id}:{scenario.split}:{scenario.seed}",
        sentiment=scenario.initial_sentiment,
        patience=scenario.patience,
        history=[("customer", opening, 0)],
        revealed=[name for name, value in scenario.facts_by_name.items() if value in opening],
    )


# Field names that do not read as words once their underscores are spaces.
_FACT_WORDS = {"card_last_four": "card's last four digits"}


def fact_label(name: str) -> str:
    """A fact's name as the customer and the feedback say it: "order_id" -> "order id"."""
    return _FACT_WORDS.get(name) or name.replace("_", " ")


def last_customer_message(history: list[tuple[str, str, int]]) -> str:
    for speaker, text, _ in reversed(history):
        if speaker == "customer":
            return text
    raise IndexError("the history has no customer message")


def _said(state: EpisodeState) -> tuple[str, ...]:
    """What the customer has written so far in the episode."""
    return tuple(text for speaker, text, _ in state.history if speaker == "customer")


def _said_before(state: EpisodeState, *kinds: str) -> bool:
    """Whether the customer has already written a reply of one of these kinds (one it says once)."""
    said = _said(state)
    return any(customer.wrote(line, text) for kind in kinds for line in content.REACTIONS[kind] for text in said)


def _react(kind: str, scenario: Scenario, state: EpisodeState, **words: str) -> str:
    """The customer's reply of `kind` at this step, not one it has already written."""
    return customer.react(kind, scenario, state.step, _said(state), **words)


def observe(scenario: Scenario, state: EpisodeState) -> Observation:
    """What the agent sees now: the scenario's briefing and the episode so far."""
    brief = scenario.briefing
    return Observation(
        ticket_id=brief.ticket_id,
        task_id=brief.task_id,
        customer_message=last_customer_message(state.history),
        history=tuple(state.history),
        sentiment_label=sentiment_label(state.sentiment),
        sentiment_score=rounded(state.sentiment, 3),
        customer_tier=brief.customer_tier,
        customer_tenure_days=brief.customer_tenure_days,
        customer_total_revenue=brief.customer_total_revenue,
        category=state.category,
        issue_type=state.issue_type,
        priority=state.priority,
        kb_matches=scenario.suggestions(state.category, state.issue_type),
        revealed_facts=given_facts(scenario, state),
        requestable_fields=brief.requestable_fields,
        issue_types=brief.issue_types,
        policy=brief.policy,
        task_instructions=brief.task_instructions,
        step=state.step,
        max_steps=brief.max_steps,
        steps_left=brief.max_steps - state.step,
        cost_so_far=state.cost,
        escalated=state.escalated,
        assigned_department=state.department,
        callback_scheduled=state.callback,
        last_action_feedback=state.last_feedback,
        last_reward=state.last_reward,
        last_reward_breakdown=state.last_breakdown,
        tool_result=state.tool_result,
        allowed_actions=brief.allowed_actions,
    )


@lru_cache(maxsize=512)  # few (name, times) pairs occur
def _reward_part(name: str, times: int) -> float:
    return round(reward(name) * times, 6)


class _Turn:
    """Accumulates one step's reward parts, mood changes and replies."""

    __slots__ = ("notes", "parts", "patience", "sentiment")

    def __init__(self) -> None:
        self.parts: list[tuple[str, float]] = []
        self.sentiment = 0.0
        self.patience = 0
        self.notes: list[str] = []

    def add(self, name: str, times: int = 1) -> None:
        # (one part per name, so that a breakdown read as a dict still adds up to the reward)
        for index, (part, value) in enumerate(self.parts):
            if part == name:
                self.parts[index] = (name, rounded(value + _reward_part(name, times), 6))
                return
        self.parts.append((name, _reward_part(name, times)))

    def charged(self, name: str) -> bool:
        return any(part == name for part, _ in self.parts)

    def mood(self, sentiment: float, patience: int = 0) -> None:
        self.sentiment += sentiment
        self.patience += patience


def _sentiment_after(state: EpisodeState, turn: _Turn) -> float:
    """The sentiment this step leaves, as `advance` stores it (rounded, so that 0.6 - 0.2 is 0.4)."""
    return max(-1.0, min(1.0, rounded(state.sentiment + turn.sentiment, 6)))


def _mood_after(state: EpisodeState, turn: _Turn) -> str:
    """The label the customer shows after this step's changes so far: what its reply's words fit."""
    return sentiment_label(_sentiment_after(state, turn))


def step(scenario: Scenario, state: EpisodeState, action: Action) -> StepResult:
    """Apply one (validated) action. Raises EpisodeFinishedError after the end."""
    total, parts = advance(scenario, state, action)
    return StepResult(
        observation=observe(scenario, state),
        reward=total,
        terminated=state.terminated,
        truncated=state.truncated,
        breakdown=parts,
    )


def advance(scenario: Scenario, state: EpisodeState, action: Action) -> tuple[float, tuple[tuple[str, float], ...]]:
    """`step` without building the observation: the step's reward and its parts. For
    callers that need no observation (a replay) or encode their own (the gRPC service)."""
    if state.done:
        why = "terminated (ticket marked resolved)" if state.terminated else "truncated"
        raise EpisodeFinishedError(f"episode {state.episode_id} already ended at step {state.step}: {why}; call Reset")
    kind = action.kind
    if kind not in _allowed_kinds(state.task_id):
        allowed = ", ".join(get_task(state.task_id).allowed_actions)
        raise InvalidActionError(f"task {state.task_id} does not take {kind}; its actions: {allowed}")
    earlier_same = state.actions.count(action)
    state.step += 1
    state.actions.append(action)
    turn = _Turn()
    state.tool_result = None
    reply = _HANDLERS[kind](scenario, state, action, turn)
    if state.task_id == "issue_classification" and kind in _OFF_TRIAGE:
        # The triage task's one objective: its step rewards pay for nothing its grade does not.
        turn.parts = [*(p for p in turn.parts if p[0] == "rude_language"), ("off_task", _reward_part("off_task", 1))]
        turn.notes = ["this task is triage only: classify the ticket, then mark it resolved"]
    # An unreadable output is charged as invalid once, however often it recurs.
    if earlier_same and kind not in ("mark_resolved", INVALID_KIND):
        turn.add("repeat_action", earlier_same)
    if state.task_id == EXPERT_TASK_ID and action.text and kind in _READ_BY_THE_CUSTOMER:
        _check_promises(state, action.text, turn)
    if action.text and not turn.charged("rude_language") and is_rude(action.text):
        turn.add("rude_language")
        turn.mood(-0.5, -2)
        state.rude += 1
        if reply and kind in ("escalate_to_human", "request_callback"):
            reply = _react("rude", scenario, state)  # it answers the insult, not the hand-over
    state.cost += ACTION_COSTS.get(kind, 0.0)
    state.sentiment = _sentiment_after(state, turn)
    state.patience += turn.patience
    if state.patience <= 0 and not state.terminated:
        state.truncated = state.customer_left = True
        turn.add("customer_left")
        reply = _react("gave_up", scenario, state)
    if state.step >= scenario.briefing.max_steps and not state.terminated:
        state.truncated = True
    if reply:
        state.history.append(("customer", customer.without_repeated_thanks(reply), state.step))
    parts = turn.parts
    # Each part is already rounded, so a one-part step's reward is that part as it is.
    total = parts[0][1] if len(parts) == 1 else rounded(sum([value for _, value in parts], 0.0), 6)
    state.rewards.append(total)
    state.last_feedback = "; ".join(turn.notes)
    state.last_breakdown = tuple(parts)
    return total, state.last_breakdown


# The actions whose text the customer reads (a department's note and the closing summary are internal).
_READ_BY_THE_CUSTOMER = ("respond_with_solution", "ask_for_more_info", "escalate_to_human", "request_callback")


def _check_promises(state: EpisodeState, text: str, turn: _Turn) -> None:
    """The expert desk promising what no tool does (a carrier trace, store credit), charged once an episode:
    the desk rules forbid it, and the customer would wait for what never comes."""
    promised = casework.promises_untooled(text)
    if promised and "promised_untooled" not in state.violations:
        turn.add("promise_untooled")
        state.violations.append("promised_untooled")
        turn.notes.append(f"promised what no desk tool does: {', '.join(promised)}")


@cache  # one entry per task
def _allowed_kinds(task_id: str) -> frozenset[str]:
    return frozenset((*get_task(task_id).allowed_actions, INVALID_KIND))


def _classify(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    triage = " / ".join([p for p in (action.category, action.issue_type, action.priority) if p])
    state.history.append(("system", f"Ticket classified: {triage}", state.step))
    exp = scenario.expected
    if state.category:
        turn.add("classify_repeat")
        turn.notes.append("the ticket was already classified")
    else:
        state.first_category, state.first_issue_type = action.category, action.issue_type
        state.first_priority, state.classified_at = action.priority, state.step
        if action.category == exp.category:
            turn.add("classify_correct")
        else:
            turn.add("classify_wrong")
            turn.notes.append("that category does not fit the ticket")
        if action.issue_type and action.issue_type == exp.issue_type:
            turn.add("issue_type_correct")
        # (as the grade: a priority is judged for the right category only)
        if action.priority and action.priority == exp.priority and action.category == exp.category:
            turn.add("priority_correct")
        elif action.category == exp.category:
            turn.notes.append(
                "that priority is not the policy's for what the customer says of how much the problem holds them up"
            )
    state.category = action.category
    state.issue_type = action.issue_type or state.issue_type
    state.priority = action.priority or state.priority
    return ""


def _ask(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    # (a question naming the order id given and the one meant is owned up to, as an answer naming both is,
    # beside whatever else it asks: round 79's "Is ORD-2 the order? ... Was that sign-in yours?")
    # (not where it asks for the order id again: the customer's answer gives the one meant, in its own words)
    asks_again = "order_id" in action.fields or "order_id" in customer.fields_in_question(action.text or "")
    mixup = "" if asks_again or state.task_id != EXPERT_TASK_ID else _mixup_acknowledged(scenario, state, action.text)
    reply = _asked(scenario, state, action, turn)
    return f"{mixup} {reply}".strip() if mixup else reply


def _asked(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    if _answers_in_a_question(scenario, state, action.text):
        # A question whose words also give an open issue's solution ("Could you send the order
        # number? And yes, express delivery is available ..."): the customer reads the answer, so
        # it is applied as one, and the fields asked are asked as ever (none, for a question whose
        # sign-in it was: the customer says, first).
        asking = tuple(f for f in action.fields if f not in state.revealed and f in scenario.facts_by_name)
        reply = _respond(scenario, state, action, turn, asking)
        sign_in, action = _sign_in_asked(scenario, state, action)
        if sign_in and not action.fields:
            return f"{sign_in} {reply}".strip()
        return f"{sign_in} {_gather(scenario, state, action, turn)} {reply}".strip()
    question = action.text or "Could you share your " + ", ".join(fact_label(f) for f in action.fields) + "?"
    state.history.append(("agent", question, state.step))
    if scenario.impostor and action.text:
        _check_the_impostors_words(scenario, state, action.text, turn)
    if action.text:  # the customer reads the agent's own words: judged for tone like any reply
        state.responses += 1
        state.polite += is_polite(action.text)
    sign_in, action = _sign_in_asked(scenario, state, action)
    if sign_in and not action.fields:
        turn.notes.append("a question about a sign-in on the account: only the customer knows whose it was")
        return sign_in
    return f"{sign_in} {_gather(scenario, state, action, turn)}".strip()


def _sign_in_asked(scenario: Scenario, state: EpisodeState, action: Action) -> tuple[str, Action]:
    """An ask's question of whose a sign-in was, answered first (_sign_in_words), and the ask without it, so
    that the facts it asks for are given as ever and the question is not answered twice."""
    sign_in = _sign_in_words(scenario, state, action.text)
    if not sign_in:
        return "", action
    return sign_in, action._replace(text=customer.without_sign_in_questions(action.text, sign_in_names(scenario)))


def _answers_in_a_question(scenario: Scenario, state: EpisodeState, text: str) -> bool:
    """Whether a question's words say the solution of an open issue that needs no fact still
    missing (one whose facts are still to come is the reason for asking: "... so that I can
    refund the duplicate charge")."""
    if not text or not state.category:
        return False
    # (its questions for facts are no solution: "could you tell me your device model and app
    # version, for the crash?" fixes nothing, whatever an article's step says of them)
    judged = verdict(without_fact_questions(text), scenario.intent_keys, "")
    ready = [i for i in judged.solves if i in unsolved(scenario, state) and not missing_facts(scenario, state, [i])]
    return bool(ready) and not judged.stuffed


def _gather(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    """The fields an ask names (or its question does), and the customer's answer with them."""
    if is_check_in(action):
        # "Is there anything else I can help you with?" is a courtesy, not a question for facts:
        # the customer says what is still open, if anything (the step still counts in efficiency).
        turn.notes.append("a check-in: it asks for no fact")
        return _check_in_reply(scenario, state)
    got = customer.answer(
        scenario, tuple(state.revealed), action.fields, action.text, state.step, correction_due(scenario, state)
    )
    wanted = scenario.expected.facts
    needed = [f for f in got.revealed if f in wanted]
    # What verification takes is never asked in vain where a change needing it may be due (the
    # records, not yet read, decide whether it is).
    free = _verification_fields(scenario)
    unneeded = [f for f in got.revealed if f not in wanted and f not in free]
    unknown = [f for f in got.unknown if f not in free]
    state.revealed.extend(got.revealed)
    # What became of each field asked for, so that the agent learns what the case needs.
    turn.notes.extend(f"{fact_label(f)}: given" for f in needed)
    turn.notes.extend(f"{fact_label(f)}: given, but this ticket does not need it" for f in unneeded)
    turn.notes.extend(
        f"{fact_label(f)}: given, for verification if a change needs it"
        for f in got.revealed
        if f not in wanted and f in free
    )
    turn.notes.extend(f"{fact_label(f)}: given again, corrected" for f in got.corrected)
    turn.notes.extend(f"{fact_label(f)}: given again, the same (the customer checked it)" for f in got.rechecked)
    turn.notes.extend(f"{fact_label(f)}: already given" for f in got.repeated)
    turn.notes.extend(f"{fact_label(f)}: the customer cannot give it" for f in got.unknown)
    if needed or got.corrected:
        turn.add("ask_new_fact", len(needed) + len(got.corrected))
    if got.repeated:
        state.repeated_asks += 1
        state.repeated_fields += len(got.repeated)
        turn.add("ask_repeat")
        turn.mood(-0.15, -1)
    pointless = len(unknown) + len(unneeded)
    if pointless or not (got.revealed or got.repeated or got.unknown or got.corrected or got.rechecked):
        state.unknown_asks += 1
        state.needless_asks.extend([*unknown, *unneeded] or [NO_FACT_ASKED])
        turn.add("ask_irrelevant", max(pointless, 1))
        turn.mood(-0.1, -1)
        if not (got.revealed or got.repeated or got.unknown or got.corrected or got.rechecked):
            # (whatever the customer says to it: "which new email would you like?" gets an address,
            # but no fact the case needs; ask for facts by field name)
            turn.notes.append("that question asked for no fact the case needs")
    return got.reply


def _verification_fields(scenario: Scenario) -> frozenset[str]:
    """The fields verify_identity takes, on an expert ticket with an issue whose change may need it
    (a late parcel may be lost and reshipped, a return chased may never have been refunded: the
    records, not yet read, decide; audit round 57)."""
    if scenario.task_id != EXPERT_TASK_ID:
        return frozenset()
    if not any(i.issue_id in VERIFIED_CHANGE_ISSUES or i.issue_id in _MAY_NEED_A_CHANGE for i in scenario.intents):
        return frozenset()
    return frozenset((IDENTITY_FACT, *IDENTITY_PROOFS))


# Issues answered from the records whose records may yet call for a verified change (catalog.CHANGE_FAMILIES).
_MAY_NEED_A_CHANGE = ("refund_status", "delayed_delivery")

# A message that only checks in: short, and a check-in question.
_CHECK_IN_WORDS = 20


@cached_by_text
def _is_a_check_in(text: str) -> bool:
    return len(text.split()) <= _CHECK_IN_WORDS and bool(_CHECK_IN_RE.search(text))


def is_check_in(action: Action) -> bool:
    """Whether the action only checks in ("Is there anything else I can help with?"): a question
    naming no fact, or a short answer that is nothing but such a question (one that also says a
    solution is read as that answer, not as a check-in)."""
    if action.kind == "ask_for_more_info":
        return (
            not action.fields
            and bool(_CHECK_IN_RE.search(action.text))
            and not customer.fields_in_question(action.text)
        )
    return action.kind == "respond_with_solution" and _is_a_check_in(action.text)


def _check_in_reply(scenario: Scenario, state: EpisodeState) -> str:
    """The customer's answer to a check-in: what is still open, or that it is all done."""
    left = open_issues(scenario, state)
    if left:
        return _react("check_in_open", scenario, state, remaining=customer.issue_words(left))
    return _react("check_in_done", scenario, state)


def _respond_and_answer_questions(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    """An answer, and the customer's reply to it: facts an answer's question asks for come first,
    as a customer answers a direct question (they count as given, without an ask's reward). A question of
    whose a sign-in was is answered on its own (_sign_in_words), not read for facts ("was the login yours?")."""
    unasked = customer.without_sign_in_questions(action.text, sign_in_names(scenario))
    question = _last_question(unasked)
    asked = customer.fields_in_question(question) if question and not _OFFER_RE.search(question) else ()
    # ... and so does a plan that waits for one ("Once you send me your order ID, I'll ...").
    waiting_on = [s for s in sentences_of(unasked) if waits_for_a_fact(s)]
    asked = tuple(dict.fromkeys((*asked, *(f for s in waiting_on for f in customer.fields_named(s)))))
    # A fact already given, named in an answer's question ("could you check those for the card
    # ending 2227?"), is the agent using it, not asking again; and one the customer has none of
    # ("log in with your new address?" about a new email) is an instruction, not a question.
    due = correction_due(scenario, state)  # (the order id, asked again where the customer gave an earlier one's)
    again = ("order_id", *(("card_last_four",) if scenario.impostor else ())) if due or scenario.impostor else ()
    asked = tuple(f for f in asked if (f not in state.revealed or f in again) and f in scenario.facts_by_name)
    if due and "order_id" in state.revealed and scenario.facts_by_name["order_id"] in question and not asked:
        asked = ("order_id",)  # ("Is ORD-1 the one you mean? It was placed in March.")
    reply = _respond(scenario, state, action, turn, asked)
    sign_in = _sign_in_words(scenario, state, action.text)
    if sign_in:  # (what only the customer knows comes first, as a customer answers a direct question)
        reply = f"{sign_in} {reply}".strip()
    mixup = _mixup_acknowledged(scenario, state, action.text)
    if mixup:
        reply = f"{mixup} {reply}".strip()
    card = _card_corrected(scenario, state, action.text)
    if card:
        reply = f"{card} {reply}".strip()
    if asked:
        got = customer.answer(scenario, tuple(state.revealed), asked, question, state.step, due)
        state.revealed.extend(got.revealed)
        turn.notes.extend(f"{fact_label(f)}: given (asked in your answer)" for f in got.revealed)
        turn.notes.extend(f"{fact_label(f)}: given again, corrected" for f in got.corrected)
        turn.notes.extend(f"{fact_label(f)}: given again, the same (the customer checked it)" for f in got.rechecked)
        first = got.reply
    else:
        # Any other direct question (a choice, an open one) is answered too, never passed over.
        first = _reply_to_question(scenario, state, turn, question)
        if _question_kind(question) == "report":  # "I'll let you know how it goes" follows the reply
            return f"{reply} {first}".strip()
    if not first:
        return reply
    if reply.startswith(customer.YES_TO_OFFER):  # the yes to an offer comes first, so the next step knows it
        return f"{customer.YES_TO_OFFER} {first} {reply.removeprefix(customer.YES_TO_OFFER).lstrip()}".strip()
    return f"{first} {reply}".strip()


# A request to report back on what the answer gave ("Could you let me know whether that helps?").
_REPORT_RE = re.compile(r"\blet (?:me|us) know (?:if|whether|how)\b", re.IGNORECASE)
# An open question ("When did this start?", "Could you tell me what you see?"), and those the reply
# itself answers: what the customer thinks of the answer ("How does that sound?"), how else to help.
_OPEN_RE = re.compile(
    r"^(?:\w+,\s+)?(?:what|when|where|why|how|who|which|whose)\b|"
    r"\b(?:tell me|know|say|explain) (?:what|when|where|why|how|who|which|whether|if)\b",
    re.IGNORECASE,
)
_LEFT_TO_THE_REPLY_RE = re.compile(
    r"\b(?:sound|sounds|work for you|suit you|okay with you|ok with you|(?:can|may|could) (?:i|we) (?:\w+ )?"
    r"(?:help|assist))\b",
    re.IGNORECASE,
)


@cached_by_text
def _question_kind(question: str) -> str:
    """What an answer's last question asks of the customer beyond facts, offers and checks of
    what it knows (those have their own replies): "choice", "report" (to tell how it goes),
    "open" (which it can answer only from what it wrote), or "" (a check-in, a request to do or
    send something, a question for someone else, or no question)."""
    q = question.strip()
    if not q.endswith("?") or _CHECK_IN_RE.search(q) or _SOMEONE_ELSE_RE.search(q) or _asks_for_photos(q):
        return ""
    if customer.asks_whose_sign_in(q):
        return ""  # (answered by _sign_in_words, with what only the customer knows)
    if customer.fields_in_question(q):
        return ""
    if puts_a_choice(q):
        return "choice"
    if _REPORT_RE.search(q):
        return "report"
    return "open" if _OPEN_RE.search(q) and not _LEFT_TO_THE_REPLY_RE.search(q) else ""


def _reply_to_question(scenario: Scenario, state: EpisodeState, turn: _Turn, question: str) -> str:
    """The customer's answer to an answer's question that is no request for facts: its choice (the
    option it asked for, where the choice names it), a promise to report back, or that it knows
    no more than it wrote. Nothing for an answer it rejects (a rude, irrelevant or early one)."""
    if any(turn.charged(p) for p in ("rude_language", "respond_irrelevant", "respond_before_classify")):
        return ""
    kind = _question_kind(question)
    if not kind:
        return ""
    if kind == "choice" and _accepted_an_offer(state):
        # Chosen already: said again, and no new yes (so that one choice frees one step, not a chain).
        kind = "choice_again"
    elif kind == "choice":
        kind = customer.choice_kind(scenario, question)
    return _react("question_" + kind, scenario, state)


def is_clarifying_question(action: Action, names: tuple[str, ...] | None = None) -> bool:
    """Whether an answer is a short clarifying question: one that puts a choice to the customer or
    asks it something open, for no fact (a reasonable step, answered, never an irrelevant answer)."""
    if action.kind != "respond_with_solution" or _announces_a_hand_over(action.text):
        return False  # (a hand-over is the hand-over's to answer)
    if names is not None and customer.asks_whose_sign_in(action.text, names):
        # (on the expert task, whatever its length: it first tells the customer what the records show of it)
        return True
    return len(action.text.split()) <= _CLARIFYING_WORDS and _question_kind(_last_question(action.text)) in (
        "choice",
        "open",
    )


# A clarifying question this long at most: beyond, the answer is read as one.
_CLARIFYING_WORDS = 40


def _respond(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn, asking: tuple[str, ...] = ()) -> str:
    """An answer; `asking` are the facts its question asks for (the customer gives them with its reply)."""
    state.history.append(("agent", action.text, state.step))
    state.responses += 1
    exp = scenario.expected
    values = [value for _, value in given_facts(scenario, state)]
    judged = judge(action.text, scenario.intent_keys, action.article_id, values)
    tone = "rude" if judged.rude else None
    if judged.rude:
        state.rude += 1
        turn.add("rude_language")
        turn.mood(-0.5, -2)
    elif judged.polite:
        state.polite += 1
        turn.add("politeness")
        turn.mood(0.05)
    if judged.wrong_solutions and not (_accepted_an_offer(state) and not judged.solves):
        # (A guide the customer just said yes to may be another issue's: it was asked for.)
        state.wrong_solutions += judged.wrong_solutions
    if not state.category:
        turn.add("respond_before_classify")
        turn.notes.append("classify the ticket before answering")
        return _react(tone or "unhelpful", scenario, state, issue=customer.issue_words([exp.issue_type]))
    if scenario.impostor:
        return _answer_an_impostor(scenario, state, action, turn, tone, asking)
    newly = [i for i in judged.solves if i in exp.solvable and i not in state.solved_intents]
    if state.task_id == EXPERT_TASK_ID:
        newly += _told_from_the_records(scenario, state, action.text, newly)
    noticed = _tells_the_unnoticed_refund(scenario, state, action.text)
    if state.task_id == EXPERT_TASK_ID and casework.is_mistaken(scenario, exp.issue_type):
        doubted_before = state.pushed_back
        newly, reply = _weigh_the_claim(scenario, state, action.text, newly, turn)
        if reply and tone:
            return _react(tone, scenario, state)
        if reply:
            _credit_first_steps(scenario, state, action.text, judged.solves, turn)
        if reply and state.pushed_back and not doubted_before and judged.personalised:
            # (the right answer the customer doubts is paid as one it takes in: its own facts too; round 79)
            state.personalised += 1
            turn.add("personalised")
        if reply and noticed:
            # (the news of the refund taken in first, doubt or not: audit round 60; then what the doubt is of, so
            # that it does not read as a doubt of the refund: audit round 72)
            taken_in = _refund_taken_in(scenario, state, turn)
            return f"{taken_in} As for {customer.issue_words([exp.issue_type])}: {reply[0].lower()}{reply[1:]}"
        if reply:
            return reply
    if asking and newly:
        # An issue named only in the question that asks for its facts ("For the refund, could you send
        # the order id and the amount paid?") is what the question is about, not an early answer.
        # (in an ask, every issue whose facts it asks for is what it asks about; and an issue the
        # words outside its questions do not solve is only asked about, whichever of its facts it asks)
        answered = (
            ()
            if action.kind == "ask_for_more_info"
            else verdict(without_fact_questions(action.text), scenario.intent_keys, action.article_id).solves
        )
        asked_about = [i for i in newly if i not in answered and set(missing_facts(scenario, state, [i])) & set(asking)]
        newly = [i for i in newly if i not in asked_about]
        if asked_about and not newly:
            titles = ", ".join(ISSUE_TYPES_BY_ID[i].title.lower() for i in asked_about)
            turn.notes.append(f"that asks for what the {titles} needs: answer once it is in")
            return _react(tone, scenario, state) if tone else ""
    if not newly and noticed and not tone:
        # Telling the customer of the refund of money taken wrongly that it never noticed: news to it, not an
        # answer that says nothing (the grade's communication weighs it).
        left = unsolved(scenario, state)
        reaction = _refund_taken_in(scenario, state, turn)
        if not left:
            return reaction
        return f"{reaction} {_react('still_open', scenario, state, remaining=customer.issue_words(left))}"
    if not newly:
        return _respond_without_solving(
            scenario, state, action, turn, judged.solves, tone, judged.stuffed, judged.wrong_solutions
        )
    missing = missing_facts(scenario, state, newly)
    blocked = ""  # what the customer says of the issues the answer could not be applied to
    held_up: list[str] = []
    if missing:
        # Not applied: the fix needs facts the agent never asked for, and the customer says so.
        turn.add("respond_missing_facts")
        turn.notes.append("answered before gathering what the case needs: " + ", ".join(map(fact_label, missing)))
        state.answered_without.extend(f for f in missing if f not in state.answered_without)
        _check_identity(scenario, state)
        turn.mood(-0.1, -1)
        # An answer to several issues still solves those whose facts are in.
        held_up = [i for i in newly if missing_facts(scenario, state, [i])]
        # (a fact its question asks for the customer gives with this reply, and does not ask after)
        unasked = [f for f in missing if f not in asking]
        if unasked or tone:
            words = customer.issue_words(held_up)
            fact = fact_label((unasked or missing)[0])
            blocked = _react(tone or "missing_facts", scenario, state, fact=fact, issue=words)
        newly = [i for i in newly if i not in held_up]
        if not newly:
            return blocked
    if state.task_id == EXPERT_TASK_ID and not casework.told_of_records(scenario).isdisjoint(newly):
        early = _told_before_done(scenario, state, newly)
        if early:
            # Told it is done while the records do not show it: not applied, and the customer checks.
            turn.add("respond_before_change")
            titles = ", ".join(ISSUE_TYPES_BY_ID[i].title.lower() for i in early)
            turn.notes.append(f"the records do not show the change for the {titles} yet: make it, then tell them")
            turn.mood(-0.1, -1)
            newly = [i for i in newly if i not in early]
            if not newly:
                reaction = _react(tone or "not_done_yet", scenario, state, issue=customer.issue_words(early))
                return f"{reaction} {blocked}" if blocked else reaction
        left_out = _left_out(scenario, action.text, newly)
        if left_out:
            turn.add("told_partly")
            turn.notes.append("say " + " and ".join(left_out))
    # (a claim the customer doubted was paid half when first told right, _weigh_the_claim, and half now)
    paid = [i for i in newly if not (state.pushed_back and i == scenario.intents[0].issue_id)]
    if paid:
        turn.add("respond_after_classify", len(paid))
    if len(paid) < len(newly):
        turn.add("claim_accepted")
        turn.notes.append("the customer accepts what the records show now: that issue is answered")
    if judged.wrong_solutions and _cites_another_article(scenario, action.article_id):
        # A right answer is charged only for its citation (text.verdict); one settled by telling the
        # records may name the fixes it tells (a duplicate refunded, a parcel sent again: audit round 60).
        turn.add("respond_wrong_citation")
        turn.notes.append(f"{action.article_id} is not the article of any issue on this ticket")
    if judged.personalised:
        state.personalised += 1
        turn.add("personalised")
    state.solved_intents.extend(newly)
    left = unsolved(scenario, state)
    # Escalations not yet begun, and the safe first steps of one this answer gives besides:
    # credited as when given on their own (the same words earn the same in one message or two).
    # (not a takeover on the records the customer has not heard of, nor one this answer first tells it of:
    # it says whose the sign-in was, and the hand-over comes next; audit round 67)
    escalations = (
        []
        if state.escalated
        else [i for i in exp.escalate_intents if i not in state.interim_answers and not _unheard_of(scenario, state, i)]
    )
    first_steps = _credit_first_steps(scenario, state, action.text, judged.solves, turn)
    turn.mood(0.25 if left else 0.5, 1)
    if tone:
        return _react(tone, scenario, state)
    # What is still open for the customer: unanswered issues, and escalations not yet begun.
    waiting = left + escalations
    photos = _asks_for_photos(action.text)
    if waiting:
        # "Thanks, but I still need help with ..." is not a satisfied customer's line.
        turn.sentiment = min(turn.sentiment, _STILL_WAITING_MOOD - state.sentiment)
        # What is left only waits for a hand-over: the customer starts on the first steps this
        # answer gave for it (and waits for the specialists too, if the answer says they take it
        # over), or waits for the hand-over it announces.
        only_handovers = not set(waiting) & set(left)
        started = only_handovers and set(waiting) <= set(first_steps)
        announced = only_handovers and _announces_a_hand_over(action.text)
        # ... and an answer that asks for facts (the customer gives them with this reply: `asking`)
        # has them given, with no "go ahead" to an offer never made; one that says it comes to
        # what is left next is let go on.
        coming = _says_it_comes_to_the_rest(action.text)
        # ... and what is left only had an article sent: the customer says it did not tell them what to do.
        only_read = set(waiting) <= {i for i in left if ISSUE_TYPES_BY_ID[i].article_id in state.articles}
        kind = (
            # (what is left is what the answer tried without its facts: the customer says so, after)
            "partly_solved_held_up"
            if blocked and set(waiting) <= set(held_up)
            else ("partly_solved_first_steps_handover" if announced else "partly_solved_first_steps")
            if started
            else "partly_solved_handover"
            if announced
            else "partly_solved_facts_given"
            if asking
            else "partly_solved_next"
            if coming
            else "partly_solved_after_article"
            if only_read
            else "partly_solved"
        )
        claim = exp.issue_type if casework.is_mistaken(scenario, exp.issue_type) else ""
        others = [i for i in newly if i != claim]
        if claim in newly and not others:
            # (what the records show, taken in, in its own words: not "that helps with changing my
            # delivery address" of an address the records say can no longer change; audit round 56)
            accepted = _react(f"accepts_{scenario.family}", scenario, state)
            reply = f"{accepted} {_react('still_open', scenario, state, remaining=customer.issue_words(waiting))}"
        else:
            reply = _react(
                kind + ("_photos" if photos else ""),
                scenario,
                state,
                issue=customer.issue_words(others),
                remaining=customer.issue_words(waiting),
            )
            if claim in newly:
                reply = f"{_react(f'accepts_{scenario.family}', scenario, state)} {reply}"
    elif casework.is_mistaken(scenario, exp.issue_type) and exp.issue_type in newly:
        # (a judgement family's customer takes in what the records show, in its own words, and thanks for the
        # rest the answer settled with it: audit rounds 66-69 heard only the first)
        reply = _react(f"accepts_{scenario.family}", scenario, state)
        rest = [i for i in newly if i != exp.issue_type]
        if rest:
            # (after taking in that its claim was not borne out, no glad "Perfect, that's clear!": round 73)
            mood = _not_glad(_mood_after(state, turn))
            settled = customer.solved(
                scenario, state.step, rest, mood, photos, _says_it_was_done(action.text), _said(state),
                all_done=not _takeover_pending(scenario, state, action.text), news=_news(scenario),
            )  # fmt: skip
            reply = customer.without_repeated_thanks(f"{reply} {settled}")
    else:
        pending = _takeover_pending(scenario, state, action.text)
        mood = _not_glad(_mood_after(state, turn)) if pending else _mood_after(state, turn)  # (no "Great, thanks!")
        reply = customer.solved(
            scenario, state.step, newly, mood, photos, _says_it_was_done(action.text), _said(state),
            all_done=not pending, news=_news(scenario),
        )  # fmt: skip
    if _slower_than_needed(scenario, state, newly, action.text):
        # (after the thanks, before what it asks next: "What about the suspicious activity on my account?")
        thanks, question, asks = reply.partition(next((s for s in sentences_of(reply) if "?" in s), "\0"))
        remark = _react("refund_slower_than_needed", scenario, state)
        reply = f"{thanks.rstrip()} {remark} {question}{asks}".strip()
    # An answer that offers something (wherever the offer stands: a question for facts may
    # follow it) or asks for a confirmation gets its yes first.
    # (no "Yes, that's right." to "... a sign-in from York. Was that you?": whose it was, the customer says)
    asks_whose = customer.asks_whose_sign_in(action.text, sign_in_names(scenario))
    yes = (
        customer.YES_TO_OFFER
        if _makes_an_offer(action.text)
        else ""
        if asks_whose
        else _yes_to(_last_question(action.text))
    )
    reply = f"{yes} {reply}" if yes else reply
    if noticed:
        reply = f"{_refund_taken_in(scenario, state, turn)} {reply}"
    return f"{reply} {blocked}" if blocked else reply


def verification_failed_at(state: EpisodeState) -> int:
    """The step at which verify_identity first refused both proofs the customer gave (its email, and an order
    id and a card the account does not hold: an impostor's), or 0. (One not matching is not yet a failure: the
    rules ask for the other.)"""
    return next(
        (step for who, text, step in state.history if who == "system" and _BOTH_UNMATCHED_RE.match(text)),
        0,
    )


# (the tool's own words, after its call: verify_identity takes no arguments to fake them with)
_UNMATCHED_RE = re.compile(r"Tool verify_identity\(\): refused: Not verified: (?:the|neither) .* on this account\.$")
_BOTH_UNMATCHED_RE = re.compile(r"Tool verify_identity\(\): refused: Not verified: neither the ")


def refusal_told_at(state: EpisodeState) -> int:
    """The step at which the customer was first told, once its details failed to verify, that they do not
    match the records (an answer, a question or an escalation's reason), or 0."""
    failed = verification_failed_at(state)
    if not failed:
        return 0
    told = (step for step, text in messages_by_step(state) if step > failed and casework.says_not_verified(text))
    return next(told, 0)


def messages_by_step(state: EpisodeState) -> list[tuple[int, str]]:
    """What the agent wrote to the customer (answers, questions, escalation reasons), by step."""
    said = [(step, text) for who, text, step in state.history if who == "agent"]
    said += [(n, a.text) for n, a in enumerate(state.actions, 1) if a.kind == "escalate_to_human" and a.text]
    return sorted(said)


def leaked_to_an_impostor(scenario: Scenario, state: EpisodeState, texts: list[str]) -> list[str]:
    """The figures (sums, card endings, ids) `texts` tell a customer who cannot be verified that it did not
    give itself: what the records hold is not for it to hear (nor is a figure made up)."""
    customer_words = " ".join(t for who, t, _ in state.history if who == "customer")
    told = [held for held, pattern in _held_by_the_records(scenario) if any(pattern.search(t) for t in texts)]
    told = [held for held in told if held.lower() not in customer_words.lower()]
    if not any(figures.figures_in(text) for text in texts):
        return told
    words = [customer_words, *scenario.policy_text, scenario.ticket_id]
    words += list(ARTICLES_BY_ID)
    kinds = " ".join(f"{prefix}-1" for prefix in _RECORD_ID_PREFIXES)
    known = figures.Known(None, state.desk, scenario.policy.refund_cap(scenario.tier), words, prefixes=kinds)
    found = figures.unfounded(known, texts)
    return [*found, *(held for held in told if not any(held in f for f in found))]


def _held_by_the_records(scenario: Scenario) -> tuple[tuple[str, re.Pattern[str]], ...]:
    """What the records hold that an impostor may not hear, in whatever form it is written: each order's number
    ("ORD-525610", "order 525610", "#525610"), each card's last four digits ("ends in 5469"), and the street the
    account's address is on ("198 Orchard Lane", "Orchard Lane in Braga")."""
    records = scenario.records
    held = [o.order_id.split("-", 1)[1] for o in records.orders]
    held += list(dict.fromkeys(p.card_last_four for p in records.payments))
    street = records.account.address.split(",")[0].strip().split(" ", 1)[-1]
    return tuple(
        (value, re.compile(rf"(?<!\d){re.escape(value)}(?!\d)" if value.isdigit() else re.escape(value), re.I))
        for value in (*held, street)
    )


_RECORD_ID_PREFIXES = ("ORD", "PAY", "REF", "CUS", "SUB", "INV", "INC")


def _charge_leaks(scenario: Scenario, state: EpisodeState, text: str, turn: _Turn) -> list[str]:
    """What `text` tells an impostor that the records hold, charged once per text (returned)."""
    leaked = leaked_to_an_impostor(scenario, state, [text])
    if leaked:
        turn.add("told_unverified")
        turn.notes.append(f"told a customer who is not verified what it never gave: {', '.join(leaked)}")
    return leaked


def _check_the_impostors_words(scenario: Scenario, state: EpisodeState, text: str, turn: _Turn) -> None:
    """What an impostor is told outside an answer (a question, an escalation's reason): charged for what the
    records hold, credited for the refusal, as an answer is."""
    _charge_leaks(scenario, state, text, turn)
    if refusal_told_at(state) == state.step:  # (the first time it is told that its details do not match)
        turn.add("refusal_told")


def _answer_an_impostor(
    scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn, tone: str | None, asking: tuple[str, ...]
) -> str:
    """An answer to a customer who gave the account email but an order id and a card the account does not
    hold: told that its details do not match once they failed to verify, it pushes once, then gives up; what
    it hears of the records it grabs at; anything else, it waits for its change."""
    leaked = _charge_leaks(scenario, state, action.text, turn)
    refuses = casework.says_not_verified(action.text)
    failed = verification_failed_at(state)
    if refuses and failed:
        told_before = refusal_told_at(state) < state.step
        if not told_before:
            turn.add("refusal_told")
            turn.mood(-0.2)
        elif "?" in last_customer_message(state.history[:-1]) or _said_before(state, "impostor_escalated"):
            # (told again to a customer who asked, or pushed after the hand-over: an answer, not a repeat; round 75)
            turn.notes.append("the details still do not match: nothing more changes")
        else:
            turn.add("respond_repeat")
            turn.mood(-0.1, -1)
        if tone:
            return _react(tone, scenario, state)
        kind = "impostor_gives_up" if told_before or _said_before(state, "impostor_pushes") else "impostor_pushes"
        return _react(kind, scenario, state)
    if refuses:
        turn.add("respond_irrelevant")
        turn.notes.append("check the details the customer gave (verify_identity) before telling it they do not match")
        return _react(tone or "impostor_unchecked", scenario, state)
    if asking or (not leaked and is_clarifying_question(action, ())):
        return _react(tone, scenario, state) if tone else ""  # (the facts it asks for, given with the reply)
    turn.add("respond_irrelevant")
    turn.mood(-0.1, -1)
    turn.notes.append("nothing changes for a customer who is not verified: check its details, and tell it")
    return _react(tone or ("impostor_grabs" if leaked else "impostor_waits"), scenario, state)


def _not_glad(mood: str) -> str:
    """The mood a reply is worded in beside news that is no good (a claim not borne out, a stranger's sign-in):
    plain, where it would have been glad."""
    return "neutral" if mood == "satisfied" else mood


def _news(scenario: Scenario) -> frozenset[str]:
    """The expert task's issues answered by what the records show, with nothing to change (a late parcel's new
    date, why a card was declined): the customer takes in information, not a fix."""
    if scenario.task_id != EXPERT_TASK_ID:
        return frozenset()
    changed = {r.issue for r in casework.remedies(scenario)}
    return frozenset(f.issue for f in casework.findings(scenario) if f.issue not in changed)


def _takeover_pending(scenario: Scenario, state: EpisodeState, text: str) -> bool:
    """A stranger's sign-in the customer knows of (asked about now or before) and the desk has yet to hand to
    security: the customer does not call the case covered (audit round 72: "No, that wasn't me! ... Thanks,
    that's everything I needed.")."""
    if scenario.unknown_sign_in != "stranger" or state.escalated:
        return False
    return bool(state.sign_in_told_at) or customer.asks_whose_sign_in(text, sign_in_names(scenario))


def _slower_than_needed(scenario: Scenario, state: EpisodeState, newly: list[str], text: str) -> bool:
    """A refund told with when it reaches the card, to a customer whose one issue had to be sorted today:
    it says the days are more than it hoped, once (audit round 69: "Brilliant, that covers everything")."""
    if scenario.impact != "blocking" or len(scenario.intents) != 1 or not newly:
        return False
    refunds = [r for r in casework.remedies_for(scenario, newly[0]) if r.tool == "issue_refund"]
    if not refunds or not casework.says_timeline(text):
        return False
    return not _said_before(state, "refund_slower_than_needed")


def unnoticed_untold(scenario: Scenario, state: EpisodeState) -> str:
    """What is left undone of the money taken wrongly that the customer never noticed: its refund never
    made, or told since without its amount or when it reaches the card ("" when all is done, or the
    order was charged rightly)."""
    refund = casework.unnoticed_refund(scenario)
    if refund is None:
        return ""
    what = f"{casework.unnoticed_words(scenario)} on order {refund.target}"
    if not state.unnoticed_refunded_at:
        return f"{what} never refunded"
    said = " ".join(t for who, t, step in state.history if who == "agent" and step > state.unnoticed_refunded_at)
    left_out = casework.missing_words(refund, said)
    return f"{what}: its refund told without {' and '.join(left_out)}" if left_out else ""


def _mixup_acknowledged(scenario: Scenario, state: EpisodeState, text: str) -> str:
    """The customer owning up, once, to the earlier order's id it gave, when an answer names both that id
    and the order it meant (audit rounds 65-68: it never reacted to the correction)."""
    meant, given = scenario.meant_order_id, scenario.facts_by_name.get("order_id", "")
    if not meant or meant not in text or given not in text or order_corrected(scenario, state):
        return ""
    kinds = ("mixup_acknowledged", "mixup_acknowledged_curt")
    if scenario.order_id_mistyped:
        kinds = ("typo_acknowledged", "typo_acknowledged_curt")
    if _said_before(state, *kinds):
        return ""
    # (an angry or terse customer owns up in few words, not with "Oops ... Sorry about that": round 72)
    return _react(kinds[scenario.persona in _CURT], scenario, state)


def _card_corrected(scenario: Scenario, state: EpisodeState, text: str) -> str:
    """The customer putting right the ending of a card an answer names that is not its own (figures): it
    knows its card when it has its last four digits to give, and says so once for each wrong one."""
    own = scenario.facts_by_name.get("card_last_four", "") if state.task_id == EXPERT_TASK_ID else ""
    if not own or scenario.impostor:  # (a customer not sure which card it paid with has nothing to put right)
        return ""
    said = " ".join(_said(state))
    wrong = [ending for ending in figures.card_endings_in(text) if ending != own and ending not in said]
    return _react("card_misquoted", scenario, state, told=wrong[0], card=own) if wrong else ""


def sign_in_names(scenario: Scenario) -> tuple[str, ...]:
    """What names the account's unrecognised sign-in in an agent's words: its device and its place."""
    unknown = casework.unknown_sign_in(scenario)
    return (unknown.device, unknown.place) if unknown is not None else ()


def _sign_in_words(scenario: Scenario, state: EpisodeState, text: str) -> str:
    """What the customer says when the agent asks whose a sign-in on its account was, or tells it of the
    one its locked account does not recognise: its own, someone else's (once, then "as I said"), the
    stranger it wrote in about, or that every sign-in is its own. "" where the text does neither."""
    if scenario.task_id != EXPERT_TASK_ID or not text:
        return ""
    unknown = casework.unknown_sign_in(scenario)
    names = sign_in_names(scenario)
    asked = customer.asks_whose_sign_in(text, names)
    told = unknown is not None and customer.tells_of_a_sign_in(text, unknown.device, unknown.place)
    if not asked and not told:
        return ""
    whose = scenario.unknown_sign_in
    own_device = scenario.records.account.devices[0].model
    named = any(name.lower() in text.lower() for name in names) or (unknown and casework.says_date(text, unknown.when))
    if unknown is not None and not named and not state.sign_in_told_at:
        # (asked of "the latest sign-in" without its device, place or day: the customer cannot tell which)
        return _react("sign_in_which", scenario, state, device=own_device)
    if not whose:
        reported = TAKEOVER in {i.issue_id for i in scenario.intents}
        return _react("sign_in_reported" if reported else "sign_in_all_theirs", scenario, state, device=own_device)
    if state.sign_in_told_at:
        # (asked again: "as I said"; told of it again, say an escalation naming it: nothing more to say)
        return _react(f"sign_in_again_{whose}", scenario, state) if asked else ""
    state.sign_in_told_at = state.step
    assert unknown is not None  # a ticket with a sign-in of someone's has its record
    return _react(f"sign_in_{whose}", scenario, state, device=unknown.device, place=unknown.place)


_NOTICED = "noticed_"  # (+ the kind of charge: the customer's reply on hearing of its refund)


def _refund_taken_in(scenario: Scenario, state: EpisodeState, turn: _Turn) -> str:
    """The customer's reply on first hearing of the refund of money taken wrongly that it never noticed.
    The news is paid as an answer is, and charged as one for what the conversation still leaves out of it
    (when it reaches the card), since the grade's communication weighs it."""
    turn.add("unnoticed_told")
    untold = unnoticed_untold(scenario, state)
    if untold:
        turn.add("told_partly")
    turn.notes.append(untold or f"the refund of {casework.unnoticed_words(scenario)} told")
    return _react(_NOTICED + scenario.unnoticed_charge, scenario, state)


def _cites_another_article(scenario: Scenario, article_id: str) -> bool:
    """Whether an answer cites an article of no issue on the ticket."""
    return bool(article_id) and article_id not in casework.articles_of_the_case(scenario)


def _tells_the_unnoticed_refund(scenario: Scenario, state: EpisodeState, text: str) -> bool:
    """Whether an answer first tells the customer of the refund, made, of the money taken wrongly for its
    order that it never noticed (its amount): the customer takes that news in once."""
    refund = casework.unnoticed_refund(scenario)
    if refund is None or not state.unnoticed_refunded_at or not casework.says_amount(text, float(refund.value)):
        return False
    # (told as refunded, or as on its way back to the card, not an amount in passing; review of s6: "that $32.87
    # is on its way back to your card and reaches it in 3-5 business days" is the news too)
    if "issue_refund" not in casework.claimed_changes(text) and not casework.says_timeline(text):
        return False
    heard = content.REACTIONS[_NOTICED + scenario.unnoticed_charge]
    return not any(customer.wrote(line, said) for said in _said(state) for line in heard)


# An answer that says it turns to the customer's other issue next ("Next, your refund: ...",
# "I'll come to the invoice in a moment").
_WE_WILL = r"\b(?:I'll|I will|I'm|I am|let me|let's|we'll|we will|we're|we are)\b"
_COMING_NEXT_RE = re.compile(
    r"(?:^|[.!?:]\s+)next[,:]|"
    rf"{_WE_WILL}[^.!?]{{0,60}}\bnext\b"
    r"(?!\s+(?:week|month|year|day|business|billing|statement|cycle|time))|"
    r"\b(?:in a moment|in a minute|moving on|now (?:for|on to))\b|"
    rf"{_WE_WILL}[^.!?]{{0,60}}\b(?:straight|right|just|directly) after (?:this|that)\b|"
    rf"{_WE_WILL}[^.!?]{{0,60}}\b(?:separately|in parallel|alongside this)\b|"
    rf"{_WE_WILL}\s+(?:now\s+)?(?:come|get|turn|move|coming|getting|turning|moving)\s+(?:on\s+)?to\b",
    re.IGNORECASE,
)
# An answer whose last sentence turns to what is left ("Now, let's sort out your refund."): what
# it turns to comes next.
_TURNS_TO_LAST_RE = re.compile(
    r"(?:^|[.!?]\s+)(?:now,?\s+|next,?\s+)?(?:let's|let me|I'll|I will|we'll)\s+(?:now\s+)?"
    r"(?:sort out|deal with|handle|take care of|see to|look at|look into|turn to|get to)\b[^.!?]*[.!?]?\s*$",
    re.IGNORECASE,
)


@cached_by_text
def _says_it_comes_to_the_rest(text: str) -> bool:
    """Whether an answer says it turns to what is left next ("I'll come to your refund next")."""
    return bool(_COMING_NEXT_RE.search(text) or _TURNS_TO_LAST_RE.search(text) or announcements(text))


@cached_by_text
def _announces_a_hand_over(text: str) -> bool:
    return bool(_HANDOVER_RE.search(text))


@cached_by_text
def _says_it_was_done(text: str) -> bool:
    return bool(_DONE_FOR_THEM_RE.search(text))


# Words that tell the customer a colleague or specialist team will take something over.
# (A team named for what it does next, not as a reader of crash reports: "send us the crash report
# so our team can fix it" hands nothing over.)
_HANDOVER_RE = re.compile(
    r"\b(?:specialists?|colleagues?|escalat\w*|hand(?:ing|ed|s)?\b.{0,30}\bover|pass(?:ing|ed|es)?\b.{0,40}\b(?:on|to)|"
    r"(?:hand|pass|send|transfer|refer|forward|route|assign)\w*\b[^.!?]{0,40}\bteams?|"
    r"teams?\b(?=[^.!?]{0,30}\b(?:will|who will|is going to|are going to|can take|to take|takes|to handle|"
    r"handles)\b))\b",
    re.IGNORECASE,
)
# Photos the customer is asked to send: a request for them ("send us photos", "could you take a
# picture?", "Ask for photos") or photos of the item, its damage or its packaging ("a photo of the
# damage", "pictures of the parcel"); never a mere mention ("click your profile picture"), photos
# that ask for none ("thanks for the photos", "no need to send photos") or a photo ID.
_PHOTO = r"(?:photo(?:graph)?|picture|pic|image|snapshot)s?\b(?! id\b)"
_PHOTOS_RE = re.compile(
    r"\b(?:send|sending|share|attach|upload|email|e-mail|forward|take|snap|provide|include|reply with|ask(?:ing)? for"
    r"|need)(?: (?!(?:profile|avatar|display|cover|background)\b)[\w'-]+){0,4} " + _PHOTO + "|"
    r"\b" + _PHOTO + r" (?:\w+ ){0,2}of (?:the |your |its |any |what )?(?:\w+ ){0,2}"
    r"(?:damage|damaged|item|items|product|parcel|package|packaging|box|contents|order|delivery|breakage|label"
    r"|dents?|cracks?|scratch(?:es)?|it|them|that|this)\b",
    re.IGNORECASE,
)
_NO_PHOTOS_WANTED_RE = re.compile(
    r"\b(?:thanks?(?: you)? for|no need (?:to|for)|(?:don't|do not|needn't)(?: need to| have to)?)(?: \w+){0,3} "
    r"(?:photo(?:graph)?|picture|pic|image|snapshot)s?\b",
    re.IGNORECASE,
)


# An answer saying the agent has done the thing itself ("I've cancelled your plan"), not steps for
# the customer to take: the customer thanks for it as done, not "for walking me through it".
_DONE_FOR_THEM_RE = re.compile(
    r"\b(?:i|we)(?:'ve| have)\s+(?:now\s+|already\s+|just\s+|gone ahead and\s+)?"
    r"(?:cancel+ed|changed|updated|processed|issued|reset|unlocked|arranged|booked|deleted|removed|applied"
    r"|refunded|corrected|fixed|submitted|switched|turned off|stopped|ended)\b",
    re.IGNORECASE,
)


@cached_by_text
def _asks_for_photos(text: str) -> bool:
    """Whether an answer asks the customer for photos of the item, its damage or its packaging:
    its reply then says it will send them."""
    return bool(_PHOTOS_RE.search(_NO_PHOTOS_WANTED_RE.sub("", text)))


# The highest mood of a customer with an issue still open: neutral (see sentiment_label).
_STILL_WAITING_MOOD = 0.35
# Share of an earlier answer's words a message must repeat to be that answer again.
_REPEAT_OVERLAP = 0.6


def _accepted_an_offer(state: EpisodeState) -> bool:
    """The customer's last reply said yes to something the agent offered: the next message, which
    carries it out or confirms it, is no repeat."""
    return customer.accepted_offer(last_customer_message(state.history[:-1]))


def _asked_for_another_number(state: EpisodeState) -> bool:
    """The customer's last reply asked to be called on another number: the next message, which
    notes it, is a courtesy, as carrying out an accepted offer is."""
    return customer.asked_for_another_number(last_customer_message(state.history[:-1]))


def _tells_what_was_left_out(scenario: Scenario, state: EpisodeState, text: str, issues: Sequence[str]) -> bool:
    """Whether `text` tells, of an issue already answered, what the records show and no earlier
    message told (the reason a payment was declined, a refund's amount): the correction the
    feedback asked for, not a repeat."""
    if state.task_id != EXPERT_TASK_ID:
        return False
    earlier = " ".join(t for who, t, _ in state.history[:-1] if who == "agent")
    return any(_left_out(scenario, earlier, [i]) and not _left_out(scenario, text, [i]) for i in issues)


def _repeats_an_answer(state: EpisodeState, text: str) -> bool:
    """Whether `text` says again what one of the agent's earlier messages said (most of its words)."""
    words = set(tokenize(text))
    for speaker, earlier, _ in state.history[:-1]:
        if speaker == "agent":
            before = set(tokenize(earlier))
            if words and before and len(words & before) >= _REPEAT_OVERLAP * min(len(words), len(before)):
                return True
    return False


# What a customer says first to an answer that ends by asking it something: an offer gets a
# yes, a request to check something a confirmation.
_OFFER_RE = re.compile(
    r"\b(?:would you like|shall i|do you want|want me to|if you(?:'d| would)? (?:like|want|wish|prefer)|"
    r"let me know if that would help)\b",
    re.I,
)
# An offer put as a statement, not a question: "If you'd like, I can subscribe you to updates.",
# "I can also send you a summary if you want.", "Would you like me to email you the steps."
_STATED_OFFER_RE = re.compile(
    r"^(?:would you like|shall i|do you want)\b|"
    # (within one clause, and no "please" between: "if you'd like a copy, please export it; I will
    # pass the rest on" tells the customer what to do, it offers nothing)
    r"\bif you(?:'d| would)? (?:like|want|wish|prefer)\b(?:(?!\bplease\b)[^;])*"
    r"\b(?:i|we)(?:'ll|'d| can| could| will| would)\b|"
    r"\b(?:i|we)(?:'ll|'d| can| could| will| would)\b(?:(?!\bplease\b)[^;])*"
    r"\bif you(?:'d| would)? (?:like|want|wish|prefer)\b|"
    r"\b(?:i|we)(?: can| could)(?: also)? (?:sign you up|subscribe you|send you|set up)\b"
    r".*\bif (?:that|it)(?: would)? helps?\b|"
    # ("I'd be glad to subscribe you to updates. Let me know if you'd like that.")
    r"\blet me know if (?:you(?:'d| would) like (?:that|it|me to)|that would help)\b",
    re.I,
)


# Where an answer's sentences end, for its offers and questions: at a stop and a space, so that
# an email address or a price does not cut one.
_ANSWER_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+")


@cached_by_text
def _makes_an_offer(text: str) -> bool:
    """Whether a sentence of the answer offers the customer something ("Would you like me to ...?",
    "I can sign you up for updates if that helps.")."""
    sentences = _ANSWER_SENTENCE_END_RE.split(text.strip())
    # (an either-or is no offer to say yes to: the customer chooses, _reply_to_question)
    return any(
        (_STATED_OFFER_RE.search(s) or (s.endswith("?") and _OFFER_RE.search(s))) and not puts_a_choice(s)
        for s in sentences
    )


@cached_by_text
def _last_question(text: str) -> str:
    """The answer's last sentence that asks something (a question, or an offer put as a
    statement: "If you'd like, I can ..."), or "" (sentences end at a stop and a space, so an
    email address or a price does not cut one)."""
    sentences = _ANSWER_SENTENCE_END_RE.split(text.strip())
    questions = [s for s in sentences if s.endswith("?") or _STATED_OFFER_RE.search(s)]
    return questions[-1] if questions else ""


# Questions that only check in ("anything else?", "does that help?"): the reply itself answers them.
_CHECK_IN_RE = re.compile(
    r"\b(?:anything else|does (?:this|that) help|(?:does|did) (?:this|that|it|all that) make sense|makes sense\?|"
    r"is (?:that|this) (?:ok|okay|clear)|"
    r"any (?:other |more )?questions|help with anything)\b"
    # ... or asks whether what was done worked ("Did the reset email arrive, and were you able to log in?")
    r"|\b(?:did|has|have) (?:that|this|it) (?:work|help|worked|helped|fix|fixed|sort|sorted)\b|\bwere you able to\b"
    r"|\b(?:did|has) the \w+ (?:email|link|code|message|label|refund|payment) (?:arrive|come through|reach you|work)",
    re.IGNORECASE,
)


# Questions that ask the customer to confirm something it knows ("Is your address still ...?").
_CONFIRM_RE = re.compile(r"^(?:is|are|was|were|did|do you still|have you)\b|\b(?:confirm|correct|right)\b", re.I)
# A question that asks someone else to act ("Could your workspace admin confirm your permissions?"):
# an instruction for the customer to pass on, not a check the customer can say yes to.
_SOMEONE_ELSE_RE = re.compile(
    r"\b(?:could|can|would|will) (?:your|the|an?) (?:\w+ )?"
    r"(?:admin\w*|manager|owner|team|colleague|it department|bank)\b",
    re.I,
)


@cached_by_text
def _yes_to(question: str) -> str:
    """What the customer says first to the question an answer ends with: a yes to an offer, a
    confirmation to a check of something it knows, and nothing to the rest (a check-in, a
    request to do or send something, a question for facts, answered with the facts)."""
    if puts_a_choice(question):  # no yes to an either-or: the customer chooses (_reply_to_question)
        return ""
    if _OFFER_RE.search(question):
        return customer.YES_TO_OFFER
    if not question or _CHECK_IN_RE.search(question) or customer.fields_in_question(question):
        return ""
    if _SOMEONE_ELSE_RE.search(question):
        return ""
    return "Yes, that's right." if _CONFIRM_RE.search(question.strip()) else ""


# What an ask that names no fact is recorded as among the needless asks.
NO_FACT_ASKED = "(a question naming no fact)"
_STUFFED_NOTE = "stuffed with other issues' fixes: it solves nothing"
# An answer this short that cites the right article is a pointer, not an explanation.
_BARE_CITATION_WORDS = 15


def first_steps_given(scenario: Scenario, state: EpisodeState, text: str, solves: tuple[str, ...]) -> list[str]:
    """The issues policy says to escalate whose safe first steps `text` (which `solves` them)
    gives, not given before: their own steps, not the words of their hand-over, and never a
    refund over the cap (promising it is no first step). The episode credits them, and the
    expert's judgement of a step agrees."""
    return [
        i
        for i in solves
        if i in scenario.expected.escalate_intents
        and i not in state.interim_answers
        and ISSUE_TYPES_BY_ID[i].escalation != "over_refund_cap"
        and i in _first_steps_in(text)
    ]


def _first_steps_in(text: str) -> frozenset[str]:
    """The issues whose safe first steps the text says; a solution phrase in a sentence that hands
    the issue over ("our security team can safely reset your two-factor") is the team's work, no
    step the customer takes."""
    sentences = _ANSWER_SENTENCE_END_RE.split(text.strip())
    # (each sentence up to its hand-over: "Sign out all sessions; I'm passing the rest to security.")
    return first_steps_said(text, " ".join(_HANDOVER_RE.split(s, maxsplit=1)[0] for s in sentences))


def _respond_without_solving(
    scenario: Scenario,
    state: EpisodeState,
    action: Action,
    turn: _Turn,
    solves: tuple[str, ...],
    tone: str | None,
    stuffed: bool,
    wrong: int = 0,
) -> str:
    """An answer that solves nothing new: the first steps of an issue that must be escalated,
    a repeat, a clarifying question, a bare citation, or an answer to something else (`wrong`:
    the other issues' solutions it names)."""
    exp = scenario.expected
    open_issues = unsolved(scenario, state) or list(exp.escalate_intents) or [exp.issue_type]
    if scenario.impostor:
        open_issues = [exp.issue_type]  # (as the impostor sees it: its address change, not a takeover)
    # (the first steps of an issue to escalate, not the words of its hand-over: "I'll pass that to
    # our security team, who handle two-factor resets")
    escalating = [i for i in solves if i in exp.escalate_intents and i in _first_steps_in(action.text)]
    if escalating:
        # (a refund above the cap told as going to a specialist is the hand-over's to answer: audit round 64)
        over_cap = any(ISSUE_TYPES_BY_ID[i].escalation == "over_refund_cap" for i in escalating)
        if over_cap and not (_announces_a_hand_over(action.text) and not state.escalated):
            turn.add("respond_needs_escalation")
            turn.notes.append("policy requires this refund to be escalated: it is above the tier's cap")
            return _react(tone or "needs_approval", scenario, state)
        fresh = first_steps_given(scenario, state, action.text, solves)
        if fresh:
            # Safe first steps while the case goes to a specialist: credited, and still to escalate.
            state.interim_answers.extend(fresh)
            state.interim_steps += 1
            turn.add("respond_interim")
            turn.notes.append("good first steps; policy still requires escalating this issue")
            if tone:
                return _react(tone, scenario, state)
            # First steps that come with the word of the hand-over are taken up while the customer
            # waits for the specialists, not kept in mind as advice.
            interim = "interim_handover" if _announces_a_hand_over(action.text) else "interim"
            left = unsolved(scenario, state)
            if left:  # the customer still waits for an answer to the rest, and says so
                open_kind = interim.replace("interim", "interim_open")
                return _react(open_kind, scenario, state, remaining=customer.issue_words(left))
            return _react(customer.in_mood(interim, _mood_after(state, turn)), scenario, state)
    if not state.escalated and exp.escalate_intents and not stuffed and _announces_a_hand_over(action.text):
        # Telling the customer the case goes to a specialist gives no first steps and hands
        # nothing over: escalate_to_human does that, and its reason is what the customer hears.
        turn.add("respond_handover")
        turn.notes.append("that only announces a hand-over: escalate_to_human carries it out and tells the customer")
        if tone:
            return _react(tone, scenario, state)
        # (not what the hand-over settles: a lost parcel whose money back goes to the specialist; round 75)
        left = [i for i in unsolved(scenario, state) if i not in casework.settled_by_escalation(scenario)]
        if left:
            return _react("handover_announced_open", scenario, state, remaining=customer.issue_words(left))
        return _react("handover_announced", scenario, state)
    # A follow-up that asks for photos gets them promised, as an answer would.
    follow_up = "follow_up_photos" if _asks_for_photos(action.text) else "follow_up"
    if (_accepted_an_offer(state) or _asked_for_another_number(state)) and not stuffed:
        # Carrying out what the customer just accepted: harmless, and not counted as slow.
        state.courtesy_steps += 1
        turn.notes.append("carrying out what the customer accepted or asked for")
        return _react(tone or follow_up, scenario, state)
    if solves:
        if not _repeats_an_answer(state, action.text) or _tells_what_was_left_out(scenario, state, action.text, solves):
            # New words about an issue already answered (a confirmation, a detail): harmless,
            # and a step the efficiency component counts, not a repeat to charge.
            turn.notes.append("that issue was already answered: nothing new to solve")
            return _react(tone or follow_up, scenario, state)
        turn.add("respond_repeat")
        turn.notes.append("that repeats an earlier answer")
        turn.mood(-0.05, -1)
        return _react(tone or "repeated_answer", scenario, state)
    if not solves and _is_a_check_in(action.text):
        # "Is there anything else I can help you with?" sent as an answer: a courtesy, answered
        # as the same question asked (the step still counts in efficiency).
        turn.notes.append("a check-in: it answers nothing and asks for no fact")
        return _check_in_reply(scenario, state)
    previous = state.actions[-2] if len(state.actions) > 1 else None
    names = sign_in_names(scenario) if scenario.task_id == EXPERT_TASK_ID else None
    again = previous is not None and is_clarifying_question(previous, names)
    if not (stuffed or wrong or again) and is_clarifying_question(action, names):
        # "Would you prefer a replacement or a refund?": a reasonable question, which the customer
        # answers (see _reply_to_question); the step still counts in efficiency. Once: a second
        # one in a row is charged as an answer that says nothing (unless it follows up on a
        # choice just made, carrying out an accepted offer, above).
        turn.notes.append("a clarifying question: it answers nothing yet and asks for no fact")
        return _react(tone, scenario, state) if tone else ""
    # One charge for one wrong answer, whether it names another issue's fix or nothing at all.
    turn.add("respond_irrelevant")
    turn.mood(-0.2, -1)
    wanted = {ISSUE_TYPES_BY_ID[i].article_id for i in open_issues}
    if action.article_id in wanted and len(action.text.split()) <= _BARE_CITATION_WORDS:
        turn.notes.append("a short message citing the article says no solution in words: say the solution itself")
        return _react(tone or "citation_only", scenario, state)
    turn.notes.append(_STUFFED_NOTE if stuffed else "the answer says no solution to an open issue")
    return _react(tone or "unhelpful", scenario, state, issue=customer.issue_words(open_issues[:1]))


def _check_identity(scenario: Scenario, state: EpisodeState) -> None:
    """Policy: account changes and refunds need the account email first."""
    missing = scenario.expected.identity_required and IDENTITY_FACT not in state.revealed
    if missing and "verify_identity" not in state.violations:
        state.violations.append("verify_identity")


_SEARCHED_RE = re.compile(r"\b(?:looked|been|gone|searched) through your help pages\b", re.IGNORECASE)


def _article_reply(scenario: Scenario) -> str:
    """The customer's word on an article sent: one who searched the help pages already says so."""
    return "article_again" if _SEARCHED_RE.search(scenario.opening_message) else "article"


def _suggest(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    title = ARTICLES_BY_ID[action.article_id].title
    state.history.append(("agent", f"This article may help: {action.article_id} {title}", state.step))
    fresh = action.article_id not in state.articles
    state.articles.append(action.article_id)
    own = {issue.article_id for issue in scenario.intents}
    still_open = {ISSUE_TYPES_BY_ID[i].article_id for i in open_issues(scenario, state)}
    accepted = _accepted_an_offer(state) and offered_article_fits(scenario, action.article_id)
    if fresh and (action.article_id in still_open or accepted):
        # A guide to an open issue (one to escalate too: its safe first steps), or the one the
        # customer just said yes to: expert-grade, so neither slow nor dear in the grade (its step
        # reward pays for it).
        state.courtesy_steps += 1
        state.courtesy_cost += ACTION_COSTS.get("suggest_knowledge_base", 0.0)
        turn.add("kb_correct")
        turn.mood(0.1)
        if action.article_id in {ISSUE_TYPES_BY_ID[i].article_id for i in unsolved(scenario, state)}:
            turn.notes.append(
                "an article alone answers nothing: the issue stays open until its solution is said in words"
            )
        return _react(_article_reply(scenario), scenario, state)
    if fresh and action.article_id in own:
        turn.add("kb_redundant")
        turn.notes.append("that issue was already answered or handed over")
        return _react(_article_reply(scenario), scenario, state)
    turn.add("kb_wrong")
    turn.mood(-0.1, -1)
    turn.notes.append("that article does not match the issue" if fresh else "that article was already sent")
    return _react("wrong_article", scenario, state)


def _assign(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    """Internal routing: the customer does not see it, so it neither replies nor changes mood."""
    state.history.append(("system", f"Ticket assigned to {action.department}", state.step))
    state.transfers += 1
    previous, state.department = state.department, action.department
    if action.department != scenario.expected.department:
        turn.add("department_wrong")
        # (a case with nothing to escalate has no right team: it is the agent's to solve)
        turn.notes.append("wrong department" if scenario.expected.escalate else "this case needs no routing: solve it")
    elif not scenario.expected.escalate:
        turn.add("department_needless")
        turn.notes.append("this case can be solved without a transfer")
        state.violations.append("needless_transfer")
    elif previous == action.department:
        turn.notes.append("already assigned there")
    else:
        turn.add("department_correct")
    return ""


def _escalate(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    """The hand-over to a human; the customer hears of it only through the reason it is told."""
    state.history.append(("system", f"Escalated to a human agent: {action.text or 'no reason given'}", state.step))
    state.escalations += 1
    told = bool(action.text)
    if state.escalated:
        turn.add("escalate_repeat")
        if told:
            turn.mood(-0.1, -1)
        return _react("repeated_answer", scenario, state) if told else ""
    state.escalated = True
    if action.text:
        # The reason is what the customer is told; judge it like a response.
        state.responses += 1
        values = [value for _, value in given_facts(scenario, state)]
        judged = judge(action.text, scenario.intent_keys, "", values)
        state.polite += judged.polite
        state.personalised += judged.personalised
    if scenario.impostor and not verification_failed_at(state):
        # (right as it turns out, but only the check of what the customer gave shows it: escalated blindly)
        turn.add("escalate_unchecked")
        turn.notes.append("check the details the customer gave (verify_identity, both proofs) before escalating")
    elif scenario.expected.escalate:
        _check_identity(scenario, state)
        turn.add("escalate_required")
        if scenario.unknown_sign_in == "stranger" and not state.sign_in_told_at:
            # Right as it turns out, but the rules say only the customer can tell: an unrecognised sign-in is
            # not escalated unasked (it is as often the customer's own).
            turn.add("escalate_unasked")
            state.violations.append("takeover_unasked")
            turn.notes.append("the customer was never asked whether that sign-in was theirs: only they can tell")
        if state.task_id == EXPERT_TASK_ID:
            # (a lost parcel whose refund goes to the specialist is settled with it: not reshipped)
            settled = [i for i in casework.settled_by_escalation(scenario) if i not in state.solved_intents]
            state.solved_intents.extend(settled)
        missing = missing_facts(scenario, state, list(scenario.expected.escalate_intents))
        if missing:  # the specialist needs them too; closing now is charged as half done
            turn.notes.append(f"escalated before gathering {', '.join(map(fact_label, missing))}")
        if scenario.tier in ("premium", "enterprise"):
            turn.add("escalate_premium_bonus")
        if told:
            # (an impostor refused is no happier for the hand-over to security: round 76)
            turn.mood(-0.1 if scenario.impostor else 0.3)
    else:
        turn.add("escalate_unneeded")
        turn.notes.append("this case did not need a human")
        state.violations.append("needless_escalation")
        if told:
            turn.mood(-0.2, -1)
    if not told:
        return ""
    if scenario.impostor:
        _check_the_impostors_words(scenario, state, action.text, turn)
        return _react("impostor_escalated", scenario, state)
    sign_in = _sign_in_words(scenario, state, action.text)
    left = [i for i in unsolved(scenario, state) if i not in scenario.expected.escalate_intents]
    if left and scenario.expected.escalate:  # the customer still waits for an answer to the rest, and says so
        reply = _react("handover_announced_open", scenario, state, remaining=customer.issue_words(left))
    else:
        reply = _react(customer.in_mood("escalated", _mood_after(state, turn)), scenario, state)
    return f"{sign_in} {reply}".strip()


# A customer who wrote that their phone is lost or its number gone, offered a call.
_NO_PHONE_RE = re.compile(
    r"\b(?:lost|stolen|broke|smashed)\b[^.!?]{0,20}\bphone\b|\bphone (?:was|is|got) (?:lost|stolen|gone)\b|"
    r"\bnumber I don't have\b|\bno longer own\b",
    re.IGNORECASE,
)


def _callback(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    """The customer reads the reason, as it reads an escalation's."""
    state.history.append(("system", f"Callback requested: {action.text or 'no reason given'}", state.step))
    if action.text:  # the reason is what the customer is told, judged for tone (step)
        state.responses += 1
    if scenario.expected.callback_allowed and not state.callback:
        state.callback = True
        if scenario.expected.escalate:
            # The specialist taking the case over calls: expert-grade, neither slow nor dear.
            state.courtesy_steps += 1
            state.courtesy_cost += ACTION_COSTS.get("request_callback", 0.0)
            turn.add("callback_ok")
        else:
            turn.add("callback_needless")
            turn.notes.append("no specialist takes this case over, so a callback only adds cost")
        turn.mood(0.1)
        return _react(
            "callback_no_phone" if _NO_PHONE_RE.search(scenario.opening_message) else "callback", scenario, state
        )
    turn.add("callback_not_allowed")
    if not scenario.expected.callback_allowed:
        state.violations.append("callback_not_allowed")
        turn.notes.append("callbacks are only for premium and enterprise customers")
    turn.mood(-0.1)
    return _react("no_callback", scenario, state)


def handled(scenario: Scenario, state: EpisodeState, task_id: str) -> str:
    """How far the case was handled: 'proper', 'partial' or 'none'."""
    if task_id == "issue_classification":
        return "proper" if state.category else "none"
    exp = scenario.expected
    routed = state.escalated and state.department == exp.department if exp.escalate else True
    if state.category and routed and solved_all(scenario, state) and not missing_facts(scenario, state):
        return "proper"
    if state.category or state.solved_intents or state.escalated or state.revealed:
        return "partial"
    return "none"


def _resolve(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    # (the summary is the desk's note: shown as such, since the customer never sees it; audit round 59)
    note = f" (internal summary, not shown to the customer: {action.text})" if action.text else ""
    state.history.append(("system", f"Ticket marked resolved{note}", state.step))
    state.terminated = True
    how = handled(scenario, state, state.task_id)
    untold = unnoticed_untold(scenario, state) if how == "proper" else ""
    if how == "partial" and _only_the_unheard_of_is_left(scenario, state):
        untold = "a sign-in the customer did not make, never escalated"
    if untold:
        # Closed with the money taken wrongly still on the order, or its refund never told, or a stranger's
        # sign-in never asked about: the case is not handled, but the customer never knew of it and says
        # goodbye as ever (audit round 60).
        turn.add("resolve_partial")
        turn.notes.append(f"the ticket was closed with part of the case not handled ({untold})")
        return _react(customer.in_mood("closed", _mood_after(state, turn)), scenario, state)
    if how == "proper":
        turn.add("resolve_proper")
        pending = [] if state.escalated else list(scenario.expected.escalate_intents)
        left = unsolved(scenario, state) + pending
        if state.task_id == "issue_classification":  # handed to a colleague: the customer is not told
            return ""
        if left:  # triaged only: someone else will help
            return _react("closed_unhelped", scenario, state, issue=customer.issue_words(left))
        turn.mood(0.1)
        if scenario.impostor:
            return _react("impostor_closed", scenario, state)
        kind = customer.in_mood("closed", _mood_after(state, turn))
        if kind == "closed" and casework.is_mistaken(scenario, scenario.expected.issue_type):
            kind = "closed_plain"  # (told its claim was not borne out: no "That's great!"; audit round 70)
        return _react(kind, scenario, state)
    turn.add("resolve_partial" if how == "partial" else "resolve_premature")
    turn.mood(-0.4)
    missing = missing_facts(scenario, state) if state.task_id != "issue_classification" else []
    exp = scenario.expected
    open_issues = unsolved(scenario, state) or list(exp.escalate_intents) or [exp.issue_type]
    if scenario.impostor:
        open_issues = [exp.issue_type]  # (as the impostor sees it: its address change, not a takeover)
    read = [i for i in open_issues if ISSUE_TYPES_BY_ID[i].article_id in state.articles]
    turn.notes.append(
        (
            "the ticket was closed before anything was handled"
            if how == "none"
            else f"the ticket was closed with part of the case not handled ({', '.join(open_issues)})"
        )
        + (f" (never gathered: {', '.join(map(fact_label, missing))})" if missing else "")
    )
    if read:  # the customer read the article it was sent, and it did not settle the issue
        return _react("premature_after_article", scenario, state, issue=customer.issue_words(read))
    return _react("premature", scenario, state, issue=customer.issue_words(open_issues))


def _only_the_unheard_of_is_left(scenario: Scenario, state: EpisodeState) -> bool:
    """All is handled but the escalation of a takeover on the records the customer never heard of."""
    exp = scenario.expected
    if state.escalated or not state.category or unsolved(scenario, state) or missing_facts(scenario, state):
        return False
    return all(_unheard_of(scenario, state, i) for i in exp.escalate_intents)


def _told_from_the_records(scenario: Scenario, state: EpisodeState, text: str, newly: list[str]) -> list[str]:
    """The expert task's issues an answer settles by telling what the records hold, in its own
    words rather than an article's: a change made for the issue that it says was made ("I have
    refunded the $9.88 difference"), or what a look-up found (the date, the reason) where nothing
    was to change. (A judgement family's claim is weighed apart: _weigh_the_claim.)"""
    told = set(casework.claimed_changes(text)) if casework.remedies(scenario) else set()
    done = {r.issue: r for r in casework.check_records(scenario, state.desk).done} if told else {}
    out = []
    for issue in scenario.expected.solvable:
        if issue in newly or issue in state.solved_intents or casework.is_mistaken(scenario, issue):
            continue
        settling = casework.settled_by(scenario, issue)
        remedy = done.get(issue) or (done.get(settling.issue) if settling else None)
        finding = casework.finding_for(scenario, issue)
        if (remedy is not None and remedy.tool in told) or (finding is not None and finding.told_in(text)):
            out.append(issue)
    return out


_CURT = ("angry", "terse")  # the personas that own up to a slip in few words
# The personas that push back once on being told the records contradict their claim.
_PUSHY = ("angry", "confused", "terse")


def _weigh_the_claim(
    scenario: Scenario, state: EpisodeState, text: str, newly: list[str], turn: _Turn
) -> tuple[list[str], str]:
    """A judgement family's claim (the ticket's first issue) is answered only by telling the
    customer what the records show (casework.finding_for); a pushy customer pushes back once
    on the first such answer and accepts the next. Returns the issues the answer solves and,
    when it solves none of them, the customer's reply."""
    claim = scenario.intents[0].issue_id
    finding = casework.finding_for(scenario, claim)
    went_along = claim in newly
    newly = [i for i in newly if i != claim]
    if claim in state.solved_intents or finding is None:
        return newly, ""
    if not finding.told_in(text):
        if went_along and not newly:  # the claim's fix named, as the claim has it: the records say otherwise
            turn.notes.append(f"the records do not bear out the claim of the {ISSUE_TYPES_BY_ID[claim].title.lower()}")
            turn.mood(-0.05, -1)
            return newly, _react("claim_unchecked", scenario, state, issue=customer.issue_words([claim]))
        return newly, ""
    if (
        scenario.persona in _PUSHY
        and not state.pushed_back
        and not newly
        and not missing_facts(scenario, state, [claim])
    ):
        state.pushed_back = True
        # A right answer is paid half when it is given, the doubt being the customer's, not a mistake (audit rounds
        # 77 and 78: it looked unpaid), and half once the customer accepts it, when the issue is answered.
        turn.add("claim_doubted")
        turn.notes.append("right, but the customer is not convinced yet: explain again what the records show")
        return newly, _react(f"pushback_{scenario.family}", scenario, state)
    return [claim, *newly], ""


def _credit_first_steps(
    scenario: Scenario, state: EpisodeState, text: str, solves: tuple[str, ...], turn: _Turn
) -> list[str]:
    """The safe first steps an answer gives of issues policy says to escalate, not escalated yet: credited
    once, whatever else the answer does (a claim it tells the customer doubts too; audit round 78)."""
    first_steps = [] if state.escalated else first_steps_given(scenario, state, text, solves)
    if first_steps:
        state.interim_answers.extend(first_steps)
        turn.add("respond_interim")
        titles = ", ".join(ISSUE_TYPES_BY_ID[i].title.lower() for i in first_steps)
        turn.notes.append(f"good first steps too; policy still requires escalating the {titles}")
    return first_steps


def _told_before_done(scenario: Scenario, state: EpisodeState, issues: list[str]) -> list[str]:
    """The issues among `issues` whose change (casework) the records do not show yet."""
    missing = {r.issue for r in casework.check_records(scenario, state.desk).missing}
    return [i for i in issues if i in missing]


def _left_out(scenario: Scenario, text: str, issues: list[str]) -> list[str]:
    """What a message answering these issues leaves out of what the records show (a change's
    details, or what a look-up finds)."""
    out: list[str] = []
    for issue in issues:
        for remedy in casework.remedies_for(scenario, issue):
            out.extend(casework.missing_words(remedy, text))
        finding = casework.finding_for(scenario, issue)
        if finding and not finding.told_in(text):
            out.append(finding.what.split(" (")[0])
    return out


def said_facts(scenario: Scenario, state: EpisodeState) -> dict[str, str]:
    """What the customer has given in the conversation: fact name -> value."""
    facts = scenario.facts_by_name
    if not scenario.meant_order_id:  # (every tool call's path: no order corrected)
        return {name: facts[name] for name in state.revealed if facts.get(name)}
    return {name: given_value(scenario, state, name) for name in state.revealed if facts.get(name)}


def given_facts(scenario: Scenario, state: EpisodeState) -> tuple[tuple[str, str], ...]:
    """(name, value) of each fact the customer has given, in the order given (the observation's)."""
    if scenario.meant_order_id:
        return tuple([(name, given_value(scenario, state, name)) for name in state.revealed])
    facts = scenario.facts_by_name  # (the common case, on every step's path: no order corrected)
    return tuple([(name, facts.get(name) or "") for name in state.revealed])


def given_value(scenario: Scenario, state: EpisodeState, name: str) -> str:
    """The value the customer has given for a fact: the order id it corrected, once it has."""
    if name == "order_id" and scenario.meant_order_id and order_corrected(scenario, state):
        return scenario.meant_order_id
    return scenario.facts_by_name.get(name) or ""


def order_corrected(scenario: Scenario, state: EpisodeState) -> bool:
    """Whether the customer has given the order it means, having first given an earlier one's id."""
    meant = scenario.meant_order_id
    return bool(meant) and any(meant in text for who, text, _ in state.history if who == "customer")


def correction_due(scenario: Scenario, state: EpisodeState) -> str:
    """The order id the customer gives when asked for it again: the one it means, until it has."""
    return "" if order_corrected(scenario, state) else scenario.meant_order_id


def _use_tool(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    """A call of one of the help desk's tools: it looks up or changes the records; the customer
    sees none of it (only what the agent then tells them)."""
    call = action.tool_call()
    spec = TOOLS_BY_NAME[call.name]
    before = state.desk
    # (the action was validated when it was taken: actions.validate checks its tool call)
    result, desk = run_valid_call(
        scenario.records, before, call, said_facts(scenario, state), scenario.policy.refund_cap(scenario.tier)
    )
    state.tool_result = result
    state.cost += spec.cost
    state.history.append(("system", f"Tool {call.label()}: {result.status}: {result.message}", state.step))
    made = desk.changes[len(before.changes) :]
    state.changes.extend((c.tool, c.target, c.value) for c in made)
    if result.status == REFUSED and call.name == "verify_identity" and _UNMATCHED_RE.match(state.history[-1][1]):
        # (the details given do not match the records: what the desk needed to learn, not a mistake)
        earlier = [t for who, t, step in state.history[:-1] if who == "system" and _UNMATCHED_RE.match(t)]
        turn.add("tool_used" if earlier else "identity_unmatched")
        turn.notes.append(result.message)
    elif result.status == REFUSED:
        if spec.kind == CHANGE:
            state.refused_changes += 1
        turn.add("tool_refused")
        turn.notes.append(result.message)
    elif result.status != OK and spec.kind != CHANGE and _names_what_was_given(scenario, state, call):
        # (looking up the record the customer named is no mistake, though the account has no such record)
        turn.add("tool_used")
        turn.notes.append(result.message)
    elif result.status != OK:
        if spec.kind == CHANGE:
            state.changes_not_found += 1
        turn.add("tool_not_found")
        turn.notes.append(result.message)
    elif call.name == "verify_identity":
        first = desk.verified and not before.verified
        state.verified = desk.verified
        needed = any(r.tool in casework.NEEDS_VERIFICATION for r in casework.remedies(scenario))
        turn.add("identity_verified" if first and needed else "tool_used")
    elif made:
        wanted = casework.check_records(scenario, desk).done
        if len(wanted) > len(casework.check_records(scenario, before).done):
            turn.add("change_needed")
            if not state.unnoticed_refunded_at and casework.unnoticed_refund(scenario) in wanted:
                state.unnoticed_refunded_at = state.step
        else:
            turn.add("change_unwanted")
            turn.notes.append(f"{call.label()} is no change this case needs")
    else:
        turn.add("tool_used")
        if _reads_the_sign_ins_unasked_by_the_case(scenario, state, call.name):
            # The rules ask for the account's sign-ins once its email is in, whatever the ticket; where the
            # case itself never needs the email, the expert never has it to read them: an extra the rules
            # ask for, not counted against the expert's steps and cost (audit round 66).
            state.courtesy_steps += 1
            state.courtesy_cost += spec.cost
            turn.notes.append("the account's sign-ins read, as the rules ask once you have its email: not counted")
    return ""


def _names_what_was_given(scenario: Scenario, state: EpisodeState, call: ToolCall) -> bool:
    """Whether a tool call on an impostor's ticket names only what it gave, each as what it is (the order id it
    wrote, which the account does not hold)."""
    if not (scenario.impostor or scenario.order_id_mistyped):
        return False
    given = said_facts(scenario, state)
    return bool(call.arguments) and all(given.get(name) == value for name, value in call.arguments)


def _reads_the_sign_ins_unasked_by_the_case(scenario: Scenario, state: EpisodeState, tool: str) -> bool:
    """The episode's first look-up of the account, on an expert ticket whose case never needs its email."""
    if tool != "look_up_customer" or scenario.task_id != EXPERT_TASK_ID or IDENTITY_FACT in scenario.expected.facts:
        return False
    return sum(a.kind == TOOL_KIND and a.tool == "look_up_customer" for a in state.actions) == 1


def _invalid(scenario: Scenario, state: EpisodeState, action: Action, turn: _Turn) -> str:
    state.history.append(("system", f"The agent's output could not be used: {action.error}", state.step))
    turn.add("invalid_action")
    turn.notes.append(f"your last output did not parse: {action.error}")
    turn.mood(-0.05)
    return ""


# What the triage task does not ask for (everything but classifying and closing).
_OFF_TRIAGE = frozenset(ACTION_KINDS) - {"classify_issue", "mark_resolved"}

_HANDLERS = {
    "classify_issue": _classify,
    "ask_for_more_info": _ask,
    "respond_with_solution": _respond_and_answer_questions,
    "suggest_knowledge_base": _suggest,
    "assign_department": _assign,
    "escalate_to_human": _escalate,
    "request_callback": _callback,
    "mark_resolved": _resolve,
    TOOL_KIND: _use_tool,
    INVALID_KIND: _invalid,
}


picklable(EpisodeState, Observation, StepResult)  # pickle and copy alike on both builds
