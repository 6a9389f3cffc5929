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
from functools import lru_cache
from typing import TypeVar

from supportenv import content
from supportenv.catalog import CHANGE_FAMILIES, DESK_REFUND_DAYS, ISSUE_TYPES_BY_ID, RETURN_WINDOW_DAYS
from supportenv.memo import cached_by_text
from supportenv.records import picklable
from supportenv.text import tone_text
from supportenv.tools import TOOLS, TOOLS_BY_NAME, Change, Desk, ToolCall, tool_call
from supportenv.world import Scenario
from supportenv.world.system_of_record import LineItem, Order, SignIn, SystemOfRecord, days_before_today

T = TypeVar("T")

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
    order_id = scenario.order_in_question
    order = records.order(order_id) if order_id else None
    captured = [p for p in records.payments_for(order_id) if p.status == "captured"] if order else []
    if order is None or not captured:
        return None
    left = round(
        sum((p.amount for p in captured), 0.0) - sum((r.amount for r in records.refunds_for(order_id)), 0.0), 2
    )
    if issue == "double_charge" and len(captured) >= 2:
        return order_id, captured[-1].amount  # the duplicate charge
    if issue == "wrong_amount":
        return order_id, round(captured[0].amount - order.total, 2)  # the difference
    if issue == "refund_request" and scenario.family == "item_of_several":
        return order_id, paid_for(order, order.items[0])  # what was paid for the item sent back
    if issue == "refund_request":
        # What the customer asks, but never more than is left after the order's earlier refunds.
        return order_id, min(float(facts["amount"]), left)
    if issue == "refund_status" and scenario.family == "refund_never_issued":
        return order_id, left  # the return, received and never refunded
    return None


def paid_for(order: Order, item: LineItem) -> float:
    """What was paid for a line of an order: its price, less the order's discount, to the cent."""
    cents = round(item.unit_price * 100) * item.quantity
    return (cents * (100 - order.discount_percent) + 50) // 100 / 100  # (a half cent rounded up)


def delivered_on(order: Order) -> str:
    """The day the carrier delivered the order ("" if it has not been)."""
    return next((e.when for e in reversed(order.events) if e.status == "delivered"), "")


def outside_return_window(records: SystemOfRecord, order_id: str) -> str:
    """The day the order was delivered when that is more than the return window ago, else ""."""
    order = records.order(order_id) if order_id else None
    day = delivered_on(order) if order else ""
    return day if day and days_before_today(day) > RETURN_WINDOW_DAYS else ""


# Refunds of money charged beyond the order's listed total are returned whatever the cap (tools.issue_refund).
_CORRECTIONS = ("double_charge", "wrong_amount")


def _over_the_cap(scenario: Scenario, issue: str, amount: float) -> bool:
    return issue not in _CORRECTIONS and amount > scenario.policy.refund_cap(scenario.tier) + MONEY_TOLERANCE


def over_the_cap(scenario: Scenario) -> tuple[str, ...]:
    """The issues whose refund is above the tier's cap: escalated to a human, not refunded at the desk."""
    records = scenario.records
    wanted = ((i.issue_id, _refund_wanted(scenario, records, i.issue_id)) for i in scenario.intents)
    return tuple(issue for issue, refund in wanted if refund and _over_the_cap(scenario, issue, refund[1]))


def is_mistaken(scenario: Scenario, issue: str) -> bool:
    """The issue is the claim of a judgement family: the records show nothing is to change."""
    return bool(scenario.family) and scenario.family not in CHANGE_FAMILIES and issue == scenario.intents[0].issue_id


def _remedy(scenario: Scenario, records: SystemOfRecord, issue: str) -> Remedy | None:
    if is_mistaken(scenario, issue):
        return None
    facts = scenario.facts_by_name
    order_id = scenario.order_in_question
    order = records.order(order_id) if order_id else None
    refund = _refund_wanted(scenario, records, issue)
    if refund:
        if _over_the_cap(scenario, issue, refund[1]):
            return None
        if issue == "refund_request" and outside_return_window(records, order_id):
            return None  # (what the records show is told instead: _finding)
        return Remedy(issue, "issue_refund", refund[0], _money(refund[1]))
    stalled = issue == "delayed_delivery" and scenario.family == "stalled_in_transit"
    if (issue == "lost_package" or stalled) and order:
        return Remedy(issue, "reship_order", order_id)  # (a "late" parcel with no scan for a week is lost)
    if issue == "address_change" and order and facts.get("new_address"):
        return Remedy(issue, "update_address", order_id, facts["new_address"])
    if issue == "subscription_cancel":
        # (the plan the customer names, where the account has two; else the one it has)
        named = scenario.products[0] if scenario.family == "two_subscriptions" else ""
        active = next((s for s in records.subscriptions if s.status == "active" and s.plan == (named or s.plan)), None)
        return Remedy(issue, "cancel_subscription", active.subscription_id) if active else None
    if issue == "account_locked":
        return Remedy(issue, "send_password_reset", records.account.email)
    return None


