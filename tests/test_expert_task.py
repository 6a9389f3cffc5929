"""The expert task: full marks are reachable, nothing that ignores the customer or the records
scores, the rule baseline sits between, and each mistake is charged once, where it belongs."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import supportenv
from baseline_agent.policies import EXPLOITS
from supportenv import casework, content, customer, expert, world
from supportenv.actions import Action, use_tool
from supportenv.catalog import (
    ALL_FAMILIES,
    ARTICLES_BY_ID,
    CHANGE_FAMILIES,
    HELD_OUT_FAMILIES,
    ISSUE_TYPES_BY_ID,
    RETURN_WINDOW_DAYS,
)
from supportenv.episode import observe, step
from supportenv.errors import InvalidActionError
from supportenv.graders import grade_state
from supportenv.replay import new_episode
from supportenv.rewards import reward
from supportenv.tasks import EXPERT_TASK_ID, get_task
from supportenv.world import generate
from supportenv.world.system_of_record import CHEAPEST_CENTS, days_before_today, in_band
from tests import in_process

ROOT = Path(__file__).resolve().parent.parent
SEEDS = range(200)


def play(policy_name: str, split: str, seed: int):
    return in_process.play(policy_name, EXPERT_TASK_ID, split, seed)


@pytest.fixture(scope="module")
def board():
    names = ("oracle", "rule", "random", *EXPLOITS)
    return {name: [play(name, "test", seed)[2] for seed in SEEDS] for name in names}


def mean(grades) -> float:
    return sum(g.score for g in grades) / len(grades)


def pass_rate(grades) -> float:
    return sum(g.passed for g in grades) / len(grades)


def test_the_oracle_reaches_full_marks(board):
    assert mean(board["oracle"]) >= 0.98
    assert pass_rate(board["oracle"]) == 1.0


@pytest.mark.parametrize("policy", ("random", *EXPLOITS))
def test_exploits_earn_nothing(board, policy):
    assert mean(board[policy]) <= 0.15, policy
    assert pass_rate(board[policy]) <= 0.02, policy


def test_the_rule_baseline_sits_between(board):
    rule = mean(board["rule"])
    assert rule < 0.7
    # (well clear of every exploit: 0.333 against secure_account's 0.143 on these seeds, the exploit whose
    # blind reset is right wherever the account is locked, a ticket in six)
    assert rule > max(mean(board[p]) for p in ("random", *EXPLOITS)) + 0.15


def test_every_component_below_full_marks_says_why(board):
    for grades in board.values():
        for grade in grades:
            assert [c.name for c in grade.components] == [n for n, _ in get_task(EXPERT_TASK_ID).components]
            assert all(0.0 <= c.score <= 1.0 for c in grade.components)
            assert all(c.detail for c in grade.components if c.score < 1.0)
            assert grade.passed == (not grade.failed_gates and grade.score >= grade.pass_threshold)


def _seed_with(issue: str, tool: str = "", split: str = "validation"):
    """A validation ticket whose first issue is `issue`, as the customer claims it (no judgement
    family, no duplicate charge it never noticed), and (if given) whose remedy uses `tool`."""
    for seed in range(2000):
        scenario, _ = new_episode(EXPERT_TASK_ID, split, seed)
        remedy = casework.remedy_for(scenario, issue)
        first = scenario.intents[0].issue_id == issue and not scenario.family and not scenario.unnoticed_charge
        if first and len(scenario.intents) == 1 and (not tool or remedy):
            return seed
    raise AssertionError(f"no {issue} ticket")


# Patching the expert's internals reaches only the pure build: a compiled module's calls to its own
# functions are bound when it is built. The pure build's pass of `make test` runs these; the two
# builds decide alike (tests/test_builds.py).
patches_the_expert = pytest.mark.skipif(
    supportenv.build() == "compiled", reason="patches the expert's internals: the pure build's pass runs it"
)


def _oracle_until(scenario, state, stop) -> None:
    """Play the expert until `stop(next_action)` holds (the action is not taken)."""
    while not state.done:
        action = expert.expert_action(scenario, state, EXPERT_TASK_ID)
        if stop(action):
            return
        step(scenario, state, action)


def test_telling_a_change_done_before_it_is_made_is_not_applied():
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", _seed_with("double_charge", "issue_refund"))
    _oracle_until(scenario, state, lambda a: a.kind == "use_tool" and a.tool == "issue_refund")
    answer = Action("respond_with_solution", text="Sorry about that: we will refund the duplicate charge.")
    result = step(scenario, state, answer)
    assert "respond_before_change" in dict(result.breakdown)
    assert "double_charge" not in state.solved_intents
    assert "actually" in result.observation.customer_message.lower() or "?" in result.observation.customer_message


def test_a_change_never_made_told_to_the_customer_fails_communication():
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", _seed_with("delayed_delivery"))
    _oracle_until(scenario, state, lambda a: a.kind == "mark_resolved")
    step(scenario, state, Action("respond_with_solution", text="Also, I have refunded your order in full."))
    step(scenario, state, Action("mark_resolved", text="Done."))
    grade = grade_state(scenario, state)
    communication = next(c for c in grade.components if c.name == "communication")
    assert communication.score < 1.0 and "never made: issue_refund" in communication.detail
    assert not grade.passed and any(g.startswith("communication:") for g in grade.failed_gates)


def test_what_the_records_show_must_be_told():
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", _seed_with("delayed_delivery"))
    finding = casework.finding_for(scenario, "delayed_delivery")
    assert finding and finding.kind == "date"
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    vague = Action("respond_with_solution", text="Sorry for the wait: the carrier will give a new delivery date soon.")
    result = step(scenario, state, vague)
    assert "told_partly" in dict(result.breakdown)
    step(scenario, state, Action("mark_resolved", text="Done."))
    grade = grade_state(scenario, state)
    assert any(g.startswith("communication:") and "new delivery date" in g for g in grade.failed_gates)


def test_a_refused_change_and_an_unwanted_one_are_each_charged_once():
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", _seed_with("double_charge", "issue_refund"))
    remedy = casework.remedy_for(scenario, "double_charge")
    # Before verification: refused, charged by policy compliance (the records are untouched).
    step(scenario, state, use_tool("issue_refund", order_id=remedy.target, amount=remedy.value))
    assert state.refused_changes == 1 and not state.changes
    _oracle_until(scenario, state, lambda a: a.kind == "mark_resolved")
    # A second refund of the same amount: made, and charged by the records.
    step(scenario, state, use_tool("issue_refund", order_id=remedy.target, amount="1.00"))
    step(scenario, state, Action("mark_resolved", text="Done."))
    grade = {c.name: c for c in grade_state(scenario, state).components}
    assert "policy refused" in grade["policy_compliance"].detail and grade["policy_compliance"].score < 1.0
    assert "not needed: issue_refund" in grade["records"].detail and grade["records"].score < 1.0
    assert grade["communication"].score == 1.0


def test_tools_are_refused_on_the_tasks_that_do_not_take_them():
    scenario, state = new_episode("end_to_end_resolution", "validation", 0)
    with pytest.raises(InvalidActionError, match="does not take use_tool"):
        step(scenario, state, use_tool("check_service_status"))
    assert observe(scenario, state).allowed_actions == get_task("end_to_end_resolution").allowed_actions
    assert "use_tool" in observe(*new_episode(EXPERT_TASK_ID, "validation", 0)).allowed_actions


_PROBE = """
import json, sys
sys.path.insert(0, {root!r})
from tests.test_expert_task import play
out = []
for name in ("oracle", "rule", "every_tool"):
    for seed in (0, 1, 2, 7):
        scenario, state, grade = play(name, "test", seed)
        details = [c.detail for c in grade.components]
        out.append([name, seed, state.to_dict(), grade.score, details, list(grade.rewards)])
