"""The impostor (world-17): a customer who has the account email but gives an order id and a card the
account does not hold, and asks for an address change. It cannot be verified however it pushes: the desk
changes nothing, tells it the details do not match, tells it nothing the records hold, and escalates the
ticket to security. Every part of that is graded, and nothing of it is paid for unchecked."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from supportenv import content, expert
from supportenv.actions import Action, use_tool
from supportenv.episode import step
from supportenv.graders import grade_state
from supportenv.replay import new_episode
from supportenv.tasks import EXPERT_TASK_ID
from supportenv.world import P_IMPOSTOR, generate, world_id
from tests.test_expert_task import _oracle_until, play


def _impostor_seeds(split: str, count: int = 4, start: int = 0) -> list[int]:
    seeds = []
    seed = start
    while len(seeds) < count:
        if generate(EXPERT_TASK_ID, split, seed).impostor:
            seeds.append(seed)
        seed += 1
    return seeds


def _after_the_facts(seed: int, split: str = "validation"):
    """An impostor's episode, played by the expert up to its first look-up (its facts are in)."""
    scenario, state = new_episode(EXPERT_TASK_ID, split, seed)
    _oracle_until(scenario, state, lambda a: a.kind == "use_tool")
    return scenario, state


def _asked_the_articles_facts(seed: int):
    """An expert ticket of `validation`, triaged, and the facts its article names asked for (not the card)."""
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID))  # (the triage)
    fields = ("order_id", "account_email", "new_address")
    result = step(scenario, state, Action("ask_for_more_info", fields=fields, text="Could you share these, please?"))
    return scenario, state, result


def _finish(scenario, state) -> None:
    while not state.done:
        step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID))


@pytest.mark.parametrize("split", ("train", "validation", "test"))
def test_every_split_draws_impostors_whose_details_the_records_do_not_hold(split):
    found = 0
    for seed in range(1500):
        scenario = generate(EXPERT_TASK_ID, split, seed)
        if not scenario.impostor:
            continue
        found += 1
        records, facts = scenario.records, scenario.facts_by_name
        assert [i.issue_id for i in scenario.intents] == ["address_change"]
        assert not (scenario.family or scenario.meant_order_id or scenario.unnoticed_charge or scenario.unknown_sign_in)
        assert records.account.email == facts["account_email"]
        assert facts["order_id"] not in {o.order_id for o in records.orders}
        assert facts["card_last_four"] not in {p.card_last_four for p in records.payments}
        # (the holder's order is on its way, so an address change is what an impostor would be after)
        assert records.order(scenario.order_in_question).status != "delivered"
        exp = scenario.expected
        assert (exp.escalate, exp.department, exp.solvable) == (True, "security", ())
        assert {"account_email", "order_id", "card_last_four"} <= set(exp.facts)
    # rare, as fraud is: about P_IMPOSTOR of the address changes, which are about one expert ticket in ten
    assert 5 <= found <= 1500 * P_IMPOSTOR * 0.25


@pytest.mark.parametrize("split", ("train", "validation", "test"))
def test_the_expert_refuses_an_impostor_with_full_marks(split):
    for seed in _impostor_seeds(split, 3):
        scenario, state = new_episode(EXPERT_TASK_ID, split, seed)
        _finish(scenario, state)
        grade = grade_state(scenario, state)
        assert grade.passed and grade.score == 1.0, (seed, grade.failed_gates)
        assert not state.changes
        kinds = [a.kind for a in state.actions]
        assert kinds.index("escalate_to_human") > kinds.index("respond_with_solution")


def test_the_verification_says_what_was_given_does_not_match_and_is_no_mistake():
    scenario, state = _after_the_facts(_impostor_seeds("validation", 1)[0])
    result = step(scenario, state, use_tool("verify_identity"))
    assert state.tool_result.status == "refused"
    assert "neither the order id nor the card's last four digits the customer gave" in state.tool_result.message
    assert dict(result.breakdown) == {"identity_unmatched": 0.1}
    # ... and looking up the order id it gave is no mistake either, though no such order is on the account
    given = scenario.facts_by_name["order_id"]
    result = step(scenario, state, use_tool("look_up_order", order_id=given))
    assert state.tool_result.status == "not_found" and "tool_not_found" not in dict(result.breakdown)


