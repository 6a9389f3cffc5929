"""The help desk's tools: calls are validated, look-ups show the records as the desk's changes
left them, verification trusts only what the customer said, changes are made only under policy
(verified, within what was captured and the tier's cap, at the right stage of the order), and
the engine is pure and deterministic.

Scenarios are found by scanning a bounded range of validation seeds for the first whose
records fit a predicate, so the tests hold however the world is redrawn."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

import pytest

from supportenv import tools as tools_module
from supportenv.errors import InvalidActionError
from supportenv.tasks import EXPERT_TASK_ID, TASK_IDS
from supportenv.tools import (
    CHANGE,
    LOOK_UP,
    LOST_AFTER_DAYS,
    MAX_ARGUMENT_CHARS,
    NOT_FOUND,
    OK,
    REFUSED,
    STATUSES,
    TOOL_NAMES,
    TOOLS,
    TOOLS_BY_NAME,
    Change,
    Desk,
    ToolCall,
    ToolResult,
    tool_call,
    use_tool,
    validate,
)
from supportenv.world import Scenario, generate
from supportenv.world.system_of_record import TODAY, Order, SystemOfRecord, TrackingEvent, as_data, build_records

SEEDS = range(400)
NO_CAP = 1e6  # a refund cap no test amount reaches, where the cap is not what is tested
NEW_ADDRESS = "12 Harbour View, Galway"


# --- finding scenarios ---------------------------------------------------------------------------
def _issues(s: Scenario) -> set[str]:
    return {i.issue_id for i in s.intents}


def _find(predicate: Callable[[Scenario], bool], what: str) -> Scenario:
    for seed in SEEDS:
        for task in TASK_IDS:
            scenario = generate(task, "validation", seed)
            if predicate(scenario):
                return scenario
    pytest.fail(f"no validation scenario in seeds {SEEDS.start}..{SEEDS.stop - 1} has {what}")


def _the_order(s: Scenario) -> Order | None:
    order_id = s.order_in_question
    return s.records.order(order_id) if order_id else None


def _captured(records: SystemOfRecord, order_id: str) -> float:
    return round(sum(p.amount for p in records.payments_for(order_id) if p.status == "captured"), 2)


def _order_with(status: str, **more: Callable[[Scenario, Order], bool]) -> Scenario:
    def fits(s: Scenario) -> bool:
        order = _the_order(s)
        return order is not None and order.status == status and all(p(s, order) for p in more.values())

    return _find(fits, f"an order in question {status} ({', '.join(more) or 'any'})")


def _delivered_unrefunded() -> Scenario:
    """A delivered order in question, paid by one captured payment, never refunded."""
    return _order_with(
        "delivered",
        one_captured_payment=lambda s, o: [p.status for p in s.records.payments_for(o.order_id)] == ["captured"],
        no_refunds=lambda s, o: not s.records.refunds_for(o.order_id),
        at_least_a_dollar=lambda s, o: _captured(s.records, o.order_id) >= 1,
    )


def _double_charged() -> Scenario:
    return _find(
        lambda s: "double_charge" in _issues(s) and not s.records.refunds_for(_the_order(s).order_id), "a double charge"
    )


def _pending_refund() -> Scenario:
    return _find(
        lambda s: (
            "refund_status" in _issues(s)
            and [r.status for r in s.records.refunds_for(_the_order(s).order_id)] == ["pending"]
        ),
        "a refund being chased",
    )


def _lost() -> Scenario:
    return _find(lambda s: "lost_package" in _issues(s), "a lost parcel")


def _delayed() -> Scenario:
    return _find(
        lambda s: "delayed_delivery" in _issues(s) and not _issues(s) & {"lost_package"}, "a delayed parcel (not lost)"
    )


def _subscribed() -> Scenario:
    return _find(
        lambda s: [x.status for x in s.records.subscriptions] == ["active"], "an account with an active subscription"
    )


def _with_facts(*names: str) -> Scenario:
    return _find(lambda s: set(names) <= set(s.facts_by_name), f"the hidden facts {names}")


def _with_status(records: SystemOfRecord, order_id: str, status: str) -> SystemOfRecord:
    """The records with one order at another stage (the world never draws, e.g., a processing order)."""
    order = records.order(order_id)
    if status in ("processing", "awaiting_payment"):
        changed = replace(order, status=status, carrier="", tracking_number="", events=())
    else:
        changed = replace(order, status=status)
    return replace(records, orders=tuple(changed if o is order else o for o in records.orders))


# --- calling tools -------------------------------------------------------------------------------
def _said(records: SystemOfRecord) -> dict[str, str]:
    """What a customer proving its identity says: the account email and its card's last four."""
    return {"account_email": records.account.email, "card_last_four": records.payments[0].card_last_four}


def _run(
    records: SystemOfRecord,
    desk: Desk,
    name: str,
    said: dict[str, str] | None = None,
    cap: float = NO_CAP,
    **arguments: str,
) -> tuple[ToolResult, Desk]:
    return use_tool(records, desk, tool_call(name, **arguments), said or {}, cap)


