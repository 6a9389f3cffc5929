"""The figures the desk tells the customer, and those nothing the desk was given holds.

A figure is a sum of money ("$45.99"), a card's last four digits ("the card ending 1784"), a
record's id ("ORD-472977", "REF-D172977") or a tracking number ("1ZUE6EF92CRJ"). One the records
(as the desk's changes left them), the customer's own words and the desk's rules do not hold is
misquoted or made up: "the card ending 7184" for 1784 sends the customer to look at the wrong
card. The expert task's grade charges each (graders.c_communication), and the customer corrects
the card it knows (episode._card_corrected).

Money is checked leniently, since a desk explains sums it works out: a figure is founded when it is
an amount the records hold or the customer or the rules state, the sum or difference of two of them,
or one worked out from one record (an order's items together, a line's price times its quantity, a
discount's share, all the payments of an order, a plan's price for some months, all the desk's
refunds); written without cents ("about $40"), within a dollar of one of those. What it cannot catch:
a figure of another record than the one meant (another order's id), or one written in a form it does
not read ("card 7184", "53.42 USD").

Pure: everything comes from the arguments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from supportenv.casework import paid_for
from supportenv.memo import cached_by_text
from supportenv.tools import Desk, look_ups
from supportenv.world.system_of_record import SystemOfRecord

_MONEY_RE = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d{1,2})?(?![\d,]*\d)")
# A sum in the customer's words or the rules that is not marked "$": only one with cents ("45.99"), not
# every count of days or date part, which summed with an amount would let nearly any amount hold.
_CENTS_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d{2})(?![\w]|\.\d)")
# A card named, then its last four digits: "the card ending in 1784", "your Visa ****1784", "card ending
# 1784", "the last four digits of your card, 1784"; never a year ("your card ... ends on 2026-12-04").
_DIGITS = r"(\d{4})(?!\d|[-/.]\d)"
_CARD_RE = re.compile(
    rf"\b(?:card|visa|mastercard|amex)\b[^.?!\d]{{0,30}}?(?:\bending\b|\bends\b|\blast (?:four|4)\b|[*•·x]{{2,}})"
    rf"[^.?!\d]{{0,15}}?{_DIGITS}"
    rf"|\blast (?:four|4)(?: digits)? (?:of|on) (?:the|your) card\b[^.?!\d]{{0,10}}?{_DIGITS}",
    re.IGNORECASE,
)
# An id as the records write one: a capital prefix and a dash, with digits ("ORD-472977", "INV-2026-79877",
# "KB-PAY-01"; one whose prefix no record uses, "UTC-5", is no record's id); and a tracking number.
_ID_RE = re.compile(r"\b[A-Z]{2,4}(?:-[A-Z0-9]+)+\b")
_TRACKING_RE = re.compile(r"\b1Z[A-Z0-9]{10}\b")
_MONEY_FIELDS = frozenset(("unit_price", "shipping", "total", "amount", "price"))
_CENT = 0.005 + 1e-9  # (a half cent either way: a sum worked out to the half cent rounds up or down)
_ROUNDED = 1.0  # a sum written without cents may round one to the dollar
_MONTHS_IN_A_YEAR = 12


class Figure(NamedTuple):
    kind: str  # "money", "card", "id"
    text: str  # as the desk wrote it: "$45.99", "card ending 7184", "ORD-472977"
    value: str  # what is compared: "45.99", "7184", "ORD-472977"


def figures_in(text: str) -> list[Figure]:
    """Every figure a message states, by kind: sums of money, card endings, ids."""
    out = [Figure("money", m.group(0), _money_value(m)) for m in _MONEY_RE.finditer(text)]
    out += [Figure("card", f"the card ending {ending}", ending) for ending in card_endings_in(text)]
    ids = [m.group(0) for pattern in (_ID_RE, _TRACKING_RE) for m in pattern.finditer(text)]
    return out + [Figure("id", i, i) for i in ids if any(c.isdigit() for c in i)]


def _money_value(match: re.Match[str]) -> str:
    """A sum as compared: "1234.50" for "$1,234.50", "40" for "$40" (no cents: it may round to the dollar)."""
    return match.group(1).replace(",", "") + (match.group(2) or "")


@cached_by_text  # (read on every answer of an expert episode)
def card_endings_in(text: str) -> tuple[str, ...]:
    """The card endings a message states ("the card ending 1784")."""
    return tuple(next(g for g in m.groups() if g) for m in _CARD_RE.finditer(text))


class Known:
    """What the desk was given to quote from: the records as its changes left them, the
    customer's words and the desk's rules."""

    def __init__(
        self, records: SystemOfRecord | None, desk: Desk, refund_cap: float, words: Iterable[str], prefixes: str = ""
    ) -> None:
        """`records` None: the customer may hear nothing the records hold (it is not verified), so only its
        own words and the rules found a figure, and every id of a record's kind (`prefixes`) is checked."""
        words = " ".join(words)
        data = look_ups(records, desk, refund_cap) if records is not None else {}
        text = f"{json.dumps(data)} {words}"
        self.ids = set(_ID_RE.findall(text)) | set(_TRACKING_RE.findall(text))
        self.id_prefixes = {i.split("-", 1)[0] for i in (*self.ids, *_ID_RE.findall(prefixes)) if "-" in i}
        self.cards = {p.card_last_four for p in records.payments} if records is not None else set(_digits_in(words))
        said = {_amount(m) for pattern in (_MONEY_RE, _CENTS_RE) for m in pattern.finditer(words)}
        derived = _derived(records, desk) if records is not None else set()
        base = sorted(set(_money_in(data)) | said | derived)
        self.money = set(base)
        self.money |= {a + b for i, a in enumerate(base) for b in base[i:]}
        self.money |= {abs(a - b) for i, a in enumerate(base) for b in base[i + 1 :]}

    def holds(self, figure: Figure) -> bool:
        if figure.kind == "card":
            return figure.value in self.cards
        if figure.kind == "id":
            prefix = figure.value.split("-", 1)[0]
            return figure.value in self.ids or (not figure.value.startswith("1Z") and prefix not in self.id_prefixes)
        value = float(figure.value)
        slack = _CENT if "." in figure.value else _ROUNDED
        return any(abs(value - known) <= slack for known in self.money)


