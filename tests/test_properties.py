"""Property tests of the simulation library (hypothesis; bounded and derandomized, so a
run is deterministic and takes seconds).

Any sequence of actions of every kind, with valid and invalid parameters, on any task,
split and seed: invalid actions are refused by parse/validate with InvalidActionError,
valid ones are stepped, actions after the end raise EpisodeFinishedError, and nothing
else is ever raised. Along the way rewards are finite and add up, observations are well
formed and survive the wire, an episode state restored from its token or dict steps on
identically, and grading the trajectory twice gives the same grade, in [0, 1]."""

from __future__ import annotations

import json
import math
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from env_service.tokens import TokenCodec
from supportenv import expert
from supportenv.actions import ACTION_KINDS, INVALID_KIND, MAX_FIELDS, MAX_TEXT_CHARS, Action, parse, validate
from supportenv.casework import identity_proofs
from supportenv.catalog import (
    ARTICLES_BY_ID,
    CATEGORIES,
    DEPARTMENTS,
    ISSUE_TYPE_IDS,
    ISSUE_TYPES,
    PRIORITIES,
    REQUESTABLE_FIELDS,
    SENTIMENT_LABELS,
    TIERS,
)
from supportenv.episode import EpisodeState, observe, step
from supportenv.errors import EpisodeFinishedError, InvalidActionError, InvalidRequestError, UnknownTaskError
from supportenv.graders import grade_state, grade_trajectory
from supportenv.replay import MAX_SEED, new_episode
from supportenv.tasks import EXPERT_TASK_ID, TASK_IDS, get_task
from supportenv.tools import TOOL_NAMES, TOOLS_BY_NAME
from supportenv.v1 import codec, convert
from supportenv.v1 import types_pb2 as pb
from supportenv.world import SPLITS, Scenario

BOUNDED = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ARTICLE_IDS = tuple(ARTICLES_BY_ID)
EXPERT = Action("<the expert's choice>")  # stands for whatever the expert would do at that point

# ---- strategies ----

junk = st.text(max_size=12)


def valid_or_junk(values: tuple[str, ...]) -> st.SearchStrategy[str]:
    """Mostly a valid value, sometimes junk."""
    return st.one_of(*[st.sampled_from(values)] * 4, junk)


long_texts = st.builds(
    lambda ch, n: ch * n,
    st.sampled_from(["a", "é", "\x00", "😀", " "]),
    st.integers(MAX_TEXT_CHARS - 2, MAX_TEXT_CHARS + 2),
)
phrases = st.sampled_from(
    [
        "",
        "   ",
        "please",
        "Thank you, I understand.",
        "whatever, deal with it",
        "you are stupid",
        "what is your order id and email?",
        *(p for issue in ISSUE_TYPES for p in issue.solution_phrases[:1]),
    ]
)
texts = st.one_of(phrases, st.text(max_size=40), long_texts)

