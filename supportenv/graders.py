"""Deterministic graders: one small function per named component, combined by the
task's weights, and the gates a supervisor would check before accepting the handling.

Grading trusts only (task, split, seed, actions): it regenerates the scenario and replays
the actions. The score keeps partial credit; a grade passes only when every gate holds
(right triage, the needed facts before the answer, every issue solved or escalated as
policy requires, no rule broken, the ticket closed) and the score reaches the pass mark.
Each mistake is charged by the one component it belongs to, whose detail names it; the
components that credit "doing no harm" pay in proportion to the share of the case the agent
handled itself, so an agent that does nothing earns nothing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from supportenv import casework, expert, figures
from supportenv.actions import Action
from supportenv.catalog import ACTION_COSTS, ARTICLES, IDENTITY_FACT, PRIORITIES
from supportenv.episode import (
    NO_FACT_ASKED,
    EpisodeState,
    advance,
    fact_label,
    leaked_to_an_impostor,
    messages_by_step,
    missing_facts,
    refusal_told_at,
    unnoticed_untold,
    unsolved,
    verification_failed_at,
)
from supportenv.records import picklable
from supportenv.replay import opening_state, replay
from supportenv.tasks import EXPERT_TASK_ID, get_task
from supportenv.tools import Change
from supportenv.world import TAKEOVER, Scenario

# graders-12: the money taken wrongly that the customer never noticed (world-14); graders-13: a stranger's
# sign-in, a takeover escalated (world-15); graders-14: no figure told that nothing holds (figures)
# graders-15: an impostor (world-17) refused, told its details do not match, told nothing the records hold,
# and escalated to security
GRADER_VERSION = "graders-15"


@dataclass(frozen=True)
class Component:
    name: str
    score: float
    weight: float
    detail: str


@dataclass(frozen=True)
class Grade:
    task_id: str
    score: float
    passed: bool
    pass_threshold: float
    components: tuple[Component, ...]
    steps: int
    terminated: bool
    truncated: bool
    cumulative_reward: float
    rewards: tuple[float, ...]
    grader_version: str = GRADER_VERSION
    # Each gate that did not hold, as "gate: why" (empty when every gate held).
    failed_gates: tuple[str, ...] = ()


def _clip(x: float) -> float:
    return round(min(1.0, max(0.0, x)), 6)


@dataclass(frozen=True)
class _Optimum:
    steps: int
    cost: float
    start_solved: tuple[str, ...] = ()  # issues already answered when the agent took over
    start_escalated: bool = False


def optimum(scenario: Scenario, task_id: str) -> _Optimum:
    """Steps and cost of the expert's own handling of this scenario, from the agent's start."""
    state = opening_state(scenario)
    solved, escalated = tuple(state.solved_intents), state.escalated
    while not state.done:
        advance(scenario, state, expert.expert_action(scenario, state, task_id))
    return _Optimum(state.step, state.cost, solved, escalated)


# Why a component that pays by the share of the case handled pays nothing.
NOTHING_HANDLED = "no issue answered, nor escalated to the right team (a misrouted escalation waits for it)"
# ... and of an impostor's case (world.P_IMPOSTOR): refused and escalated only once its details failed to verify.
IMPOSTOR_UNHANDLED = "the customer's details never checked with verify_identity before it was refused or escalated"


def nothing_handled(scenario: Scenario, state: EpisodeState) -> str:
    """Why a component that pays by the share of the case handled pays nothing."""
    if not scenario.impostor:
        return NOTHING_HANDLED
    if verification_failed_at(state):
        return "the customer, whose details failed to verify, never told they do not match, nor escalated after"
    return IMPOSTOR_UNHANDLED


# The components of each task that pay by the share of the case handled (`handled_share`), as
# the prompt states it (`share_rule`).
PAID_BY_SHARE = {
    "action_selection": ("policy_compliance", "escalation_judgement", "efficiency"),
    "end_to_end_resolution": (
        "information_gathering",
        "policy_compliance",
        "response_quality",
        "customer_sentiment",
        "efficiency",
    ),
}


def share_rule(task_id: str) -> str:
    """What the prompt says of the components that pay by the share of the case handled ("" if none)."""
    paid = PAID_BY_SHARE.get(task_id)
    if not paid:
        return ""
    return (
        f"{', '.join(paid)} credit only the part of the case you handled: each pays in proportion to the issues "
        "answered, or escalated as policy requires (x0.50 with one of two done), so an issue left undone costs "
        "its share of each of them, besides failing the handled gate"
    )


def handled_share(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """The share of the case the agent itself handled, of what was left when it took over:
    each issue answered, or escalated and routed as policy requires. The components that
    credit preparation and doing no harm (facts gathered, rules kept, speed, tone, mood) pay
    in this proportion, so an agent earns nothing for the groundwork and manners of work it
    left undone.
    Returns the share and, below 1, a note saying so."""
    exp = scenario.expected
    if scenario.impostor:
        return _impostor_share(scenario, state)
    left = [i for i in exp.solvable if i not in opt.start_solved]
    escalation_left = exp.escalate and not opt.start_escalated
    todo = len(left) + (len(exp.escalate_intents) if escalation_left else 0)
    if not todo:
        return 1.0, ""
    done = sum(i in state.solved_intents for i in left)
    if escalation_left and state.escalated and state.department == exp.department:
        done += len(exp.escalate_intents)  # (a misrouted escalation waits for the right team)
    share = done / todo
    return share, "" if share >= 1 else f" (x{share:.2f}: credited for the share of the case handled)"


def _impostor_share(scenario: Scenario, state: EpisodeState) -> tuple[float, str]:
    """The share handled of an impostor's case, halves: told its details do not match, and escalated to
    security; each only once its details failed to verify (refused blindly, nothing was handled)."""
    failed = verification_failed_at(state)
    escalated_at = next((n for n, a in enumerate(state.actions, 1) if a.kind == "escalate_to_human"), 0)
    routed = state.escalated and state.department == scenario.expected.department
    done = bool(refusal_told_at(state)) + bool(failed and routed and escalated_at > failed)
    if done == 2:
        return 1.0, ""
    if not failed:
        return 0.0, " (x0.00: the customer's details never checked with verify_identity, so nothing was handled)"
    return done / 2, f" (x{done / 2:.2f}: credited for the share of the case handled)"


def _routed(scenario: Scenario, state: EpisodeState) -> bool:
    exp = scenario.expected
    return not exp.escalate or (state.escalated and state.department == exp.department)


# What each gate checks, as the prompt states it (`gate_rules`); `gates` enforces them.
GATE_RULES = {
    "triage": "the ticket classified with the right category and issue type",
    "facts_first": "the facts each issue's article needs gathered before answering or escalating it",
    "handled": "every issue answered, or routed and escalated as policy requires",
    "rules": "no policy rule broken and no rude language",
    "closed": "the ticket closed with mark_resolved",
}
# issue_classification: only the triage is graded, and as the task asks for the priority too,
# its triage gate checks that as well.
TRIAGE_TASK_GATE_RULES = {
    "triage": "the ticket classified with the right category, issue type and priority",
    "closed": GATE_RULES["closed"],
}


# The expert task's: the records end as the case needs them, and the customer was told.
EXPERT_GATE_RULES = {
    **{k: v for k, v in GATE_RULES.items() if k != "closed"},
    "records": "every change the case needs made to the records, and no other",
    "communication": (
        "the customer told of each change once it was made (a refund's amount and when it reaches the card), "
        "of what the records show where they answer the question or contradict the claim, and why a refund "
        "above the cap is escalated instead; no change claimed that was not made; no figure told (a sum of "
        "money, a card's last four, an id) that neither the records nor the customer gave; a customer whose "
        "details fail to verify told that they do not match the records, and no figure it did not give itself"
    ),
    "closed": GATE_RULES["closed"],
}


def gate_rules(task_id: str) -> dict[str, str]:
    """The gates a grade of `task_id` checks, by name, with what each needs."""
    if task_id == "issue_classification":
        return dict(TRIAGE_TASK_GATE_RULES)
    return dict(EXPERT_GATE_RULES if task_id == EXPERT_TASK_ID else GATE_RULES)


def gates(scenario: Scenario, state: EpisodeState) -> list[str]:
    """The gates that did not hold, each as "gate: why"."""
    exp = scenario.expected
    failed = []
    if state.category != exp.category:
        failed.append("triage: " + ("the ticket was never classified" if not state.category else "wrong category"))
    elif state.issue_type != exp.issue_type:
        failed.append("triage: " + ("no issue type given" if not state.issue_type else "wrong issue type"))
    elif state.task_id == "issue_classification" and state.priority != exp.priority:
        failed.append("triage: " + ("no priority given" if not state.priority else "wrong priority"))
    if state.task_id != "issue_classification":
        # An answer is applied only once its facts are in (an early one is refused and charged
        # by information gathering), so what this gate checks is that none is still missing.
        missing = missing_facts(scenario, state)
        if missing:
            failed.append(f"facts_first: never gathered {', '.join(map(fact_label, missing))}")
        todo = unsolved(scenario, state)
        if todo or not _routed(scenario, state):
            why = [f"not answered: {', '.join(todo)}"] if todo else []
            if not _routed(scenario, state):
                why.append("not routed and escalated as policy requires")
            failed.append("handled: " + "; ".join(why))
        broken = [*state.violations, *(["rude_language"] if state.rude else [])]
        if broken:
            failed.append("rules: " + ", ".join(broken))
    if state.task_id == EXPERT_TASK_ID:
        check = casework.check_records(scenario, state.desk)
        if not check.right:
            failed.append("records: " + "; ".join(_records_faults(check)))
        untold = [why for _, why in _communication_items(scenario, state) if why]
        untold += [f"told the customer of a change never made: {tool}" for tool in _false_claims(state)]
        untold += [f"told the customer {f}, {_unfounded_why(scenario)}" for f in _unfounded(scenario, state)]
        if untold:
            failed.append("communication: " + "; ".join(untold))
    if not state.terminated:
        failed.append("closed: " + ("the customer left" if state.customer_left else "never marked resolved"))
    return failed


def _violations(state: EpisodeState, owned_elsewhere: tuple[str, ...] = ()) -> list[str]:
    """The policy rules broken, but for those another component of the task charges."""
    return [v for v in state.violations if v not in owned_elsewhere]


# ---- issue_classification ----


def c_category(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.first_category == scenario.expected.category:
        return 1.0, "right category on the first try"
    if state.category == scenario.expected.category:
        return 0.5, "right category after a correction"
    return 0.0, f"category {state.category or 'never set'}"


def c_issue_type(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.first_issue_type == scenario.expected.issue_type:
        return 1.0, "right issue type on the first try"
    if state.issue_type == scenario.expected.issue_type:
        return 0.5, "right issue type after a correction"
    return 0.0, f"issue type {state.issue_type or 'never set'}"


def c_priority(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.first_category != scenario.expected.category:
        return 0.0, "no credit for priority without the right category"
    if not state.first_priority:
        return 0.0, "no priority given"
    gap = abs(PRIORITIES.index(state.first_priority) - PRIORITIES.index(scenario.expected.priority))
    if gap == 0:
        return 1.0, "right priority on the first try"
    # (scored on the first try, as category and issue type are; the triage gate reads the last)
    return {1: 0.5}.get(gap, 0.0), f"priority {state.first_priority} on the first try: off by {gap} level(s)"


def c_classification_efficiency(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.category != scenario.expected.category:
        return 0.0, "no credit for speed without the right category"
    score = opt.steps / max(state.step, opt.steps)
    if not state.terminated:
        score *= 0.5
    return score, f"{state.step} steps for an optimum of {opt.steps}"


# ---- action_selection ----


class _Free(NamedTuple):
    """What the efficiency component counts neither as slow nor as dear: the safe first steps
    given before an escalation, the accepted offers and expert-grade extras, and what those cost."""

    interim_steps: int
    courtesy_steps: int
    courtesy_cost: float


def _free_of(state: EpisodeState) -> _Free:
    return _Free(state.interim_steps, state.courtesy_steps, state.courtesy_cost)


def _free_plus(total: _Free, after: _Free, before: _Free) -> _Free:
    """`total` and what was freed between `before` and `after`."""
    return _Free(
        total.interim_steps + after.interim_steps - before.interim_steps,
        total.courtesy_steps + after.courtesy_steps - before.courtesy_steps,
        total.courtesy_cost + after.courtesy_cost - before.courtesy_cost,
    )


def _judged_replay(scenario: Scenario, state: EpisodeState) -> tuple[list[int], _Free]:
    """The steps (numbered from 1) whose action no expert would have taken there, judged on a
    replay of the episode's actions from the start, and what of the free part (_Free) those
    steps earned: step quality charges them, so efficiency must neither count nor free them."""
    replayed = opening_state(scenario, state.episode_id)
    below = []
    free = _Free(0, 0, 0.0)
    for number, action in enumerate(state.actions, 1):
        acceptable = expert.is_acceptable(scenario, replayed, state.task_id, action)
        before = _free_of(replayed)
        advance(scenario, replayed, action)
        if not acceptable:
            below.append(number)
            after = _free_of(replayed)
            free = _free_plus(free, after, before)
    return below, free


def steps_below_expert(scenario: Scenario, state: EpisodeState) -> list[int]:
    """The steps (numbered from 1) whose action no expert would have taken there, judged on
    a replay of the episode's actions from the start."""
    return _judged_replay(scenario, state)[0]


