"""The figures the desk tells the customer: read from its words, checked against what it was given
(the records as its changes left them, the customer's words, the rules), charged by the expert
grade when nothing holds them, and a card the customer knows put right by the customer."""

from __future__ import annotations

import pytest

from supportenv import casework, expert, figures, graders
from supportenv.actions import Action
from supportenv.episode import step
from supportenv.replay import new_episode, replay
from supportenv.tasks import EXPERT_TASK_ID
from supportenv.tools import Change, Desk
from supportenv.world import generate

SPLIT = "validation"


@pytest.mark.parametrize(
    ("text", "figure"),
    [
        ("I have refunded $1,234.50 to you.", ("money", "1234.50")),
        ("That's about $40 in all.", ("money", "40")),
        ("It goes back to the card ending in 1784.", ("card", "1784")),
        ("The last four digits of your card, 1784, match.", ("card", "1784")),
        ("Your Visa ****1784 was charged.", ("card", "1784")),
        ("Your card ****1784 was charged.", ("card", "1784")),
        ("Order ORD-472977 is on its way.", ("id", "ORD-472977")),
        ("Its tracking number is 1ZUE6EF92CRJ.", ("id", "1ZUE6EF92CRJ")),
        ("The card ···7184 was charged.", ("card", "7184")),
        ("The last four digits of your card are 1784.", ("card", "1784")),
        ("Your invoice INV-2026-79877 is attached.", ("id", "INV-2026-79877")),
    ],
)
def test_a_message_s_figures_are_read(text: str, figure: tuple[str, str]) -> None:
    assert figure in [(f.kind, f.value) for f in figures.figures_in(text)]


@pytest.mark.parametrize(
    "text",
    [
        "The order ending 4977 is on its way.",  # (no card: four digits of something else)
        "It should arrive within 3-5 business days, by 2026-12-11.",
        "Please use article KB-PAY-01 as a guide.",  # (an id, but the rules hold it: checked apart)
        # (a code review of graders-14: a year read as a card's ending in a sentence that named a card)
        "Nothing more will be charged to your card: your plan simply ends on 2026-12-04.",
        "For the billing period ending 2026-11-30, your card was charged once.",
        "**Order date:** 2026-11-20, paid by card",
        "Your last four payments on the card were on 2026-11-20, 2026-11-18 and 2026-11-13.",
        "The order ending 5607 was paid with your card.",
    ],
)
def test_no_card_ending_is_read_where_no_card_is_named(text: str) -> None:
    assert [f for f in figures.figures_in(text) if f.kind == "card"] == []


def _expert_scenario(predicate):
    return next(s for s in (generate(EXPERT_TASK_ID, SPLIT, seed) for seed in range(400)) if predicate(s))


def test_known_holds_the_records_their_sums_and_the_customer_s_words_but_nothing_else() -> None:
    scenario = _expert_scenario(lambda s: len(s.records.orders) >= 2 and s.records.payments)
    records = scenario.records
    first, second = records.orders[0], records.orders[1]
    desk = Desk(verified=True, changes=(Change("issue_refund", first.order_id, "12.34"),))
    words = ["I paid $77.77 for it.", "Mine ends in 1111, not 2222.", "It's been 12 days."]
    known = figures.Known(records, desk, scenario.policy.refund_cap(scenario.tier), words)
    card = records.payments[0].card_last_four
    holds = [
        f"${first.total:,.2f}",  # on record
        f"${abs(first.total - second.total):,.2f}",  # a difference of two
        f"${first.total + second.total:,.2f}",  # a sum of two
        "$12.34",  # the refund the desk made
        "$77.77",  # the customer's own words
        f"${round(first.total):d}",  # without cents: within a dollar
        f"the card ending {card}",
        first.order_id,
        "UTC-5",  # (no record's id: no record's prefix)
        first.tracking_number,
    ]
    for text in holds:
        assert figures.unfounded(known, [f"About {text}."]) == [], text
    # (a card the customer's words only echo, putting it right, is not its card; a count of days is no sum)
    made_up = [f"${first.total + 0.37:,.2f}", "ORD-000001", "the card ending 2222", f"${first.total + 12:,.2f}"]
    for text in made_up:
        assert figures.unfounded(known, [f"About {text}."]), text


def _oracle_actions(seed: int) -> list[Action]:
    scenario, state = new_episode(EXPERT_TASK_ID, SPLIT, seed)
    actions = []
    while not state.done:
        actions.append(expert.expert_action(scenario, state, EXPERT_TASK_ID))
        step(scenario, state, actions[-1])
    return actions