def remedies(scenario: Scenario) -> tuple[Remedy, ...]:
    """The changes the case needs, in the order of its issues (none for an issue that is answered)."""
    return scenario.kept("remedies", _remedies)


def _remedies(scenario: Scenario) -> tuple[Remedy, ...]:
    if scenario.impostor:
        return ()  # (a customer who cannot be verified has nothing changed: the ticket goes to security)
    records = scenario.records
    found = [r for r in (_remedy(scenario, records, i.issue_id) for i in scenario.intents) if r is not None]
    if scenario.family == "several_duplicates":
        found[1:1] = _other_duplicates(scenario, records)  # (after the first issue's own, before the others')
    if _money_back_for_the_parcel(scenario):  # (the refund settles it, made or escalated: no reship too)
        found = [r for r in found if r.tool != "reship_order"]
    return (*found, *_unnoticed_charge(scenario, records))


# The remedy of no issue the customer raised: the money taken wrongly for its parcel's order that it
# never noticed (Scenario.unnoticed_charge), refunded by a desk that reads the order's payments.
UNNOTICED = "unnoticed_charge"


def _unnoticed_charge(scenario: Scenario, records: SystemOfRecord) -> tuple[Remedy, ...]:
    order = records.order(scenario.order_in_question) if scenario.unnoticed_charge else None
    if order is None:
        return ()
    left = _beyond_total(records, order)
    return (Remedy(UNNOTICED, "issue_refund", order.order_id, _money(left)),) if left > MONEY_TOLERANCE else ()


def _beyond_total(records: SystemOfRecord, order: Order) -> float:
    """The money captured for an order beyond its listed total and not refunded yet (a duplicate
    charge, an overcharge)."""
    captured = sum((p.amount for p in records.payments_for(order.order_id) if p.status == "captured"), 0.0)
    return round(captured - order.total - sum((r.amount for r in records.refunds_for(order.order_id)), 0.0), 2)


def unknown_sign_in(scenario: Scenario) -> SignIn | None:
    """The latest sign-in of the account, which it does not recognise, where only the customer can say
    whose it was (Scenario.unknown_sign_in); None on other tickets."""
    return scenario.records.account.sign_ins[0] if scenario.unknown_sign_in else None


def articles_of_the_case(scenario: Scenario) -> frozenset[str]:
    """The articles an answer may cite: each issue's, and a lost parcel's where the records make a "late"
    one lost (stalled_in_transit: its fix, the reship, is that article's; audit round 64)."""
    articles = {article for _, article in scenario.intent_keys}
    if scenario.family == "stalled_in_transit":
        articles.add(ISSUE_TYPES_BY_ID["lost_package"].article_id)
    return frozenset(articles)


def unnoticed_words(scenario: Scenario) -> str:
    """The money taken wrongly that the customer never noticed, in words ("the duplicate charge")."""
    return {"duplicate": "the duplicate charge", "overcharge": "the overcharge"}.get(scenario.unnoticed_charge, "")


def unnoticed_refund(scenario: Scenario) -> Remedy | None:
    """The refund of the money taken wrongly for the order that the customer never noticed (a duplicate
    charge, an overcharge), where its order has one."""
    return remedy_for(scenario, UNNOTICED) if scenario.unnoticed_charge else None


def _other_duplicates(scenario: Scenario, records: SystemOfRecord) -> list[Remedy]:
    """The refunds of the other orders charged twice, where the customer says several were: of each
    order, the money captured beyond its listed total and not refunded yet (a hold is no charge, a
    duplicate refunded already has nothing left, two orders of one thing are each paid once)."""
    found = []
    for order in records.orders:
        if order.order_id == scenario.order_in_question:
            continue
        left = _beyond_total(records, order)
        if left > MONEY_TOLERANCE:
            found.append(Remedy("double_charge", "issue_refund", order.order_id, _money(left)))
    return found


def remedies_for(scenario: Scenario, issue: str) -> tuple[Remedy, ...]:
    """Every change an issue of the case needs (several refunds, where several orders were charged twice)."""
    return tuple(r for r in remedies(scenario) if r.issue == issue)


def _money_back_for_the_parcel(scenario: Scenario) -> bool:
    """The customer wants its money back for the lost parcel: a refund request of the same order
    (content.ONE_ORDER_PAIRS), which settles the parcel whether the refund is made or, above the
    cap, escalated; the parcel is not also reshipped."""
    return {"lost_package", "refund_request"} <= {i.issue_id for i in scenario.intents}