def _verified(records: SystemOfRecord) -> Desk:
    result, desk = _run(records, Desk(), "verify_identity", _said(records))
    assert result.status == OK and desk.verified, result.message
    return desk


def _order_data(records: SystemOfRecord, desk: Desk, order_id: str) -> dict:
    result, after = _run(records, desk, "look_up_order", order_id=order_id)
    assert result.status == OK and after == desk, result.message
    return result.data["order"]


def _unused_order_id(records: SystemOfRecord) -> str:
    return next(f"ORD-{n:06d}" for n in range(100000, 1000000) if records.order(f"ORD-{n:06d}") is None)


# --- 1. validation and the tool table ----------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "arguments", "problem"),
    [
        ("refund_everything", {}, "unknown tool 'refund_everything'; expected one of look_up_customer"),
        ("look_up_order", {"order": "ORD-100000"}, "look_up_order takes order_id; got ['order']"),
        ("look_up_order", {"order_id": "ORD-100000", "note": "hi"}, "look_up_order takes order_id"),
        ("check_service_status", {"service": "api"}, "check_service_status takes no arguments"),
        ("look_up_order", {}, "look_up_order needs order_id"),
        ("issue_refund", {"order_id": "ORD-100000"}, "issue_refund needs amount"),
        ("issue_refund", {"order_id": "ORD-100000", "amount": "   "}, "issue_refund needs amount"),
        ("update_address", {"order_id": " ", "new_address": ""}, "update_address needs order_id, new_address"),
        (
            "update_address",
            {"order_id": "ORD-100000", "new_address": "x" * (MAX_ARGUMENT_CHARS + 1)},
            f"at most {MAX_ARGUMENT_CHARS} characters",
        ),
        ("issue_refund", {"order_id": "ORD-100000", "amount": "ten dollars"}, "amount must be a number, got 'ten"),
        ("issue_refund", {"order_id": "ORD-100000", "amount": "12.5.0"}, "amount must be a number"),
        ("issue_refund", {"order_id": "ORD-100000", "amount": "0"}, "amount must be from $0.01"),
        ("issue_refund", {"order_id": "ORD-100000", "amount": "$0.00"}, "amount must be from $0.01"),
        ("issue_refund", {"order_id": "ORD-100000", "amount": "-5"}, "amount must be from $0.01"),
    ],
)
def test_a_malformed_call_is_rejected_naming_the_problem(name, arguments, problem):
    with pytest.raises(InvalidActionError, match=re.escape(problem)):
        tool_call(name, **arguments)


def test_a_duplicate_argument_is_rejected_and_use_tool_validates_too():
    twice = ToolCall("look_up_order", (("order_id", "ORD-100000"), ("order_id", "ORD-200000")))
    with pytest.raises(InvalidActionError, match=re.escape("got ['order_id', 'order_id']")):
        validate(twice)
    records = _delivered_unrefunded().records
    for bad in (twice, ToolCall("wire_money"), ToolCall("issue_refund", (("order_id", "X"), ("amount", "lots")))):
        with pytest.raises(InvalidActionError):
            use_tool(records, Desk(), bad, {}, NO_CAP)


def test_well_formed_calls_are_accepted_as_given():
    call = tool_call("issue_refund", order_id="ORD-100000", amount="$1,234.50")
    assert call == ToolCall("issue_refund", (("order_id", "ORD-100000"), ("amount", "$1,234.50")))
    assert call.argument("amount") == "$1,234.50" and call.argument("missing") == ""
    assert call.label() == "issue_refund(ORD-100000,$1,234.50)"
    longest = "x" * MAX_ARGUMENT_CHARS
    assert tool_call("update_address", order_id="ORD-1", new_address=longest).argument("new_address") == longest
    assert tool_call("check_service_status") == ToolCall("check_service_status")


def test_every_tool_has_a_handler_a_positive_cost_a_kind_and_a_description():
    assert len(TOOLS) == len(TOOL_NAMES) == len(set(TOOL_NAMES)) == len(TOOLS_BY_NAME)
    assert set(tools_module._HANDLERS) == set(TOOL_NAMES)
    for spec in TOOLS:
        assert TOOLS_BY_NAME[spec.name] is spec
        assert spec.cost > 0, spec.name
        assert spec.kind in (LOOK_UP, CHANGE), spec.name
        assert isinstance(spec.description, str) and spec.description.strip(), spec.name
        assert len(set(spec.arguments)) == len(spec.arguments), spec.name
    assert {t.name for t in TOOLS if t.kind == LOOK_UP} == {
        "look_up_customer",
        "look_up_order",
        "look_up_payments",
        "check_service_status",
    }