classify = st.builds(
    lambda c, p, i: Action("classify_issue", category=c, priority=p, issue_type=i),
    valid_or_junk(CATEGORIES),
    valid_or_junk(("", *PRIORITIES)),
    valid_or_junk(("", *ISSUE_TYPE_IDS)),
)
ask = st.builds(
    lambda f, q: Action("ask_for_more_info", fields=tuple(f), text=q),
    st.lists(valid_or_junk(REQUESTABLE_FIELDS), max_size=MAX_FIELDS + 2),
    st.one_of(st.just(""), texts),
)
respond = st.builds(
    lambda m, a: Action("respond_with_solution", text=m, article_id=a), texts, valid_or_junk(("", *ARTICLE_IDS))
)
suggest = st.builds(lambda a: Action("suggest_knowledge_base", article_id=a), valid_or_junk(ARTICLE_IDS))
assign = st.builds(lambda d, n: Action("assign_department", department=d, text=n), valid_or_junk(DEPARTMENTS), texts)
escalate = st.builds(lambda r: Action("escalate_to_human", text=r), texts)
callback = st.builds(lambda r: Action("request_callback", text=r), texts)
resolve = st.builds(lambda s: Action("mark_resolved", text=s), texts)
invalid = st.builds(lambda r, e: Action(INVALID_KIND, text=r, error=e), texts, texts)
unknown_kind = st.builds(
    Action, st.one_of(junk, st.sampled_from(["request_more_info", "close_resolved", "CLASSIFY_ISSUE", "noop"]))
)
actions = st.one_of(
    st.just(EXPERT), classify, ask, respond, suggest, assign, escalate, callback, resolve, invalid, unknown_kind
)
episodes = st.tuples(
    st.sampled_from(TASK_IDS),
    st.sampled_from(SPLITS),
    st.one_of(st.integers(0, 500), st.integers(0, MAX_SEED)),
    # About half the steps are the expert's, so episodes also get deep and end well.
    st.lists(
        st.tuples(st.booleans(), actions).map(lambda pick: EXPERT if pick[0] else pick[1]), min_size=1, max_size=16
    ),
)


# ---- what validate must decide, written out independently of it ----


def should_be_valid(a: Action) -> bool:
    if a.kind not in (*ACTION_KINDS, INVALID_KIND) or len(a.text) > MAX_TEXT_CHARS or len(a.error) > MAX_TEXT_CHARS:
        return False
    if a.kind == "classify_issue":
        return a.category in CATEGORIES and a.priority in ("", *PRIORITIES) and a.issue_type in ("", *ISSUE_TYPE_IDS)
    if a.kind == "ask_for_more_info":
        asks = bool(a.fields) or bool(a.text.strip())
        return asks and len(a.fields) <= MAX_FIELDS and set(a.fields) <= set(REQUESTABLE_FIELDS)
    if a.kind == "respond_with_solution":
        return bool(a.text.strip()) and a.article_id in ("", *ARTICLE_IDS)
    if a.kind == "suggest_knowledge_base":
        return a.article_id in ARTICLE_IDS
    if a.kind == "assign_department":
        return a.department in DEPARTMENTS
    return True


# ---- invariants ----


def check_observation(obs: Any, scenario: Scenario, state: EpisodeState) -> None:
    task = get_task(state.task_id)
    assert obs.task_id == state.task_id and obs.customer_message
    assert obs.max_steps == task.max_steps and obs.step == state.step
    assert obs.steps_left == obs.max_steps - obs.step >= 0
    assert -1.0 <= obs.sentiment_score <= 1.0 and obs.sentiment_label in SENTIMENT_LABELS
    assert obs.customer_tier in TIERS
    names = [name for name, _ in obs.revealed_facts]
    assert set(names) <= set(obs.requestable_fields) and len(names) == len(set(names))
    assert all(value for _, value in obs.revealed_facts)
    assert math.isfinite(obs.cost_so_far) and obs.cost_so_far >= 0
    assert obs.category in ("", *CATEGORIES) and obs.priority in ("", *PRIORITIES)
    assert obs.issue_type in ("", *ISSUE_TYPE_IDS) and obs.assigned_department in ("", *DEPARTMENTS)
    assert all(n <= obs.step for _, _, n in obs.history)
    assert all(0.0 <= score <= 1.0 for _, _, score in obs.kb_matches)
    # What the service sends is what the library saw.
    assert codec.observation_from_pb(pb.Observation.FromString(codec.observation(scenario, state))) == obs


TOKENS = TokenCodec(b"property-tests-" + b"k" * 17)


def restored(state: EpisodeState) -> tuple[EpisodeState, EpisodeState]:
    """The state back from its state token (a replay of its actions) and from its dict through JSON."""
    by_row = TOKENS.decode(TOKENS.encode(state))
    by_dict = EpisodeState.from_dict(json.loads(json.dumps(state.to_dict())))
    return by_row, by_dict