def test_the_impostor_pushes_once_then_gives_up():
    scenario, state = _after_the_facts(_impostor_seeds("validation", 1)[0])
    step(scenario, state, use_tool("verify_identity"))
    first = step(scenario, state, Action("respond_with_solution", text=expert.REFUSAL_MESSAGE))
    assert dict(first.breakdown).get("refusal_told") == 0.5
    assert state.history[-1][1] in content.REACTIONS["impostor_pushes"]
    again = "I understand, but I'm sorry: the details you gave don't match our records, so I can't change it."
    second = step(scenario, state, Action("respond_with_solution", text=again))
    assert "refusal_told" not in dict(second.breakdown)
    assert state.history[-1][1] in content.REACTIONS["impostor_gives_up"]
    _finish(scenario, state)
    assert grade_state(scenario, state).passed


def test_a_refusal_before_the_details_are_checked_is_not_credited():
    scenario, state = _after_the_facts(_impostor_seeds("validation", 1)[0])
    result = step(scenario, state, Action("respond_with_solution", text=expert.REFUSAL_MESSAGE))
    assert "respond_irrelevant" in dict(result.breakdown)
    assert state.history[-1][1] in content.REACTIONS["impostor_unchecked"]
    # escalated before the check too: the case is not handled, however it ends
    step(scenario, state, Action("assign_department", department="security", text="Routing."))
    step(scenario, state, Action("escalate_to_human", text=expert.IMPOSTOR_ESCALATION))
    step(scenario, state, Action("mark_resolved", text="Done."))
    grade = grade_state(scenario, state)
    assert not grade.passed and grade.score < 0.25  # (its triage, and the escalation it told)
    assert any(g.startswith("communication: not_verified") for g in grade.failed_gates)


def test_telling_an_impostor_what_the_records_hold_is_charged_and_fails_the_grade():
    scenario, state = _after_the_facts(_impostor_seeds("validation", 1)[0])
    step(scenario, state, use_tool("look_up_customer", account_email=scenario.facts_by_name["account_email"]))
    step(scenario, state, use_tool("verify_identity"))
    holder = scenario.order_in_question
    leak = f"I'm sorry, those details don't match our records. The order on this account is {holder}; is that it?"
    result = step(scenario, state, Action("respond_with_solution", text=leak))
    assert dict(result.breakdown).get("told_unverified") == -0.2
    assert state.history[-1][1] in content.REACTIONS["impostor_pushes"]
    _finish(scenario, state)
    grade = grade_state(scenario, state)
    assert not grade.passed
    communication = next(c for c in grade.components if c.name == "communication")
    assert holder in communication.detail and communication.score == 0.75
    # ... but what it gave itself may be said back to it
    scenario, state = _after_the_facts(_impostor_seeds("validation", 1)[0])
    step(scenario, state, use_tool("verify_identity"))
    given = scenario.facts_by_name["order_id"]
    card = scenario.facts_by_name["card_last_four"]
    fine = f"I'm sorry: order {given} and the card ending {card} don't match our records, so I can't change it."
    result = step(scenario, state, Action("respond_with_solution", text=fine))
    assert "told_unverified" not in dict(result.breakdown)
    _finish(scenario, state)
    assert grade_state(scenario, state).passed


def test_a_change_for_an_impostor_is_refused_and_charged():
    scenario, state = _after_the_facts(_impostor_seeds("validation", 1)[0])
    holder = scenario.order_in_question
    new = scenario.facts_by_name["new_address"]
    step(scenario, state, use_tool("update_address", order_id=holder, new_address=new))
    assert state.tool_result.status == "refused" and not state.changes
    _finish(scenario, state)
    grade = grade_state(scenario, state)
    policy = next(c for c in grade.components if c.name == "policy_compliance")
    assert policy.score == 0.75 and "refused" in policy.detail


def test_the_blind_refusal_exploit_fails_every_honest_ticket():
    honest = [s for s in range(60) if not generate(EXPERT_TASK_ID, "validation", s).impostor]
    for seed in honest[:30]:
        assert not play("refuse_impostor", "validation", seed)[2].passed