def test_every_tool_runs_and_answers_with_a_status_a_sentence_and_json_data():
    s = _subscribed()
    records = s.records
    values = {
        "account_email": records.account.email,
        "order_id": records.orders[0].order_id if records.orders else "ORD-100000",
        "amount": "1.00",
        "new_address": NEW_ADDRESS,
        "subscription_id": records.subscriptions[0].subscription_id,
    }
    for desk in (Desk(), _verified(records)):
        for spec in TOOLS:
            result, _ = _run(records, desk, spec.name, _said(records), **{a: values[a] for a in spec.arguments})
            assert isinstance(result, ToolResult) and result.tool == spec.name
            assert result.status in STATUSES and result.message.strip(), (spec.name, result)
            assert isinstance(result.data, dict)
            assert json.loads(json.dumps(result.data)) == result.data, spec.name


# --- 2. look-ups ---------------------------------------------------------------------------------
def test_look_up_customer_finds_the_account_by_its_email_whatever_its_case_and_spaces():
    records = _with_facts("account_email").records
    email = records.account.email
    for given in (email, email.upper(), f"  {email.title()}\t"):
        result, desk = _run(records, Desk(), "look_up_customer", account_email=given)
        assert result.status == OK and desk == Desk()
        account = result.data["account"]
        assert account["email"] == email and account["customer_id"] == records.account.customer_id
        assert account["identity_verified"] is False and account["address"] == records.account.address
        assert {k: v for k, v in account.items() if k not in ("identity_verified", "orders")} == {
            k: v for k, v in records.to_dict()["account"].items() if k != "identity_verified"
        }
        # ... and every order on it, in brief, the latest first (how the desk finds the order meant)
        listed = [(o["order_id"], o["placed"], o["status"], o["total"]) for o in account["orders"]]
        assert listed == sorted(((o.order_id, o.placed, o.status, o.total) for o in records.orders),
                                key=lambda o: o[1], reverse=True)  # fmt: skip


@pytest.mark.parametrize("tool", ["look_up_customer", "look_up_payments", "send_password_reset"])
def test_another_email_finds_nothing(tool):
    records = _with_facts("account_email").records
    email = records.account.email
    for other in ("someone.else@example.com", "x" + email, email.replace("@", "@x"), email + ".org"):
        result, desk = _run(records, Desk(), tool, account_email=other)
        assert result.status == NOT_FOUND and result.data == {}, (other, result)
        assert desk == Desk()


def test_look_up_payments_shows_every_payment_refund_and_subscription():
    s = _find(lambda s: s.records.subscriptions and s.records.refunds, "an account with refunds and a subscription")
    records = s.records
    result, desk = _run(records, Desk(), "look_up_payments", account_email=f" {records.account.email.upper()} ")
    assert result.status == OK and desk == Desk()
    everything = records.to_dict()
    # Every payment, the latest first (of one day, the one the records list later first).
    latest_first = [p for _, p in sorted(enumerate(everything["payments"]), key=lambda ip: (ip[1]["date"], ip[0]))]
    assert result.data == {
        "payments": latest_first[::-1],
        "refunds": everything["refunds"],
        "subscriptions": everything["subscriptions"],
    }
    assert str(len(records.payments)) in result.message


def test_look_up_order_shows_the_order_in_question_with_its_payments_and_refunds():
    s = _pending_refund()
    records, order = s.records, _the_order(s)
    for given in (order.order_id, f" {order.order_id.lower()} "):
        result, desk = _run(records, Desk(), "look_up_order", order_id=given)
        assert result.status == OK and desk == Desk()
        data = result.data["order"]
        assert data["order_id"] == order.order_id and data["total"] == order.total
        assert data["items"] == as_data(order.items) and data["status"] == "returned"
        assert data["payments"] == as_data(records.payments_for(order.order_id))
        assert data["refunds"] == as_data(records.refunds_for(order.order_id)) != []
        assert data["reshipped"] is False and data["ship_to"] == order.ship_to


def test_look_up_order_with_an_unknown_id_finds_nothing():
    records = _delivered_unrefunded().records
    for unknown in (_unused_order_id(records), "not an order"):
        result, desk = _run(records, Desk(), "look_up_order", order_id=unknown)
        assert result.status == NOT_FOUND and result.data == {} and desk == Desk()


def test_check_service_status_lists_the_incidents():
    outage = _find(lambda s: any(i.status == "investigating" for i in s.records.incidents), "an open incident")
    result, desk = _run(outage.records, Desk(), "check_service_status")
    assert result.status == OK and desk == Desk()
    assert result.data == {"incidents": as_data(outage.records.incidents)}
    open_ = sum(i.status != "resolved" for i in outage.records.incidents)
    assert result.message == f"{open_} open incident(s)."
    calm = _find(lambda s: not s.records.incidents, "no incidents")
    result, _ = _run(calm.records, Desk(), "check_service_status")
    assert result.status == OK and result.data == {"incidents": []}
    assert "running normally" in result.message