def _refund_seed() -> int:
    """A validation seed whose oracle refunds and answers, to a customer who knows its card (found, not
    hard-coded)."""
    for seed in range(400):
        if "card_last_four" not in generate(EXPERT_TASK_ID, SPLIT, seed).facts_by_name:
            continue
        actions = _oracle_actions(seed)
        kinds = [a.kind for a in actions]
        if any(a.tool == "issue_refund" for a in actions) and "respond_with_solution" in kinds:
            return seed
    raise AssertionError("no seed whose oracle refunds")


def test_a_card_misquoted_in_an_answer_is_charged_once_by_communication_and_fails_the_gate() -> None:
    seed = _refund_seed()
    actions = _oracle_actions(seed)
    assert graders.grade_trajectory(EXPERT_TASK_ID, SPLIT, seed, actions).score == pytest.approx(1.0)
    scenario = generate(EXPERT_TASK_ID, SPLIT, seed)
    card = scenario.records.payments[0].card_last_four
    wrong = f"{(int(card) + 1) % 10000:04d}"
    last = max(n for n, a in enumerate(actions) if a.kind == "respond_with_solution")
    misquoted = actions[last]._replace(text=actions[last].text + f" It goes back to the card ending {wrong}.")
    actions[last] = misquoted
    grade = graders.grade_trajectory(EXPERT_TASK_ID, SPLIT, seed, actions)
    communication = next(c for c in grade.components if c.name == "communication")
    assert f"the card ending {wrong}" in communication.detail
    assert communication.score == pytest.approx(1.0 - graders.UNFOUNDED_FIGURE_COST)
    assert not grade.passed
    assert any(f"the card ending {wrong}" in g for g in grade.failed_gates)
    # ... and the customer, who knows its card, says so.
    _, state = replay(EXPERT_TASK_ID, SPLIT, seed, actions[: last + 1])
    assert f"ends in {card}" in state.history[-1][1] and wrong in state.history[-1][1]


def test_the_oracle_never_tells_a_figure_nothing_holds() -> None:
    for seed in range(60):
        grade = graders.grade_trajectory(EXPERT_TASK_ID, SPLIT, seed, _oracle_actions(seed))
        communication = next(c for c in grade.components if c.name == "communication")
        assert "no record nor the customer gave" not in communication.detail, seed


def test_sums_worked_out_from_an_order_of_several_lines_hold_to_the_half_cent() -> None:
    """A code review of graders-14: the items of a three-line order together, the discount taken off them, and
    what was paid for a line rounded half up (casework.paid_for) were charged as made up."""
    scenario = _expert_scenario(lambda s: any(len(o.items) >= 3 and o.discount_percent for o in s.records.orders))
    order = next(o for o in scenario.records.orders if len(o.items) >= 3 and o.discount_percent)
    known = figures.Known(scenario.records, Desk(), scenario.policy.refund_cap(scenario.tier), [])
    items = sum(i.unit_price * i.quantity for i in order.items)
    off = items * order.discount_percent / 100
    for told in (items, off, items - off, *(casework.paid_for(order, i) for i in order.items)):
        half_up = f"{int(told * 100 + 0.5 + 1e-9) / 100:.2f}"  # (as a till rounds)
        for cents in {f"{told:.2f}", half_up}:
            assert figures.unfounded(known, [f"That came to ${cents}."]) == [], (told, cents)


def test_the_customer_puts_a_card_right_only_if_it_knows_its_card_and_once() -> None:
    seed = _refund_seed()
    scenario, state = new_episode(EXPERT_TASK_ID, SPLIT, seed)
    own = scenario.facts_by_name["card_last_four"]
    wrong = f"{(int(own) + 1) % 10000:04d}"
    answer = f"Thanks for your patience. The card ending {wrong} is the one on file."
    step(scenario, state, Action("respond_with_solution", text=answer))
    first = state.history[-1][1]
    step(scenario, state, Action("respond_with_solution", text=answer + " Sorry again."))
    second = state.history[-1][1]
    assert f"ends in {own}" in first and f"ends in {own}" not in second
    # ... and a customer not sure which card it paid with has nothing to put right.
    other = next(s for s in range(400) if "card_last_four" not in generate(EXPERT_TASK_ID, SPLIT, s).facts_by_name)
    scenario, state = new_episode(EXPERT_TASK_ID, SPLIT, other)
    step(scenario, state, Action("respond_with_solution", text=answer))
    assert wrong not in state.history[-1][1]