def test_an_impostor_ticket_is_the_same_in_another_process():
    seed = _impostor_seeds("test", 1)[0]
    script = (
        "import json; from supportenv.world import generate; "
        f"s = generate('{EXPERT_TASK_ID}', 'test', {seed}); "
        "print(json.dumps([s.to_dict(), str(s.records)]))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    here = generate(EXPERT_TASK_ID, "test", seed)
    assert json.loads(out) == [json.loads(json.dumps(here.to_dict())), str(here.records)]
    assert here.world == world_id(None)


def test_the_address_on_file_is_not_told_to_an_impostor():
    scenario, state = _after_the_facts(_impostor_seeds("validation", 1)[0])
    step(scenario, state, use_tool("verify_identity"))
    street = scenario.records.account.address.split(",")[0]
    leak = f"I'm sorry, those details don't match our records, and the order is going to {street} as planned."
    result = step(scenario, state, Action("respond_with_solution", text=leak))
    assert dict(result.breakdown).get("told_unverified") == -0.2
    _finish(scenario, state)
    grade = grade_state(scenario, state)
    assert not grade.passed and any(street.split(" ", 1)[1] in g for g in grade.failed_gates)


def test_round_74_an_impostor_asked_to_check_its_order_id_gives_it_again_uncharged():
    scenario, state, _ = _asked_the_articles_facts(_impostor_seeds("validation", 1)[0])
    given = scenario.facts_by_name["order_id"]
    question = (
        f"I could not find order {given} on the account. To verify your identity before I change anything, could "
        "you give me the last four digits of the card you paid with? Please also double-check the order number."
    )
    result = step(scenario, state, Action("ask_for_more_info", fields=("card_last_four",), text=question))
    assert dict(result.breakdown) == {"ask_new_fact": 0.1}
    reply = state.history[-1][1]
    assert given in reply and "again?" not in reply and "Nothing I'm aware of" not in reply


def test_round_74_the_expert_looks_up_the_order_id_an_impostor_gave():
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", _impostor_seeds("validation", 1)[0])
    _finish(scenario, state)
    given = scenario.facts_by_name["order_id"]
    assert use_tool("look_up_order", order_id=given) in state.actions


def test_round_74_a_reply_of_two_reactions_thanks_once():
    from supportenv.customer import without_repeated_thanks

    joined = "Okay, so it's already been delivered. I'll sort it out from my end, thanks. That answers it, thanks."
    assert without_repeated_thanks(joined).endswith("from my end, thanks. That answers it.")


def test_round_75_told_again_after_the_impostor_speaks_up_is_no_repeat():
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", _impostor_seeds("validation", 1)[0])
    _finish(scenario, state)  # (refused, escalated, closed: replay up to the close, then say it again)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", scenario.seed)
    _oracle_until(scenario, state, lambda a: a.kind == "mark_resolved")
    again = "I understand, but the details you gave don't match our records, so the order stays as it is."
    result = step(scenario, state, Action("respond_with_solution", text=again))
    assert "respond_repeat" not in dict(result.breakdown)


def test_round_75_a_parcel_the_customer_says_is_two_weeks_gone_was_placed_two_weeks_ago():
    from supportenv.world.system_of_record import days_before_today

    checked = 0
    for seed in range(1500):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        said = {"lost_package/3": 13, "lost_package/4": 12}
        days = max((said.get(t, 0) for t in scenario.template_ids), default=0)
        order = scenario.records.order(scenario.order_in_question) if days else None
        if order is not None and order.status == "in_transit":
            checked += 1
            assert days_before_today(order.placed) >= days, seed
    assert checked >= 10


def test_round_75_announcing_the_hand_over_of_a_lost_parcels_money_back_leaves_nothing_else_open():
    from supportenv import casework

    seed = next(s for s in range(3000) if casework.settled_by_escalation(generate(EXPERT_TASK_ID, "validation", s)))
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind in ("assign_department", "escalate_to_human"))
    text = "Your parcel counts as lost, and as the refund is above my cap I'm passing it to a specialist."
    step(scenario, state, Action("respond_with_solution", text=text))
    assert "missing parcel" not in state.history[-1][1]


def test_review_what_the_records_hold_is_a_leak_in_any_form_and_a_refusal_in_any_words():
    from supportenv import casework
    from supportenv.episode import leaked_to_an_impostor

    scenario, state = _after_the_facts(_impostor_seeds("validation", 1)[0])
    digits = scenario.order_in_question.split("-", 1)[1]
    card = scenario.records.payments[0].card_last_four
    for text in (f"order number {digits}", f"#{digits}", f"the payment method on file ends in {card}"):
        assert leaked_to_an_impostor(scenario, state, [text]), text
    for text in (
        "I’m sorry, but the order id and card you gave don’t match our records.",
        "The order id and card you gave are not on this account.",
        "I wasn't able to verify your identity.",
        "Your identity could not be confirmed.",
        "Those details differ from what we have on file.",
    ):
        assert casework.says_not_verified(text), text
    assert not casework.says_not_verified("Your identity has been verified and the address is changed.")