def test_look_ups_never_change_the_desk():
    s = _subscribed()
    records = s.records
    desk = replace(
        _verified(records), changes=(Change("cancel_subscription", records.subscriptions[0].subscription_id),)
    )
    calls = [
        tool_call("look_up_customer", account_email=records.account.email),
        tool_call("look_up_payments", account_email=records.account.email),
        tool_call("look_up_customer", account_email="nobody@example.com"),
        tool_call("check_service_status"),
        *(tool_call("look_up_order", order_id=o.order_id) for o in records.orders),
        tool_call("look_up_order", order_id=_unused_order_id(records)),
    ]
    for call in calls:
        assert TOOLS_BY_NAME[call.name].kind == LOOK_UP
        _, after = use_tool(records, desk, call, _said(records), NO_CAP)
        assert after == desk, call


# --- 3. verify_identity -----------------------------------------------------------------------------
def _verify(records: SystemOfRecord, said: dict[str, str], desk: Desk | None = None) -> tuple[ToolResult, Desk]:
    return use_tool(records, desk or Desk(), tool_call("verify_identity"), said, NO_CAP)


def test_verification_is_refused_when_the_customer_has_said_nothing():
    records = _with_facts("account_email", "card_last_four").records
    result, desk = _verify(records, {})
    assert result.status == REFUSED and desk == Desk() and result.data == {"identity_verified": False}
    assert "account email" in result.message and "last four" in result.message


def test_verification_is_refused_with_only_the_email():
    s = _with_facts("account_email", "order_id")
    result, desk = _verify(s.records, {"account_email": s.facts_by_name["account_email"]})
    assert result.status == REFUSED and not desk.verified
    assert "last four digits or an order id" in result.message and "account email" not in result.message


def test_verification_is_refused_when_what_was_said_does_not_match_the_records():
    s = _with_facts("account_email", "card_last_four", "order_id")
    records, facts = s.records, s.facts_by_name
    cards = {p.card_last_four for p in records.payments}
    wrong_card = next(f"{n:04d}" for n in range(10000) if f"{n:04d}" not in cards)
    email = facts["account_email"]
    for said in (
        {"account_email": email, "card_last_four": wrong_card},
        {"account_email": email, "order_id": _unused_order_id(records)},
        {"account_email": email, "card_last_four": wrong_card, "order_id": _unused_order_id(records)},
        {"account_email": "x" + email, "card_last_four": facts["card_last_four"]},
        {"account_email": "someone@example.com", "order_id": facts["order_id"]},
        {"card_last_four": facts["card_last_four"], "order_id": facts["order_id"]},
    ):
        result, desk = _verify(records, said)
        assert result.status == REFUSED and desk == Desk(), said


@pytest.mark.parametrize("proof", ["card_last_four", "order_id"])
def test_verification_succeeds_with_the_email_and_a_matching_proof(proof):
    s = _with_facts("account_email", proof)
    facts = s.facts_by_name
    result, desk = _verify(s.records, {"account_email": facts["account_email"], proof: facts[proof]})
    assert result.status == OK and desk == Desk(verified=True) and result.data == {"identity_verified": True}
    loose = {"account_email": f"  {facts['account_email'].upper()} ", proof: f" {facts[proof].lower()} "}
    result, desk = _verify(s.records, loose)
    assert result.status == OK and desk.verified


def test_values_the_agent_looked_up_but_the_customer_never_said_do_not_verify():
    s = _with_facts("account_email", "order_id")
    records, facts = s.records, s.facts_by_name
    email = facts["account_email"]
    desk = Desk()
    looked_up = []
    for call in (
        tool_call("look_up_customer", account_email=email),
        tool_call("look_up_payments", account_email=email),
        tool_call("look_up_order", order_id=facts["order_id"]),
    ):
        result, desk = use_tool(records, desk, call, {}, NO_CAP)
        looked_up.append(json.dumps(result.data))
    # The agent has now seen the card and the order id...
    shown = " ".join(looked_up)
    assert records.payments[0].card_last_four in shown and facts["order_id"] in shown and email in shown
    # ...but only what the customer said counts.
    never_proven = {k: v for k, v in facts.items() if k not in ("card_last_four", "order_id")}
    for said in ({}, {"account_email": email}, never_proven):
        result, after = _verify(records, said, desk)
        assert result.status == REFUSED and after == desk and not after.verified, said


def test_once_verified_the_customer_stays_verified():
    s = _subscribed()
    records = s.records
    desk = _verified(records)
    result, again = _verify(records, {}, desk)
    assert result.status == OK and "already verified" in result.message and again == desk
    result, _ = _run(records, desk, "look_up_customer", account_email=records.account.email)
    assert result.data["account"]["identity_verified"] is True
    sub = records.subscriptions[0].subscription_id
    _, desk = _run(records, desk, "cancel_subscription", subscription_id=sub)
    _, desk = _run(records, desk, "send_password_reset", account_email=records.account.email)
    assert desk.verified and len(desk.changes) == 2
    result, after = _verify(records, {"account_email": "someone@example.com"}, desk)
    assert result.status == OK and after.verified


