"""Casework: the changes a ticket's records need, and the check of an episode's changes against them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from supportenv import casework
from supportenv.tools import Change, Desk, ToolCall, tool_call, use_tool
from supportenv.world import Scenario, generate

TASKS = ("end_to_end_resolution", "action_selection")


def _scenarios(split: str = "validation", count: int = 300) -> Iterator[Scenario]:
    for task in TASKS:
        for seed in range(count):
            yield generate(task, split, seed)


def _first(predicate: Callable[[Scenario], bool]) -> Scenario:
    scenario = next((s for s in _scenarios() if predicate(s)), None)
    assert scenario is not None, "no scenario in the scan fits"
    return scenario


def _issues(scenario: Scenario) -> set[str]:
    return {i.issue_id for i in scenario.intents}


def _run(scenario: Scenario, calls: list[ToolCall], said: dict[str, str] | None = None) -> Desk:
    desk = Desk()
    said = casework.identity_proofs(scenario.records) if said is None else said
    for call in calls:
        _, desk = use_tool(scenario.records, desk, call, said, scenario.policy.refund_cap(scenario.tier))
    return desk


def _remedy_of(scenario: Scenario, issue: str) -> casework.Remedy:
    return next(r for r in casework.remedies(scenario) if r.issue == issue)


def test_every_remedy_is_reachable_with_the_tools_and_checks_right():
    seen = set()
    for scenario in _scenarios("validation", 200):
        check = casework.check_records(scenario, _run(scenario, casework.remedy_calls(scenario)))
        assert check.right, (scenario.task_id, scenario.seed, check)
        assert len(check.done) == len(casework.remedies(scenario))
        seen.update(r.tool for r in check.done)
    assert seen == {"issue_refund", "reship_order", "update_address", "cancel_subscription", "send_password_reset"}


def test_doing_nothing_leaves_every_remedy_missing():
    scenario = _first(lambda s: len(casework.remedies(s)) >= 2)
    check = casework.check_records(scenario, Desk())
    assert check.missing == casework.remedies(scenario) and not check.done and not check.right


def test_a_ticket_without_records_work_has_no_remedies():
    scenario = _first(lambda s: _issues(s) <= {"service_outage", "refund_status", "app_crash", "feature_request"})
    assert casework.remedies(scenario) == () and casework.check_records(scenario, Desk()).right


def test_a_double_charge_is_refunded_the_duplicate_charge_only():
    def fits(s: Scenario) -> bool:
        return "double_charge" in _issues(s) and any(r.issue == "double_charge" for r in casework.remedies(s))

    scenario = _first(fits)
    remedy = _remedy_of(scenario, "double_charge")
    captured = [p for p in scenario.records.payments_for(remedy.target) if p.status == "captured"]
    assert len(captured) == 2 and float(remedy.value) == captured[1].amount
    both = round(sum(p.amount for p in captured), 2)
    everything = _run(
        scenario,
        [tool_call("verify_identity"), tool_call("issue_refund", order_id=remedy.target, amount=f"{both:.2f}")],
    )
    check = casework.check_records(scenario, everything)
    if everything.changes:  # refunding both charges is within the cap: it is the wrong change
        assert remedy in check.missing and check.unwanted == everything.changes
    assert not check.right


def test_an_overcharge_is_refunded_the_difference():
    scenario = _first(lambda s: any(r.issue == "wrong_amount" for r in casework.remedies(s)))
    remedy = _remedy_of(scenario, "wrong_amount")
    order = scenario.records.order(remedy.target)
    charged = scenario.records.payments_for(remedy.target)[0].amount
    assert float(remedy.value) == pytest.approx(charged - order.total) and 0 < float(remedy.value) < charged


def test_a_refund_above_the_cap_is_escalated_not_refunded():
    scenario = _first(lambda s: "refund_request" in casework.over_the_cap(s))
    assert not any(r.issue == "refund_request" for r in casework.remedies(scenario))
    amount = scenario.facts_by_name["amount"]
    order_id = scenario.order_in_question
    assert float(amount) > scenario.policy.refund_cap(scenario.tier)
    calls = [tool_call("verify_identity"), tool_call("issue_refund", order_id=order_id, amount=amount)]
    assert casework.check_records(scenario, _run(scenario, calls)).unwanted == ()  # the tool refused it


def test_a_refund_within_the_cap_is_the_amount_asked():
    scenario = _first(lambda s: any(r.issue == "refund_request" for r in casework.remedies(s)))
    remedy = _remedy_of(scenario, "refund_request")
    assert remedy.value == f"{float(scenario.facts_by_name['amount']):.2f}"
    half = f"{float(remedy.value) / 2:.2f}"
    partial = _run(
        scenario, [tool_call("verify_identity"), tool_call("issue_refund", order_id=remedy.target, amount=half)]
    )
    check = casework.check_records(scenario, partial)
    assert remedy in check.missing and len(check.unwanted) == 1


def test_an_order_refunded_is_not_also_reshipped():
    def fits(s: Scenario) -> bool:
        return {"refund_request", "lost_package"} <= _issues(s) and "refund_request" not in casework.over_the_cap(s)

    scenario = next((s for s in _scenarios("validation", 1500) if fits(s)), None)
    if scenario is None:
        pytest.skip("no ticket in the scan asks a refund of a lost parcel")
    tools = [r.tool for r in casework.remedies(scenario)]
    assert "issue_refund" in tools and "reship_order" not in tools


def test_a_change_made_twice_is_unwanted_the_second_time():
    scenario = _first(lambda s: any(r.tool == "issue_refund" for r in casework.remedies(s)))
    remedy = next(r for r in casework.remedies(scenario) if r.tool == "issue_refund")
    desk = Desk(changes=(Change(remedy.tool, remedy.target, remedy.value),) * 2)
    check = casework.check_records(scenario, desk)
    assert remedy in check.done and len(check.unwanted) == 1 and not check.right


def test_the_account_holder_can_verify_with_its_proofs_and_nobody_else():
    scenario = _first(lambda s: bool(s.records.orders))
    records, cap = scenario.records, scenario.policy.refund_cap(scenario.tier)
    proofs = casework.identity_proofs(records)
    assert proofs["account_email"] == records.account.email
    result, desk = use_tool(records, Desk(), tool_call("verify_identity"), proofs, cap)
    assert result.status == "ok" and desk.verified
    impostor = {"account_email": records.account.email, "order_id": "ORD-000000", "card_last_four": "0000"}
    result, desk = use_tool(records, Desk(), tool_call("verify_identity"), impostor, cap)
    assert result.status == "refused" and not desk.verified


def test_changes_before_verification_are_refused_so_they_never_count():
    scenario = _first(lambda s: any(r.tool in casework.NEEDS_VERIFICATION for r in casework.remedies(s)))
    unverified = _run(scenario, [r.call() for r in casework.remedies(scenario)], said={})
    assert all(c.tool == "send_password_reset" for c in unverified.changes)
    assert not casework.check_records(scenario, unverified).right


def test_remedies_are_the_same_across_calls_and_scenarios_rebuilt():
    for scenario in list(_scenarios("test", 40)):
        again = generate(scenario.task_id, scenario.split, scenario.seed)
        assert casework.remedies(again) == casework.remedies(scenario)
