"""A ticket's system of record: the customer's account, orders, payments, refunds and
subscriptions, and the service's incidents, as the help desk's tools would show them.

The records are built from the scenario: each hidden fact the customer can give is a value
in them (the account email, the order in question, its amount, tracking number, card and
charge date, the device and app version), and the state they hold is the state each issue
describes (a double charge is two captured payments, a lost parcel has had no scan for a week,
a refund being chased is pending), so what the customer says and what the records say can
be compared. Everything else (names, other orders, past refunds, incidents elsewhere) is
drawn from a generator of the records' own, seeded by the scenario's `record_seed`, so that
the records left every other draw of the world, and every figure measured on it, as it was.

Pure and deterministic: the world's date is fixed (`TODAY`), never the wall clock's.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

from supportenv import content
from supportenv.catalog import RETURN_WINDOW_DAYS
from supportenv.records import picklable

if TYPE_CHECKING:
    from supportenv.world import Scenario

TODAY = date(2026, 12, 1)  # the world's "today": every date in the records is on or before it

ORDER_STATUSES = ("awaiting_payment", "processing", "shipped", "in_transit", "delivered", "returned")
PAYMENT_STATUSES = ("captured", "authorised", "declined")
REFUND_STATUSES = ("pending", "issued")
CARRIERS = ("UPS", "DHL", "FedEx", "Royal Mail")
DECLINE_REASONS = ("expired_card", "billing_address_mismatch", "issuer_declined")

# A typical price per product, in cents, so that an order's quantity fits its amount (an
# enterprise refund of $2,200 is several office chairs, not one pair of earbuds).
_PRICE_CENTS = {
    "pair of wireless earbuds": 8900,
    "standing desk": 42000,
    "coffee grinder": 7900,
    "yoga mat": 3500,
    "desk lamp": 4500,
    "air fryer": 11900,
    "hiking backpack": 9900,
    "bluetooth speaker": 6900,
    "office chair": 29900,
    "electric kettle": 4900,
    "robot vacuum": 34900,
    "smartwatch": 24900,
    "pair of running shoes": 11900,
    "blender": 6900,
    "winter jacket": 18900,
    "mechanical keyboard": 12900,
    "baby monitor": 9900,
    "water bottle": 2500,
}
assert set(content.PRODUCTS) <= set(_PRICE_CENTS), "every product needs a price"
# How far a line's unit price may stray from its product's typical price (a sale, a dearer model):
# beyond it the price is one no one would believe of the product (a $23 office chair).
PRICE_BAND_PERCENT = 35
# The least an order is charged: what the cheapest product costs (so that some product's line lists
# believably at any amount, even one listed a quarter below what was charged: _WRONG_AMOUNT_SHARES).
CHEAPEST_CENTS = min(_PRICE_CENTS.values())
_FIRST_NAMES = {
    "alex": "Alex",
    "sam": "Sam",
    "priya": "Priya",
    "chen": "Chen",
    "maria": "Maria",
    "tom": "Tom",
    "fatima": "Fatima",
    "jo": "Jo",
    "noah": "Noah",
    "lena": "Lena",
}
_SURNAMES = ("Okafor", "Lindqvist", "Moreau", "Haddad", "Kowalski", "Tanaka", "Brennan", "Silva", "Novak", "Osei")
_STREETS = ("Kings Road", "Canal Street", "Orchard Lane", "Bridge Street", "Castle Hill", "Market Row")
_TOWNS = ("Manchester", "Galway", "Ghent", "Nantes", "Braga", "York")
# The devices a sign-in the account does not know comes from (none the customer's own account lists).
UNKNOWN_DEVICES = ("Windows PC", "Linux laptop", "Chromebook", "iPad Air", "Galaxy Tab S9")
_SERVICES = ("dashboard", "api", "mobile app", "sign-in", "reports", "webhooks")
_CANCELLED_PLAN = content.PLANS[1]  # a subscription its customer cancels is monthly (see subscriptions)
_FAILED_SIGN_INS_TO_LOCK = 5
_PAST_ORDER_DAYS = 70  # earlier orders are at least this old (so none is confused with the one in question)
# Where a carrier leaves a parcel no one was in for (the "lost" parcel of a judgement family).
SAFE_PLACES = ("the porch", "the side gate", "a neighbour at number 12", "the parcel locker", "the reception desk")
# Shipping fees an order may list (in cents): the "overcharge" of a judgement family is one of them.
SHIPPING_FEES = (499, 599, 695, 799, 999)
DISCOUNTS = (10, 15, 20, 25)  # percent off an order's items (a promotion at checkout)
# Words of an address change that is a slip on the order, not a move: "I put the wrong street on my
# order", "Typo in my shipping address".
_WRONG_STREET, _TYPO_IN_ADDRESS = "address_change/2", "address_change/5"
_ODD_TOTAL_FEE = 499  # the shipping fee (with the odd cents) of a total its quantity does not divide
_MOST_UNITS = 20  # of one product on an order
# How much below what was charged an order lists, as a share of the charge: one charged more than its
# listed price (wrong_amount), or overcharged without the customer noticing (P_UNNOTICED_CHARGE).
_WRONG_AMOUNT_SHARES = (0.1, 0.15, 0.2, 0.25)
_UNNOTICED_SHARES = (0.05, 0.08, 0.1, 0.12, 0.15)
# What else an account whose customer says several orders were charged twice holds (the_other_charges).
_LOOKALIKES = ("held", "refunded", "twin", "plain")
# Issues whose charge date is not the order's payment: a renewal, a failed attempt.
_OWN_CHARGE_DATES = ("subscription_cancel", "payment_failure")

# What each issue makes of the order in question (the order its order id names).
_ORDER_STATUS_OF_ISSUE = {
    "delayed_delivery": "in_transit",
    "lost_package": "in_transit",  # (delivered, for the judgement family: see the_order_in_question)
    "refund_status": "returned",
    "address_change": "processing",
}


@dataclass(frozen=True)
class Device:
    model: str
    app_version: str  # "" for a browser
    last_seen: str


@dataclass(frozen=True)
class SignIn:
    when: str
    device: str
    place: str
    recognised: bool


@dataclass(frozen=True)
class Account:
    customer_id: str
    name: str
    email: str
    tier: str
    created: str
    status: str  # "active" or "locked"
    identity_verified: bool  # never at the start: the agent verifies it during the episode
    two_factor: str  # "off", "app" or "sms"
    address: str  # the address on file, where orders ship
    failed_sign_ins: int
    devices: tuple[Device, ...]
    sign_ins: tuple[SignIn, ...]  # the latest first


@dataclass(frozen=True)
class LineItem:
    product: str
    quantity: int
    unit_price: float


@dataclass(frozen=True)
class TrackingEvent:
    when: str
    status: str
    detail: str


@dataclass(frozen=True)
class Order:
    order_id: str
    placed: str
    items: tuple[LineItem, ...]
    shipping: float
    total: float  # the listed total: the items less the order's discount, and shipping
    status: str  # one of ORDER_STATUSES
    ship_to: str
    carrier: str  # "" until it ships
    tracking_number: str  # "" until it ships
    events: tuple[TrackingEvent, ...]  # the carrier's scans, oldest first
    invoice_number: str
    discount_percent: int = 0  # off every item's price (a promotion at checkout); never off shipping


@dataclass(frozen=True)
class Payment:
    payment_id: str
    order_id: str  # "" for a subscription's renewal
    card_last_four: str
    amount: float
    date: str
    status: str  # one of PAYMENT_STATUSES
    decline_reason: str  # one of DECLINE_REASONS when declined, else ""


@dataclass(frozen=True)
class Refund:
    refund_id: str
    order_id: str
    amount: float
    status: str  # one of REFUND_STATUSES
    requested: str
    issued: str  # "" while pending


@dataclass(frozen=True)
class Subscription:
    subscription_id: str
    plan: str
    price: float
    status: str  # "active" or "cancelled"
    renews: str  # "" once cancelled


@dataclass(frozen=True)
class Incident:
    incident_id: str
    service: str
    status: str  # "investigating" or "resolved"
    started: str
    summary: str


@dataclass(frozen=True)
class SystemOfRecord:
    """Everything the help desk's tools can look up about one ticket's customer."""

    account: Account
    orders: tuple[Order, ...]  # the order in question (if any) first
    payments: tuple[Payment, ...]
    refunds: tuple[Refund, ...]
    subscriptions: tuple[Subscription, ...]
    incidents: tuple[Incident, ...]

    def order(self, order_id: str) -> Order | None:
        return next((o for o in self.orders if o.order_id == order_id), None)

    def payments_for(self, order_id: str) -> tuple[Payment, ...]:
        return tuple(p for p in self.payments if p.order_id == order_id)

    def refunds_for(self, order_id: str) -> tuple[Refund, ...]:
        return tuple(r for r in self.refunds if r.order_id == order_id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "account": as_data(self.account),
            "orders": [as_data(o) for o in self.orders],
            "payments": [as_data(p) for p in self.payments],
            "refunds": [as_data(r) for r in self.refunds],
            "subscriptions": [as_data(s) for s in self.subscriptions],
            "incidents": [as_data(i) for i in self.incidents],
        }


def as_data(record: object) -> Any:
    """A record (or a tuple of them) as JSON-able lists and dicts, field by field: new ones,
    which the caller may change."""
    if isinstance(record, tuple):
        return [as_data(r) for r in record]
    if hasattr(record, "__dataclass_fields__"):
        return {name: as_data(getattr(record, name)) for name in record.__dataclass_fields__}
    return record


def days_before_today(iso_day: str) -> int:
    """How many days before the world's `TODAY` an ISO date is (so callers need no date arithmetic)."""
    return (TODAY - date.fromisoformat(iso_day)).days