# --- 4. changes need verification ---------------------------------------------------------------------
def _refund_case():
    s = _delivered_unrefunded()
    order = _the_order(s)
    amount = round(_captured(s.records, order.order_id) / 2, 2)
    call = tool_call("issue_refund", order_id=order.order_id, amount=str(amount))
    return s.records, call, Change("issue_refund", order.order_id, f"{amount:.2f}")


def _address_case():
    s = _order_with("shipped")
    order = _the_order(s)
    call = tool_call("update_address", order_id=order.order_id, new_address=NEW_ADDRESS)
    return s.records, call, Change("update_address", order.order_id, NEW_ADDRESS)


def _cancel_case():
    s = _subscribed()
    sub = s.records.subscriptions[0].subscription_id
    return s.records, tool_call("cancel_subscription", subscription_id=sub), Change("cancel_subscription", sub, "")


def _reship_case():
    s = _lost()
    order_id = _the_order(s).order_id
    return s.records, tool_call("reship_order", order_id=order_id), Change("reship_order", order_id, "")


@pytest.mark.parametrize(
    "case", [_refund_case, _address_case, _cancel_case, _reship_case], ids=["refund", "address", "cancel", "reship"]
)
def test_changes_need_the_identity_verified(case):
    records, call, change = case()
    said = _said(records)  # said, but not yet verified: the agent has to verify first
    result, desk = use_tool(records, Desk(), call, said, NO_CAP)
    assert result.status == REFUSED and desk == Desk()
    assert "needs the customer's identity verified" in result.message
    verified = _verified(records)
    result, desk = use_tool(records, verified, call, said, NO_CAP)
    assert result.status == OK, result.message
    assert desk == Desk(verified=True, changes=(change,))


@pytest.mark.parametrize("tool", ["issue_refund", "update_address", "cancel_subscription", "reship_order"])
def test_a_change_to_something_not_on_the_account_finds_nothing_once_verified(tool):
    records = _subscribed().records
    unknown = _unused_order_id(records)
    arguments = {
        "issue_refund": {"order_id": unknown, "amount": "5"},
        "update_address": {"order_id": unknown, "new_address": NEW_ADDRESS},
        "cancel_subscription": {"subscription_id": unknown.replace("ORD", "SUB")},
        "reship_order": {"order_id": unknown},
    }[tool]
    desk = _verified(records)
    result, after = _run(records, desk, tool, **arguments)
    assert result.status == NOT_FOUND and after == desk


# --- 5. refund limits ------------------------------------------------------------------------------
def test_a_refund_above_what_was_captured_is_refused():
    s = _delivered_unrefunded()
    order = _the_order(s)
    captured = _captured(s.records, order.order_id)
    desk = _verified(s.records)
    result, after = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount=f"{captured + 0.01:.2f}")
    assert result.status == REFUSED and after == desk
    assert "more than the order allows" in result.message and f"${captured:,.2f}" in result.message
    result, after = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount=f"{captured:.2f}")
    assert result.status == OK and after.refunded(order.order_id) == captured


def test_two_refunds_together_above_what_was_captured_the_second_is_refused():
    s = _delivered_unrefunded()
    order = _the_order(s)
    captured = _captured(s.records, order.order_id)
    first = round(captured * 0.6, 2)
    desk = _verified(s.records)
    result, desk = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount=f"{first:.2f}")
    assert result.status == OK
    left = round(captured - first, 2)
    result, after = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount=f"{first:.2f}")
    assert result.status == REFUSED and after == desk
    assert f"only ${left:,.2f} of it is left to refund" in result.message
    result, desk = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount=f"{left:.2f}")
    assert result.status == OK and desk.refunded(order.order_id) == captured
    result, after = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount="0.01")
    assert result.status == REFUSED and "nothing left to refund" in result.message and after == desk


def test_a_double_charge_can_be_refunded_once_over_not_twice():
    s = _double_charged()
    order = _the_order(s)
    charge = s.records.payments_for(order.order_id)[0].amount
    desk = _verified(s.records)
    result, desk = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount=f"{charge:.2f}")
    assert result.status == OK
    result, desk = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount=f"{charge:.2f}")
    assert result.status == OK, "both captured charges can be refunded"
    result, after = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount="0.01")
    assert result.status == REFUSED and after == desk


def test_a_refund_already_under_way_counts_against_what_is_left():
    s = _pending_refund()
    order = _the_order(s)
    desk = _verified(s.records)
    result, after = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount="0.01")
    assert result.status == REFUSED and "nothing left to refund" in result.message and after == desk


def test_a_refund_above_the_cap_is_refused_with_a_word_to_escalate():
    s = _delivered_unrefunded()
    records, order = s.records, _the_order(s)
    captured = _captured(records, order.order_id)
    cap = round(captured / 4, 2)
    desk = _verified(records)
    above = f"{round(captured / 2, 2):.2f}"
    result, after = _run(records, desk, "issue_refund", cap=cap, order_id=order.order_id, amount=above)
    assert result.status == REFUSED and after == desk
    assert "escalate" in result.message and "refund cap" in result.message and records.account.tier in result.message
    result, after = _run(records, desk, "issue_refund", cap=cap, order_id=order.order_id, amount=f"{cap:.2f}")
    assert result.status == OK, "a refund of the cap itself is within it"


