"""Scripted episodes of the expert task (expert_resolution) with tool calls, for the contract
tests: a refused change before verification, a look-up that finds nothing, the look-ups that
find the case, verify_identity, the changes the case needs (casework.remedy_calls), then the
expert policy's answer and close. Built by stepping the library, so every call is one the
episode can take."""

from __future__ import annotations

from supportenv import casework, expert
from supportenv.actions import Action, ask, use_tool
from supportenv.episode import step
from supportenv.replay import new_episode
from supportenv.tasks import EXPERT_TASK_ID

TASK = EXPERT_TASK_ID
SPLIT = "validation"


def script(seed: int, split: str = SPLIT) -> list[Action]:
    scenario, state = new_episode(TASK, split, seed)
    proofs = casework.identity_proofs(scenario.records)
    email, order = proofs["account_email"], proofs.get("order_id", "ORD-000001")
    plan = [
        use_tool("issue_refund", order_id=order, amount="1.00"),  # refused: not verified yet
        ask("account_email", "order_id", "card_last_four"),
        use_tool("look_up_customer", account_email=email),
        use_tool("look_up_order", order_id="ORD-000000"),  # not found
        use_tool("look_up_order", order_id=order),
        use_tool("look_up_payments", account_email=email),
        use_tool("verify_identity"),
        *[Action("use_tool", tool=call.name, arguments=call.arguments) for call in casework.remedy_calls(scenario)],
    ]
    actions: list[Action] = []
    for action in plan:
        if state.done:
            return actions
        actions.append(action)
        step(scenario, state, action)
    while not state.done:
        actions.append(expert.expert_action(scenario, state, TASK))
        step(scenario, state, actions[-1])
    return actions


def _first_seed_needing(tool: str) -> int:
    """The first validation seed whose case needs this change first and whose script ends with
    mark_resolved within the step limit (found, not hard-coded, so that a change to the world's
    draws keeps the episodes what they are meant to be)."""

    def fits(seed: int) -> bool:
        scenario, state = new_episode(TASK, SPLIT, seed)
        needed = casework.remedies(scenario)
        if not needed or needed[0].tool != tool:
            return False
        for action in script(seed):
            step(scenario, state, action)
        return state.terminated

    return next(s for s in range(500) if fits(s))


# A refund (after verify_identity), a reship, and a third case.
REFUND_SEED = _first_seed_needing("issue_refund")
SEEDS = (_first_seed_needing("reship_order"), REFUND_SEED, 7)