print(json.dumps(out))
"""


def test_the_same_episode_in_another_process_gives_the_same_records_transcript_and_grade():
    def run(hash_seed: str) -> list:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hash_seed}
        done = subprocess.run(
            [sys.executable, "-c", _PROBE.format(root=str(ROOT))],
            capture_output=True,
            text=True,
            env=env,
            cwd=ROOT,
            timeout=120,
            check=True,
        )
        return json.loads(done.stdout)

    first, second = run("1"), run("2")
    assert first == second
    assert any(row[2]["changes"] for row in first), "some episode changed the records"


def _family_seed(family: str, split: str) -> int:
    return next(s for s in range(2000) if new_episode(EXPERT_TASK_ID, split, s)[0].family == family)


def test_held_out_families_are_drawn_by_test_only():
    seen = {
        split: {new_episode(EXPERT_TASK_ID, split, s)[0].family for s in range(1500)}
        for split in ("train", "validation", "test")
    }
    for family in HELD_OUT_FAMILIES:
        assert family in seen["test"]
        assert family not in seen["train"] | seen["validation"]
    assert set(ALL_FAMILIES) <= seen["test"]
    assert set(ALL_FAMILIES) - set(HELD_OUT_FAMILIES) <= seen["validation"] & seen["train"]
    # The other tasks never draw one.
    assert not any(new_episode("end_to_end_resolution", "test", s)[0].family for s in range(300))


@pytest.mark.parametrize("family", sorted(set(ALL_FAMILIES) - set(CHANGE_FAMILIES)))
def test_a_claim_the_records_contradict_is_answered_with_what_they_show_and_nothing_changed(family):
    seed = _family_seed(family, "test")
    scenario, _, grade = play("oracle", "test", seed)
    assert grade.passed
    claim = scenario.intents[0].issue_id
    assert casework.remedy_for(scenario, claim) is None and casework.finding_for(scenario, claim)
    # Trusting the claim (the rule baseline refunds or reships what the customer says) fails it.
    _, _, rule_grade = play("rule", "test", seed)
    assert not rule_grade.passed


def test_part_refunded_before_is_refunded_only_what_is_left_and_the_customer_told_that_amount():
    seed = _family_seed("partly_refunded", "validation")
    scenario, _state, grade = play("oracle", "validation", seed)
    assert grade.passed
    order_id = scenario.order_in_question
    earlier = sum(r.amount for r in scenario.records.refunds_for(order_id))
    remedy = casework.remedy_for(scenario, "refund_request")
    assert earlier > 0 and float(remedy.value) == round(float(scenario.facts_by_name["amount"]) - earlier, 2)
    # Refunding what the customer asks (the rule baseline does) is more than the order allows.
    _, rule_state, rule_grade = play("rule", "validation", seed)
    assert not rule_grade.passed and rule_state.refused_changes


def test_a_refund_request_outside_the_return_window_is_told_the_delivery_day_and_the_window():
    seed = _family_seed("outside_return_window", "validation")
    scenario, _state = new_episode(EXPERT_TASK_ID, "validation", seed)
    finding = casework.finding_for(scenario, "refund_request")
    assert finding.kind == "window" and casework.remedy_for(scenario, "refund_request") is None
    day = finding.value
    assert finding.told_in(f"It was delivered on {day}, so the {RETURN_WINDOW_DAYS}-day return window has passed.")
    assert not finding.told_in(f"It was delivered on {day}.")  # (the reason, not only the day)
    assert not finding.told_in("It is outside our 30-day return window.")  # (the day: no script guesses it)
    # Inside the window (the rest of the refund requests), the refund is made.
    inside = [
        sc
        for s in range(300)
        if "refund_request" in (sc := new_episode(EXPERT_TASK_ID, "validation", s)[0]).expected.solvable
        and not sc.family
        and casework.remedy_for(sc, "refund_request")
    ]
    assert inside and all(not casework.outside_return_window(sc.records, sc.order_in_question) for sc in inside)


def test_a_pushy_customer_pushes_back_once_and_accepts_the_next_explanation():
    seed = next(
        s
        for s in range(2000)
        if casework.is_mistaken(sc := new_episode(EXPERT_TASK_ID, "validation", s)[0], sc.intents[0].issue_id)
        and sc.persona in ("angry", "confused")
    )
    scenario, state, grade = play("oracle", "validation", seed)
    assert state.pushed_back and grade.passed
    replies = [text for who, text, _ in state.history if who == "customer"]
    # (said alone, or after the news of a refund: "... As for my missing parcel: really? Nobody told me ...")
    pushbacks = [p.lower() for p in content.REACTIONS[f"pushback_{scenario.family}"]]
    assert any(p in r.lower() for r in replies for p in pushbacks)
    # The right answer is paid half when first given, though doubted (audit rounds 77 and 78: it looked unpaid), and
    # half once the customer accepts it (the issue is answered then): an answer's credit in all, once.
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    claim = []
    while not state.done:
        action = expert.expert_action(scenario, state, EXPERT_TASK_ID)
        parts = dict(step(scenario, state, action).breakdown)
        if action.kind == "respond_with_solution" and len(claim) < 2:  # (the claim told, then told again)
            claim.append(parts)
    doubted, accepted = claim
    assert doubted["claim_doubted"] == accepted["claim_accepted"] == reward("respond_after_classify") / 2
    assert "respond_after_classify" not in doubted and "claim_accepted" not in doubted


def test_round_78_safe_first_steps_beside_a_doubted_answer_are_credited():
    """Audit round 78: an answer that told a claim the records contradict (which the customer doubted) and
    gave the safe first steps of an issue to escalate had those first steps go unpaid."""

    def fits(sc):
        return (
            casework.is_mistaken(sc, sc.intents[0].issue_id)
            and sc.persona in ("angry", "confused")
            and sc.expected.escalate_intents
            and not casework.over_the_cap(sc)
        )

    seed = next(s for s in range(4000) if fits(new_episode(EXPERT_TASK_ID, "validation", s)[0]))
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    answer = expert.expert_action(scenario, state, EXPERT_TASK_ID)
    escalated = ISSUE_TYPES_BY_ID[scenario.expected.escalate_intents[0]]
    first = ARTICLES_BY_ID[escalated.article_id].steps[0]
    result = step(
        scenario, state, Action(answer.kind, text=f"{answer.text} Meanwhile: {first}.", article_id=answer.article_id)
    )
    parts = dict(result.breakdown)
    assert state.pushed_back and parts.get("respond_interim", 0) > 0, parts


def test_a_step_has_one_part_per_reward_so_its_breakdown_read_as_a_dict_adds_up():
    """Review of the s6 change: the news of an unnoticed refund told without its timeline, beside another answer
    that left something out, charged told_partly twice in one step; a dict of the breakdown dropped one."""
    checked = 0
    for seed in range(1500):
        scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
        if not scenario.unnoticed_charge:
            continue
        _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
        refund = casework.unnoticed_refund(scenario)
        if refund is None or not state.unnoticed_refunded_at:
            continue
        if (
            scenario.intents[0].issue_id != "delayed_delivery"
            or casework.finding_for(scenario, "delayed_delivery") is None
        ):
            continue
        # (the late parcel answered without its new date, and the refund told without when it reaches the card)
        text = (
            "Thank you. Here is what we will do: confirm the new delivery date with the customer. "
            f"I also refunded ${refund.value} on order {refund.target}, charged wrongly."
        )
        result = step(scenario, state, Action("respond_with_solution", text=text, article_id=""))
        names = [name for name, _ in result.breakdown]
        assert len(names) == len(set(names)) and dict(result.breakdown)["told_partly"] < -0.1, result.breakdown
        assert round(sum(dict(result.breakdown).values()), 6) == result.reward
        checked += 1
    assert checked >= 2


def test_a_line_said_once_is_known_said_when_it_followed_another_reaction():
    """Review of the s6 change: a reaction whose opening word was dropped after another's sentence ("... ends in
    4069. That was an older order's number.") was not recognised as said, so the customer owned up twice."""
    seed = _ticket(
        lambda sc: sc.meant_order_id and not sc.order_id_mistyped and not sc.impostor and sc.persona == "terse"
    )
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    lines = content.REACTIONS["mixup_acknowledged"] + content.REACTIONS["mixup_acknowledged_curt"]
    # (owned up to after another reaction's sentence, its opening word dropped, as a stitched reply writes it)
    line = next(x for x in lines if customer.without_repeated_thanks(f"No. {x}") != f"No. {x}")
    state.history.append(("customer", customer.without_repeated_thanks(f"No. {line}"), state.step))
    given, meant = scenario.facts_by_name["order_id"], scenario.meant_order_id
    step(scenario, state, Action("respond_with_solution", text=f"{given} is older; you mean {meant}.", article_id=""))
    assert not any(customer.wrote(x, state.history[-1][1]) for x in lines), state.history[-1][1]


def test_round_79_a_doubted_answer_is_paid_as_one_taken_in_and_the_customer_hears_every_question():
    """Audit round 79: the right answer a pushy customer doubted earned no "personalised" for the customer's own
    facts it named; "before I make any changes" was answered as a question of what the customer changed; a
    question naming the order id given and the one meant, beside a sign-in question, was not owned up to."""
    seed = next(
        s
        for s in range(2000)
        if casework.is_mistaken(sc := new_episode(EXPERT_TASK_ID, "validation", s)[0], sc.intents[0].issue_id)
        and sc.persona in ("angry", "confused")
    )
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    doubted = dict(step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID)).breakdown)
    assert state.pushed_back and doubted["personalised"] > 0 and doubted["claim_doubted"] > 0
    accepted = step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID))
    assert dict(accepted.breakdown)["claim_accepted"] > 0 and "respond_after_classify" not in dict(accepted.breakdown)
    assert "accepts what the records show now" in accepted.observation.last_action_feedback

    assert not customer.asks_what_changed(
        "Could you share your email? It lets me verify you before I make any changes."
    )
    assert customer.asks_what_changed("Have there been any changes on your side?")

    seed = _ticket(lambda sc: sc.meant_order_id and not sc.order_id_mistyped and not sc.impostor)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "use_tool" and a.tool == "look_up_order")
    given = scenario.facts_by_name["order_id"]
    question = f"The order id you gave, {given}, is an older order. Is {scenario.meant_order_id} the one you mean?"
    step(scenario, state, Action("ask_for_more_info", fields=(), text=question))
    owned_up = content.REACTIONS["mixup_acknowledged"] + content.REACTIONS["mixup_acknowledged_curt"]
    assert any(line in state.history[-1][1] for line in owned_up), state.history[-1][1]


def test_a_change_said_not_to_be_made_is_no_claim_and_a_reason_is_read_as_said():
    """Audit round 49: "I have not sent a replacement" claimed nothing; "the card has expired" said why,
    while an article's "check the card expiry date and billing address" says no reason at all."""
    assert casework.claimed_changes("As it shows delivered, I have not sent a replacement yet.") == ()
    assert casework.claimed_changes("I have refunded $5.00 and sent a password reset.") == (
        "issue_refund",
        "send_password_reset",
    )
    expired = casework.Finding("payment_failure", "why", "decline_reason", "expired_card")
    assert expired.told_in("It was declined because the card has expired. Your bank can help with a new card.")
    assert not expired.told_in("Check the card expiry date and billing address; update the payment method.")


def test_asking_for_what_verification_takes_is_never_wasted_where_a_change_may_be_due():
    """Audit round 49: the account email asked for before the records show no refund is due."""
    seed = _family_seed("pending_authorisation", "validation")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    expert_first = expert.expert_action(scenario, state, EXPERT_TASK_ID)
    step(scenario, state, expert_first)
    result = step(scenario, state, Action("ask_for_more_info", fields=("order_id", "account_email", "card_last_four")))
    assert "ask_irrelevant" not in dict(result.breakdown)
    assert not state.needless_asks


def test_an_answer_in_its_own_words_that_tells_the_change_made_settles_the_issue():
    """Audit round 50: "I have refunded that $9.88 difference to your original card" answers an
    overcharge as well as the article's "credit the price difference" does."""
    seed = _seed_with("wrong_amount", "issue_refund")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    remedy = casework.remedy_for(scenario, "wrong_amount")
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    amount = f"${float(remedy.value):,.2f}"
    text = (
        f"Thank you for waiting. You were charged more than the listed total, so I have refunded that {amount} "
        "difference to your original card just now; it will reach your card in 3-5 business days."
    )
    result = step(scenario, state, Action("respond_with_solution", text=text, article_id="KB-BIL-03"))
    assert "wrong_amount" in state.solved_intents, result.observation.last_action_feedback
    assert "told_partly" not in dict(result.breakdown)


def _ticket(where) -> int:
    return next(s for s in range(600) if where(new_episode(EXPERT_TASK_ID, "validation", s)[0]))


def test_telling_the_refund_of_a_lost_parcel_answers_the_parcel_too():
    """Audit round 51: a refund the customer wants for a lost parcel settles the parcel (it is not
    also reshipped), so the answer telling that refund answers both."""
    seed = _ticket(lambda sc: casework.settled_by(sc, "lost_package") is not None)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    refund = casework.settled_by(scenario, "lost_package")
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    text = (
        f"Thank you for your patience. As your parcel has had no scan for over a week, I have refunded "
        f"${float(refund.value):,.2f} to your card instead of sending it again; it reaches it in 3-5 business days."
    )
    step(scenario, state, Action("respond_with_solution", text=text, article_id="KB-REF-01"))
    assert {"refund_request", "lost_package"} <= set(state.solved_intents)


def test_the_order_of_a_refund_above_the_cap_is_looked_up_before_it_is_escalated():
    """Audit round 51: the records decide (a return window, an earlier refund), so the expert
    looks the order up before escalating, and a player who does is not slower than it."""
    seed = _ticket(lambda sc: bool(casework.over_the_cap(sc)))
    _scenario, state, grade = play("oracle", "validation", seed)
    looked = [n for n, a in enumerate(state.actions) if a.kind == "use_tool" and a.tool == "look_up_order"]
    escalated = next(n for n, a in enumerate(state.actions) if a.kind == "escalate_to_human")
    assert grade.passed and looked and looked[0] < escalated


def test_a_decline_told_as_the_bank_declining_it_in_any_words_is_told():
    """Audit round 51: "your card issuer (your bank) declined it", "the decline came from your card
    issuer" and the reason's code as the records write it all say why; asking the customer to
    call their bank about an expired card does not name a second reason."""
    issuer = casework.Finding("payment_failure", "why", "decline_reason", "issuer_declined")
    expired = casework.Finding("payment_failure", "why", "decline_reason", "expired_card")
    for text in (
        "It was declined because your card issuer (your bank) declined it.",
        "The decline came from your card issuer, not our checkout.",
        "The payment was declined with the reason issuer_declined.",
    ):
        assert issuer.told_in(text) and not expired.told_in(text), text
    assert expired.told_in("It was declined because the card has expired; your bank can send you a new card.")