def test_a_partial_refund_shows_among_the_orders_refunds():
    s = _delivered_unrefunded()
    records, order = s.records, _the_order(s)
    amount = round(_captured(records, order.order_id) / 3, 2)
    desk = _verified(records)
    result, desk = _run(records, desk, "issue_refund", order_id=order.order_id, amount=f"${amount:,.2f}")
    assert result.status == OK and f"${amount:,.2f}" in result.message
    assert records.payments_for(order.order_id)[0].card_last_four in result.message
    refunds = _order_data(records, desk, order.order_id)["refunds"]
    assert [(r["amount"], r["status"]) for r in refunds] == [(amount, "pending")]
    assert refunds[0]["requested"] == TODAY.isoformat()
    assert _order_data(records, Desk(verified=True), order.order_id)["refunds"] == [], "the desk holds the change"


def _refunded_once() -> tuple[SystemOfRecord, Order, float, ToolResult, Desk]:
    s = _delivered_unrefunded()
    records, order = s.records, _the_order(s)
    amount = round(_captured(records, order.order_id) / 3, 2)
    result, desk = _run(records, _verified(records), "issue_refund", order_id=order.order_id, amount=f"{amount:.2f}")
    assert result.status == OK
    return records, order, amount, result, desk


def test_a_refund_made_shows_in_look_up_payments_too():
    records, order, amount, _, desk = _refunded_once()
    result, _ = _run(records, desk, "look_up_payments", account_email=records.account.email)
    assert (order.order_id, amount) in {(r["order_id"], r["amount"]) for r in result.data["refunds"]}


def test_the_refunds_own_result_shows_the_refund_made():
    _, _, amount, result, _ = _refunded_once()
    assert amount in [r["amount"] for r in result.data["order"]["refunds"]]


def test_a_refund_that_rounds_to_nothing_is_not_made():
    s = _delivered_unrefunded()
    records, order = s.records, _the_order(s)
    desk = _verified(records)
    try:
        result, after = _run(records, desk, "issue_refund", order_id=order.order_id, amount="0.001")
    except InvalidActionError:
        return
    assert result.status != OK and after == desk


# --- 6. update_address ---------------------------------------------------------------------------
def test_the_address_of_a_delivered_order_cannot_change():
    s = _delivered_unrefunded()
    order = _the_order(s)
    desk = _verified(s.records)
    result, after = _run(s.records, desk, "update_address", order_id=order.order_id, new_address=NEW_ADDRESS)
    assert result.status == REFUSED and after == desk and "can no longer change" in result.message
    assert _order_data(s.records, after, order.order_id)["ship_to"] == order.ship_to


@pytest.mark.parametrize(("status", "how"), [("processing", "will ship"), ("in_transit", "is being redirected")])
def test_the_address_of_an_order_not_yet_delivered_can_change(status, how):
    s = _delayed()
    order = _the_order(s)
    records = _with_status(s.records, order.order_id, status)
    desk = _verified(records)
    result, desk = _run(records, desk, "update_address", order_id=order.order_id, new_address=f"  {NEW_ADDRESS} ")
    assert result.status == OK and result.message == f"Order {order.order_id} {how} to {NEW_ADDRESS}."
    assert desk.changes == (Change("update_address", order.order_id, NEW_ADDRESS),)
    assert _order_data(records, desk, order.order_id)["ship_to"] == NEW_ADDRESS
    for other in records.orders[1:]:
        assert _order_data(records, desk, other.order_id)["ship_to"] == other.ship_to
    result, desk = _run(records, desk, "update_address", order_id=order.order_id, new_address="9 Castle Hill, York")
    assert result.status == OK and _order_data(records, desk, order.order_id)["ship_to"] == "9 Castle Hill, York"
    assert records.order(order.order_id).ship_to == order.ship_to, "the records themselves never change"


def test_a_shipped_order_in_the_world_can_be_redirected():
    s = _order_with("shipped")
    order = _the_order(s)
    result, desk = _run(s.records, _verified(s.records), "update_address", order_id=order.order_id, new_address="A")
    assert result.status == OK and "redirected" in result.message
    assert _order_data(s.records, desk, order.order_id)["ship_to"] == "A"


# --- 7. cancel_subscription ----------------------------------------------------------------------------
def test_an_active_subscription_can_be_cancelled_once():
    s = _subscribed()
    records = s.records
    sub = records.subscriptions[0]
    desk = _verified(records)
    result, desk = _run(records, desk, "cancel_subscription", subscription_id=f" {sub.subscription_id.lower()} ")
    assert result.status == OK and sub.plan in result.message
    assert desk.changes == (Change("cancel_subscription", sub.subscription_id, ""),)
    result, after = _run(records, desk, "cancel_subscription", subscription_id=sub.subscription_id)
    assert result.status == REFUSED and after == desk and "already cancelled" in result.message
    shown, _ = _run(records, desk, "look_up_payments", account_email=records.account.email)
    (data,) = shown.data["subscriptions"]
    assert data["subscription_id"] == sub.subscription_id and data["status"] == "cancelled" and data["renews"] == ""
    before, _ = _run(records, Desk(), "look_up_payments", account_email=records.account.email)
    assert [x["status"] for x in before.data["subscriptions"]] == ["active"]


