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

import re
from dataclasses import dataclass

from supportenv.catalog import DESK_REFUND_DAYS
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
    # Read on every step of an expert episode: kept on the scenario, as its cached properties are.
    cached = scenario.__dict__.get("_remedies")
    if cached is None:
        cached = scenario.__dict__["_remedies"] = _remedies(scenario)
    return cached


def _remedies(scenario: Scenario) -> tuple[Remedy, ...]:
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


def remedy_for(scenario: Scenario, issue: str) -> Remedy | None:
    """The change an issue of the case needs, if it needs one."""
    return next((r for r in remedies(scenario) if r.issue == issue), None)


# What the customer must be told of a change made for them: a refund's amount and when it arrives.
_TIMELINE_RE = re.compile(r"\b3\s*(?:-|\u2013|to)\s*5\s+(?:business|working)\s+days\b", re.IGNORECASE)
_REASON_RE = re.compile(r"\b(?:cap|limit|above what|more than (?:I|we) can)\b", re.IGNORECASE)


def _amount_words(value: float) -> tuple[str, ...]:
    """The ways a message may write an amount: 1,234.50 or 1234.50 (and 45 for 45.00)."""
    words = {f"{value:,.2f}", f"{value:.2f}"}
    if value == int(value):
        words |= {f"{int(value):,}", str(int(value))}
    return tuple(words)


def says_amount(text: str, value: float) -> bool:
    """The text names this amount of money (to the cent)."""
    return any(re.search(rf"(?<![\d.,]){re.escape(w)}(?![\d]|[.,]\d)", text) for w in _amount_words(value))


def says_timeline(text: str) -> bool:
    """The text says when a refund reaches the card (catalog.DESK_REFUND_DAYS)."""
    return bool(_TIMELINE_RE.search(text))


def says_refusal_reason(text: str) -> bool:
    """The text says why a refund is not made at the desk: it is above the refund cap."""
    return bool(_REASON_RE.search(text))


def missing_words(remedy: Remedy, text: str) -> list[str]:
    """What a message telling the customer of this change leaves out (empty: it says all it must)."""
    if remedy.tool != "issue_refund":
        return []
    missing = [] if says_amount(text, float(remedy.value)) else [f"the amount (${float(remedy.value):,.2f})"]
    return missing + ([] if says_timeline(text) else [f"when it reaches the card ({DESK_REFUND_DAYS})"])


# ---- what the records show that the customer must be told (the issues answered, not changed) ----

_MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip
_DECLINE_WORDS = {
    "expired_card": re.compile(r"\bexpir", re.IGNORECASE),
    "billing_address_mismatch": re.compile(r"\bbilling address\b|\baddress (?:does not|doesn't|did not) match", re.I),
    "issuer_declined": re.compile(r"\b(?:bank|issuer|card (?:provider|issuer))\b", re.IGNORECASE),
}


def says_date(text: str, iso: str) -> bool:
    """The text names this day: 2026-11-28, 28 November, November 28th, 28 Nov (the year optional)."""
    if iso in text:
        return True
    year, month, day = (int(x) for x in iso.split("-"))
    name = _MONTHS[month - 1]
    months = rf"(?:{name}|{name[:3]}\.?)"
    days = rf"0?{day}(?:st|nd|rd|th)?"
    pattern = (
        rf"(?<!\d){days}(?:\s+of)?\s+{months}\b|\b{months}\s+{days}(?!\d)|(?<!\d)0?{day}/0?{month}(?:/{year})?(?!\d)"
    )
    return bool(re.search(pattern, text, re.IGNORECASE))


@dataclass(frozen=True)
class Finding:
    """What the records show about an issue that the customer must be told (and cannot guess)."""

    issue: str
    what: str  # e.g. "the date the refund was requested (2026-11-25)"
    kind: str  # "date" or "decline_reason"
    value: str

    def told_in(self, text: str) -> bool:
        if self.kind == "date":
            return says_date(text, self.value)
        # The reason on record, and no other (a list of every reason tells the customer nothing).
        named = [reason for reason, words in _DECLINE_WORDS.items() if words.search(text)]
        return named == [self.value]


_REASON_WORDS = {
    "expired_card": "the card has expired",
    "billing_address_mismatch": "the billing address does not match the card's",
    "issuer_declined": "the card's bank declined it",
}


def reason_words(reason: str) -> str:
    """A declined payment's reason, as a customer reads it."""
    return _REASON_WORDS[reason]


def _finding(scenario: Scenario, records: SystemOfRecord, issue: str) -> Finding | None:
    order_id = scenario.facts_by_name.get("order_id", "")
    order = records.order(order_id) if order_id else None
    if issue == "refund_status" and order:
        refund = next((r for r in records.refunds_for(order_id) if r.status == "pending"), None)
        if refund:
            return Finding(issue, f"the date the refund was requested ({refund.requested})", "date", refund.requested)
    if issue == "delayed_delivery" and order and order.events and order.events[-1].status == "delayed":
        expected = order.events[-1].detail.rsplit(" ", 1)[-1]
        return Finding(issue, f"the carrier's new delivery date ({expected})", "date", expected)
    if issue == "payment_failure":
        declined = next((p for p in records.payments if p.status == "declined"), None)
        if declined:
            return Finding(issue, f"why the payment was declined ({reason_words(declined.decline_reason)})",
                           "decline_reason", declined.decline_reason)  # fmt: skip
    return None


def findings(scenario: Scenario) -> tuple[Finding, ...]:
    """What the records show that the customer must be told, for the issues answered, not changed."""
    cached = scenario.__dict__.get("_findings")
    if cached is None:
        records = scenario.records
        found = (_finding(scenario, records, i.issue_id) for i in scenario.intents)
        cached = scenario.__dict__["_findings"] = tuple(f for f in found if f is not None)
    return cached


def finding_for(scenario: Scenario, issue: str) -> Finding | None:
    return next((f for f in findings(scenario) if f.issue == issue), None)