def test_a_follow_up_telling_what_the_answer_left_out_is_no_repeat():
    """Audit round 51: the feedback asks to say what was left out; the message that says it is a
    correction, not a repeated answer."""
    seed = _ticket(lambda sc: sc.intents[0].issue_id == "payment_failure" and len(sc.intents) == 1 and not sc.family)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    steps = "Check the card expiry date and billing address, update the payment method and retry the payment."
    first = step(
        scenario, state, Action("respond_with_solution", text=f"Thanks for waiting. {steps}", article_id="KB-PAY-01")
    )
    assert "told_partly" in dict(first.breakdown)
    reason = casework.reason_words(casework.finding_for(scenario, "payment_failure").value)
    again = Action(
        "respond_with_solution",
        text=f"Thanks for waiting. It was declined because {reason}. {steps}",
        article_id="KB-PAY-01",
    )
    assert "respond_repeat" not in dict(step(scenario, state, again).breakdown)


def test_a_failed_checkout_is_for_the_product_its_words_name_and_failed_lately():
    for seed in range(300):
        scenario, _ = new_episode(EXPERT_TASK_ID, "validation", seed)
        named = dict(zip((i.issue_id for i in scenario.intents), scenario.products, strict=True))
        if not named.get("payment_failure"):
            continue
        declined = [p for p in scenario.records.payments if p.status == "declined"]
        order = scenario.records.order(declined[0].order_id)
        assert order.items[0].product == named["payment_failure"], seed
        assert days_before_today(declined[0].date) <= 3 or "charge_date" not in scenario.facts_by_name, seed


def test_escalating_the_refund_of_a_lost_parcel_above_the_cap_settles_the_parcel():
    """Audit round 53: the parcel whose money the customer wants back is not reshipped; when that
    refund is above the cap, its escalation settles the parcel too (no question left about it)."""
    seed = _ticket(lambda sc: bool(casework.settled_by_escalation(sc)))
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    assert not any(r.tool == "reship_order" for r in casework.remedies(scenario))
    # (the expert answers no parcel the hand-over settles: it routes and escalates)
    _oracle_until(scenario, state, lambda a: a.kind in ("respond_with_solution", "assign_department"))
    step(scenario, state, Action("assign_department", department=scenario.expected.department))
    step(scenario, state, Action("escalate_to_human", text="I'm sorry: the refund is above the cap I can approve."))
    assert "lost_package" in state.solved_intents


# ---- the deeper desk (world-13): families that need a change the claim does not name, and orders mixed up ----


def _play_actions(scenario, state, actions) -> None:
    for action in actions:
        step(scenario, state, action)


def _oracle_with(scenario, state, swap) -> None:
    """Play the expert, taking `swap(action)` instead of each of its actions (None: the expert's own)."""
    while not state.done:
        action = expert.expert_action(scenario, state, EXPERT_TASK_ID)
        step(scenario, state, swap(action) or action)


def test_an_item_of_several_sent_back_is_refunded_what_was_paid_for_it_not_the_price_remembered():
    seed = _family_seed("item_of_several", "validation")
    scenario, state, grade = play("oracle", "validation", seed)
    assert grade.passed
    order = scenario.records.order(scenario.order_in_question)
    item = order.items[0]
    assert len(order.items) >= 2 and order.discount_percent > 0 and item.product in scenario.opening_message
    remedy = casework.remedy_for(scenario, "refund_request")
    paid = round(item.unit_price * item.quantity * (100 - order.discount_percent) / 100 + 1e-9, 2)
    assert float(remedy.value) == paid < float(scenario.facts_by_name["amount"]) == item.unit_price * item.quantity
    # Refunding the price the customer remembers (the rule baseline does) is a wrong change.
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    remembered = use_tool("issue_refund", order_id=remedy.target, amount=scenario.facts_by_name["amount"])
    _oracle_with(scenario, state, lambda a: remembered if a.kind == "use_tool" and a.tool == "issue_refund" else None)
    records = next(c for c in grade_state(scenario, state).components if c.name == "records")
    assert records.score < 1.0 and f"not made: issue_refund({remedy.target},{remedy.value})" in records.detail


def test_a_return_never_refunded_is_refunded_though_the_customer_only_asks_where_the_money_is():
    seed = _family_seed("refund_never_issued", "validation")
    scenario, _state, grade = play("oracle", "validation", seed)
    assert grade.passed
    order = scenario.records.order(scenario.order_in_question)
    assert order.status == "returned" and not scenario.records.refunds_for(order.order_id)
    remedy = casework.remedy_for(scenario, "refund_status")
    assert remedy.tool == "issue_refund" and float(remedy.value) == order.total
    # The return's payment and the return itself are dated in order (audit round 54: paid before it was placed).
    assert all(p.date >= order.placed for p in scenario.records.payments_for(order.order_id))
    _, _, rule_grade = play("rule", "validation", seed)
    assert not rule_grade.passed


def test_a_late_parcel_with_no_scan_for_a_week_is_lost_and_reshipped():
    seed = _family_seed("stalled_in_transit", "validation")
    scenario, _, grade = play("oracle", "validation", seed)
    assert grade.passed
    order = scenario.records.order(scenario.order_in_question)
    assert order.status == "in_transit" and days_before_today(order.events[-1].when) >= 7
    assert casework.remedy_for(scenario, "delayed_delivery").tool == "reship_order"


def test_of_two_plans_only_the_one_the_customer_names_is_cancelled():
    seed = _family_seed("two_subscriptions", "validation")
    scenario, state, grade = play("oracle", "validation", seed)
    assert grade.passed
    named = scenario.products[0]
    plans = {s.plan: s.subscription_id for s in scenario.records.subscriptions}
    assert len(plans) == 2 and named in plans and named in scenario.opening_message
    assert casework.remedy_for(scenario, "subscription_cancel").target == plans[named]
    other = next(sid for plan, sid in plans.items() if plan != named)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    wrong = use_tool("cancel_subscription", subscription_id=other)
    _oracle_with(scenario, state, lambda a: wrong if a.kind == "use_tool" and a.tool == "cancel_subscription" else None)
    assert not grade_state(scenario, state).passed


def test_an_earlier_order_given_for_the_one_meant_is_found_and_acting_on_it_fails():
    seed = _ticket(
        lambda sc: (
            bool(sc.meant_order_id) and not sc.order_id_mistyped and bool(casework.remedies(sc)) and not sc.family
        )
    )
    scenario, state, grade = play("oracle", "validation", seed)
    assert grade.passed
    given, meant = scenario.facts_by_name["order_id"], scenario.meant_order_id
    earlier, recent = scenario.records.order(given), scenario.records.order(meant)
    # The same product, months earlier; the words say which one is meant (what and when).
    assert earlier.items[0].product == recent.items[0].product and earlier.placed < recent.placed
    assert days_before_today(earlier.placed) >= 70 and recent.items[0].product in scenario.opening_message
    # The expert finds it among the account's orders; asked again for the order id instead, the
    # customer gives the one it means, and the facts shown then hold it.
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "use_tool" and a.tool == "look_up_customer")
    result = step(scenario, state, Action("ask_for_more_info", fields=("order_id",)))
    assert meant in state.history[-1][1] and "ask_repeat" not in dict(result.breakdown)
    assert ("order_id", meant) in result.observation.revealed_facts
    # look_up_customer lists both, the latest first.
    found = step(scenario, state, use_tool("look_up_customer", account_email=scenario.facts_by_name["account_email"]))
    listed = [o["order_id"] for o in found.observation.tool_result.data["account"]["orders"]]
    assert listed.index(meant) < listed.index(given)
    # Working the order the customer first gave changes the wrong records.
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    remedy = casework.remedies(scenario)[0]
    wrong = Action(
        "use_tool",
        tool=remedy.tool,
        arguments=tuple((k, given if v == meant else v) for k, v in remedy.call().arguments),
    )
    _oracle_with(scenario, state, lambda a: wrong if a.kind == "use_tool" and a.tool == remedy.tool else None)
    assert not grade_state(scenario, state).passed


def test_a_sentence_that_says_a_change_cannot_be_made_claims_none_and_a_date_counts_for_its_own_subject():
    """Audit round 54: 'can no longer be changed or redirected ... so I have not changed anything'
    read as a claim of an address change; a payment's day told for a parcel due the same day."""
    text = (
        "Because it has been delivered, the address can no longer be changed or redirected to 165 Mill Way, Cork, "
        "so I have not changed anything on the order."
    )
    assert casework.claimed_changes(text) == ()
    assert casework.claimed_changes("I've gone ahead and cancelled your subscription.") == ("cancel_subscription",)
    parcel = casework.Finding("delayed_delivery", "what", "date", "2026-12-01", casework._PARCEL)
    assert not parcel.told_in("Your last attempt on 2026-12-01 went through: the payment was taken.")
    assert parcel.told_in("The carrier now expects to deliver your parcel on 2026-12-01.")


def test_several_orders_charged_twice_are_each_refunded_and_their_lookalikes_are_not():
    seed = _family_seed("several_duplicates", "validation")
    scenario, _state, grade = play("oracle", "validation", seed)
    assert grade.passed
    refunds = casework.remedies_for(scenario, "double_charge")
    records = scenario.records
    assert len(refunds) >= 2 and refunds[0].target == scenario.order_in_question
    # Each refunded order holds two captured payments and no refund; of the lookalikes, none is refunded.
    for refund in refunds:
        captured = [p for p in records.payments_for(refund.target) if p.status == "captured"]
        assert len(captured) == 2 and not records.refunds_for(refund.target)
    refunded = {r.target for r in refunds}
    for order in records.orders:
        if order.order_id in refunded:
            continue
        captured = sum(p.amount for p in records.payments_for(order.order_id) if p.status == "captured")
        assert captured - order.total - sum(r.amount for r in records.refunds_for(order.order_id)) < 0.005
    # Refunding only the order named (the rule baseline does) leaves the others charged twice.
    _, _, rule_grade = play("rule", "validation", seed)
    assert not rule_grade.passed


def test_a_corrected_order_id_is_the_whole_answer_and_proofs_are_free_where_a_change_may_be_due():
    """Audit round 57: "The recent one is ORD-2. I don't know, sorry." after a correction; and the
    card's last four asked on a refund chased (which may need a refund) charged as irrelevant."""
    seed = _ticket(lambda sc: bool(sc.meant_order_id))
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    step(scenario, state, Action("ask_for_more_info", fields=("order_id",)))
    given = scenario.facts_by_name["order_id"]
    question = f"Is {given} the right order? It was placed months ago; could you check the order number?"
    result = step(scenario, state, Action("ask_for_more_info", fields=("order_id",), text=question))
    reply = state.history[-1][1]
    assert scenario.meant_order_id in reply and "don't know" not in reply and "ask_repeat" not in dict(result.breakdown)
    seed = _ticket(
        lambda sc: (
            sc.intents[0].issue_id == "refund_status" and not sc.family and "card_last_four" not in sc.facts_by_name
        )
    )
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    result = step(scenario, state, Action("ask_for_more_info", fields=("card_last_four",)))
    assert "ask_irrelevant" not in dict(result.breakdown)