# --- 8. reship_order ----------------------------------------------------------------------------------
def test_an_order_neither_delivered_nor_lost_is_not_reshipped():
    delayed = _delayed()
    order = _the_order(delayed)
    cases = [
        (delayed.records, order.order_id),
        (_with_status(delayed.records, order.order_id, "processing"), order.order_id),
        (_order_with("shipped").records, _the_order(_order_with("shipped")).order_id),
    ]
    for records, order_id in cases:
        desk = _verified(records)
        result, after = _run(records, desk, "reship_order", order_id=order_id)
        assert result.status == REFUSED and after == desk and "not delivered or lost" in result.message


@pytest.mark.parametrize("find", [_delivered_unrefunded, _lost], ids=["delivered", "lost"])
def test_a_delivered_or_lost_order_is_reshipped_once(find):
    s = find()
    order = _the_order(s)
    desk = _verified(s.records)
    result, desk = _run(s.records, desk, "reship_order", order_id=order.order_id)
    assert result.status == OK and desk.changes == (Change("reship_order", order.order_id, ""),)
    assert _order_data(s.records, desk, order.order_id)["reshipped"] is True
    result, after = _run(s.records, desk, "reship_order", order_id=order.order_id)
    assert result.status == REFUSED and after == desk and "already reshipped" in result.message


def test_a_parcel_is_lost_after_a_week_without_a_scan():
    s = _lost()
    order = _the_order(s)
    assert order.status == "in_transit"
    for days, status in (
        (LOST_AFTER_DAYS, OK),
        (LOST_AFTER_DAYS + 5, OK),
        (LOST_AFTER_DAYS - 1, REFUSED),
        (0, REFUSED),
    ):
        scan = TrackingEvent((TODAY - timedelta(days=days)).isoformat(), "in_transit", "arrived at the sorting hub")
        moved = replace(order, events=(*order.events[:-1], scan))
        records = replace(s.records, orders=tuple(moved if o is order else o for o in s.records.orders))
        result, _ = _run(records, _verified(records), "reship_order", order_id=order.order_id)
        assert result.status == status, (days, result.message)


def test_a_refunded_order_is_not_reshipped():
    s = _delivered_unrefunded()
    order = _the_order(s)
    desk = _verified(s.records)
    _, desk = _run(s.records, desk, "issue_refund", order_id=order.order_id, amount="0.50")
    result, after = _run(s.records, desk, "reship_order", order_id=order.order_id)
    assert result.status == REFUSED and after == desk and "was refunded" in result.message
    returned = _pending_refund()
    delivered = _with_status(returned.records, _the_order(returned).order_id, "delivered")
    result, _ = _run(delivered, _verified(delivered), "reship_order", order_id=_the_order(returned).order_id)
    assert result.status == REFUSED and "was refunded" in result.message, "a refund in the records counts too"


def test_reshipping_an_unknown_order_finds_nothing():
    records = _lost().records
    desk = _verified(records)
    result, after = _run(records, desk, "reship_order", order_id=_unused_order_id(records))
    assert result.status == NOT_FOUND and after == desk


# --- 9. send_password_reset ----------------------------------------------------------------------------
def test_a_password_reset_goes_only_to_the_accounts_email():
    s = _find(lambda s: "account_locked" in _issues(s), "a locked account")
    records = s.records
    email = records.account.email
    result, desk = _run(records, Desk(), "send_password_reset", account_email="someone.else@example.com")
    assert result.status == NOT_FOUND and desk == Desk()
    result, desk = _run(records, Desk(), "send_password_reset", account_email=f" {email.upper()} ")
    assert result.status == OK and email in result.message
    assert desk.changes == (Change("send_password_reset", email, ""),)
    shown, _ = _run(records, desk, "look_up_customer", account_email=email)
    assert shown.data["account"]["password_reset_sent"] is True
    assert shown.data["account"]["status"] == "locked", "sent, not yet completed by the customer"
    before, _ = _run(records, Desk(), "look_up_customer", account_email=email)
    assert "password_reset_sent" not in before.data["account"]


# --- 10. determinism and purity ------------------------------------------------------------------------
def _script(records: SystemOfRecord) -> list[ToolCall]:
    email = records.account.email
    order_id = records.orders[0].order_id
    sub = records.subscriptions[0].subscription_id
    return [
        tool_call("look_up_customer", account_email=email),
        tool_call("issue_refund", order_id=order_id, amount="1.00"),
        tool_call("verify_identity"),
        tool_call("look_up_order", order_id=order_id),
        tool_call("issue_refund", order_id=order_id, amount="1.00"),
        tool_call("issue_refund", order_id=order_id, amount="999999"),
        tool_call("update_address", order_id=order_id, new_address=NEW_ADDRESS),
        tool_call("cancel_subscription", subscription_id=sub),
        tool_call("cancel_subscription", subscription_id=sub),
        tool_call("reship_order", order_id=order_id),
        tool_call("send_password_reset", account_email=email),
        tool_call("look_up_payments", account_email=email),
        tool_call("look_up_order", order_id=order_id),
        tool_call("check_service_status"),
    ]


