"""Casework: what a ticket's records should hold once it is handled, and how far an episode's
changes got there.

Each issue whose remedy is a change to the records names it (`remedies`): a double charge is
refunded the duplicate charge, an overcharge the difference, a refund request its amount (above
the tier's cap it is escalated and nothing is refunded: `over_the_cap`), a lost parcel
is reshipped, a change of address goes to the order, a cancellation cancels the active
subscription, a locked account gets a password reset. Every other issue is answered, not
changed: a refund already on its way, a declined card, an outage. `check_records` compares the
changes an episode made (its `Desk`) with those remedies: what was done, what is missing, and
every change no remedy asked for (a second refund, the wrong amount, a reship of the wrong order).

Pure: everything comes from the scenario and its records.
"""

from __future__ import annotations

from dataclasses import dataclass

from supportenv.tools import TOOLS, TOOLS_BY_NAME, Change, Desk, ToolCall, tool_call
from supportenv.world import Scenario
from supportenv.world.system_of_record import SystemOfRecord

# The changes that need the customer's identity verified first (tools.use_tool refuses them
# before); a password reset goes to the email on file, so it needs none.
NEEDS_VERIFICATION = tuple(t.name for t in TOOLS if t.needs_verification)
MONEY_TOLERANCE = 0.005  # refund amounts are compared to the cent


@dataclass(frozen=True)
class Remedy:
    """One change the case needs: the issue it remedies, the tool, the record and the value."""

    issue: str
    tool: str
    target: str  # an order id, subscription id or the account email
    value: str = ""  # a refund's amount ("12.50") or a new address; "" otherwise

    def matches(self, change: Change) -> bool:
        if change.tool != self.tool or change.target != self.target:
            return False
        if self.tool == "issue_refund":
            return abs(float(change.value) - float(self.value)) < MONEY_TOLERANCE
        if self.tool == "update_address":
            return " ".join(change.value.lower().split()) == " ".join(self.value.lower().split())
        return True

    def call(self) -> ToolCall:
        """The tool call that makes this change."""
        # Every change tool takes the record it changes first, and the value it sets (if any) second.
        arguments = TOOLS_BY_NAME[self.tool].arguments
        return tool_call(self.tool, **dict(zip(arguments, (self.target, self.value), strict=False)))


def _money(value: float) -> str:
    return f"{value:.2f}"


def _refund_wanted(scenario: Scenario, records: SystemOfRecord, issue: str) -> tuple[str, float] | None:
    """(order id, amount) of the refund an issue asks for, if it asks for one."""
    facts = scenario.facts_by_name
    order_id = facts.get("order_id", "")
    order = records.order(order_id) if order_id else None
    captured = [p for p in records.payments_for(order_id) if p.status == "captured"] if order else []
    if not captured:
        return None
    if issue == "double_charge" and len(captured) >= 2:
        return order_id, captured[-1].amount  # the duplicate charge
    if issue == "wrong_amount":
        return order_id, round(captured[0].amount - order.total, 2)  # the difference
    if issue == "refund_request":
        return order_id, float(facts["amount"])
    return None


# Refunds of money charged beyond the order's listed total are returned whatever the cap (tools.issue_refund).
_CORRECTIONS = ("double_charge", "wrong_amount")


def _over_the_cap(scenario: Scenario, issue: str, amount: float) -> bool:
    return issue not in _CORRECTIONS and amount > scenario.policy.refund_cap(scenario.tier) + MONEY_TOLERANCE


def over_the_cap(scenario: Scenario) -> tuple[str, ...]:
    """The issues whose refund is above the tier's cap: escalated to a human, not refunded at the desk."""
    records = scenario.records
    wanted = ((i.issue_id, _refund_wanted(scenario, records, i.issue_id)) for i in scenario.intents)
    return tuple(issue for issue, refund in wanted if refund and _over_the_cap(scenario, issue, refund[1]))


def _remedy(scenario: Scenario, records: SystemOfRecord, issue: str) -> Remedy | None:
    facts = scenario.facts_by_name
    order_id = facts.get("order_id", "")
    order = records.order(order_id) if order_id else None
    refund = _refund_wanted(scenario, records, issue)
    if refund:
        if _over_the_cap(scenario, issue, refund[1]):
            return None
        return Remedy(issue, "issue_refund", refund[0], _money(refund[1]))
    if issue == "lost_package" and order:
        return Remedy(issue, "reship_order", order_id)
    if issue == "address_change" and order and facts.get("new_address"):
        return Remedy(issue, "update_address", order_id, facts["new_address"])
    if issue == "subscription_cancel":
        active = next((s for s in records.subscriptions if s.status == "active"), None)
        return Remedy(issue, "cancel_subscription", active.subscription_id) if active else None
    if issue == "account_locked":
        return Remedy(issue, "send_password_reset", records.account.email)
    return None


def remedies(scenario: Scenario) -> tuple[Remedy, ...]:
    """The changes the case needs, in the order of its issues (none for an issue that is answered)."""
    records = scenario.records
    found = [r for r in (_remedy(scenario, records, i.issue_id) for i in scenario.intents) if r is not None]
    # A refund of an order settles it: a parcel the customer wants its money back for is not also reshipped.
    refunded = {r.target for r in found if r.tool == "issue_refund" and r.issue == "refund_request"}
    return tuple(r for r in found if not (r.tool == "reship_order" and r.target in refunded))


def identity_proofs(records: SystemOfRecord) -> dict[str, str]:
    """What the account holder can give to be verified: the account email, and the last four
    digits of a card it paid with and an order id of its own (`tools.verify_identity` needs the
    email and one of the others)."""
    proofs = {"account_email": records.account.email}
    if records.payments:
        proofs["card_last_four"] = records.payments[0].card_last_four
    if records.orders:
        proofs["order_id"] = records.orders[0].order_id
    return proofs


def remedy_calls(scenario: Scenario) -> list[ToolCall]:
    """The tool calls that make every remedy, verifying the customer first when one needs it."""
    needed = remedies(scenario)
    verify = [tool_call("verify_identity")] if any(r.tool in NEEDS_VERIFICATION for r in needed) else []
    return [*verify, *(r.call() for r in needed)]


@dataclass(frozen=True)
class RecordsCheck:
    done: tuple[Remedy, ...]  # remedies an episode's changes made
    missing: tuple[Remedy, ...]  # remedies no change made
    unwanted: tuple[Change, ...]  # changes no remedy asked for (each change meets at most one remedy)

    @property
    def right(self) -> bool:
        return not self.missing and not self.unwanted


def check_records(scenario: Scenario, desk: Desk) -> RecordsCheck:
    """The episode's changes against the case's remedies."""
    left = list(desk.changes)
    done, missing = [], []
    for remedy in remedies(scenario):
        change = next((c for c in left if remedy.matches(c)), None)
        if change is None:
            missing.append(remedy)
        else:
            done.append(remedy)
            left.remove(change)
    return RecordsCheck(tuple(done), tuple(missing), tuple(left))