def test_review_findings_paid_dates_mixups_reships_and_corrections():
    """A review of world-13: a payment said *not* to have gone through is no answer that it did; a
    day written "Nov. 30" or told as "arrived" counts; the order given in a mix-up is the older one
    on every ticket; "sent the reset link again" is no reship; a question naming an order is no
    question for its id."""
    paid = casework.Finding("payment_failure", "w", "paid", "2026-12-01")
    assert paid.told_in("Your last attempt on 1 December went through, so the order is paid.")
    assert not paid.told_in("It was declined on 1 December, so no payment was taken.")
    assert not paid.told_in("Your payment went through.")  # (the day it did, as the desk rules ask)
    delivered = casework.Finding("address_change", "w", "date", "2026-11-30", casework._DELIVERED)
    assert delivered.told_in("It was delivered on Nov. 30, 2026, so its address can no longer change.")
    assert delivered.told_in("Your order arrived on 30 November.")
    assert "reship_order" not in casework.claimed_changes("I have sent the password reset link again.")
    assert casework.claimed_changes("I have sent your blender again.") == ("reship_order",)
    mixed = [
        sc
        for s in range(600)
        if (sc := new_episode(EXPERT_TASK_ID, "validation", s)[0]).meant_order_id and not sc.order_id_mistyped
    ]
    assert len(mixed) > 50
    for sc in mixed:
        given, meant = sc.records.order(sc.facts_by_name["order_id"]), sc.records.order(sc.meant_order_id)
        assert given.placed < meant.placed and given.items[0].product == meant.items[0].product, sc.seed
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", mixed[0].seed)
    step(scenario, state, Action("ask_for_more_info", fields=("order_id",)))
    step(scenario, state, Action("ask_for_more_info", fields=(), text="Which card did you pay for that order with?"))
    assert scenario.meant_order_id not in state.history[-1][1]


def test_round_59_a_day_told_by_reference_and_a_hold_told_as_no_charge():
    """Audit round 59: "... were declined on 29 Nov. The next attempt that same day went through"
    tells the day it went through (the next sentence names it by reference), but a day in a sentence
    two away does not; a hold told as "not a charge" or "won't be charged" is told as a hold."""
    paid = casework.Finding("payment_failure", "w", "paid", "2026-11-29")
    assert paid.told_in(
        "On 2026-11-29 two attempts were declined because the billing address did not match. "
        "The next attempt that same day went through, so the order is paid."
    )
    assert paid.told_in("It was declined twice on 29 November. Your third attempt the same day was accepted.")
    assert not paid.told_in("It was declined on 29 November. Thanks for waiting. The next attempt went through.")
    assert not paid.told_in("It was declined on 29 November. The next attempt went through.")
    hold = casework.Finding("double_charge", "w", "authorisation", "")
    assert hold.told_in("The second payment is only a pending authorisation, not a charge.")
    assert hold.told_in("That one is a hold on your card: you won't be charged for it.")
    assert not hold.told_in("That one is pending.")


def test_a_duplicate_charge_the_customer_never_noticed_is_refunded_and_told():
    """world-14: on about one expert ticket in eight, the order a ticket about a parcel names was
    charged wrongly (twice, or above its listed total) and the customer never noticed. The records
    show it; the customer knows what verifies it; the desk rules say to put right what is wrong with
    the order written about; the oracle refunds the money taken beyond the total and tells it, and the
    customer takes the news in once, in its own words. An agent that handles the parcel and never
    reads the payments fails records and communication, each saying why; an answer that tells only
    that refund is news, not a void answer."""
    tickets = [new_episode(EXPERT_TASK_ID, "validation", s)[0] for s in range(600)]
    unnoticed = [sc for sc in tickets if sc.unnoticed_charge]
    assert 0.08 < len(unnoticed) / len(tickets) < 0.2
    assert {sc.unnoticed_charge for sc in unnoticed} == {"duplicate", "overcharge"}
    money = {"double_charge", "wrong_amount", "refund_request", "refund_status", "payment_failure"}
    for sc in unnoticed:
        assert not money & {i.issue_id for i in sc.intents}
        order = sc.records.order(sc.order_in_question)
        captured = [p.amount for p in sc.records.payments_for(order.order_id) if p.status == "captured"]
        if sc.unnoticed_charge == "duplicate":
            assert captured == [order.total, order.total]
        else:
            assert len(captured) == 1 and 0.04 * order.total < captured[0] - order.total < 0.2 * order.total
        assert "account_email" in sc.facts_by_name and "order_id" in sc.facts_by_name
        assert casework.unnoticed_refund(sc).value == f"{sum(captured) - order.total:.2f}"
    assert "though they have not noticed it, with the order they write about" in " ".join(unnoticed[0].policy_text)
    for kind in ("duplicate", "overcharge"):
        _the_unnoticed_charge_refunded_told_or_left(next(sc.seed for sc in unnoticed if sc.unnoticed_charge == kind))


def _the_unnoticed_charge_refunded_told_or_left(seed: int) -> None:
    scenario, state, grade = play("oracle", "validation", seed)
    assert grade.score == 1.0 and grade.passed
    news = content.REACTIONS[f"noticed_{scenario.unnoticed_charge}"]
    heard = [t for who, t, _ in state.history if who == "customer" and any(n in t for n in news)]
    assert len(heard) == 1

    # The parcel handled as the oracle does, and the order's payments never read.
    refund = casework.unnoticed_refund(scenario)
    skipped = Action("use_tool", tool="issue_refund", arguments=refund.call().arguments)
    scenario, missed = new_episode(EXPERT_TASK_ID, "validation", seed)
    for action in state.actions:
        if action == skipped:
            continue
        if action.kind == "respond_with_solution":
            action = Action(action.kind, text=action.text.split(" I also found")[0], article_id=action.article_id)
        step(scenario, missed, action)
    grade = grade_state(scenario, missed)
    parts = {c.name: c for c in grade.components}
    assert not grade.passed and not any("noticed" in t for who, t, _ in missed.history if who == "customer")
    assert parts["records"].score < 1.0 and f"issue_refund({refund.target}" in parts["records"].detail
    assert (
        f"{casework.unnoticed_words(scenario)} on order {refund.target} never refunded" in parts["communication"].detail
    )

    # An answer that tells only that refund, once it is made, is news to the customer, not a void answer.
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    told = (
        f"I also noticed order {refund.target} was charged wrongly, so I refunded ${refund.value}; it reaches your "
        "card in 3-5 business days."
    )
    result = step(scenario, state, Action("respond_with_solution", text=told, article_id=""))
    assert not {"respond_irrelevant", "respond_repeat"} & set(dict(result.breakdown))
    assert any(line in state.history[-1][1] for line in news)
    # The news is paid as an answer is, once, as the grade's communication weighs it; told again, it is not.
    assert dict(result.breakdown)["unnoticed_told"] == reward("unnoticed_told") > 0
    assert "told_partly" not in dict(result.breakdown)
    again = step(scenario, state, Action("respond_with_solution", text=told, article_id=""))
    assert "unnoticed_told" not in dict(again.breakdown)

    # Told as money on its way back, not as a refund the desk made, it is the same news (review of s6).
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    back = f"Order {refund.target} was charged wrongly: ${refund.value} is on its way back, in 3-5 business days."
    parts = dict(step(scenario, state, Action("respond_with_solution", text=back, article_id="")).breakdown)
    assert parts["unnoticed_told"] > 0 and any(line in state.history[-1][1] for line in news)

    # Told without when it reaches the card, it is paid and charged for what it leaves out, as an answer is.
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    short = f"I also noticed order {refund.target} was charged wrongly, so I refunded ${refund.value}."
    parts = dict(step(scenario, state, Action("respond_with_solution", text=short, article_id="")).breakdown)
    assert parts["unnoticed_told"] > 0 and parts["told_partly"] < 0


def test_a_reship_after_a_duplicate_refunded_is_no_reship_of_a_refunded_order():
    """The order a lost parcel's reship is refused for is one refunded; the refund of a duplicate
    charge of it leaves it paid for (world-14: a stalled parcel's order charged twice, unnoticed)."""
    seed = _ticket(lambda sc: sc.unnoticed_charge == "duplicate" and sc.family == "stalled_in_transit")
    _, state, grade = play("oracle", "validation", seed)
    assert grade.passed and {c[0] for c in state.changes} >= {"issue_refund", "reship_order"}


def test_round_60_the_unnoticed_charge_on_every_path_and_records_that_fit_their_account():
    """Audit round 60: the news of the refunded duplicate is taken in on the step a pushy customer
    doubts the claim too; telling it (and a reship) in an answer settled from the records is no
    citation of another issue's article; closing with the duplicate left is no proper close, though
    the customer, who never knew of it, says goodbye as ever; a parcel the customer says was
    delivered yesterday was; no order or payment is older than its account."""
    for sc in (new_episode(EXPERT_TASK_ID, "validation", s)[0] for s in range(600)):
        if not (sc.unnoticed_charge and sc.family == "left_in_safe_place" and sc.persona in ("angry", "terse")):
            continue
        heard = content.REACTIONS[f"noticed_{sc.unnoticed_charge}"]
        scenario, state, grade = play("oracle", "validation", sc.seed)
        answers = [t for who, t, _ in state.history if who == "customer" and any(h in t for h in heard)]
        assert grade.passed and len(answers) == 1 and "?" in answers[0]  # (taken in, with the doubt)
        break
    else:
        raise AssertionError("no pushy safe-place ticket with an unnoticed duplicate")

    seed = _ticket(lambda sc: sc.unnoticed_charge == "duplicate" and sc.family == "stalled_in_transit")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    duplicate = casework.unnoticed_refund(scenario)
    told = (
        "Your parcel has had no tracking scan for over a week, so it counts as lost: I have sent your order again. "
        f"I also found it was charged twice, so I have refunded the duplicate ${duplicate.value}; it reaches your "
        "card in 3-5 business days."
    )
    article = scenario.intents[0].article_id  # (the late parcel's, as triaged: the records make it lost)
    breakdown = dict(step(scenario, state, Action("respond_with_solution", text=told, article_id=article)).breakdown)
    assert "respond_after_classify" in breakdown and "respond_wrong_citation" not in breakdown

    seed = _ticket(lambda sc: sc.unnoticed_charge and not sc.family)
    refund = casework.unnoticed_refund(new_episode(EXPERT_TASK_ID, "validation", seed)[0])
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "use_tool" and a.arguments == refund.call().arguments)
    while not state.done:
        action = expert.expert_action(scenario, state, EXPERT_TASK_ID)
        if action.kind == "use_tool" and action.arguments == refund.call().arguments:
            action = Action("mark_resolved", text="Done.")
        result = step(scenario, state, action)
    breakdown = dict(result.breakdown)
    assert "resolve_partial" in breakdown and "resolve_proper" not in breakdown
    assert "noticed" not in state.history[-1][1] and "?" not in state.history[-1][1]

    safe = [
        sc for s in range(600) if (sc := new_episode(EXPERT_TASK_ID, "validation", s)[0]).family == "left_in_safe_place"
    ]
    yesterday = [sc for sc in safe if "lost_package/2" in sc.template_ids]
    assert yesterday and all(
        days_before_today(casework.delivered_on(sc.records.order(sc.order_in_question))) == 1 for sc in yesterday
    )
    assert all(days_before_today(casework.delivered_on(sc.records.order(sc.order_in_question))) <= 4 for sc in safe)
    for split in ("train", "validation", "test"):
        for s in range(300):
            records = new_episode(EXPERT_TASK_ID, split, s)[0].records
            opened = records.account.created
            assert all(o.placed >= opened for o in records.orders) and all(p.date >= opened for p in records.payments)