def unfounded(known: Known, messages: Iterable[str]) -> list[str]:
    """The figures the messages state that nothing known holds, each once, as written."""
    out: dict[str, None] = {}
    for text in messages:
        for figure in figures_in(text):
            if not known.holds(figure):
                out[figure.text] = None
    return list(out)


def _digits_in(words: str) -> list[str]:
    """Every four digits the words hold (a card's ending the customer gave, in whatever form)."""
    return re.findall(r"(?<!\d)\d{4}(?!\d)", words)


def _amount(match: re.Match[str]) -> float:
    return float(match.group(1).replace(",", "") + (match.group(2) or ""))


def _money_in(data: Any, key: str = "") -> Iterable[float]:
    """The sums of money in look-up data: its prices, totals, amounts and fees."""
    if isinstance(data, dict):
        for name, value in data.items():
            yield from _money_in(value, name)
    elif isinstance(data, list | tuple):
        for value in data:
            yield from _money_in(value, key)
    elif key in _MONEY_FIELDS and isinstance(data, int | float) and not isinstance(data, bool):
        yield float(data)


def _derived(records: SystemOfRecord, desk: Desk) -> set[float]:
    """Sums a desk works out from the records: an order's items together, a line's price times its quantity,
    the discount's share of each and what is left once it is off (unrounded: within half a cent holds),
    what was paid for each line (casework.paid_for), all an order's or the account's payments together, a
    plan's price for each month of a year, and every refund the desk made together."""
    out = {sum(float(c.value) for c in desk.made("issue_refund")), sum(p.amount for p in records.payments)}
    for order in records.orders:
        lines = [item.unit_price * item.quantity for item in order.items]
        for price in (*(item.unit_price for item in order.items), *lines, sum(lines)):
            out |= {price, price * order.discount_percent / 100, price * (100 - order.discount_percent) / 100}
        out |= {paid_for(order, item) for item in order.items}
        out.add(sum(p.amount for p in records.payments_for(order.order_id)))
    for plan in records.subscriptions:
        out |= {plan.price * months for months in range(2, _MONTHS_IN_A_YEAR + 1)}
    return out