def settled_by_escalation(scenario: Scenario) -> tuple[str, ...]:
    """The issues the escalation of a refund above the cap settles: the lost parcel it is for."""
    escalated = "refund_request" in over_the_cap(scenario)
    return ("lost_package",) if escalated and _money_back_for_the_parcel(scenario) else ()


def settled_by(scenario: Scenario, issue: str) -> Remedy | None:
    """The change made for another issue that settles this one: the refund of a lost parcel the
    customer wants its money back for (telling that refund answers the parcel too)."""
    if issue != "lost_package" or not _money_back_for_the_parcel(scenario):
        return None
    return remedy_for(scenario, "refund_request")


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


def told_of_records(scenario: Scenario) -> frozenset[str]:
    """The issues whose answer must tell what the records hold (a change made, or a finding)."""
    return scenario.kept("told_of_records", _told_of_records)


def _told_of_records(scenario: Scenario) -> frozenset[str]:
    return frozenset([r.issue for r in remedies(scenario)] + [f.issue for f in findings(scenario)])


def remedy_for(scenario: Scenario, issue: str) -> Remedy | None:
    """The change an issue of the case needs, if it needs one."""
    return next((r for r in remedies(scenario) if r.issue == issue), None)


# What the customer must be told of a change made for them: a refund's amount and when it arrives.
_TIMELINE_RE = re.compile(r"\b3\s*(?:-|\u2013|to)\s*5\s+(?:business|working)\s+days\b", re.IGNORECASE)
# (the cap by name, or by what it does: "beyond what I'm able to approve", "over the $100 I can refund",
# "refunds above $100 need a specialist": audit round 56)
_REASON_RE = re.compile(
    r"\b(?:cap|limit|above what|more than (?:I|we) can|beyond what (?:I|we)|(?:above|over|beyond|exceeds?|more than)"
    r" (?:the |our |my |your )?(?:\$[\d,]+|amount|threshold|maximum)|(?:can(?:no|')t|not able to|unable to) approve)",
    re.IGNORECASE,
)


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


# The customer told that the details it gave do not match the records, or that it cannot be verified, so
# nothing changes: "the order number and card you gave don't match our records", "I'm unable to verify you",
# "they are not on this account", "your identity could not be confirmed" (read with straight quotes; a code
# review of world-17 found 22 of 31 phrasings missed by the first reading).
_NOT = r"(?:not|n't|never)"
_NOT_VERIFIED_RE = re.compile(
    rf"\b(?:do|does|did|could|can|was|were|have|has|had|are|is|am|wo|would)\s*{_NOT}\s+(?:\w+\s+){{0,4}}?"
    r"(?:match(?:es|ed|ing)?|line up|tally|correspond|verif(?:y|ied)|confirm(?:ed)?|be (?:verified|confirmed)"
    r"|able to (?:verify|confirm))\b"
    rf"|\b(?:cannot|can't|unable to|not able to|fail(?:ed|s)? to)\s+(?:\w+\s+){{0,2}}?(?:verify|confirm|match)\b"
    rf"|\b(?:is|are|was|were|be)\s*{_NOT}\s+(?:\w+\s+){{0,2}}?(?:on|in)\s+(?:our|the|your|this|that|its)\s+"
    r"(?:\w+\s+)?(?:records?|account|system|file)\b"
    r"|\bnot (?:on|in) (?:our|the|your|this) (?:\w+ )?(?:records?|account|system|file)\b|\bnot on file\b"
    r"|\bno match\b|\bmismatch|\bnot (?:a )?match(?:ing)?\b|\bdiffer(?:s|ed)? from (?:what|the)\b"
    r"|\b(?:verification|identity check) (?:failed|did not|didn't|was not|wasn't|was unsuccessful)\b"
    r"|\bnot (?:been )?(?:verified|confirmed)\b|\b(?:do|does) not hold\b|\bdon't hold\b",
    re.IGNORECASE,
)