GATES = (
    "triage",
    "facts_first",
    "handled",
    "rules",
    "closed",
    "records",
    "communication",
)  # the last two: expert_resolution


def check_grade(grade: Any, task_id: str) -> None:
    task = get_task(task_id)
    assert 0.0 <= grade.score <= 1.0
    assert [c.name for c in grade.components] == [name for name, _ in task.components]
    assert all(0.0 <= c.score <= 1.0 for c in grade.components)
    assert math.isclose(sum(c.weight for c in grade.components), 1.0)
    assert grade.score == pytest.approx(sum(c.score * c.weight for c in grade.components), abs=1e-5)
    assert grade.passed == (not grade.failed_gates and grade.score >= task.pass_threshold)
    assert all(gate.split(": ", 1)[0] in GATES and gate.split(": ", 1)[1] for gate in grade.failed_gates)
    assert all(math.isfinite(r) for r in grade.rewards) and math.isfinite(grade.cumulative_reward)


# ---- the properties ----


@BOUNDED
@given(episodes)
def test_any_action_sequence_keeps_every_invariant(episode):
    task_id, split, seed, plan = episode
    scenario, state = new_episode(task_id, split, seed)
    check_observation(observe(scenario, state), scenario, state)
    stepped: list[Action] = []
    cost = 0.0
    for planned in plan:
        action = planned
        if planned is EXPERT:
            action = Action("mark_resolved") if state.done else expert.expert_action(scenario, state, task_id)
        if not should_be_valid(action):
            with pytest.raises(InvalidActionError) as info:
                parse(action)
            assert str(info.value)
            continue
        assert parse(action) == action
        if action.kind != INVALID_KIND or action.error:
            assert convert.action_from_pb(convert.action_to_pb(action)) == action
        if state.done:
            with pytest.raises(EpisodeFinishedError):
                step(scenario, state, action)
            continue
        by_row, by_dict = restored(state)
        assert by_row == state and by_dict == state
        history = list(state.history)
        result = step(scenario, state, action)
        stepped.append(action)
        # A state restored from a token steps on exactly as the original did.
        assert step(scenario, by_row, action) == result and by_row == state
        assert step(scenario, by_dict, action) == result and by_dict == state

        assert math.isfinite(result.reward)
        assert result.reward == pytest.approx(sum(value for _, value in result.breakdown), abs=1e-6)
        assert (result.terminated, result.truncated) == (state.terminated, state.truncated)
        assert not (result.terminated and action.kind != "mark_resolved")
        assert state.history[: len(history)] == history, "history only grows"
        assert result.observation.cost_so_far >= cost
        cost = result.observation.cost_so_far
        check_observation(result.observation, scenario, state)
        assert result.observation == observe(scenario, state)

    assert math.isfinite(state.cumulative_reward) and len(state.rewards) == len(stepped) == state.step
    by_row, by_dict = restored(state)
    assert by_row == state and by_dict == state
    live = grade_state(scenario, state)
    first = grade_trajectory(task_id, split, seed, stepped)
    second = grade_trajectory(task_id, split, seed, stepped)
    assert first == second == live
    assert first.rewards == tuple(state.rewards) and first.steps == state.step
    check_grade(first, task_id)


@BOUNDED
@given(
    st.one_of(st.sampled_from(TASK_IDS), junk),
    st.one_of(st.sampled_from(SPLITS), junk),
    st.one_of(st.integers(-5, 5), st.integers(-(2**70), 2**70), st.sampled_from([MAX_SEED, MAX_SEED + 1, -MAX_SEED])),
)
def test_any_task_split_and_seed_starts_an_episode_or_says_why(task_id, split, seed):
    if task_id not in TASK_IDS:
        with pytest.raises(UnknownTaskError, match="unknown task"):
            new_episode(task_id, split, seed)
    elif split not in SPLITS or not 0 <= seed <= MAX_SEED:
        with pytest.raises(InvalidRequestError):
            new_episode(task_id, split, seed)
    else:
        scenario, state = new_episode(task_id, split, seed)
        check_observation(observe(scenario, state), scenario, state)
        assert new_episode(task_id, split, seed)[1] == state


scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20))
loose = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=8,
)
param_names = st.sampled_from(
    [
        "action_type",
        "kind",
        "parameters",
        "category",
        "priority",
        "issue_type",
        "fields",
        "text",
        "message",
        "question",
        "reason",
        "note",
        "summary",
        "article_id",
        "department",
    ]
)
action_dicts = st.dictionaries(
    param_names,
    st.one_of(loose, st.sampled_from([*ACTION_KINDS, *CATEGORIES, *DEPARTMENTS, *REQUESTABLE_FIELDS, *ARTICLE_IDS])),
    max_size=6,
)


@BOUNDED
@given(st.one_of(action_dicts, st.text(max_size=30), st.sampled_from(ACTION_KINDS), loose, actions))
def test_parse_accepts_anything_and_refuses_with_invalid_action_error_only(raw):
    try:
        action = parse(raw)
    except InvalidActionError as exc:
        assert str(exc)
        return
    assert isinstance(action, Action) and validate(action) == action


# ---- the expert task's tool calls ----

AMOUNTS = ("1", "0.01", "12.50", "$1,000", "0", "-3", "nan", "inf", "1e300", "lots", "", "300.00")


def _tool_call(rng: random.Random, known: list[str]) -> Action:
    """A tool call of any name and arguments: a real tool or junk, its own arguments or others,
    the customer's facts, other values, junk, over-long values."""
    name = rng.choice([*TOOL_NAMES, *TOOL_NAMES, "", "format_disk", "LOOK_UP_ORDER"])
    spec = TOOLS_BY_NAME.get(name)
    names = list(spec.arguments) if spec else []
    if rng.random() < 0.3:
        names = rng.sample([*names, "order_id", "amount", "sql"], k=rng.randint(0, 3))
    values = [rng.choice(AMOUNTS) if arg == "amount" else rng.choice(known) for arg in names]
    return Action("use_tool", tool=name, arguments=tuple(zip(names, values, strict=True)))


@pytest.mark.parametrize("split", SPLITS)
def test_tool_calls_keep_the_wire_and_token_invariants(split):
    """Expert-task episodes mixing the expert's steps with tool calls of any name and arguments:
    a call validates or is refused with InvalidActionError; a valid one survives the wire
    (UseTool) and the token exactly, the desk (verified, changes, refused changes, the last tool
    result) included, and the observation the service sends is the library's."""
    for seed in range(12):
        rng = random.Random(f"tools:{split}:{seed}")
        scenario, state = new_episode(EXPERT_TASK_ID, split, seed)
        known = [*identity_proofs(scenario.records).values(), "ORD-000000", "x" * 201, " ", "", "é😀"]
        while not state.done:
            action = expert.expert_action(scenario, state, EXPERT_TASK_ID)
            if rng.random() < 0.5:
                action = _tool_call(rng, known)
                try:
                    parse(action)
                except InvalidActionError as exc:
                    assert str(exc)
                    continue
            wire = pb.Action.FromString(convert.action_to_pb(action).SerializeToString())
            assert convert.action_from_pb(wire) == action
            result = step(scenario, state, action)
            assert (result.observation.tool_result is not None) == (action.kind == "use_tool")
            assert "use_tool" in result.observation.allowed_actions
            check_observation(result.observation, scenario, state)
            by_row, by_dict = restored(state)
            assert by_row == state and by_dict == state
            desk = (state.verified, state.changes, state.tool_result, state.refused_changes)
            assert (by_row.verified, by_row.changes, by_row.tool_result, by_row.refused_changes) == desk
        check_grade(grade_state(scenario, state), EXPERT_TASK_ID)