def iso_days_ago(days: int) -> str:
    """The ISO date `days` before the world's `TODAY`."""
    return _iso(_day(days))


def _day(days_ago: int) -> date:
    return TODAY - timedelta(days=days_ago)


def _iso(day: date) -> str:
    return day.isoformat()


def _cents(text: str) -> int:
    return round(float(text) * 100)


def _dollars(cents: int) -> float:
    return round(cents / 100, 2)


def _less_discount(cents: int, percent: int) -> int:
    """`cents` less `percent` off, to the cent, a half cent rounded up (as a till does)."""
    return (cents * (100 - percent) + 50) // 100


def _less_a_share(cents: int, share: float) -> int:
    """`cents` less `share` of it, and at least a dollar less (what an order charged `cents` lists)."""
    return cents - max(100, round(cents * share))


def _fees_below_half(charged_cents: int) -> list[int]:
    """The shipping fees an order charged `charged_cents` may list: under half of it (or the least fee)."""
    return [f for f in SHIPPING_FEES if f < charged_cents // 2] or [min(SHIPPING_FEES)]


def _line(product: str, total_cents: int, shipping_cents: int = 0) -> tuple[int, int, int]:
    """(quantity, unit price, shipping) in cents of an order of `product` whose total is `total_cents`:
    several units where the items come to more than twice its price, and a shipping fee that takes the
    cents the quantity does not divide."""
    unit = _PRICE_CENTS[product]
    items_cents = total_cents - shipping_cents
    quantity = max(1, min(_MOST_UNITS, round(items_cents / unit))) if items_cents > 2 * unit else 1
    if items_cents % quantity and not shipping_cents and items_cents > _ODD_TOTAL_FEE + quantity:
        # A total the quantity does not divide: a shipping fee takes the odd cents (a plausible
        # fee of $4.99 and a few cents, not a fee of 4 cents).
        shipping_cents = _ODD_TOTAL_FEE + (items_cents - _ODD_TOTAL_FEE) % quantity
        items_cents = total_cents - shipping_cents
    unit_cents, odd_cents = divmod(items_cents, quantity)
    return quantity, unit_cents, shipping_cents + odd_cents


def _band(product: str) -> tuple[int, int]:
    """The least and the most believable unit price of `product`, in cents."""
    typical = _PRICE_CENTS[product]
    reach = typical * PRICE_BAND_PERCENT // 100
    return typical - reach, typical + reach


def in_band(product: str, unit_cents: int) -> bool:
    """Whether a line lists `product` at a believable unit price (within PRICE_BAND_PERCENT of its typical one)."""
    low, high = _band(product)
    return low <= unit_cents <= high


def lists_fairly(
    product: str, charged_cents: int, issues: Collection[str] = (), family: str = "", unnoticed: str = ""
) -> bool:
    """Whether an order of `product` charged `charged_cents` lists its line at a believable price however
    the records draw its listing (the_order_in_question, by the ticket's `issues`, judgement family and
    unnoticed charge; a declined checkout, the_failed_payment, lists what it would charge)."""
    if family == "item_of_several":
        return in_band(product, charged_cents)  # (its line is one of it, at the amount: _order_of_several)
    if family == "shipping_not_overcharge":
        listings = [(charged_cents, fee) for fee in _fees_below_half(charged_cents)]
    elif "wrong_amount" in issues:
        listings = [(_less_a_share(charged_cents, share), 0) for share in _WRONG_AMOUNT_SHARES]
    elif unnoticed == "overcharge":
        listings = [(_less_a_share(charged_cents, share), 0) for share in _UNNOTICED_SHARES]
    else:
        listings = [(charged_cents, 0)]
    return all(in_band(product, _line(product, total, fee)[1]) for total, fee in listings)


def products_fitting(
    amount: str, issues: Collection[str] = (), family: str = "", unnoticed: str = ""
) -> tuple[str, ...]:
    """The products an order charged `amount` (the ticket's amount fact) lists believably (lists_fairly)."""
    return tuple(p for p in content.PRODUCTS if lists_fairly(p, _cents(amount), issues, family, unnoticed))


# The fewest days ago an order on its way or sent back was placed, where the customer's words time it: "It's
# been two weeks" (13: a day short of it is still two weeks to a customer), "The tracking hasn't updated in ten
# days" (its last scan, at the hub two days after it was placed), "Been waiting almost two weeks"; "Returned the
# item two weeks ago" (20: delivered 3-5 days after it was placed, sent back, at the warehouse 5 days after
# delivery, 10-12 days ago), "It's been over a week" (18: at the warehouse 8-10 days ago; audit round 77). A
# return so timed was placed no more than 4 days before that either.
DAYS_THE_WORDS_SAY = {
    "lost_package/3": 13,
    "lost_package/4": 12,
    "delayed_delivery/4": 11,
    "refund_status/0": 20,
    "refund_status/5": 18,
}


def days_the_words_say(template_ids: tuple[str, ...] | list[str]) -> int:
    """The fewest days ago the order these opening words are about was placed, as they time it (0: they do not)."""
    return max((DAYS_THE_WORDS_SAY.get(t, 0) for t in template_ids), default=0)


_SAYS_YESTERDAY = "lost_package/2"  # "Apparently my {product} was delivered yesterday, but ..."
_SAYS_CODES_BY_TEXT = "two_factor_lost/2"  # "The verification code goes to an old number I don't have anymore."


class _Builder:
    """Draws the records of one scenario: the parts its hidden facts fix, then the rest."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.facts = scenario.facts_by_name
        self.issues = {i.issue_id for i in scenario.intents}
        self.rng = random.Random(scenario.record_seed)
        # (an impostor's card is none the account holds: the holder's is, Scenario.holder_proofs)
        self.card = scenario.holder_value("card_last_four") or f"{self.rng.randrange(0, 10000):04d}"
        self.address = self._address()
        self.orders: list[Order] = []
        # The return window's draws (when a refund request's order was delivered, what was refunded
        # of it before) have a generator of their own, so that they change no other draw.
        self.window_rng = random.Random(f"window:{scenario.record_seed}")
        self.delivered_on: date | None = None  # the order in question's delivery day, when drawn
        self.payments: list[Payment] = []
        self.refunds: list[Refund] = []

    def _id(self, prefix: str, digits: int = 6) -> str:
        return f"{prefix}-{self.rng.randrange(10 ** (digits - 1), 10**digits)}"

    def _address(self) -> str:
        street, town = self.rng.choice(_STREETS), self.rng.choice(_TOWNS)
        number = self.rng.randrange(1, 200)
        meant = self.facts.get("new_address", "")
        if self.scenario.impostor:
            return f"{number} {street}, {town}"  # (the holder's: the address an impostor gives is its own)
        if _WRONG_STREET in self.scenario.template_ids and meant:
            # The wrong street, at the right number in the right town ("I put the wrong street on my order").
            right_number, right_street = meant.rsplit(", ", 1)[0].split(" ", 1)
            wrong = street if street != right_street else next(s for s in _STREETS if s != right_street)
            return f"{right_number} {wrong}, {meant.rsplit(', ', 1)[-1]}"
        if _TYPO_IN_ADDRESS in self.scenario.template_ids and meant:
            # A slip of the fingers in the house number: its digits swapped, or one off (audit round 62).
            right_number, rest = meant.split(" ", 1)
            swapped = right_number[::-1].lstrip("0")
            return f"{swapped if swapped and swapped != right_number else int(right_number) + 1} {rest}"
        return f"{number} {street}, {town}"

    # --- the account -----------------------------------------------------------------------
    def account(self) -> Account:
        email = self.facts.get("account_email") or self._email()
        first = _FIRST_NAMES.get(email.split(".", 1)[0], email.split(".", 1)[0].title())
        device_model = self.facts.get("device_model") or self.rng.choice(("iPhone 15", "Pixel 8", "MacBook Air"))
        app_version = self.facts.get("app_version", "")
        recent = min(self.scenario.tenure_days, 3)
        devices = (Device(device_model, app_version, _iso(_day(recent))),)
        town = self.rng.choice(_TOWNS)  # (drawn as ever; the customer signs in from home)
        sign_ins = [SignIn(_iso(_day(recent)), device_model, self.address.rsplit(", ", 1)[-1] or town, True)]
        if "account_takeover" in self.issues:
            # Someone else signed in from a device and a town the customer has never used (the town drawn
            # from a generator of its own, so that no other draw moves: it was "unknown location", which no
            # sign-in record says; a code review of world-15).
            device = self.rng.choice(("Windows PC", "Linux laptop"))
            home = sign_ins[0].place
            place = random.Random(f"takeover town:{self.scenario.record_seed}").choice([t for t in _TOWNS if t != home])
            sign_ins.insert(0, SignIn(_iso(_day(0)), device, place, False))
        if self.scenario.unknown_sign_in:
            # The latest sign-in, from a device and a town the account does not know: the same draw
            # whoever made it (the customer away on another device, or someone else), so that only the
            # customer can tell (Scenario.unknown_sign_in).
            home = sign_ins[0].place
            device = self.rng.choice([d for d in UNKNOWN_DEVICES if d != device_model])
            place = self.rng.choice([t for t in _TOWNS if t != home])
            sign_ins.insert(0, SignIn(_iso(_day(self.rng.randrange(0, recent + 1))), device, place, False))
        two_factor = "app" if "two_factor_lost" in self.issues else self.rng.choice(("off", "app", "sms"))
        if _SAYS_CODES_BY_TEXT in self.scenario.template_ids:
            two_factor = "sms"  # ("The verification code goes to an old number": texted codes; audit round 80)
        if "account_takeover" in self.issues:
            two_factor = "off"  # how the stranger got in with the password alone
        locked = "account_locked" in self.issues
        return Account(
            customer_id=self._id("CUS", 7),
            name=f"{first} {self.rng.choice(_SURNAMES)}",
            email=email,
            tier=self.scenario.tier,
            created=_iso(_day(self.scenario.tenure_days)),
            status="locked" if locked else "active",
            identity_verified=False,
            two_factor=two_factor,
            address=self.address,
            failed_sign_ins=_FAILED_SIGN_INS_TO_LOCK if locked else self.rng.randrange(0, 2),
            devices=devices,
            sign_ins=tuple(sign_ins),
        )

    def _email(self) -> str:
        user = self.rng.choice(tuple(_FIRST_NAMES))
        return f"{user}.{self.rng.randrange(10, 99)}@{self.rng.choice(('example.com', 'mail.test', 'corp.example'))}"

    # --- orders, payments and refunds ----------------------------------------------------------
    def owner(self, fact: str) -> str:
        """The issue a fact belongs to: the first that lists it, as the world draws facts in that
        order (a "charge date" is a subscription's renewal for a cancellation, the failed attempt
        for a declined card, the order's payment otherwise)."""
        return next((i.issue_id for i in self.scenario.intents if i.knows(fact)), "")

    def the_order_in_question(self) -> None:
        """The order the customer's order id names, with its payments and refunds as its issues
        describe them (delivered unless an issue says otherwise)."""
        if "order_id" not in self.facts:
            return
        order_id = self.scenario.order_in_question
        amount_is_the_orders = "amount" in self.facts and self.owner("amount") != "payment_failure"
        amount = _cents(self.facts["amount"]) if amount_is_the_orders else None
        product = self._product(self.owner("order_id"), amount)
        charged = amount if amount is not None else self._price_of(product)
        listed = charged
        if "wrong_amount" in self.issues:
            # Charged more than the listed price: the difference is what the customer asks back.
            listed = _less_a_share(charged, self.rng.choice(_WRONG_AMOUNT_SHARES))
        elif self.scenario.unnoticed_charge == "overcharge":
            # Charged more than the checkout listed, and the customer, writing about its parcel, never
            # noticed (the difference drawn from a generator of its own).
            rng = random.Random(f"unnoticed overcharge:{self.scenario.record_seed}")
            listed = _less_a_share(charged, rng.choice(_UNNOTICED_SHARES))
        ids = [i.issue_id for i in self.scenario.intents]
        status = next((_ORDER_STATUS_OF_ISSUE[i] for i in ids if i in _ORDER_STATUS_OF_ISSUE), "delivered")
        family = self.scenario.family
        if family in ("left_in_safe_place", "already_delivered"):
            status = "delivered"
        if status == "processing" and "tracking_number" in self.facts:
            status = "shipped"  # a change of address after the label was printed: the carrier must redirect it
        paid_on = self.facts.get("charge_date", "") if self.owner("charge_date") not in _OWN_CHARGE_DATES else ""
        if "refund_request" in self.issues and status == "delivered" and not paid_on:
            # Delivered inside the return window, often near its end; outside it for the family.
            self.delivered_on = self._delivery_day(family == "outside_return_window")
            placed = self.delivered_on - timedelta(days=self.window_rng.randrange(3, 6))
        elif family == "not_lost_yet":
            placed = _day(self.rng.randrange(5, 9))  # last scanned (at the hub) 3-6 days ago: still moving
        elif family == "already_delivered":
            placed = _day(self.window_rng.randrange(4, 7))  # delivered a day or two before the customer wrote
        elif family == "refund_never_issued" and not paid_on:
            placed = _day(self.window_rng.randrange(24, 34))  # sent back, and at the warehouse for 10 days and more
        else:
            placed = date.fromisoformat(paid_on) if paid_on else self._placed(status)
            # (as long ago as the words say: "It's been two weeks", "hasn't updated in ten days"; audit round 75)
            said = days_the_words_say(self.scenario.template_ids)
            if said and not paid_on and status == "in_transit":
                placed = min(placed, _day(said))
            elif said and not paid_on and status == "returned":
                # (and no older either: "two weeks ago" of a return, not two months; review of world-18)
                placed = _day(said + (TODAY - placed).days % 5)
        if family == "left_in_safe_place" and not paid_on:
            # Delivered lately, as a customer chasing its parcel says: "yesterday", where its words
            # say so (audit round 60), else in the last few days (from a generator of its own).
            rng = random.Random(f"safe place:{self.scenario.record_seed}")
            self.delivered_on = _day(1 if _SAYS_YESTERDAY in self.scenario.template_ids else rng.randrange(1, 5))
            placed = self.delivered_on - timedelta(days=rng.randrange(3, 6))
        if family == "item_of_several":
            order = self._order_of_several(order_id, product, charged, placed)
            charged = round(order.total * 100)
        elif family == "shipping_not_overcharge":
            # Charged the listed total: the items and a shipping fee the customer left out of its sum.
            fee = self.window_rng.choice(_fees_below_half(charged))
            order = self._order(order_id, product, charged, status, placed, shipping_cents=fee)
        else:
            order = self._order(order_id, product, listed, status, placed)
        if self.delivered_on is not None:  # (the day drawn for the return window, not the carrier's usual)
            delivered = replace(order.events[-1], when=_iso(self.delivered_on))
            order = replace(order, events=(*order.events[:-1], delivered))
        self.orders.append(order)
        payment = Payment(
            self._id("PAY"), order_id, self.card, _dollars(charged), paid_on or _iso(placed), "captured", ""
        )
        self.payments.append(payment)
        if self.scenario.unnoticed_charge == "duplicate":
            # The same charge taken twice, which the customer, writing about its parcel, never noticed
            # (its id from a generator of its own, so that no other draw of the records moves).
            with self._drawing_from(random.Random(f"unnoticed duplicate:{self.scenario.record_seed}")):
                self.payments.append(replace(payment, payment_id=self._id("PAY")))
        if "double_charge" in self.issues:
            # The same charge, captured twice; or (the claim mistaken) held by an authorisation that will drop.
            held = "authorised" if family == "pending_authorisation" else "captured"
            duplicate = replace(payment, payment_id=self._id("PAY"), status=held)
            self.payments.append(duplicate)
            if family == "duplicate_already_refunded":
                # Caught by the payments team and refunded a day or two after it was taken.
                charged_on = date.fromisoformat(duplicate.date)
                requested = min(charged_on + timedelta(days=1), TODAY)
                issued = min(requested + timedelta(days=self.window_rng.randrange(0, 2)), TODAY)
                self.refunds.append(
                    Refund(self._id("REF"), order_id, duplicate.amount, "issued", _iso(requested), _iso(issued))
                )
        if family == "refund_already_issued":
            # Refunded in full days ago: the money is on its way or back on the card already.
            requested = _day(self.rng.randrange(6, 12))
            issued = requested + timedelta(days=self.rng.randrange(1, 4))
            refund = Refund(self._id("REF"), order_id, _dollars(charged), "issued", _iso(requested), _iso(issued))
            self.refunds.append(refund)
        if family == "partly_refunded":
            # Part of the order refunded after its delivery (an item sent back, a price adjustment).
            part = round(charged * self.window_rng.choice((0.2, 0.25, 0.3, 0.4, 0.5)))
            since = days_before_today(self.orders[-1].events[-1].when) if self.orders[-1].events else 10
            requested = _day(self.window_rng.randrange(1, max(2, since)))
            issued = min(requested + timedelta(days=1), TODAY)
            self.refunds.append(
                Refund(self._id("REF"), order_id, _dollars(part), "issued", _iso(requested), _iso(issued))
            )
        if status == "returned" and family != "refund_never_issued":
            # Requested days ago, and not before the parcel was back at the warehouse.
            back = date.fromisoformat(self.orders[-1].events[-1].when) if self.orders[-1].events else TODAY
            asked = _iso(max(_day(self.rng.randrange(2, 9)), min(back + timedelta(days=1), TODAY)))
            self.refunds.append(Refund(self._id("REF"), order_id, _dollars(charged), "pending", asked, ""))

    def _order_of_several(self, order_id: str, product: str, returned_cents: int, placed: date) -> Order:
        """A delivered order of two or three products, bought with a discount off its items, whose
        first line (the product the customer sends back) lists at `returned_cents`: the price the
        customer remembers, not what it paid after the discount."""
        rng = self.window_rng
        quantity, unit = 1, returned_cents  # (one of it: "the kettle" is one kettle)
        first = LineItem(product, quantity, _dollars(unit))
        others = [p for p in content.PRODUCTS if p != product]
        prices = (
            (p, round(_PRICE_CENTS[p] * rng.choice((0.9, 1.0, 1.1)))) for p in rng.sample(others, rng.randrange(1, 3))
        )
        rest = [LineItem(p, 1, _dollars(cents)) for p, cents in prices]
        # (a discount that leaves the returned line's price paid a whole number of cents, no half to round)
        discounts = [d for d in DISCOUNTS if unit * quantity * (100 - d) % 100 != 50]
        discount = rng.choice(discounts)
        items = (first, *rest)
        subtotal = sum(round(i.unit_price * 100) * i.quantity for i in items)
        shipping = rng.choice((0, *SHIPPING_FEES))
        total = _less_discount(subtotal, discount) + shipping
        order = self._order(order_id, product, total, "delivered", placed, shipping_cents=shipping)
        return replace(order, items=items, shipping=_dollars(shipping), discount_percent=discount)

    def the_failed_payment(self) -> None:
        """A declined card: a checkout left awaiting payment, its attempts declined for a reason (or,
        for the family paid_on_retry, declined and then captured on the last attempt: the order is paid)."""
        if "payment_failure" not in self.issues:
            return
        priced = _cents(self.facts["amount"]) if self.owner("amount") == "payment_failure" else None
        product = self._product("payment_failure", priced)
        amount = priced if priced is not None else self._price_of(product)
        tried = self.facts["charge_date"] if self.owner("charge_date") == "payment_failure" else _iso(TODAY)
        paid = self.scenario.family == "paid_on_retry"  # (the last attempt went through after all)
        status = "processing" if paid else "awaiting_payment"
        order = self._order(self._id("ORD"), product, amount, status, date.fromisoformat(tried))
        self.orders.append(order)
        reason = self.rng.choice(DECLINE_REASONS)
        if paid and reason == "expired_card":
            reason = "issuer_declined"  # (a card that expired takes no payment on the next try; audit round 70)
        # (tried more than once, as customers do, three times when its words say so: each attempt
        # declined for the same reason)
        attempts = 3 if "payment_failure/3" in self.scenario.template_ids else self.window_rng.randrange(1, 4)
        if paid:
            attempts = max(attempts, 3)  # (declined again and again, then the last attempt went through)
        for attempt in range(attempts):
            captured = paid and attempt == attempts - 1
            self.payments.append(
                Payment(self._id("PAY"), order.order_id, self.card, order.total, tried,
                        "captured" if captured else "declined", "" if captured else reason)
            )  # fmt: skip

    def _delivery_day(self, outside: bool) -> date:
        """A refund request's order's delivery day: within the return window (half the time in its
        last nine days), or just outside it."""
        rng, window = self.window_rng, RETURN_WINDOW_DAYS
        if outside:
            return _day(rng.randrange(window + 1, window + 11))
        return _day(rng.randrange(window - 8, window + 1) if rng.random() < 0.5 else rng.randrange(2, window - 8))

    def _product(self, issue: str, charged_cents: int | None = None) -> str:
        """The product the words of `issue` name, else one another issue's words name (but a
        declined checkout's, which is another purchase), else any: one whose line lists believably
        at `charged_cents` where its order is charged that (the world drew the named ones to fit it)."""
        # (a plan the words name is no product: content.PLANS)
        intents = (i.issue_id for i in self.scenario.intents)
        named = {i: p for i, p in zip(intents, self.scenario.products, strict=False) if p in _PRICE_CENTS}
        if named.get(issue):
            return named[issue]
        others = [p for i, p in named.items() if p and "payment_failure" not in (i, issue)]
        if others:
            return others[0]
        # (where the customer mixes up its orders of a product, no other purchase is of that product:
        # it is the one it "bought most recently")
        meant = (
            named.get(self.owner("order_id"), "")
            if self.scenario.meant_order_id and issue != self.owner("order_id")
            else ""
        )
        drawn = self.rng.choice([p for p in content.PRODUCTS if p != meant])
        if charged_cents is None or self._lists_fairly(drawn, charged_cents):
            return drawn
        # (drawn again from a generator of its own, so that no other draw of the records moves)
        rng = random.Random(f"fitting product:{issue}:{self.scenario.record_seed}")
        fitting = [p for p in content.PRODUCTS if p != meant and self._lists_fairly(p, charged_cents)]
        return rng.choice(fitting or [drawn])

    def _lists_fairly(self, product: str, charged_cents: int) -> bool:
        """Whether an order of this ticket's of `product`, charged `charged_cents`, lists it believably."""
        scenario = self.scenario
        return lists_fairly(product, charged_cents, self.issues, scenario.family, scenario.unnoticed_charge)

    def _price_of(self, product: str) -> int:
        return round(_PRICE_CENTS[product] * self.rng.choice((0.9, 1.0, 1.1)))

    def _placed(self, status: str) -> date:
        recent = {"awaiting_payment": (0, 1), "processing": (0, 2), "shipped": (1, 3), "in_transit": (9, 16)}
        low, high = recent.get(status, (12, 60))
        # (as the customer's words time it, though a tenure drawn apart from them may be shorter:
        # the world draws the tenure shown without regard to its facts' dates)
        return _day(self.rng.randrange(low, high))

    def _order(
        self, order_id: str, product: str, total_cents: int, status: str, placed: date, shipping_cents: int = 0
    ) -> Order:
        quantity, unit_cents, shipping = _line(product, total_cents, shipping_cents)
        items = (LineItem(product, quantity, _dollars(unit_cents)),)
        shipped = status not in ("awaiting_payment", "processing")
        tracking = (self.facts.get("tracking_number") if order_id == self.scenario.order_in_question else None) or (
            "1Z" + "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(10))
        )
        carrier = self.rng.choice(CARRIERS) if shipped else ""
        return Order(
            order_id=order_id,
            placed=_iso(placed),
            items=items,
            shipping=_dollars(shipping),
            total=_dollars(total_cents),
            status=status,
            ship_to=self.address,
            carrier=carrier,
            tracking_number=tracking if shipped else "",
            events=self._events(status, placed, carrier) if shipped else (),
            # (the invoice number the customer gives is the order in question's, no other's)
            invoice_number=(self.facts.get("invoice_number") if order_id == self.scenario.order_in_question else None)
            or f"INV-{placed.year}-{self.rng.randrange(10000, 99999)}",
        )

    def _events(self, status: str, placed: date, carrier: str) -> tuple[TrackingEvent, ...]:
        # (an order placed a day or two ago moves faster: no scan is ever after today; audit round 64)
        events = [TrackingEvent(_iso(min(placed + timedelta(days=1), TODAY)), "shipped", f"handed to {carrier}")]
        if status == "shipped":
            return tuple(events)
        left = min(placed + timedelta(days=2), TODAY)
        events.append(TrackingEvent(_iso(left), "in_transit", "arrived at the sorting hub"))
        if status == "in_transit":
            if "delayed_delivery" in self.issues and self.scenario.family != "stalled_in_transit":
                # (the scan's day and the new date it gives are the carrier's: found only by a look-up;
                # a "late" parcel of the family has had no scan since the hub: it is lost)
                held = _day(self.rng.randrange(1, 4))
                expected = held + timedelta(days=self.rng.randrange(3, 7))
                detail = f"held at the sorting hub; new delivery date {_iso(expected)}"
                events.append(TrackingEvent(_iso(held), "delayed", detail))
            # (lost: no scan since the hub, a week and more ago)
        else:
            delivered = min(left + timedelta(days=self.rng.randrange(1, 4)), TODAY)
            left_with = "left with the customer"
            if self.scenario.family == "left_in_safe_place":
                left_with = f"left in a safe place: {self.rng.choice(SAFE_PLACES)}"
            elif self.scenario.family == "already_delivered":
                # (at the address the customer wants it away from: not into its hands; audit round 77)
                left_with = "left at the front door of the address on the order"
            events.append(TrackingEvent(_iso(delivered), "delivered", left_with))
            if status == "returned":
                events.append(
                    TrackingEvent(_iso(min(delivered + timedelta(days=5), TODAY)), "returned", "back at the warehouse")
                )
        return tuple(events)

    def past_orders(self) -> None:
        """Earlier orders, delivered, paid, and now and then refunded: the history a real account has."""
        oldest = min(self.scenario.tenure_days, 700)
        for _ in range(self.rng.randrange(1, 4) if oldest > _PAST_ORDER_DAYS else 0):
            product = self.rng.choice(content.PRODUCTS)
            placed = _day(self.rng.randrange(_PAST_ORDER_DAYS, oldest))
            order = self._order(self._id("ORD"), product, self._price_of(product), "delivered", placed)
            if any(o.order_id == order.order_id for o in self.orders):
                continue
            self.orders.append(order)
            self.payments.append(
                Payment(self._id("PAY"), order.order_id, self.card, order.total, order.placed, "captured", "")
            )
            if self.rng.random() < 0.2:
                # Sent back and refunded: the order shows it returned (audit round 56).
                issued = _iso(placed + timedelta(days=20))
                self.refunds.append(Refund(self._id("REF"), order.order_id, order.total, "issued", issued, issued))
                back = TrackingEvent(_iso(placed + timedelta(days=15)), "returned", "back at the warehouse")
                self.orders[-1] = replace(order, status="returned", events=(*order.events, back))

    def the_other_charges(self) -> None:
        """Where the customer says other recent orders were charged twice too: three or four more
        orders of the last weeks, one charged twice (to refund), the others each a case that only
        looks like it: a second payment only authorised (a hold), a duplicate refunded already, two
        orders of the same thing on one day (two purchases, each paid once), or one plain charge.
        Drawn from a generator of their own, so that no other draw of the records moves."""
        if self.scenario.family != "several_duplicates" or not self.orders:
            return
        rng = random.Random(f"other charges:{self.scenario.record_seed}")
        cases = ["charged_twice", *rng.sample(_LOOKALIKES, rng.choice((2, 3)))]
        rng.shuffle(cases)
        meant = self.orders[0].items[0].product  # (no other order of it: it is the one "bought recently")
        with self._drawing_from(rng):  # (their ids, carriers and tracking from this generator too)
            for case in cases:
                self._other_charge(case, meant, rng)

    def _other_charge(self, case: str, meant: str, rng: random.Random) -> None:
        """One more order of the account whose customer says several were charged twice (_LOOKALIKES)."""
        product = rng.choice([p for p in content.PRODUCTS if p != meant])
        price = round(_PRICE_CENTS[product] * rng.choice((0.9, 1.0, 1.1)))
        placed = _day(rng.randrange(4, 26))
        order = self._order(self._id("ORD"), product, price, "delivered", placed)
        self._pay_for(order)
        if case == "twin":  # (ordered twice by mistake: a second order, paid once too)
            self._pay_for(self._order(self._id("ORD"), product, price, "delivered", placed))
            return
        if case == "plain":
            return
        second = Payment(self._id("PAY"), order.order_id, self.card, order.total, order.placed,
                         "authorised" if case == "held" else "captured", "")  # fmt: skip
        self.payments.append(second)
        if case == "refunded":
            issued = _iso(min(placed + timedelta(days=rng.randrange(1, 3)), TODAY))
            self.refunds.append(Refund(self._id("REF"), order.order_id, second.amount, "issued", issued, issued))

    @contextmanager
    def _drawing_from(self, rng: random.Random) -> Iterator[None]:
        """Draw with `rng` instead of the records' own generator (what the helpers draw: ids,
        carriers, tracking), so that what it adds moves no other draw of the records."""
        own, self.rng = self.rng, rng
        try:
            yield
        finally:
            self.rng = own

    def _pay_for(self, order: Order) -> None:
        self.orders.append(order)
        self.payments.append(
            Payment(self._id("PAY"), order.order_id, self.card, order.total, order.placed, "captured", "")
        )

    def the_earlier_order(self) -> None:
        """Where the customer gives the id of another order than the one it means: that earlier
        order of the same product, delivered months ago (drawn from a generator of its own)."""
        meant = self.scenario.meant_order_id
        if not meant or not self.orders or self.scenario.order_id_mistyped:
            return  # (a mistyped id is no order's)
        given, product = self.facts["order_id"], self.orders[0].items[0].product
        rng = random.Random(f"earlier order:{self.scenario.record_seed}")
        # Months before the order meant (at least three weeks), and after the account was opened
        # where it was opened early enough for that.
        meant_days = days_before_today(self.orders[0].placed)
        first = max(_PAST_ORDER_DAYS, meant_days + 21)
        placed = _day(rng.randrange(first, max(first + 1, min(self.scenario.tenure_days, 400))))
        # (at about the price it lists at in the order meant: the same thing, bought again; at the same
        # price where a little more or less would be a price no one would believe of it)
        meant_price = round(self.orders[0].items[0].unit_price * 100)
        price = round(meant_price * rng.choice((0.95, 1.0, 1.05)))
        price = price if in_band(product, price) else meant_price
        with self._drawing_from(rng):  # (its carrier and tracking from its own generator too)
            order = self._order(given, product, price, "delivered", placed)
        self.orders.append(order)
        pay_id = f"PAY-{rng.randrange(100000, 1000000)}"
        self.payments.append(Payment(pay_id, given, self.card, order.total, order.placed, "captured", ""))

    # --- subscriptions and incidents ----------------------------------------------------------
    def subscriptions(self) -> tuple[Subscription, ...]:
        if "subscription_cancel" not in self.issues and self.rng.random() < 0.6:
            return ()
        plan, price = self.rng.choice(content.PLANS)
        if "subscription_cancel" in self.issues and "annual" in plan:
            # Its customer speaks of a monthly plan about to renew ("not charged for another month"),
            # which a yearly plan renewed last month would contradict.
            plan, price = _CANCELLED_PLAN
        named = self.scenario.products[0] if self.scenario.family == "two_subscriptions" else ""
        if named:
            plan, price = next(p for p in content.PLANS if p[0] == named)
        renewed = self.facts.get("charge_date") if self.owner("charge_date") == "subscription_cancel" else None
        subscription = self._subscription(plan, price, self.rng.randrange(3, 28), renewed)
        if not named:
            return (subscription,)
        # The other plan on the account, which the customer keeps: renewed on a day of its own.
        other, other_price = self.window_rng.choice([p for p in content.PLANS if p[0] != named])
        kept = self._subscription(other, other_price, self.window_rng.randrange(3, 28) if "annual" not in other
                                  else self.window_rng.randrange(30, 300))  # fmt: skip
        return (kept, subscription) if self.window_rng.random() < 0.5 else (subscription, kept)

    def _subscription(self, plan: str, price: int, days_ago: int, renewed: str | None = None) -> Subscription:
        """An active subscription renewed last within one period of its plan (and not before the
        account was opened, or on the day the customer gives), renewing one period after that; its
        last renewal's payment goes on the account."""
        period = 365 if "annual" in plan else 30
        drawn = _day(days_ago)
        last = date.fromisoformat(renewed) if renewed else max(drawn, _day(self.scenario.tenure_days))
        renews = last + timedelta(days=period)
        while renews <= TODAY:  # (a charge date the customer gives from long ago: renewed since, unbilled here)
            renews += timedelta(days=period)
        subscription = Subscription(self._id("SUB"), plan, _dollars(price), "active", _iso(renews))
        self.payments.append(Payment(self._id("PAY"), "", self.card, subscription.price, _iso(last), "captured", ""))
        return subscription

    def incidents(self) -> tuple[Incident, ...]:
        incidents = []
        if "service_outage" in self.issues:
            incidents.append(
                Incident(
                    self._id("INC", 5),
                    "dashboard",
                    "investigating",
                    _iso(TODAY),
                    "dashboard not loading for some customers",
                )
            )
        if self.rng.random() < 0.3:
            service = self.rng.choice(_SERVICES)
            started = _iso(_day(self.rng.randrange(5, 40)))
            incidents.append(Incident(self._id("INC", 5), service, "resolved", started, f"{service} slower than usual"))
        return tuple(incidents)

    def no_capture_on_an_expired_card(self) -> None:
        """A card runs to the end of its month: one declined as expired took no payment in that month
        or after. Where the card did (another order's payment), the decline was the issuer's."""
        expired = [p for p in self.payments if p.decline_reason == "expired_card"]
        if not expired:
            return
        month = min(p.date for p in expired)[:7]
        if any(p.status == "captured" and p.card_last_four == expired[0].card_last_four and p.date[:7] >= month
               for p in self.payments):  # fmt: skip
            self.payments = [
                replace(p, decline_reason="issuer_declined") if p.decline_reason == "expired_card" else p
                for p in self.payments
            ]

    def build(self) -> SystemOfRecord:
        account = self.account()
        self.the_order_in_question()
        self.the_failed_payment()
        self.the_other_charges()
        self.past_orders()
        self.the_earlier_order()
        subscriptions = self.subscriptions()
        self.no_capture_on_an_expired_card()  # (last: every payment drawn, renewals too)
        return SystemOfRecord(
            account=account,
            orders=tuple(self.orders),
            payments=tuple(self.payments),
            refunds=tuple(self.refunds),
            subscriptions=subscriptions,
            incidents=self.incidents(),
        )


def build_records(scenario: Scenario) -> SystemOfRecord:
    """The system of record of `scenario`'s ticket (see the module's docstring)."""
    return _Builder(scenario).build()


# pickle and copy alike on both builds
picklable(
    Device, SignIn, Account, LineItem, TrackingEvent, Order, Payment, Refund, Subscription, Incident, SystemOfRecord
)