def says_not_verified(text: str) -> bool:
    """The text tells the customer the details it gave do not match the records (it cannot be verified)."""
    return bool(_NOT_VERIFIED_RE.search(tone_text(text)))


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
    # (said of this decline: "the card has expired", not the article's "check the card expiry date")
    "expired_card": re.compile(r"\bexpired\b|\bout of date\b|\bno longer valid\b", re.IGNORECASE),
    "billing_address_mismatch": re.compile(
        r"\bbilling address (?:does not|doesn't|did not|didn't|not) match|\bbilling address mismatch"
        r"|\b(?:does not|doesn't|did not|didn't) match (?:the |your )?(?:card's )?billing address",
        re.IGNORECASE,
    ),
    # (the bank as the one that declined: "your card issuer (your bank) declined it", "the decline
    # came from your bank"; not "declined ... please ask your bank for a new card")
    "issuer_declined": re.compile(
        r"\b(?:bank|issuer|card (?:provider|issuer))(?:\s*\([^)]{0,30}\))?"
        r" (?:has |had )?(?:declined|refused|rejected|blocked)"
        r"|\b(?:declined|refused|rejected|blocked) by (?:your|the) (?:card's )?(?:bank|issuer|card (?:provider|issuer))"
        r"|\bdecline (?:came|comes|was) from (?:your|the) (?:card's )?(?:card )?(?:bank|issuer)",
        re.IGNORECASE,
    ),
}


def says_date(text: str, iso: str) -> bool:
    """The text names this day: 2026-11-28, 28 November, November 28th, 28 Nov (the year optional)."""
    return iso in text or bool(_date_pattern(iso).search(text))


@lru_cache(maxsize=1024)  # (a few hundred days occur: the records' dates)
def _date_pattern(iso: str) -> re.Pattern[str]:
    year, month, day = (int(x) for x in iso.split("-"))
    name = _MONTHS[month - 1]
    months = rf"(?:{name}|{name[:3]}\.?)"
    days = rf"0?{day}(?:st|nd|rd|th)?"
    pattern = (
        rf"{re.escape(iso)}|(?<!\d){days}(?:\s+of)?\s+{months}\b|\b{months}\s+{days}(?!\d)"
        rf"|(?<!\d)0?{day}/0?{month}(?:/{year})?(?!\d)"
    )
    return re.compile(pattern, re.IGNORECASE)


def says_date_about(text: str, iso: str, about: str) -> bool:
    """The text names this day in a sentence about `about` (a regex): "your parcel is now due on 3 Dec."
    tells a parcel's date; "your payment on 3 Dec. went through" does not. A sentence ends at ". ", "! "
    or "? " before a capital, but not after an abbreviated month or day ("Nov. 30", "Mon. 30")."""
    for match in _date_pattern(iso).finditer(text):
        start = max((m.end() for m in _SENTENCE_BREAK_RE.finditer(text, 0, match.start())), default=0)
        after = _SENTENCE_BREAK_RE.search(text, match.end())
        if re.search(about, text[start : after.start() + 1 if after else len(text)], re.IGNORECASE):
            return True
        # The next sentence may tell of that day by reference ("... were declined on 29 Nov. The next
        # attempt that same day went through": audit round 59).
        if after:
            following = _SENTENCE_BREAK_RE.search(text, after.end())
            sentence = text[after.end() : following.start() + 1 if following else len(text)]
            if _SAME_DAY_RE.search(sentence) and re.search(about, sentence, re.IGNORECASE):
                return True
    return False


_SAME_DAY_RE = re.compile(r"\b(?:the|that) same (?:day|date)\b|\bthat day\b", re.I)


# The end of a sentence: ".", "!" or "?" and a space before a capital, but not after an abbreviation
# of a month or weekday, or "e.g."/"i.e."/"approx."/"no." (the day goes on: "Nov. 30").
_SENTENCE_BREAK_RE = re.compile(
    r"(?<!\b[A-Z][a-z]{2})(?<!\bSept)(?<!\be\.g)(?<!\bi\.e)(?<!\bapprox)(?<!\bno)(?<!\bNo)[.!?]\s+(?=[A-Z\d])"
)


@dataclass(frozen=True)
class Finding:
    """What the records show about an issue that the customer must be told (and cannot guess)."""

    issue: str
    what: str  # e.g. "the date the refund was requested (2026-11-25)"
    kind: str  # "date", "window", "decline_reason", "authorisation", "place", "shipping" or "paid"
    value: str
    # What a sentence telling a date must be about (a regex): the date of a parcel's delivery told in
    # a sentence about a payment that went through the same day tells nothing of the parcel.
    about: str = ""

    def told_in(self, text: str) -> bool:
        return _told(text, self.kind, self.value, self.about)