def _play(records: SystemOfRecord) -> tuple[list[ToolResult], list[Desk]]:
    desk, results, desks = Desk(), [], []
    for call in _script(records):
        result, desk = use_tool(records, desk, call, _said(records), 50.0)
        results.append(result)
        desks.append(desk)
    return results, desks


def _scripted() -> Scenario:
    return _find(
        lambda s: s.records.subscriptions and _the_order(s) is not None and _the_order(s).status == "delivered",
        "a delivered order in question and a subscription",
    )


def test_the_same_calls_give_the_same_results_and_desks():
    s = _scripted()
    results, desks = _play(s.records)
    assert [r.status for r in results].count(OK) >= 8 and REFUSED in {r.status for r in results}
    assert _play(s.records) == (results, desks)
    fresh = generate.__wrapped__(s.task_id, s.split, s.seed)
    assert fresh.records is not s.records
    assert _play(fresh.records) == (results, desks)


def test_use_tool_never_changes_the_records_or_the_desk_it_was_given():
    s = _scripted()
    records = s.records
    before = json.dumps(records.to_dict(), sort_keys=True)
    desk = Desk()
    for call in _script(records):
        given, copy = desk, Desk(desk.verified, tuple(desk.changes))
        said = _said(records)
        said_before = dict(said)
        _, desk = use_tool(records, given, call, said, 50.0)
        assert given == copy and said == said_before, call
    assert json.dumps(records.to_dict(), sort_keys=True) == before
    assert records == build_records(s)


def test_changing_a_results_data_changes_nothing_the_tools_show_next():
    s = _scripted()
    records = s.records
    desk = _verified(records)
    order_id = records.orders[0].order_id
    for call in (
        tool_call("look_up_customer", account_email=records.account.email),
        tool_call("look_up_order", order_id=order_id),
        tool_call("look_up_payments", account_email=records.account.email),
        tool_call("check_service_status"),
    ):
        first, _ = use_tool(records, desk, call, {}, NO_CAP)
        expected = json.dumps(first.data, sort_keys=True)
        for value in first.data.values():
            if isinstance(value, dict):
                value.clear()
            elif isinstance(value, list):
                value.append("tampered")
        again, _ = use_tool(records, desk, call, {}, NO_CAP)
        assert json.dumps(again.data, sort_keys=True) == expected, call


def test_every_results_data_is_plain_json():
    for find in (_scripted, _lost, _pending_refund, _double_charged):
        records = find().records
        results, _ = _play(records) if records.subscriptions else ([], [])
        desk = _verified(records)
        for order in records.orders:
            result, _ = _run(records, desk, "look_up_order", order_id=order.order_id)
            results.append(result)
        for result in results:
            text = json.dumps(result.data)
            assert json.loads(text) == result.data, result.tool


def _objects(data):
    """Every JSON object in a tool result's data, outermost first."""
    if isinstance(data, dict):
        yield data
        for value in data.values():
            yield from _objects(value)
    elif isinstance(data, list):
        for item in data:
            yield from _objects(item)


@pytest.mark.parametrize("policy", ["oracle", "every_tool", "rule"])
def test_every_results_data_is_in_the_records_order_and_reads_the_same_off_the_wire(policy):
    """DATA_KEY_ORDER knows every key, in the order the tools write them, so a prompt shows the
    data in that order whether it came in process or with the wire's sorted keys."""
    from baseline_agent.policies import make_policy
    from supportenv.env import SupportEnv
    from supportenv.llm import compact_json
    from supportenv.tools import DATA_KEY_ORDER

    rank = {key: n for n, key in enumerate(DATA_KEY_ORDER)}
    results = 0
    for split in ("train", "test"):
        for seed in range(40):
            agent = make_policy(policy)
            agent.begin(EXPERT_TASK_ID, split, seed)
            env = SupportEnv(EXPERT_TASK_ID, split, seed)
            obs, done = env.reset(), False
            while not done:
                obs, _, done, _ = env.step(agent.act(obs))
                if obs.tool_result is None:
                    continue
                results += 1
                data = obs.tool_result.data
                for mapping in _objects(data):
                    assert set(mapping) <= set(rank), sorted(set(mapping) - set(rank))
                    assert [rank[k] for k in mapping] == sorted(rank[k] for k in mapping), list(mapping)
                wire = json.loads(json.dumps(data, sort_keys=True))
                assert compact_json(wire) == compact_json(data) == json.dumps(data, separators=(",", ":"))
    assert results > 100