def test_round_61_a_payment_told_as_then_captured_today_is_told_went_through():
    """Audit round 61: "a third attempt ... was then captured successfully today" tells the payment went
    through on the world's today (a word between "was" and "captured"; today and yesterday by name, next
    to the saying, and not denied)."""
    today = casework.Finding("payment_failure", "w", "paid", "2026-12-01")
    assert today.told_in("A third attempt of $193.59 on the same card was then captured successfully today.")
    assert today.told_in("Your last attempt was finally accepted today, so the order is paid.")
    assert not today.told_in("It was declined today, so no payment was taken.")
    assert not today.told_in("Your card was declined today, and nothing was charged today.")
    yesterday = casework.Finding("payment_failure", "w", "paid", "2026-11-30")
    assert yesterday.told_in("Your last attempt went through yesterday.") and not yesterday.told_in(
        "It went through today."
    )
    # ("today" is a day only beside a payment gone through: code review of world-14)
    delivered = casework.Finding("address_change", "w", "date", "2026-12-01", casework._DELIVERED)
    assert not delivered.told_in("I am unable to change the delivery address of your order today.")


def test_round_62_a_reship_told_as_arranged_and_a_typo_that_is_one():
    """Audit round 62: "I have arranged for the hiking backpack to be sent to you again" tells the
    reship (the reset link sent again still does not); an address the customer calls a typo differs from
    the one it meant by a slip (the house number's digits), and "the wrong street" by the street alone."""
    assert casework.claimed_changes("I have arranged for the hiking backpack to be sent to you again.") == (
        "reship_order",
    )
    assert casework.claimed_changes("Your backpack is being sent to you again.") == ("reship_order",)
    assert "reship_order" not in casework.claimed_changes("I have sent the password reset link again.")
    assert not casework.claimed_changes("I have not arranged for a replacement yet.")
    slips = {"address_change/2": 0, "address_change/5": 0}
    for s in range(3000):
        scenario = new_episode(EXPERT_TASK_ID, "validation", s)[0]
        slip = next((t for t in scenario.template_ids if t in slips), "")
        meant = scenario.facts_by_name.get("new_address")
        if not (slip and meant):
            continue
        slips[slip] += 1
        number, rest = meant.split(" ", 1)
        given_number, given_rest = scenario.records.account.address.split(" ", 1)
        if slip == "address_change/2":  # (the wrong street: the number and the town as meant)
            assert given_number == number and given_rest != rest and given_rest.split(", ")[-1] == rest.split(", ")[-1]
        else:  # (a typo: the street and town as meant, the number slipped)
            assert given_rest == rest and given_number != number
    assert min(slips.values()) >= 3


def test_code_review_of_world_14_readers_say_no_more_than_the_words():
    """A review of world-14's readers: a hold denied ("a real charge, not a hold") or a refund pending
    is no hold told; "the day before" and "Nothing was taken that day" tell no payment gone through;
    reset emails "sent to you again" are no reship; "so I refunded $25.46" claims the refund; the
    customer takes in the news of an unnoticed charge only when told it was refunded, and a close
    with that refund made but never told is a partial one."""
    hold = casework.Finding("double_charge", "w", "authorisation", "")
    assert not hold.told_in(
        "It is a real charge, not a hold or a pending authorisation, so you won't be charged twice."
    )
    assert not hold.told_in("The refund is pending and you won't be charged twice.")
    assert hold.told_in("The second payment is only a pending authorisation, not a charge.")
    paid = casework.Finding("payment_failure", "w", "paid", "2026-11-29")
    assert not paid.told_in("Declined on 29 November. The payment went through the day before.")
    assert not paid.told_in("Your attempts on 29 Nov were declined. Nothing was taken that day.")
    assert not casework.claimed_changes("The earlier reset emails have expired: I have sent them to you again.")
    assert not casework.claimed_changes("We have arranged a replacement card for you.")
    assert casework.claimed_changes("So I refunded $25.46 to your card.") == ("issue_refund",)
    assert not casework.claimed_changes("I never refunded it.")

    seed = _ticket(lambda sc: sc.unnoticed_charge and not sc.family and len(sc.intents) == 1)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    refund = casework.unnoticed_refund(scenario)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    total = scenario.records.order(refund.target).total
    in_passing = f"Order {refund.target} shows ${refund.value} captured against a total of ${total:.2f}."
    step(scenario, state, Action("respond_with_solution", text=in_passing, article_id=""))
    assert "noticed" not in state.history[-1][1]
    answer = expert.solution_message(scenario, state, [scenario.intents[0].issue_id]).split(" I also found")[0]
    step(scenario, state, Action("respond_with_solution", text=answer, article_id=scenario.intents[0].article_id))
    result = step(scenario, state, Action("mark_resolved", text="Done."))
    assert "resolve_partial" in dict(result.breakdown) and not grade_state(scenario, state).passed


def test_round_64_days_named_once_articles_the_records_make_hand_overs_and_records_before_today():
    """Audit round 64: a payment told as captured, its day named earlier in the message, is told gone
    through that day (not "the day before"); citing a lost parcel's article for a "late" one the records
    make lost is no wrong citation; a refund above the cap told as going to a specialist is a hand-over
    announced, not a promise; "in case anything needs changing" asks no "has anything changed?"; no
    tracking scan is after today; the expert reads the payments of the order a ticket names, so a
    player's check of them is never an extra look-up."""
    paid = casework.Finding("payment_failure", "w", "paid", "2026-12-01")
    told = (
        "Our records show three attempts on 2026-12-01. The first two were declined and nothing was taken for "
        "them. The third was captured successfully, so you were charged once."
    )
    assert paid.told_in(told)
    assert not paid.told_in("Your attempts were declined on 1 December. The payment went through the day before.")
    from supportenv.customer import _CHANGES_RE

    assert not _CHANGES_RE.search("Could you share your email, in case anything needs changing?")
    assert _CHANGES_RE.search("Has anything changed recently?")

    seed = _ticket(lambda sc: sc.family == "stalled_in_transit" and len(sc.intents) == 1)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    lost = ISSUE_TYPES_BY_ID["lost_package"].article_id
    text = "It has had no scan for over a week, so it counts as lost: I have sent your order again."
    assert "respond_wrong_citation" not in dict(
        step(scenario, state, Action("respond_with_solution", text=text, article_id=lost)).breakdown
    )

    seed = _ticket(lambda sc: "refund_request" in casework.over_the_cap(sc))
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(
        scenario, state, lambda a: a.kind in ("assign_department", "escalate_to_human", "respond_with_solution")
    )
    cap = scenario.policy.refund_cap(scenario.tier)
    text = (
        f"That amount is above the ${cap:.0f} refund limit I can issue myself, so I am escalating it to a billing "
        "specialist."
    )
    result = step(scenario, state, Action("respond_with_solution", text=text, article_id="KB-REF-01"))
    assert "respond_needs_escalation" not in dict(result.breakdown) and "approve" not in state.history[-1][1]

    for s in range(600):
        for order in new_episode(EXPERT_TASK_ID, "validation", s)[0].records.orders:
            assert all(e.when <= "2026-12-01" for e in order.events) and [e.when for e in order.events] == sorted(
                e.when for e in order.events
            )
    for s in range(200):
        scenario, state, _ = play("oracle", "validation", s)
        if scenario.records.order(scenario.order_in_question):
            assert use_tool("look_up_order", order_id=scenario.order_in_question) in state.actions, s


# ---- world-15: the sign-in a locked account does not recognise (only the customer knows whose) ----


def test_world_15_unknown_sign_ins_are_drawn_where_the_account_is_read_and_look_alike_whoever_made_them():
    tickets = [new_episode(EXPERT_TASK_ID, "validation", s)[0] for s in range(600)]
    drawn = [sc for sc in tickets if sc.unknown_sign_in]
    assert 0.1 < len(drawn) / len(tickets) < 0.25
    assert {sc.unknown_sign_in for sc in drawn} == {"theirs", "stranger"}
    locked = [sc for sc in drawn if "account_locked" in {i.issue_id for i in sc.intents}]
    assert 0.3 < len(locked) / len(drawn) < 0.7  # (on a locked account, and where the customer writes of another thing)
    # the locked account is no commoner than the commonest other issue (a blind reset must not pay)
    counts = {i: sum(i in {x.issue_id for x in sc.intents} for sc in tickets) for i in ISSUE_TYPES_BY_ID}
    assert counts["account_locked"] <= 1.1 * max(n for i, n in counts.items() if i != "account_locked")
    for sc in drawn:
        issues = {i.issue_id for i in sc.intents}
        assert "account_email" in sc.expected.facts and not issues & {"account_takeover", "two_factor_lost"}
        latest = sc.records.account.sign_ins[0]
        assert casework.unknown_sign_in(sc) == latest and not latest.recognised
        assert latest.device not in {d.model for d in sc.records.account.devices}
        assert latest.place != sc.records.account.sign_ins[1].place and latest.place != "unknown location"
        # (the records cannot tell them apart: only the customer can)
        assert sc.records.account.two_factor in ("off", "app", "sms")
        assert (sc.records.account.status == "locked") == ("account_locked" in issues)
        stranger = sc.unknown_sign_in == "stranger"
        assert ("account_takeover" in sc.expected.escalate_intents) == stranger
        assert sc.expected.escalate == stranger and (not stranger or sc.expected.department == "security")
    text = " ".join(drawn[0].policy_text)
    assert "with their account's security (read the account once you have its email)" in text
    assert "only they can tell: ask them whether it was theirs" in text
    assert "as policy escalates an account_takeover" in text


def _sign_in_ticket(whose: str) -> int:
    return _ticket(lambda sc: sc.unknown_sign_in == whose)


@pytest.mark.parametrize("whose", ("theirs", "stranger"))
def test_world_15_the_oracle_asks_whose_the_sign_in_was_and_acts_on_the_answer(whose):
    scenario, state, grade = play("oracle", "validation", _sign_in_ticket(whose))
    assert grade.passed and grade.score == pytest.approx(1.0)
    sign_in = casework.unknown_sign_in(scenario)
    asked = next(n for n, (who, text, _) in enumerate(state.history) if who == "agent" and "Was that you?" in text)
    reply = state.history[asked + 1][1]
    assert reply.split("!")[0].split(".")[0] in " ".join(content.REACTIONS[f"sign_in_{whose}"]).format(
        device=sign_in.device, place=sign_in.place
    )
    assert sign_in.place in reply and state.escalated == (whose == "stranger")


@patches_the_expert
def test_world_15_a_stranger_sign_in_never_asked_about_fails_the_ticket_and_says_which(monkeypatch):
    seed = _sign_in_ticket("stranger")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    monkeypatch.setattr(expert, "_sign_in_check", lambda scenario, state: None)  # (a desk that never reads them)

    def close_instead(action):
        return (
            Action("mark_resolved", text="Done.") if action.kind in ("assign_department", "escalate_to_human") else None
        )

    _oracle_with(scenario, state, close_instead)
    grade = grade_state(scenario, state)
    parts = {c.name: c for c in grade.components}
    assert not grade.passed
    sign_in = casework.unknown_sign_in(scenario)
    assert (
        f"from a {sign_in.device} in {sign_in.place}, not the customer's, never escalated"
        in parts["communication"].detail
    )
    # The customer never heard of it, so it says goodbye as ever (no complaint about an issue it never raised).
    assert state.history[-1][1] in " ".join(
        v for k, v in content.REACTIONS.items() if k.startswith("closed") for v in v
    )