@cached_by_text
def _told(text: str, kind: str, value: str, about: str) -> bool:
    """Whether a text tells a finding of this kind and value (Finding.told_in); read once per text,
    as every answer of an episode is weighed against every finding on each step."""
    if kind == "date" and about:
        return says_date_about(text, value, about)
    if kind == "date":
        return says_date(text, value)
    if kind == "window":
        return says_date(text, value) and bool(_WINDOW_RE.search(text))
    if kind == "authorisation":
        # (in one sentence, and not denied: "a real charge, not a hold, so you won't be charged twice" tells
        # no hold; code review of world-14)
        return any(
            _AUTHORISATION_RE.search(sentence) and _DROPS_RE.search(sentence) and not _NOT_A_HOLD_RE.search(sentence)
            for sentence in _SENTENCE_END_RE.split(text)
        )
    if kind == "place":
        return bool(re.search(_PLACE_WORDS[value], text, re.IGNORECASE))
    if kind == "paid":
        # That it went through, not denied ("so no payment was taken"; audit review) nor said of another day
        # ("the day before"), and the day: in the sentence that says so (or the next, "that same day"), as the
        # day of every attempt ("three attempts on 1 Dec. ... The third was captured": audit round 64), or
        # "today"/"yesterday" beside the saying.
        named = (
            says_date_about(text, value, _WENT_THROUGH)
            or says_date_about(text, value, _ALL_ATTEMPTS)
            or _went_through_on_the_named_day(text, value)
        )
        return named and any(
            not _NEGATED_RE.search(text[max(0, m.start() - 30) : m.start()])
            and not _OTHER_DAY_RE.search(text[max(0, m.start() - _NEAR) : m.end() + _NEAR])
            for m in _WENT_THROUGH_RE.finditer(text)
        )
    if kind == "shipping":
        return says_amount(text, float(value)) and bool(_SHIPPING_RE.search(text))
    # The reason on record, and no other (a list of reasons tells the customer nothing); its
    # code as the records write it ("issuer_declined") says it too.
    reasons = [reason for reason, words in _DECLINE_WORDS.items() if words.search(text) or reason in text]
    return reasons == [value]


def _went_through_on_the_named_day(text: str, iso: str) -> bool:
    """A payment said to have gone through "today" or "yesterday", where that is its day, the word next
    to the saying ("was then captured successfully today": audit round 61; "today" alone, elsewhere in a
    sentence, is no date: "I can't change it today")."""
    name = {0: "today", 1: "yesterday"}.get(days_before_today(iso))
    if not name:
        return False
    return any(
        re.search(rf"\b{name}\b", text[max(0, m.start() - _NEAR) : m.end() + _NEAR], re.IGNORECASE)
        for m in _WENT_THROUGH_RE.finditer(text)
    )


_NEAR = 25  # characters: a day named this close to "went through" is the day it did
# The attempts of a checkout, all of them: a day said of them is the day the last went through too.
_ALL_ATTEMPTS = r"\b(?:attempts|tries|payment attempts)\b"
# Another day than the one named: "went through the day before".
_OTHER_DAY_RE = re.compile(
    r"\bthe (?:day|night) (?:before|after)\b|\bthe (?:next|following|previous) day\b|\ba day (?:later|earlier)\b", re.I
)


_WINDOW_RE = re.compile(
    rf"\b(?:{RETURN_WINDOW_DAYS}|thirty)(?:-| )days?\b|\breturn (?:window|period)\b"
    r"|\bwindow (?:has |had )?(?:passed|closed|ended)",
    re.IGNORECASE,
)
# A payment said to have gone through ("your last attempt went through", "the payment was successful").
_WENT_THROUGH = (
    r"\b(?:went through|did go through|(?:has|have) gone through|succeeded"
    r"|(?:is|was|has been) (?:fully )?paid|captured successfully|successfully captured"
    # (a word between: "was then captured", "was finally accepted"; audit round 61)
    r"|(?:was|were|has been) (?:then |also |later |finally |successfully |eventually )?"
    r"(?:successful|accepted|captured|taken|charged))\b"
)
_WENT_THROUGH_RE = re.compile(_WENT_THROUGH, re.IGNORECASE)
# What a sentence telling a finding's date is about (Finding.about).
_REFUND = r"\b(?:refund|return|money back|credit)"
_PARCEL = r"\b(?:deliver|arriv|parcel|package|shipment|carrier|courier|scan|track|transit|on its way)"
_DELIVERED = r"\b(?:deliver|arriv|dropped off|left with)"
_SHIPPING_RE = re.compile(r"\bshipping\b|\bdelivery (?:fee|charge|cost)|\bpostage\b|\bpost and packing\b", re.I)
_AUTHORISATION_RE = re.compile(
    r"\b(?:pre-?)?authori[sz]ation|\bhold\b|\bpending (?:charge|payment|transaction)"
    r"|\b(?:payment|charge|transaction|one|it) is (?:only |just |still )?pending\b",
    re.IGNORECASE,
)
_NOT_A_HOLD_RE = re.compile(
    r"\b(?:not|isn't|is not|wasn't|was not) (?:a |an |just |only )?(?:hold|pending|(?:pre-?)?authori[sz]ation)", re.I
)
_DROPS_RE = re.compile(
    # ("a hold that was never captured as a charge": audit round 70)
    r"\b(?:drop|release|fall off|falls off|disappear|expire|lapse|never (?:be )?(?:charged|taken)|"
    r"(?:never|not) (?:been |be |was )?captured|uncaptured|"
    r"not (?:be )?(?:charged|taken)|not an? (?:second |actual |real |extra |new )?charge\b"
    r"|no (?:second |actual |real |extra )?charge\b|isn't a (?:second )?charge)|n't (?:be )?(?:charged|taken)\b",
    re.IGNORECASE,
)
_PLACE_WORDS = {
    "the porch": r"\bporch\b",
    "the side gate": r"\bside gate\b",
    "a neighbour at number 12": r"\bneighbou?r\b",
    "the parcel locker": r"\b(?:parcel )?locker\b",
    "the reception desk": r"\breception\b",
}
_REASON_WORDS = {
    "expired_card": "the card has expired",
    "billing_address_mismatch": "the billing address does not match the card's",
    "issuer_declined": "the card's bank declined it",
}