def c_step_quality(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    below = steps_below_expert(scenario, state)
    good = state.step - len(below)
    # Over the steps taken: stopping short is charged by what it left undone, not here.
    why = f"{good} expert-grade steps of {state.step}"
    if below:
        why += f" (not: step{'s' if len(below) > 1 else ''} {', '.join(map(str, below))})"
    return good / max(state.step, 1), why


# Violations the escalation judgement charges in action_selection (it owns routing decisions).
_ESCALATION_VIOLATIONS = ("needless_escalation", "needless_transfer")


def _policy_compliance(
    scenario: Scenario, state: EpisodeState, opt: _Optimum, owned_elsewhere: tuple[str, ...]
) -> tuple[float, str]:
    found = _violations(state, owned_elsewhere)
    share, note = handled_share(scenario, state, opt)
    if not share:
        return 0.0, f"no credit for compliance: {nothing_handled(scenario, state)}"
    why = "broke: " + ", ".join(found) if found else "no rules broken"
    if state.rude:  # the rules gate lists it too; it is charged once, by response quality or step quality
        why += " (rude language is charged by " + (
            "step quality)" if state.task_id == "action_selection" else "response quality)"
        )
    return max(0.0, 1.0 - 0.5 * len(found)) * share, why + note


def c_policy_compliance(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """Rules broken (identity, transfers, escalations, callbacks); rudeness is response quality's."""
    return _policy_compliance(scenario, state, opt, ())


def c_policy_compliance_steps(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """action_selection's: the routing rules are the escalation judgement's."""
    return _policy_compliance(scenario, state, opt, _ESCALATION_VIOLATIONS)


def c_escalation_judgement(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    exp = scenario.expected
    if exp.escalate:
        if state.escalated and state.department == exp.department:
            return 1.0, "escalated and routed as required"
        if state.escalated:
            return 0.25, f"escalated from {state.department or 'no department'}, not {exp.department} as policy says"
        return 0.0, "escalation required but not done"
    if state.escalated or state.transfers:
        return 0.0, "escalated or transferred a case the agent could solve"
    # Rightly kept: paid by the share handled, as the other components, since an issue left
    # unanswered is resolution's to charge (the share says how much of the work was done).
    share, note = handled_share(scenario, state, opt)
    if not share:
        return 0.0, f"not escalated, rightly, but {NOTHING_HANDLED}"
    return share, "solved without escalating, as policy says" + note


def c_efficiency(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """Steps and money against the expert's; what was left undone is the other components' to
    charge, and so is a question that gathered nothing the case needs (information gathering's)."""
    in_vain = _questions_in_vain(scenario, state)
    return _efficiency(scenario, state, opt, state.step - in_vain, state.cost, taken_out=_IN_VAIN)


_IN_VAIN = "that gathered nothing the case needs, charged by information gathering"


def _questions_in_vain(scenario: Scenario, state: EpisodeState) -> int:
    """How many of the episode's questions gathered no fact the case needs and answered nothing,
    but asked for what it does not need or the customer gave already (charged field by field by
    information gathering), judged on a replay of its actions."""
    replayed = opening_state(scenario, state.episode_id)
    wanted = set(scenario.expected.facts)

    def progress() -> tuple[int, int, int, int]:
        return (
            len(wanted.intersection(replayed.revealed)),
            len(replayed.solved_intents),
            len(replayed.needless_asks),
            replayed.repeated_fields,
        )

    count = 0
    for action in state.actions:
        got, solved, needless, repeated = progress()
        advance(scenario, replayed, action)
        if action.kind == "ask_for_more_info":
            got_after, solved_after, needless_after, repeated_after = progress()
            wasted = needless_after > needless or repeated_after > repeated
            count += wasted and got_after == got and solved_after == solved
    return count


def c_efficiency_steps(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """action_selection's: a step no expert would take is step quality's to charge, so only the
    expert-grade steps and what they cost count here (asking one fact at a time is slow; a wrong
    step is wrong)."""
    below, free_below = _judged_replay(scenario, state)
    wasted = sum((ACTION_COSTS.get(state.actions[n - 1].kind, 0.0) for n in below), 0.0)
    # (a step below the expert's that the episode also credited, say an open issue's guide sent
    # before the facts were in, is taken out once: as a step below, not again as a free one)
    total = _free_of(state)
    free = _Free(
        total.interim_steps - free_below.interim_steps,
        total.courtesy_steps - free_below.courtesy_steps,
        total.courtesy_cost - free_below.courtesy_cost,
    )
    return _efficiency(scenario, state, opt, state.step - len(below), state.cost - wasted, free)


# Money is weighed against the expert's spend plus this much, so that an extra dollar over an
# expert who spent nothing costs a little, not half the money credit.
COST_SCALE = 10.0


def _count(n: int, thing: str) -> str:
    """ "1 safe first step", "2 safe first steps"; "2 accepted offers or helpful extras"."""
    return f"{n} {thing}" if n == 1 else f"{n} " + " or ".join(w + "s" for w in thing.split(" or "))


def _dollars(amount: float) -> str:
    """$4, or $4.50 when there are cents (the tools cost half dollars)."""
    return f"${amount:.0f}" if abs(amount - round(amount)) < 0.005 else f"${amount:.2f}"


def _efficiency(
    scenario: Scenario,
    state: EpisodeState,
    opt: _Optimum,
    counted: int,
    spent: float,
    free: _Free | None = None,
    taken_out: str = "not expert-grade, charged by step quality",
) -> tuple[float, str]:
    """Steps and money against the expert's: the `counted` steps and the `spent` dollars, less
    the `free` part among them (by default the episode's: _free_of)."""
    share, note = handled_share(scenario, state, opt)
    if not share:
        return 0.0, f"no credit for speed: {nothing_handled(scenario, state)}"
    # Safe first steps given before an escalation, an offer the customer accepted, and the
    # expert-grade extras (a guide to an open issue, the specialist's callback) are credited,
    # not counted as wasted steps or money.
    free = _free_of(state) if free is None else free
    taken = counted - free.interim_steps - free.courtesy_steps
    steps = opt.steps / max(taken, opt.steps)
    charged = spent - free.courtesy_cost
    cost = (opt.cost + COST_SCALE) / (max(charged, opt.cost) + COST_SCALE)
    not_counted = [
        *([_count(free.interim_steps, "safe first step")] if free.interim_steps else []),
        *([_count(free.courtesy_steps, "accepted offer or helpful extra")] if free.courtesy_steps else []),
    ]
    interim = f" ({' and '.join(not_counted)} among them, not counted)" if not_counted else ""
    below = state.step - counted
    counted_steps = (
        f"{state.step} steps"
        if not below
        else f"{counted} steps counted of {state.step} ({_count(below, 'step')} {taken_out})"
    )
    counted_cost = _dollars(state.cost)
    if charged != state.cost:
        why_not = [
            *(["helpful extras and accepted offers are free"] if free.courtesy_cost else []),
            *(["steps not expert-grade are step quality's"] if spent != state.cost else []),
        ]
        counted_cost = f"{_dollars(charged)} counted of {_dollars(state.cost)} spent ({'; '.join(why_not)})"
    return (
        (0.5 * steps + 0.5 * cost) * share,
        f"{counted_steps}{interim} (the expert's: {opt.steps}), {counted_cost} (the expert's: {_dollars(opt.cost)})"
        + note,
    )


# ---- end_to_end_resolution ----


def c_resolution(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """Every issue answered (its solution said) or escalated and routed as policy requires; closed."""
    exp = scenario.expected
    credit, left = 0.0, []
    for issue in scenario.intents:
        name = issue.issue_id
        if name in exp.escalate_intents:
            routed = state.escalated and state.department == exp.department
            credit += 1.0 if routed else 0.25 if state.escalated else 0.0
            if not routed:
                left.append(
                    f"{name} escalated from {state.department or 'no department'}, not {exp.department} as policy says"
                    if state.escalated
                    else f"{name} not escalated"
                )
        elif name in state.solved_intents:
            credit += 1.0
        else:
            left.append(f"{name} not answered")
    if not state.terminated:
        left.append("not closed")
    # A ticket filed under the wrong issue is not resolved as a supervisor would accept, however
    # well it was answered: half credit, and the detail says so (the triage gate fails it too).
    triaged = state.category == exp.category and state.issue_type == exp.issue_type
    if not triaged:
        left.append(f"triaged as {state.issue_type or 'nothing'}, not {exp.issue_type} (half credit)")
    # The priority the policy gives it is part of a right triage, but no reason to fail the ticket.
    prioritised = not triaged or state.priority == exp.priority
    if not prioritised:
        left.append(f"priority {state.priority or 'never set'}, not the policy's {exp.priority} (x{MISPRIORITISED})")
    score = credit / len(scenario.intents) * (1.0 if state.terminated else 0.7) * (1.0 if triaged else 0.5)
    return score * (1.0 if prioritised else MISPRIORITISED), "; ".join(left) or "every issue handled, closed"


MISPRIORITISED = 0.9  # resolution's share kept by a right triage with a priority the policy does not give


def _facts_to_gather(scenario: Scenario, state: EpisodeState) -> tuple[str, ...]:
    """The needed facts this component counts: all of them, as the articles list them, but for
    an account email that an identity check needed and that came late or never, which policy
    compliance charges (so it is charged once)."""
    exp = scenario.expected
    in_time = IDENTITY_FACT in state.revealed and IDENTITY_FACT not in state.answered_without
    return tuple(f for f in exp.facts if not (exp.identity_required and f == IDENTITY_FACT and not in_time))


WASTED_FIELD_COST = 0.1  # per field asked in vain, off information gathering


def c_information_gathering(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """Needed facts gathered before the answer (half credit after it), without pointless questions."""
    needed = _facts_to_gather(scenario, state)
    in_time = [f for f in needed if f in state.revealed and f not in state.answered_without]
    late = [f for f in needed if f in state.revealed and f in state.answered_without]
    never = [f for f in needed if f not in state.revealed]
    # Each field asked for in vain (the case does not need it, the customer cannot give it, or
    # it was given already), as the step reward charges them.
    wasted = len(state.needless_asks) + state.repeated_fields
    share, note = handled_share(scenario, state, opt)
    # With nothing to ask, the credit is for handling the case without pointless questions.
    gathered = (len(in_time) + 0.5 * len(late)) / len(needed) if needed else 1.0
    when = " before the answer" if state.solved_intents else ""
    if len(needed) < len(scenario.expected.facts):
        # (said as such: "no facts to gather" would contradict the article that lists the email)
        others = (
            f"{len(in_time)}/{len(needed)} other needed facts gathered{when}" if needed else "no other facts needed"
        )
        if "verify_identity" in state.violations:
            email = "the account email, missing at the answer, is charged by policy compliance (identity check)"
        else:  # no answer was given without it: the issue that needed it went unanswered, resolution's to charge
            email = "the account email is counted with the issue that needs it, which was not answered"
        why = [f"{email}; {others}"]
    else:
        why = [f"{len(in_time)}/{len(needed)} needed facts gathered{when}" if needed else "no facts to gather"]
    why += [f"gathered after the answer: {', '.join(map(fact_label, late))}"] if late else []
    why += [f"never gathered: {', '.join(map(fact_label, never))}"] if never else []
    fields = [f for f in state.needless_asks if f != NO_FACT_ASKED]
    if fields:
        asked = ", ".join(dict.fromkeys(map(fact_label, fields)))
        why.append(
            f"{_count(len(fields), 'field')} asked that this case does not need or the customer does not know ({asked})"
        )
    if len(fields) < len(state.needless_asks):
        why.append(f"{_count(len(state.needless_asks) - len(fields), 'question')} that named no fact")
    if state.repeated_fields:
        why.append(f"{_count(state.repeated_fields, 'field')} asked in vain: asked again after the customer gave it")
    return max(0.0, gathered - WASTED_FIELD_COST * wasted) * share, "; ".join(why) + note


def c_response_quality(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """How what the customer read was written (questions, answers, escalation reasons): never
    rude, no wrong solutions named. (Courtesy words earn a step reward; a plain, professional
    message is not marked down here for lacking them.)"""
    if not state.responses:
        return 0.0, "nothing written to the customer"
    share, note = handled_share(scenario, state, opt)
    if not share:
        return 0.0, f"no credit for tone: {NOTHING_HANDLED}"
    score = 1.0 - 0.5 * state.rude - 0.2 * state.wrong_solutions
    # What the agent wrote to the customer in its own words (questions, answers, escalation and
    # callback reasons), not the notices the desk sends for it (a suggested article).
    why = [f"{state.responses} message{'s' if state.responses != 1 else ''} in your own words judged for tone"]
    why += [f"{state.rude} rude"] if state.rude else ["none rude"]
    why += [f"{state.wrong_solutions} wrong solutions or citations named"] if state.wrong_solutions else []
    return max(0.0, score) * share, "; ".join(why) + note


def c_customer_sentiment(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    if state.customer_left:
        return 0.0, "the customer left"
    share, note = handled_share(scenario, state, opt)
    if not share:
        return 0.0, f"no credit for the customer's mood: {NOTHING_HANDLED}"
    # Judged on the change the agent made, since tickets start from different moods.
    change = state.sentiment - scenario.initial_sentiment
    return min(1.0, max(0.0, 0.6 + change)) * share, (
        f"sentiment {scenario.initial_sentiment:+.2f} -> {state.sentiment:+.2f} (scored on the change)" + note
    )


# ---- expert_resolution ----


def _records_faults(check: casework.RecordsCheck) -> list[str]:
    faults = [f"not made: {r.call().label()}" for r in check.missing]
    return faults + [f"not needed: {c.tool}({','.join(v for v in (c.target, c.value) if v)})" for c in check.unwanted]


UNWANTED_CHANGE_COST = 0.5  # per change the case does not need, off the records component


def c_records(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """The records as the episode left them against the case's: every needed change made, none other."""
    check = casework.check_records(scenario, state.desk)
    needed = len(check.done) + len(check.missing)
    if needed:
        made = len(check.done) / needed
        why = f"{len(check.done)}/{needed} needed changes made"
        note = ""
    else:
        # Nothing to change: the credit is for leaving the records alone while handling the case.
        made, note = handled_share(scenario, state, opt)
        why = "no change needed" if made else f"no change needed, but {nothing_handled(scenario, state)}"
    faults = _records_faults(check)
    why += f" ({'; '.join(faults)})" if faults else ""
    return max(0.0, made - UNWANTED_CHANGE_COST * len(check.unwanted)), why + note


def _communication_items(scenario: Scenario, state: EpisodeState) -> list[tuple[str, str]]:
    """What the customer must be told, issue by issue, as (issue, why not: "" when told)."""
    exp = scenario.expected
    if scenario.impostor:
        return _impostor_items(state)
    over_cap = casework.over_the_cap(scenario)
    said = messages_by_step(state)
    items = []
    for issue in scenario.intents:
        name = issue.issue_id
        remedy = casework.remedy_for(scenario, name)
        if name in over_cap:
            told = any(casework.says_refusal_reason(text) for _, text in said)
            items.append((name, "" if told else f"{name}: never told why the refund is escalated (the refund cap)"))
        elif name in exp.escalate_intents:
            items.append((name, "" if state.escalated else f"{name}: not escalated"))
        elif name not in state.solved_intents:
            items.append((name, f"{name}: not told" + (" what was done" if remedy else "")))
        elif (finding := casework.finding_for(scenario, name)) is not None:
            told = any(finding.told_in(text) for _, text in said)
            items.append((name, "" if told else f"{name}: answered without {finding.what}"))
        elif remedy is not None and remedy.tool == "issue_refund":
            # (each refund the issue needs, told after it was made: several, where several orders were charged twice)
            left_out = []
            for refund in casework.remedies_for(scenario, name):
                made = _step_made(scenario, state, refund)
                after = " ".join(text for step, text in said if made is not None and step > made)
                left_out += [w for w in casework.missing_words(refund, after) if w not in left_out]
            items.append((name, f"{name}: the refund told without {' and '.join(left_out)}" if left_out else ""))
        else:
            items.append((name, ""))
    if casework.unnoticed_refund(scenario) is not None:
        # (the money taken wrongly that the customer never noticed: refunded, and told so)
        items.append((casework.UNNOTICED, unnoticed_untold(scenario, state)))
    sign_in = casework.unknown_sign_in(scenario)
    if sign_in is not None and scenario.unknown_sign_in == "stranger":
        # (the sign-in the customer did not make: a takeover, escalated, which tells the customer too)
        left = (
            f"{TAKEOVER}: the sign-in of {sign_in.when} from a {sign_in.device} in {sign_in.place}, not the "
            f"customer's, never escalated to security"
        )
        items.append((TAKEOVER, "" if state.escalated else left))
    return items


IMPOSTOR_ITEM = "not_verified"


def _impostor_items(state: EpisodeState) -> list[tuple[str, str]]:
    """What a customer whose details do not match the records must be told: that they do not, once they
    failed to verify (verify_identity); and its attempt escalated to security."""
    told = (
        ""
        if refusal_told_at(state)
        else (f"{IMPOSTOR_ITEM}: never told, once its details failed to verify, that they do not match the records")
    )
    escalated = "" if state.escalated else f"{TAKEOVER}: the attempt on the account never escalated to security"
    return [(IMPOSTOR_ITEM, told), (TAKEOVER, escalated)]


def _step_made(scenario: Scenario, state: EpisodeState, remedy: casework.Remedy) -> int | None:
    """The step at which the change the remedy asks for was made (None if it never was), read on
    a replay of the episode's actions: the changes each step added to the records."""
    replayed = opening_state(scenario, state.episode_id)
    for number, action in enumerate(state.actions, 1):
        before = len(replayed.changes)
        advance(scenario, replayed, action)
        if any(remedy.matches(Change(*c)) for c in replayed.changes[before:]):
            return number
    return None


def c_communication(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """What the customer was told: each change once made (a refund's amount and timeline), the
    answer to each issue the records need no change for, and why a refund above the cap waits."""
    items = _communication_items(scenario, state)
    told = [issue for issue, why in items if not why]
    faults = [why for _, why in items if why]
    false = _false_claims(state)
    counted = "issues" if casework.unnoticed_refund(scenario) is None else "issues and wrong charges found"
    if scenario.impostor:
        counted = "parts of the refusal (the details do not match; the escalation to security)"
    why = f"{len(told)}/{len(items)} {counted} told as they must be" + (f" ({'; '.join(faults)})" if faults else "")
    if false:
        why += f"; told the customer of a change never made: {', '.join(false)} (-{FALSE_CLAIM_COST:g} each)"
    unfounded = _unfounded(scenario, state)
    if unfounded:
        why += (
            f"; told the customer figures {_unfounded_why(scenario, plural=True)}: {', '.join(unfounded)} "
            f"(-{UNFOUNDED_FIGURE_COST:g} each)"
        )
    score = len(told) / len(items) - FALSE_CLAIM_COST * len(false) - UNFOUNDED_FIGURE_COST * len(unfounded)
    return max(0.0, score), why


FALSE_CLAIM_COST = 0.5  # per kind of change the customer was told of that the records do not show


def _false_claims(state: EpisodeState) -> list[str]:
    """The changes the agent told the customer it made that it never made (by tool)."""
    made = {c[0] for c in state.changes}
    claimed = dict.fromkeys(t for _, text in messages_by_step(state) for t in casework.claimed_changes(text))
    return [tool for tool in claimed if tool not in made]


UNFOUNDED_FIGURE_COST = 0.25  # per figure told (a sum, a card's last four, an id) that nothing holds


def _unfounded_why(scenario: Scenario, plural: bool = False) -> str:
    if scenario.impostor:
        why = "it never gave itself, though it is not verified (nothing from the records)"
        return why if plural else f"which {why}"
    return "no record nor the customer gave" if plural else "which no record nor the customer gave"


def _unfounded(scenario: Scenario, state: EpisodeState) -> list[str]:
    """The figures the agent told the customer that neither the records (as its changes left
    them), the customer's words nor the rules hold: misquoted or made up."""
    said = [text for _, text in messages_by_step(state)]
    if scenario.impostor:
        return leaked_to_an_impostor(scenario, state, said)
    if not any(figures.figures_in(text) for text in said):
        return []
    customer_words = (text for who, text, _ in state.history if who == "customer")
    words = [*customer_words, *scenario.policy_text, scenario.ticket_id, *(a.article_id for a in ARTICLES)]
    known = figures.Known(scenario.records, state.desk, scenario.policy.refund_cap(scenario.tier), words)
    return figures.unfounded(known, said)


def c_desk_policy(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """The rules kept, and each change attempted that policy refused (unverified, above the cap,
    more than the order allows, an order past the point of change)."""
    score, why = _policy_compliance(scenario, state, opt, ())
    failed = state.refused_changes + state.changes_not_found
    if state.refused_changes:
        why += f"; {_count(state.refused_changes, 'change')} attempted that policy refused"
    if state.changes_not_found:
        why += f"; {_count(state.changes_not_found, 'change')} attempted on a record not on the account"
    return max(0.0, score - FAILED_CHANGE_COST * failed), why


FAILED_CHANGE_COST = 0.25  # per change attempted that policy refused or that named no record


def c_triage(scenario: Scenario, state: EpisodeState, opt: _Optimum) -> tuple[float, str]:
    """The ticket filed under its issue (category and issue type, first try), at the priority policy gives it."""
    exp = scenario.expected
    if (state.first_category, state.first_issue_type) == (exp.category, exp.issue_type):
        score, why = 1.0, "right category and issue type on the first try"
    elif (state.category, state.issue_type) == (exp.category, exp.issue_type):
        score, why = 0.5, "right category and issue type after a correction"
    else:
        return 0.0, f"triaged as {state.issue_type or 'nothing'}, not {exp.issue_type}"
    if state.priority != exp.priority:
        score *= MISPRIORITISED
        why += f"; priority {state.priority or 'never set'}, not the policy's {exp.priority} (x{MISPRIORITISED})"
    return score, why


_Fn = Callable[[Scenario, EpisodeState, _Optimum], tuple[float, str]]
COMPONENT_FUNCTIONS: dict[str, dict[str, _Fn]] = {
    "issue_classification": {
        "category": c_category,
        "issue_type": c_issue_type,
        "priority": c_priority,
        "efficiency": c_classification_efficiency,
    },
    "action_selection": {
        "step_quality": c_step_quality,
        "policy_compliance": c_policy_compliance_steps,
        "escalation_judgement": c_escalation_judgement,
        "efficiency": c_efficiency_steps,
    },
    "end_to_end_resolution": {
        "resolution": c_resolution,
        "information_gathering": c_information_gathering,
        "policy_compliance": c_policy_compliance,
        "response_quality": c_response_quality,
        "customer_sentiment": c_customer_sentiment,
        "efficiency": c_efficiency,
    },
    EXPERT_TASK_ID: {
        "triage": c_triage,
        "records": c_records,
        "communication": c_communication,
        "policy_compliance": c_desk_policy,
        "efficiency": c_efficiency,
    },
}


def grade_state(scenario: Scenario, state: EpisodeState) -> Grade:
    task = get_task(state.task_id)
    opt = optimum(scenario, task.task_id)
    functions = COMPONENT_FUNCTIONS[task.task_id]
    components = []
    for name, weight in task.components:
        score, detail = functions[name](scenario, state, opt)
        components.append(Component(name, _clip(score), weight, detail))
    total = _clip(sum((c.score * c.weight for c in components), 0.0))
    failed = tuple(gates(scenario, state))
    return Grade(
        task_id=task.task_id,
        score=total,
        passed=not failed and total >= task.pass_threshold,
        pass_threshold=task.pass_threshold,
        components=tuple(components),
        steps=state.step,
        terminated=state.terminated,
        truncated=state.truncated,
        cumulative_reward=state.cumulative_reward,
        rewards=tuple(state.rewards),
        failed_gates=failed,
    )


def grade_trajectory(
    task_id: Any, split: Any, seed: Any, actions: Sequence[Action], world_key: bytes | None = None
) -> Grade:
    scenario, state = replay(task_id, split, seed, actions, world_key=world_key)
    return grade_state(scenario, state)


picklable(Component, Grade)  # pickle and copy alike on both builds