def test_world_15_escalating_a_sign_in_the_customer_made_is_a_needless_escalation():
    seed = _sign_in_ticket("theirs")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "mark_resolved")
    step(scenario, state, Action("assign_department", department="security", text="Unrecognised sign-in."))
    step(
        scenario,
        state,
        Action("escalate_to_human", text="I'm sorry for the trouble; security will check that sign-in."),
    )
    step(scenario, state, Action("mark_resolved", text="Done."))
    grade = grade_state(scenario, state)
    assert not grade.passed and "rules: needless_escalation" in grade.failed_gates


def test_world_15_the_customer_answers_whose_a_sign_in_was_however_it_is_asked():
    seed = _sign_in_ticket("stranger")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    sign_in = casework.unknown_sign_in(scenario)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution" and "Was that you?" in a.text)
    # asked in a question for facts with no field, the customer answers it, and the ask is not charged as needless
    question = f"I can see someone logged in from {sign_in.place} on {sign_in.when}. Did you make that sign-in?"
    result = step(scenario, state, Action("ask_for_more_info", fields=(), text=question))
    assert "wasn't me" in state.history[-1][1] or "Not me" in state.history[-1][1] or "not me" in state.history[-1][1]
    assert result.reward >= 0 and state.sign_in_told_at == state.step
    # asked again: "as I said"
    step(scenario, state, Action("respond_with_solution", text="Just to be sure, was that sign-in yours?"))
    assert state.history[-1][1] in content.REACTIONS["sign_in_again_stranger"]
    # no "Yes, that's right." to a question whose answer is no
    assert "Yes, that's right" not in " ".join(text for who, text, _ in state.history if who == "customer")


def test_world_15_asked_of_an_account_whose_sign_ins_are_all_its_own_the_customer_says_so():
    seed = _ticket(lambda sc: not sc.unknown_sign_in and "account_locked" in {i.issue_id for i in sc.intents})
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "use_tool" and a.tool == "send_password_reset")
    step(scenario, state, Action("respond_with_solution", text="Were those recent sign-ins on your account all yours?"))
    device = scenario.records.account.devices[0].model
    assert state.history[-1][1] in [r.format(device=device) for r in content.REACTIONS["sign_in_all_theirs"]]


def test_round_65_the_sign_in_question_is_heard_however_it_comes():
    """Audit round 65: a sign-in question in an ask that also tells the reset sent was charged as asking for
    nothing; "Before I unlock your account, one quick security question" was read as claiming the unlock;
    "Yes, that's right." followed the customer's answer; an escalation naming the sign-in drew "as I said"."""
    seed = _sign_in_ticket("stranger")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    sign_in = casework.unknown_sign_in(scenario)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution" and "Was that you?" in a.text)
    where = f"a sign-in on {sign_in.when} from a {sign_in.device} in {sign_in.place}"
    result = step(
        scenario,
        state,
        Action(
            "ask_for_more_info",
            fields=(),
            text=f"Before I unlock your account, one quick security question: our records show {where}. Was that you?",
        ),
    )
    reply = state.history[-1][1]
    assert result.reward >= 0 and "respond_before_change" not in dict(result.breakdown)
    assert "ask_irrelevant" not in dict(result.breakdown) and state.sign_in_told_at == state.step
    assert reply in [
        r.format(device=sign_in.device, place=sign_in.place) for r in content.REACTIONS["sign_in_stranger"]
    ]
    step(scenario, state, Action("assign_department", department="security", text="Takeover."))
    step(
        scenario,
        state,
        Action("escalate_to_human", text=f"Thank you for confirming. As {where} was not you, security will check it."),
    )
    assert not any(state.history[-1][1].startswith(r) for r in content.REACTIONS["sign_in_again_stranger"])

    seed = _sign_in_ticket("theirs")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    sign_in = casework.unknown_sign_in(scenario)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution" and "Was that you?" in a.text)
    step(scenario, state, use_tool("send_password_reset", account_email=scenario.records.account.email))
    text = (
        "I have sent a password reset link to your email; completing it will unlock your account. Your account "
        f"shows a sign-in on {sign_in.when} from a {sign_in.device} in {sign_in.place}. Was that you?"
    )
    result = step(scenario, state, Action("ask_for_more_info", fields=(), text=text))
    assert "ask_irrelevant" not in dict(result.breakdown) and state.sign_in_told_at == state.step
    assert "Yes, that's right" not in state.history[-1][1]


def test_round_65_one_mention_of_a_fix_is_counted_once():
    """Audit round 65: "the public roadmap" was counted as two phrases of the feature request's answer ("public
    roadmap" and "the roadmap"), so an answer naming the feedback board too was taken for one stuffed with them."""
    from supportenv.solutions import phrases_said
    from supportenv.text import verdict

    sentence = "It goes onto our product feedback board, and you can follow what is planned on the public roadmap."
    assert sum(phrases_said(sentence).values()) == 2
    text = (
        "I have reshipped your lamp. I have refunded the duplicate $40.50 to your card; it reaches it in 3-5 business"
        " days. I have sent a password reset link to your email. Finally, thank you for the idea: " + sentence
    )
    keys = (("delayed_delivery", "KB-DEL-01"), ("account_locked", "KB-ACC-01"), ("feature_request", "KB-GEN-02"))
    assert "feature_request" in verdict(text, keys, "KB-DEL-01").solves


def test_world_15_a_sign_in_on_a_ticket_about_something_else_is_asked_about_and_never_escalated_unasked():
    """The customer writes of a parcel or a refund, not its account: the desk reads the account all the
    same (the rules say so, whatever the ticket is about) and asks; escalating the sign-in without asking is
    charged, though it was a stranger's (the rules say only the customer can tell)."""
    seed = _ticket(
        lambda sc: sc.unknown_sign_in == "stranger" and "account_locked" not in {i.issue_id for i in sc.intents}
    )
    scenario, state, grade = play("oracle", "validation", seed)
    assert grade.passed and state.escalated and state.sign_in_told_at
    assert not any(c[0] == "send_password_reset" for c in state.changes)  # (no reset: the account is not locked)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution" and "Was that you?" in a.text)
    result = step(scenario, state, Action("escalate_to_human", text="A sign-in your account does not know: security."))
    assert dict(result.breakdown)["escalate_unasked"] == -0.3 and "takeover_unasked" in state.violations


def test_round_66_reading_the_sign_ins_the_rules_ask_for_is_never_charged_and_the_question_is_answered():
    """Audit round 66: the rules ask for the account's sign-ins once its email is in, but on a ticket whose
    case never needs the email the expert never had it, so a player who asked for it (free, for verification)
    and read the account was charged a look-up; "Could you please let me know whether that was you?" after a
    sentence naming the sign-in drew "Will do, I'll tell you if it works." too; "a iPad Air"."""
    seed = _ticket(lambda sc: "account_email" not in sc.expected.facts and "account_email" in sc.facts_by_name)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "ask_for_more_info")
    asked = expert.expert_action(scenario, state, EXPERT_TASK_ID).fields  # (the email asked with the rest)
    step(scenario, state, Action("ask_for_more_info", fields=(*asked, "account_email"), text="Could you share these?"))
    if state.done or "account_email" not in state.revealed:
        pytest.skip("no email given")
    step(scenario, state, use_tool("look_up_customer", account_email=scenario.facts_by_name["account_email"]))
    _oracle_with(scenario, state, lambda a: None)
    grade = grade_state(scenario, state)
    parts = {c.name: c for c in grade.components}
    assert grade.passed and parts["efficiency"].score == pytest.approx(1.0), parts["efficiency"].detail

    seed = _sign_in_ticket("stranger")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    sign_in = casework.unknown_sign_in(scenario)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution" and "Was that you?" in a.text)
    text = (
        f"Thank you. For your security: I see a sign-in on {sign_in.when} from an {sign_in.device} in "
        f"{sign_in.place} that we do not recognise. Could you please let me know whether that was you?"
    )
    step(scenario, state, Action("respond_with_solution", text=text))
    reply = state.history[-1][1]
    assert not any(r in reply for r in content.REACTIONS["question_report"]) and " a iPad" not in reply
    assert reply in [
        r.format(device=sign_in.device, place=sign_in.place) for r in content.REACTIONS["sign_in_stranger"]
    ]


@patches_the_expert
def test_round_67_a_customer_first_told_of_a_sign_in_does_not_ask_after_it_in_the_same_breath(monkeypatch):
    """Audit round 67: an answer that asked whose a sign-in was drew "That definitely wasn't me ... You haven't
    got to the suspicious activity on my account yet, though": the hand-over comes after the answer."""
    seed = _sign_in_ticket("stranger")
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    sign_in = casework.unknown_sign_in(scenario)
    monkeypatch.setattr(expert, "_sign_in_check", lambda scenario, state: None)  # (asked in the first answer)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    answer = expert.expert_action(scenario, state, EXPERT_TASK_ID)
    question = f" Also, I see a sign-in on {sign_in.when} from a {sign_in.device} in {sign_in.place}. Was that you?"
    step(scenario, state, Action("respond_with_solution", text=answer.text + question, article_id=answer.article_id))
    assert state.sign_in_told_at == state.step and "suspicious activity" not in state.history[-1][1]


def _asked_about_the_sign_in(whose: str, action_for) -> tuple:
    """Play the oracle of a ticket with an unrecognised sign-in up to its question, take `action_for(sign_in)`
    instead, and return (the customer's reply, the step's result, the state)."""
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", _sign_in_ticket(whose))
    sign_in = casework.unknown_sign_in(scenario)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution" and "Was that you?" in a.text)
    result = step(scenario, state, action_for(sign_in))
    return state.history[-1][1], result, state, sign_in