def reason_words(reason: str) -> str:
    """A declined payment's reason, as a customer reads it."""
    return _REASON_WORDS[reason]


def _family_finding(scenario: Scenario, records: SystemOfRecord, issue: str) -> Finding | None:
    """What the records show against the claim of a judgement family."""
    order_id = scenario.order_in_question
    order = records.order(order_id)
    if scenario.family == "pending_authorisation":
        what = "that the second charge is an authorisation that will drop off, not a charge"
        return Finding(issue, what, "authorisation", "")
    if scenario.family == "left_in_safe_place" and order and order.events:
        place = order.events[-1].detail.split(": ", 1)[-1]
        return Finding(issue, f"where the carrier left the parcel ({place})", "place", place)
    if scenario.family == "refund_already_issued":
        refund = next((r for r in records.refunds_for(order_id) if r.status == "issued"), None)
        if refund:
            return Finding(issue, f"the date the refund was issued ({refund.issued})", "date", refund.issued, _REFUND)
    if scenario.family == "outside_return_window":
        return _window_finding(records, issue, order_id)
    if scenario.family == "not_lost_yet" and order and order.events:
        scanned = order.events[-1].when
        return Finding(issue, f"the day of the parcel's last tracking scan ({scanned})", "date", scanned, _PARCEL)
    if scenario.family == "duplicate_already_refunded":
        refund = next((r for r in records.refunds_for(order_id) if r.status == "issued"), None)
        if refund:
            what = f"the day the duplicate charge was refunded ({refund.issued})"
            return Finding(issue, what, "date", refund.issued, _REFUND)
    if scenario.family == "paid_on_retry":
        declined = next((p for p in records.payments if p.status == "declined"), None)
        checkout = declined.order_id if declined else ""
        paid = next((p for p in records.payments if p.status == "captured" and p.order_id == checkout), None)
        if paid:
            what = f"that the last attempt went through on {paid.date}: the order is paid"
            return Finding(issue, what, "paid", paid.date)
    if scenario.family == "shipping_not_overcharge" and order:
        fee = f"{order.shipping:.2f}"
        return Finding(issue, f"that the difference is the order's shipping fee (${fee})", "shipping", fee)
    if scenario.family == "already_delivered" and order and delivered_on(order):
        day = delivered_on(order)
        what = f"the day the order was delivered ({day}), too late to change its address"
        return Finding(issue, what, "date", day, _DELIVERED)
    return None


def _window_finding(records: SystemOfRecord, issue: str, order_id: str) -> Finding | None:
    day = outside_return_window(records, order_id)
    if not day:
        return None
    what = f"the day the order was delivered ({day}) and that the {RETURN_WINDOW_DAYS}-day return window has passed"
    return Finding(issue, what, "window", day)


def _finding(scenario: Scenario, records: SystemOfRecord, issue: str) -> Finding | None:
    if is_mistaken(scenario, issue):
        return _family_finding(scenario, records, issue)
    order_id = scenario.order_in_question
    order = records.order(order_id) if order_id else None
    if issue == "refund_request" and issue not in over_the_cap(scenario) and outside_return_window(records, order_id):
        return _window_finding(records, issue, order_id)
    if issue == "refund_status" and order:
        refund = next((r for r in records.refunds_for(order_id) if r.status == "pending"), None)
        if refund:
            what = f"the date the refund was requested ({refund.requested})"
            return Finding(issue, what, "date", refund.requested, _REFUND)
    if issue == "delayed_delivery" and order and order.events and order.events[-1].status == "delayed":
        expected = order.events[-1].detail.rsplit(" ", 1)[-1]
        return Finding(issue, f"the carrier's new delivery date ({expected})", "date", expected, _PARCEL)
    if issue == "payment_failure":
        declined = next((p for p in records.payments if p.status == "declined"), None)
        if declined:
            return Finding(issue, f"why the payment was declined ({reason_words(declined.decline_reason)})",
                           "decline_reason", declined.decline_reason)  # fmt: skip
    return None