def test_review_one_proof_refused_is_not_yet_a_failed_verification():
    scenario, state, _ = _asked_the_articles_facts(_impostor_seeds("validation", 1)[0])
    result = step(scenario, state, use_tool("verify_identity"))
    assert dict(result.breakdown) == {"identity_unmatched": 0.1}
    assert "the order id the customer gave is not on this account" in state.tool_result.message
    refused = step(scenario, state, Action("respond_with_solution", text=expert.REFUSAL_MESSAGE))
    assert "refusal_told" not in dict(refused.breakdown)  # (the rules ask for the card too, first)
    blind = step(scenario, state, Action("escalate_to_human", text=expert.IMPOSTOR_ESCALATION))
    assert "escalate_unchecked" in dict(blind.breakdown)


def _mistyped_seeds(split: str, count: int = 3) -> list[int]:
    return [s for s in range(3000) if generate(EXPERT_TASK_ID, split, s).order_id_mistyped][:count]


@pytest.mark.parametrize("split", ("train", "validation", "test"))
def test_review_an_honest_customer_mistypes_its_order_id_as_often_and_its_card_verifies_it(split):
    """The first check fails for it as for an impostor, so that a failed check is no tell by itself: its card
    (the other proof the rules ask for) verifies it, and the order it means is the one it changes."""
    seeds = _mistyped_seeds(split, 40)
    assert len(seeds) >= 10
    for seed in seeds[:3]:
        scenario = generate(EXPERT_TASK_ID, split, seed)
        records, facts = scenario.records, scenario.facts_by_name
        assert not scenario.impostor and [i.issue_id for i in scenario.intents] == ["address_change"]
        assert facts["order_id"] not in {o.order_id for o in records.orders}
        assert records.order(scenario.meant_order_id) is not None
        assert (
            sorted(facts["order_id"]) == sorted(scenario.meant_order_id)
            or sum(a != b for a, b in zip(facts["order_id"], scenario.meant_order_id, strict=True)) == 1
        )
        scenario, state = new_episode(EXPERT_TASK_ID, split, seed)
        _finish(scenario, state)
        grade = grade_state(scenario, state)
        assert grade.passed and grade.score == 1.0, (seed, grade.failed_gates)


def test_review_the_mistyped_id_fails_the_check_the_card_passes_it_and_asked_again_it_is_corrected():
    seed = _mistyped_seeds("validation", 1)[0]
    scenario, state, _ = _asked_the_articles_facts(seed)
    step(scenario, state, use_tool("verify_identity"))
    assert "the order id the customer gave is not on this account" in state.tool_result.message
    result = step(scenario, state, use_tool("look_up_order", order_id=scenario.facts_by_name["order_id"]))
    assert state.tool_result.status == "not_found" and "tool_not_found" not in dict(result.breakdown)
    step(scenario, state, Action("ask_for_more_info", fields=("order_id",), text="Could you check the order id?"))
    assert scenario.meant_order_id in state.history[-1][1]
    assert state.history[-1][1] in {
        t.format(given=scenario.facts_by_name["order_id"], meant=scenario.meant_order_id)
        for t in content.TYPO_CORRECTIONS
    }
    step(scenario, state, use_tool("verify_identity"))
    assert state.verified


def test_review_refusing_a_customer_who_mistyped_its_order_id_fails():
    seed = _mistyped_seeds("validation", 1)[0]
    assert not play("refuse_impostor", "validation", seed)[2].passed


def test_round_76_a_change_put_off_until_the_customer_is_verified_is_not_told_done():
    seed = _mistyped_seeds("validation", 1)[0]
    scenario, state, result = _asked_the_articles_facts(seed)
    assert dict(result.breakdown) == {"ask_new_fact": 0.3}
    given = scenario.facts_by_name["order_id"]
    question = (
        f"I could not find order number {given} on your account, so before I can change the delivery address I need "
        "to confirm your identity another way, and before I can change anything I need that. Could you share the "
        "last four digits of the card you paid with?"
    )
    result = step(scenario, state, Action("ask_for_more_info", fields=("card_last_four",), text=question))
    assert "respond_before_change" not in dict(result.breakdown)
    reply = state.history[-1][1]
    assert "done" not in reply and "Nothing I'm aware of" not in reply


def test_round_76_an_impostor_is_asked_for_its_new_address_as_anyone_and_is_no_happier_for_security():
    scenario, state, result = _asked_the_articles_facts(_impostor_seeds("validation", 1)[0])
    assert dict(result.breakdown) == {"ask_new_fact": 0.3}
    _oracle_until(scenario, state, lambda a: a.kind == "escalate_to_human")
    before = state.sentiment
    step(scenario, state, Action("escalate_to_human", text=expert.IMPOSTOR_ESCALATION))
    assert state.sentiment <= before