def test_code_review_of_world_15_the_sign_in_question_in_the_words_agents_use():
    """A code review of world-15: "log into", "accessed", "Did you sign in from ...?", "Was the Braga sign-in
    you?", "Can you tell me if you signed in from Braga?" are questions of whose a sign-in was, answered once
    and never with a generic yes or no; "Were you able to sign in after the reset?" and "I will review your
    sign-ins to confirm whether they were yours" are not; and "the latest sign-in", unnamed, is asked back."""

    def ask(text, fields=()):
        return lambda sign_in: Action("ask_for_more_info", fields=fields, text=text.format(s=sign_in))

    def answer(text):
        return lambda sign_in: Action("respond_with_solution", text=text.format(s=sign_in))

    generic = ("Not that I know of", "I don't think so", "Yes, that's right", "I'm not sure", "Will do")
    for whose in ("theirs", "stranger"):
        for action_for in (
            ask("Did you log into your account from a {s.device} in {s.place} on {s.when}?"),
            ask("Your account was accessed from a {s.device} in {s.place} on {s.when}. Was that you?"),
            ask("Was the {s.place} sign-in on {s.when} you?"),
            answer("Can you tell me if you signed in from {s.place} on {s.when}?"),
            answer("I have checked your account. Did you sign in from a {s.device} in {s.place} on {s.when}?"),
            ask("Also, was the latest sign-in, from {s.place}, yours?", ("order_id", "account_email")),
        ):
            reply, result, state, sign_in = _asked_about_the_sign_in(whose, action_for)
            words = [
                r.format(device=sign_in.device, place=sign_in.place) for r in content.REACTIONS[f"sign_in_{whose}"]
            ]
            assert any(reply.startswith(w) for w in words), (whose, state.actions[-1].text, reply)
            assert not any(g in reply for g in generic), (state.actions[-1].text, reply)
            assert state.sign_in_told_at == state.step
            # (nothing charged for the question itself: only the fields asked again are)
            assert not set(dict(result.breakdown)) & {"ask_irrelevant", "respond_irrelevant"}, dict(result.breakdown)
    for action_for in (
        answer("Were you able to sign in again after the reset?"),
        answer("Thanks. I will now review your recent sign-ins to confirm whether they were all yours."),
    ):
        reply, result, state, sign_in = _asked_about_the_sign_in("stranger", action_for)
        assert not state.sign_in_told_at and "wasn't me" not in reply, reply
    reply, result, state, sign_in = _asked_about_the_sign_in("stranger", ask("Was the latest sign-in yours?"))
    assert not state.sign_in_told_at and reply.split("?")[0] in " ".join(content.REACTIONS["sign_in_which"])


def test_a_reshipped_order_is_not_refunded_too_but_for_money_taken_beyond_its_total():
    """Never both, both ways (noticed in an earlier session): a reship after a refund was refused, and now a
    refund after a reship is too, but for a duplicate charge or an overcharge, which leaves it paid for."""
    seed = _ticket(lambda sc: any(r.tool == "reship_order" for r in casework.remedies(sc)))
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "use_tool" and a.tool == "reship_order")
    order = scenario.records.order(next(r.target for r in casework.remedies(scenario) if r.tool == "reship_order"))
    step(scenario, state, use_tool("reship_order", order_id=order.order_id))
    result = step(scenario, state, use_tool("issue_refund", order_id=order.order_id, amount=f"{order.total:.2f}"))
    assert state.tool_result.status == "refused" and "was reshipped" in state.tool_result.message
    assert dict(result.breakdown)["tool_refused"] < 0
    seed = _ticket(lambda sc: sc.unnoticed_charge and any(r.tool == "reship_order" for r in casework.remedies(sc)))
    scenario, state, grade = play("oracle", "validation", seed)
    assert grade.passed and {c[0] for c in state.changes} >= {"reship_order", "issue_refund"}


def test_audits_65_to_68_the_customer_owns_up_once_to_the_earlier_order_id_it_gave():
    """Audit rounds 65-68: told that the order id it gave is an earlier order's, the customer never reacted."""
    seed = _ticket(lambda sc: sc.meant_order_id)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    given, meant = scenario.facts_by_name["order_id"], scenario.meant_order_id
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    text = f"Thank you. The order number you gave, {given}, is an earlier order; the one you mean is {meant}."
    step(scenario, state, Action("respond_with_solution", text=text))
    owned = (*content.REACTIONS["mixup_acknowledged"], *content.REACTIONS["mixup_acknowledged_curt"])
    assert any(state.history[-1][1].startswith(r) for r in owned), state.history[-1][1]
    step(scenario, state, Action("respond_with_solution", text=text + " I am looking into it."))
    assert not any(r in state.history[-1][1] for r in owned)


def test_audits_66_to_69_an_answer_settling_the_claim_and_more_is_thanked_for_all_of_it():
    """Audit rounds 66-69: an answer that told what the records show of the claim and settled another issue
    too was met only with the claim taken in ("Okay, so it's already been delivered ..."), the rest unheard."""
    seed = _ticket(
        lambda sc: (
            sc.family == "already_delivered"
            and [i.issue_id for i in sc.intents] == ["address_change", "account_locked"]
            and not (sc.unknown_sign_in or sc.unnoticed_charge or sc.meant_order_id)
        )
    )
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", seed)
    _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
    answer = expert.expert_action(scenario, state, EXPERT_TASK_ID)
    step(scenario, state, use_tool("send_password_reset", account_email=scenario.records.account.email))
    text = answer.text + " As for your account, I have sent a password reset link to your email."
    step(scenario, state, Action("respond_with_solution", text=text, article_id=answer.article_id))
    reply = state.history[-1][1]
    taken_in = [r for r in content.REACTIONS["accepts_already_delivered"] if reply.startswith(r)]
    assert taken_in and reply[len(taken_in[0]) :].strip(), reply  # (and a word for the reset)
    assert set(state.solved_intents) == {"address_change", "account_locked"}


# ---- world-16: an order's product lists at a price believable of it ----


def test_world_16_every_order_lists_its_products_at_believable_prices():
    """Blind players found a $23.46 office chair: the ticket's amount was drawn apart from the product its
    words name. Every line of every order lists its product within PRICE_BAND_PERCENT of its typical price,
    the orders charged the amount (the order in question, a declined checkout) and the words' products too."""
    named_at_the_amount = 0
    for split in ("validation", "test"):
        for seed in range(300):
            scenario = generate(EXPERT_TASK_ID, split, seed)
            named = {p for p in scenario.products if p in content.PRODUCTS}
            amount = scenario.facts_by_name.get("amount")
            assert amount is None or round(float(amount) * 100) >= CHEAPEST_CENTS, (split, seed)
            for order in scenario.records.orders:
                for item in order.items:
                    assert in_band(item.product, round(item.unit_price * 100)), (split, seed, order)
                charged = [p.amount for p in scenario.records.payments_for(order.order_id)]
                named_at_the_amount += bool(amount) and float(amount) in charged and order.items[0].product in named
    assert named_at_the_amount > 100  # (the words name the product of the order charged the amount often)


def test_a_refund_told_with_its_days_to_a_customer_who_needed_it_today_is_met_as_slower_than_hoped() -> None:
    """Audit round 69: "Brilliant, that covers everything" when a refund that had to come today takes days."""
    lines = content.REACTIONS["refund_slower_than_needed"]
    heard = 0
    for seed in range(300):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        if scenario.impact != "blocking" or len(scenario.intents) != 1:
            continue
        if not any(r.tool == "issue_refund" for r in casework.remedies_for(scenario, scenario.intents[0].issue_id)):
            continue
        _, state = new_episode(EXPERT_TASK_ID, "validation", seed)
        while not state.done:
            step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID))
        replies = [text for who, text, _ in state.history if who == "customer"]
        said = [(n, line) for n, text in enumerate(replies) for line in lines if line in text]
        assert len(said) == 1, (seed, replies)
        reply = replies[said[0][0]]
        assert "?" not in reply[: reply.index(said[0][1])], reply  # (before what it asks next)
        heard += 1
    assert heard >= 3


def test_round_70_a_second_verb_after_i_claims_the_change_and_a_hold_never_captured_drops():
    """Audit round 70: "I am treating it as lost and have reshipped the order" was not read as the reship (an
    extra step, and "what about my missing parcel?"); "a hold that was never captured as a charge" was not read
    as the authorisation that drops (the customer doubted twice)."""
    assert casework.claimed_changes("I am treating it as lost and have reshipped the order to you.") == (
        "reship_order",
    )
    assert casework.claimed_changes("The carrier lost it and have not reshipped it.") == ()
    hold = casework.Finding("double_charge", "the hold", "authorisation", "")
    assert hold.told_in("PAY-2 has the status authorised, which means it is only a hold that was never captured.")
    assert not hold.told_in("It is a real charge that was captured, not a hold.")


def test_round_70_the_customer_chooses_when_an_ask_puts_an_either_or():
    """Audit round 70: "would you prefer the order sent again or your money back?" in an ask was met with "Not
    that I know of."; the customer chooses, as it does when an answer asks."""
    scenario = next(
        s
        for s in (generate(EXPERT_TASK_ID, "validation", seed) for seed in range(300))
        if {i.issue_id for i in s.intents} == {"lost_package"}
    )
    _, state = new_episode(EXPERT_TASK_ID, "validation", scenario.seed)
    question = "Could you share the order id? Also, would you prefer the order sent again or your money back?"
    step(scenario, state, Action("ask_for_more_info", fields=("order_id",), text=question))
    reply = state.history[-1][1]
    assert any(line in reply for line in content.REACTIONS["question_choice"]), reply
    assert not any(line in reply for line in content.NOT_THAT_I_KNOW_REPLIES)


def test_round_70_opening_words_the_tickets_of_a_recent_order_and_joined_issues_keep():
    """Audit round 70: "Also, There's a typo in my shipping address" (a subject given back kept its capital), and
    "I've been meaning to write in about this for a while" of an order placed four days before."""
    assert world._lower_first("Typo in my shipping address.") == "there's a typo in my shipping address."
    assert world._lower_first("Got the wrong item.") == "I got the wrong item."
    for seed in range(400):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        message = scenario.opening_message
        assert "Also, There's" not in message and "Also, It looks" not in message
        if any(i.issue_id == "address_change" for i in scenario.intents):
            assert "for a while" not in message, message


def test_round_70_a_reply_of_several_reactions_thanks_once():
    """Audit round 70: "That's a relief, thank you. Thanks, that's exactly what I wanted!" and a second "Right,"."""
    assert (
        customer.without_repeated_thanks("That's a relief, thank you. Thanks, that's exactly what I wanted!")
        == "That's a relief, thank you. That's exactly what I wanted!"
    )
    assert (
        customer.without_repeated_thanks("Right, I'll check. Right, I'll try it.") == "Right, I'll check. I'll try it."
    )
    assert customer.without_repeated_thanks("Okay, thank you. Thanks for looking.") == "Okay. Thanks for looking."
    assert customer.without_repeated_thanks("Okay, thanks. Thanks!") == "Okay, thanks."
    # One interjection to a reply stitched of two reactions (the s5 note): not "... Okay, thanks for doing that."
    assert (
        customer.without_repeated_thanks("Right, so it's paid after all. Okay, thanks for doing that.")
        == "Right, so it's paid after all. Thanks for doing that."
    )
    assert (
        customer.without_repeated_thanks("Fine, that was an older order's number. Great, thanks for sorting it.")
        == "Fine, that was an older order's number. Thanks for sorting it."
    )
    # Audit round 77: thanks for two things said once, and an interjection before thanks after thanks.
    cases = {
        "Okay, I'll have a look there. Thanks for checking the tracking. Thanks for doing that.": (
            "Okay, I'll have a look there. Thanks for checking the tracking, and for doing that."
        ),
        "Okay, so it isn't lost yet. I'll wait a bit longer, thanks. Thanks for dealing with it.": (
            "Okay, so it isn't lost yet. I'll wait a bit longer. Thanks for dealing with it."
        ),
        "Good, I won't try again then. Thanks for checking. Okay, thanks, that's what I wanted to know.": (
            "Good, I won't try again then. Thanks for checking. That's what I wanted to know."
        ),
    }
    # Round 78: a second reaction starts without an interjection; a bare "Fine." is a word of its own.
    cases["No, that wasn't me! I haven't been to York. Okay, fine. That answers it, I suppose."] = (
        "No, that wasn't me! I haven't been to York. Fine. That answers it, I suppose."
    )
    cases["This is ridiculous. Fine."] = "This is ridiculous. Fine."
    # Round 79: a bare "Okay." only starts the next reaction.
    cases["That's a relief, thank you. Okay. About time."] = "That's a relief, thank you. About time."
    cases["I see. Okay... so someone will get back to me?"] = "I see. Okay... so someone will get back to me?"
    for stitched, written in cases.items():
        assert customer.without_repeated_thanks(stitched) == written