def findings(scenario: Scenario) -> tuple[Finding, ...]:
    """What the records show that the customer must be told, for the issues answered, not changed."""
    return scenario.kept("findings", _findings)


def _findings(scenario: Scenario) -> tuple[Finding, ...]:
    if scenario.impostor:
        return ()  # (nothing the records show is told to a customer who cannot be verified)
    found = (_finding(scenario, scenario.records, i.issue_id) for i in scenario.intents)
    return tuple(f for f in found if f is not None)


def finding_for(scenario: Scenario, issue: str) -> Finding | None:
    return next((f for f in findings(scenario) if f.issue == issue), None)


# ---- what a message tells the customer was done ----

# A sentence in the first person ("I have refunded ..., reshipped ... and cancelled ..."), or
# "is now": a description of what the records held before ("your refund was issued on 26
# November") is no claim of a change made.
_DONE_WORDS = (
    r"(?:refunded|reshipped|cancell?ed|sent|shipped|dispatched|updated|changed|redirected|issued|processed|arranged)"
)
_FIRST_PERSON_RE = re.compile(
    r"\b(?:I|we)(?:'ve| have| just|'ll have)\b"
    # (or the change's verb itself, in the past, a word between at most: "so I refunded $25.46", "we also
    # cancelled it"; as a lookahead, since the subject is looked for before the verb; code review of world-14)
    rf"|\b(?:I|we)(?= (?:\w+ )?{_DONE_WORDS}\b)"
    # (or its second verb: "I am treating it as lost and have reshipped the order": audit round 70)
    rf"|\band (?:have|also have)(?= (?:\w+ )?{_DONE_WORDS}\b)",
    re.IGNORECASE,
)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;])\s+")
# What a reship sends: the order, the parcel, its items, or a product by its last word ("the desk").
_SENT_THINGS = (
    "(?:order|parcel|package|item|items|replacement|"
    + "|".join(sorted({p.split()[-1] for p in content.PRODUCTS}))
    + ")"
)
# A replacement of the order, not of a card, a link or a code.
_REPLACEMENT = r"a replacement\b(?! (?:card|link|code|key|password|email))"
_DONE_VERBS = {
    "issue_refund": r"\brefunded\b|\b(?:issued|processed) (?:a|the|your) (?:full )?refund\b",
    # (what is sent again is the order, the parcel or the thing bought: not "the reset link again")
    "reship_order": (
        rf"\breshipped\b|\b(?:sent|shipped|dispatched) (?:out )?(?:{_REPLACEMENT}|(?:it|(?:your|the) "
        rf"(?:[\w-]+ ){{0,2}}{_SENT_THINGS}) (?:to you |out )?again)"
        # ("I have arranged for the hiking backpack to be sent to you again": audit round 62)
        rf"|\barranged (?:for )?(?:{_REPLACEMENT}|a reship(?:ment)?\b|(?:your|the) (?:[\w-]+ ){{0,3}}{_SENT_THINGS} "
        r"to be (?:sent|shipped|dispatched)(?: to you| out)? again)"
    ),
    "update_address": r"\b(?:updated|changed) (?:the|your) (?:shipping |delivery )?address\b|\bredirected\b",
    "cancel_subscription": r"\bcancell?ed (?:the|your) (?:subscription|plan|membership)\b",
    "send_password_reset": r"\bsent (?:you )?(?:a|the) (?:password )?reset\b",
}
# ... or says it is done, with the change as its subject ("your order is now being redirected", "a
# replacement has been sent", "your plan has been cancelled"); "can no longer be redirected" is not.
_IS_DONE = r"(?:is now|has now been|has been|have been|was|were|is (?:now )?being|are (?:now )?being)"
_NOW_DONE = {
    # (a refund only as now under way: "was refunded on 28 November" tells what the records held before)
    "issue_refund": r"\brefund is now (?:issued|processed|on its way)\b|\bis (?:now )?being refunded\b",
    "reship_order": rf"\b{_IS_DONE} reshipped\b|\breplacement {_IS_DONE} (?:sent|shipped|dispatched)\b"
    rf"|\b{_SENT_THINGS} {_IS_DONE} (?:(?:sent|shipped)(?: to you| out)? again|re-?sent)\b",
    "update_address": rf"\baddress is now (?:updated|changed)\b|\b{_IS_DONE} redirected\b"
    rf"|\baddress {_IS_DONE} (?:updated|changed)\b",
    "cancel_subscription": rf"\b(?:subscription|plan|membership) (?:is now|{_IS_DONE}) cancell?ed\b",
    "send_password_reset": rf"\breset (?:link|email) {_IS_DONE} sent\b",
}
_CLAIMS = {tool: re.compile(verbs, re.IGNORECASE) for tool, verbs in _DONE_VERBS.items()}
_NOW_CLAIMS = {tool: re.compile(words, re.IGNORECASE) for tool, words in _NOW_DONE.items()}