def test_round_70_a_claim_not_borne_out_closes_plainly_and_a_card_that_went_through_had_not_expired():
    """Audit round 70: "That's great, thank you. Have a good one!" after the address could not be changed; two
    attempts declined as an expired card, then the same card captured the same day."""
    closed = 0
    for seed in range(300):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        if scenario.family == "paid_on_retry":
            assert all(p.decline_reason != "expired_card" for p in scenario.records.payments)
        if not casework.is_mistaken(scenario, scenario.expected.issue_type):
            continue
        _, state = new_episode(EXPERT_TASK_ID, "validation", seed)
        while not state.done:
            step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID))
        assert state.history[-1][1] not in content.REACTIONS["closed"], (seed, state.history[-1])
        closed += 1
    assert closed >= 20


def test_a_reported_takeover_s_sign_in_names_a_town_as_every_sign_in_does():
    """It read "unknown location", which no sign-in record says (noticed in world-15's audits)."""
    seen = 0
    for seed in range(300):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        if not any(i.issue_id == "account_takeover" for i in scenario.intents):
            continue
        stranger, *others = scenario.records.account.sign_ins
        assert not stranger.recognised and stranger.place not in {s.place for s in others}, stranger
        assert stranger.place[0].isupper() and stranger.place != "unknown location"
        seen += 1
    assert seen >= 5


@patches_the_expert
def test_round_72_a_customer_who_says_a_sign_in_was_not_theirs_does_not_call_the_case_covered(monkeypatch):
    """Audit round 72: "No, that wasn't me! I haven't been to Galway ... Thanks, that's everything I needed." in
    one reply to an answer that settled the rest and asked whose the sign-in was: the takeover was still open."""
    covered = re.compile(r"\b(?:everything|all of it|covers it all|deals with all)\b", re.IGNORECASE)
    monkeypatch.setattr(expert, "_sign_in_check", lambda scenario, state: None)  # (asked in the answer instead)
    heard = 0
    for seed in range(400):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        if scenario.unknown_sign_in != "stranger" or len(scenario.intents) < 2:
            continue
        _, state = new_episode(EXPERT_TASK_ID, "validation", seed)
        sign_in = casework.unknown_sign_in(scenario)
        _oracle_until(scenario, state, lambda a: a.kind == "respond_with_solution")
        answer = expert.expert_action(scenario, state, EXPERT_TASK_ID)
        question = f" Also, I see a sign-in on {sign_in.when} from a {sign_in.device} in {sign_in.place}. Was that you?"
        step(scenario, state, answer._replace(text=answer.text + question))
        reply = state.history[-1][1]
        if sign_in.place in reply:  # (the customer said it was not theirs)
            assert not covered.search(reply), (seed, reply)
            heard += 1
    assert heard >= 3
    # ... and however the answer settles the rest (several issues of different kinds: "that covers everything").
    scenario = generate(EXPERT_TASK_ID, "validation", 0)
    kinds = {}
    for issue in ISSUE_TYPES_BY_ID:
        kinds.setdefault(customer.solved_reply(issue, "satisfied", False), issue)
    mixed = list(kinds.values())[:2]
    for mood in ("satisfied", "neutral", "frustrated"):
        replies = [customer.solved(scenario, n, mixed, mood, False, all_done=False) for n in range(30)]
        assert not any(covered.search(r) for r in replies), replies
    assert any(covered.search(customer.solved(scenario, n, mixed, "satisfied", False)) for n in range(30))


def test_round_72_news_from_the_records_is_taken_as_information_and_a_slip_owned_up_to_in_the_persona_s_words():
    """Audit round 72: "Okay, good to know it's being put right. Thanks!" to a late parcel's new date (nothing was
    put right); an angry customer's "Oops, that's my old order's number. Sorry about that."; the earlier order's
    id "from the confirmation email", which would show the recent one."""
    promises = [
        line for kind, lines in content.REACTIONS.items() if kind.startswith("solved_promise") for line in lines
    ]
    curt, sorry = content.REACTIONS["mixup_acknowledged_curt"], content.REACTIONS["mixup_acknowledged"]
    news = mixups = 0
    for seed in range(800):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        found = {f.issue for f in casework.findings(scenario)}
        only_news = not casework.remedies(scenario) and found >= {i.issue_id for i in scenario.intents}
        if not only_news and not scenario.meant_order_id:
            continue
        _, state = new_episode(EXPERT_TASK_ID, "validation", seed)
        while not state.done:
            step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID))
        replies = " ".join(text for who, text, _ in state.history[1:] if who == "customer")
        if only_news and not scenario.family:  # (a family's claim is met in words of its own)
            assert not any(p in replies for p in promises), (seed, replies)
            news += 1
        if scenario.meant_order_id:
            assert "confirmation email" not in replies, (seed, replies)
            owned, not_owned = (curt, sorry) if scenario.persona in ("angry", "terse") else (sorry, curt)
            assert not any(line in replies for line in not_owned), (seed, scenario.persona, replies)
            mixups += any(line in replies for line in owned)
    assert news >= 3 and mixups >= 5


def test_round_72_the_words_of_a_ticket_fit_the_days_its_records_hold():
    """Audit round 72: "the tracking hasn't updated in ten days" of a parcel ordered eight days ago and scanned six
    days ago; "a duplicate payment went through when I checked out yesterday" of a charge taken ten days ago."""
    for seed in range(1500):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        if scenario.family == "not_lost_yet":
            assert not {"lost_package/3", "lost_package/4"} & set(scenario.template_ids), seed
        if "double_charge/4" in scenario.template_ids:
            assert days_before_today(scenario.facts_by_name["charge_date"]) <= 2, seed


def test_round_72_a_doubt_after_the_news_of_a_refund_says_what_it_doubts():
    """Audit round 72: "Overcharged? I never spotted that, so I'm glad you caught it. Already? Are you certain?"
    read as a doubt of the refund, not of the delivery it was about."""
    seen = 0
    for seed in range(1500):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        if not (scenario.unnoticed_charge and casework.is_mistaken(scenario, scenario.expected.issue_type)):
            continue
        _, state = new_episode(EXPERT_TASK_ID, "validation", seed)
        while not state.done:
            step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID))
        pushbacks = content.REACTIONS[f"pushback_{scenario.family}"]
        for who, text, _ in state.history:
            noticed = any(line in text for line in content.REACTIONS[f"noticed_{scenario.unnoticed_charge}"])
            doubted = any(line[1:] in text for line in pushbacks)
            if who == "customer" and noticed and doubted:
                assert "As for " in text, (seed, text)
                seen += 1
    assert seen >= 1


def test_the_desk_never_promises_what_no_tool_does_and_is_charged_once_when_it_does():
    """The desk rules say "Offer or promise nothing the tools do not do (an article's shipping credit, store
    credit, carrier trace, ...)", yet the expert told a lost parcel's customer "Open a carrier trace" on 100
    tickets in 1,500 and a price adjustment's "as store credit" on 8, and nothing charged it."""
    assert casework.promises_untooled("Here is what we will do: Open a carrier trace with the tracking number.")
    assert casework.promises_untooled("Would you like store credit instead?") == ("store credit",)
    assert casework.promises_untooled("I can't offer store credit or a carrier trace from the desk.") == ()
    assert casework.promises_untooled("The article mentions a shipping credit, but no tool gives one.") == ()
    for split in ("validation", "test"):
        for seed in range(300):
            scenario = generate(EXPERT_TASK_ID, split, seed)
            assert "price_adjustment" not in {i.issue_id for i in scenario.intents}
            _, state = new_episode(EXPERT_TASK_ID, split, seed)
            while not state.done:
                step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID))
            said = [text for who, text, _ in state.history if who == "agent"]
            assert not any(casework.promises_untooled(text) for text in said), (split, seed)
    scenario, state = new_episode(EXPERT_TASK_ID, "validation", _seed_with("lost_package", "reship_order"))
    promise = Action("respond_with_solution", text="Sorry about that. I'll open a carrier trace today.")
    first = step(scenario, state, promise)
    again = step(scenario, state, promise._replace(text="I'll also open a carrier trace."))
    assert dict(first.breakdown)["promise_untooled"] == -0.2 and "promise_untooled" not in dict(again.breakdown)
    assert state.violations.count("promised_untooled") == 1


def test_round_73_words_that_need_a_parcel_received_and_glad_thanks_beside_bad_news():
    """Audit round 73: "Can I get reimbursed for the order I placed? It didn't meet my needs. Also, the tracking
    hasn't updated in ten days" of one order lost on its way; "Oh no, so it's been delivered already ... Perfect,
    that's clear." and "That definitely wasn't me ... Great, thanks for sorting this out." in one breath."""
    glad = [
        line
        for kind, lines in content.REACTIONS.items()
        if kind.startswith("solved_") and not kind.endswith(("_plain", "_grudging"))
        for line in lines
    ]
    heard = 0
    for seed in range(600):
        scenario = generate(EXPERT_TASK_ID, "validation", seed)
        ids = {i.issue_id for i in scenario.intents}
        if {"refund_request", "lost_package"} <= ids:
            refund = next(t for t in scenario.template_ids if t.startswith("refund_request/"))
            assert refund in ("refund_request/1", "refund_request/6"), (seed, scenario.opening_message)
        if not scenario.family or not casework.is_mistaken(scenario, scenario.expected.issue_type):
            continue
        _, state = new_episode(EXPERT_TASK_ID, "validation", seed)
        while not state.done:
            step(scenario, state, expert.expert_action(scenario, state, EXPERT_TASK_ID))
        for who, text, _ in state.history:
            accepted = [a for a in content.REACTIONS[f"accepts_{scenario.family}"] if a in text]
            if who == "customer" and accepted:
                after = text.split(accepted[0], 1)[1]
                assert not any(line in after for line in glad), (seed, text)
                heard += bool(after.strip())
    assert heard >= 3


def test_round_77_looking_up_the_order_id_given_for_another_order_costs_nothing():
    """Audit rounds 61, 72 and 77: a customer who gives another order's id (an earlier one, or its own
    mistyped) is checked most naturally by looking that id up. The expert does so first, so a player who
    does is not charged for it, and one who goes straight to the account's orders is not charged either."""
    for where in (
        lambda sc: sc.meant_order_id and not sc.order_id_mistyped and not sc.impostor,
        lambda sc: sc.order_id_mistyped,
    ):
        seed = next(s for s in range(3000) if where(generate(EXPERT_TASK_ID, "validation", s)))
        scenario, state, grade = play("oracle", "validation", seed)
        given = use_tool("look_up_order", order_id=scenario.facts_by_name["order_id"])
        assert given in state.actions and grade.score == 1.0
        # The same handling without that look-up: efficiency still full.
        scenario, skipped = new_episode(EXPERT_TASK_ID, "validation", seed)
        for action in state.actions:
            if action != given:
                step(scenario, skipped, action)
        parts = {c.name: c for c in grade_state(scenario, skipped).components}
        assert parts["efficiency"].score == 1.0, parts["efficiency"].detail