# What an article may offer that no desk tool does (the desk rules: "Offer or promise nothing the tools do not do").
_UNTOOLED = {
    "a carrier trace": r"\b(?:carrier trace|trace (?:with|from) the carrier|carrier to (?:trace|investigate))\b",
    "store credit": r"\bstore credit\b",
    "a shipping credit": r"\bshipping credit\b|\bcredit (?:for|on) (?:the )?shipping\b",
    "status updates": r"\b(?:subscribe|sign) you (?:up )?(?:to|for) (?:status )?updates\b",
    "an updated receipt": r"\b(?:updated|corrected|new) receipt\b",
}
_UNTOOLED_RES = {thing: re.compile(words, re.IGNORECASE) for thing, words in _UNTOOLED.items()}
# A sentence that commits the desk to it, or offers it: "I'll open a carrier trace", "we have applied store
# credit", "I can offer a shipping credit", "would you like store credit?".
_PROMISE_RE = re.compile(
    r"\b(?:i|we)(?:'ll| will| shall|'ve| have| can| could| am going to|'m going to| are going to)\b"
    r"|\blet me\b|\bwould you like\b|\bhappy to (?:open|offer|apply|give|add|send)\b",
    re.IGNORECASE,
)
_NOT_RE = re.compile(r"\b(?:not|no|never|cannot|unable)\b|n't\b", re.IGNORECASE)


def names_untooled(text: str) -> tuple[str, ...]:
    """What no desk tool does that a text names ("Open a carrier trace with the tracking number"), by name."""
    return tuple(thing for thing, words in _UNTOOLED_RES.items() if words.search(text))


@cached_by_text
def promises_untooled(text: str) -> tuple[str, ...]:
    """What a message promises or offers the customer that no desk tool does ("I'll open a carrier trace"),
    by name; never what it says the desk cannot do ("we can't open a carrier trace")."""
    promised: dict[str, None] = {}
    for sentence in _SENTENCE_END_RE.split(text):
        if _PROMISE_RE.search(sentence) and not _NOT_RE.search(sentence):
            promised.update(dict.fromkeys(names_untooled(sentence)))
    return tuple(promised)


@cached_by_text
def claimed_changes(text: str) -> tuple[str, ...]:
    """The changes a message tells the customer were made ("I have refunded ...", "I've cancelled
    your subscription"), by tool."""
    claimed: dict[str, None] = {}
    for sentence in _SENTENCE_END_RE.split(text):
        for tool, verbs in _CLAIMS.items():
            said_done = any(_said_done_by_us(sentence, done.start()) for done in verbs.finditer(sentence))
            if said_done or (tool in _NOW_CLAIMS and _NOW_CLAIMS[tool].search(sentence)):
                claimed[tool] = None
    return tuple(claimed)


def _said_done_by_us(sentence: str, verb: int) -> bool:
    """Whether the verb at `verb` says the desk did it: its subject is "I" or "we", a few words
    before it ("I have refunded", "we've just gone ahead and cancelled"), with no "not" between
    ("I have not refunded"). A verb with no such subject ("it can no longer be redirected, so I
    have changed nothing") claims nothing; a "no" elsewhere ("no scan for a week, so I have
    refunded") does not negate it."""
    subjects = [m.start() for m in _FIRST_PERSON_RE.finditer(sentence) if m.start() < verb]
    if not subjects:
        return False
    between = sentence[subjects[-1] : verb]
    return len(between.split()) <= _SUBJECT_TO_VERB_WORDS and not _NEGATED_RE.search(between)


_SUBJECT_TO_VERB_WORDS = 8  # "I've gone ahead and also" ... "refunded": further off, another clause's subject


# A change said not to be made ("I have not sent a replacement", "we haven't refunded it yet").
_NEGATED_RE = re.compile(r"\b(?:not|never|no|nothing|none)\b|n't\b", re.IGNORECASE)


picklable(Remedy, RecordsCheck, Finding)  # pickle and copy alike on both builds
