"""The figures the desk tells the customer, and those nothing the desk was given holds.

A figure is a sum of money ("$45.99"), a card's last four digits ("the card ending 1784"), a
record's id ("ORD-472977", "REF-D172977") or a tracking number ("1ZUE6EF92CRJ"). One the records
(as the desk's changes left them), the customer's own words and the desk's rules do not hold is
misquoted or made up: "the card ending 7184" for 1784 sends the customer to look at the wrong
card. The expert task's grade charges each (graders.c_communication), and the customer corrects
the card it knows (episode._card_corrected).

Money is checked leniently, since a desk explains sums it works out: a figure is founded when it is
an amount the records or the words hold, the sum or difference of two of them, a line's price
times its quantity, a discount's share, or all the desk's refunds together; written without cents
("about $40"), within a dollar of one of those.

Pure: everything comes from the arguments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from supportenv.tools import Desk, look_ups
from supportenv.world.system_of_record import SystemOfRecord

_MONEY_RE = re.compile(r"\$\s?(\d{1,3}(?:,\d{3})+|\d+)(\.\d{1,2})?(?![\d,]*\d)")
_NUMBER_RE = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d{1,2})?(?![\w]|\.\d)")
# "the card ending in 1784", "ends with 1784", "the last four digits of your card, 1784", "Visa ****1784",
# in a sentence that names a card
_CARD_RE = re.compile(
    r"\b(?:ending|ends)\b[^.\d]{0,12}?(\d{4})\b|\blast (?:four|4)\b[^.\d]{0,30}?(\d{4})\b"
    r"|(?:[*•]{2,}|\bx{2,})\s*(\d{4})\b",
    re.IGNORECASE,
)
_CARD_WORD_RE = re.compile(r"\b(?:card|visa|mastercard|amex|debit|credit)\b", re.IGNORECASE)
# An id as the records write one: a capital prefix and a dash, with digits ("ORD-472977",
# "INV-2026-79877", "KB-PAY-01"); and a tracking number.
_ID_RE = re.compile(r"\b[A-Z]{2,4}(?:-[A-Z0-9]+)+\b")
_TRACKING_RE = re.compile(r"\b1Z[A-Z0-9]{10}\b")
_SENTENCE_RE = re.compile(r"(?<=[.!?;])\s+|\n+")
_CENT = 0.005
_ROUNDED = 1.0  # a sum written without cents may round one to the dollar


class Figure(NamedTuple):
    kind: str  # "money", "card", "id"
    text: str  # as the desk wrote it: "$45.99", "card ending 7184", "ORD-472977"
    value: str  # what is compared: "45.99", "7184", "ORD-472977"


def figures_in(text: str) -> list[Figure]:
    """Every figure a message states, in order."""
    out = []
    for match in _MONEY_RE.finditer(text):
        out.append(Figure("money", match.group(0), match.group(1).replace(",", "") + (match.group(2) or "")))
    for sentence in _SENTENCE_RE.split(text):
        if not _CARD_WORD_RE.search(sentence):
            continue
        for match in _CARD_RE.finditer(sentence):
            digits = next(g for g in match.groups() if g)
            out.append(Figure("card", f"the card ending {digits}", digits))
    for pattern in (_ID_RE, _TRACKING_RE):
        out.extend(
            Figure("id", m.group(0), m.group(0)) for m in pattern.finditer(text) if any(c.isdigit() for c in m.group(0))
        )
    return out


def card_endings_in(text: str) -> list[str]:
    """The card endings a message states ("the card ending 1784")."""
    return [f.value for f in figures_in(text) if f.kind == "card"]


class Known:
    """What the desk was given to quote from: the records as its changes left them, the
    customer's words and the desk's rules."""

    def __init__(
        self, records: SystemOfRecord, desk: Desk, refund_cap: float, words: Iterable[str], own_card: str = ""
    ) -> None:
        # (`own_card`: the card the customer gave, which an impostor's is not on record; not read from its
        # words, which echo a card it puts right: "mine ends in 1784, not 7184")
        words = tuple(words)
        data = look_ups(records, desk, refund_cap)
        text = " ".join((json.dumps(data), *words))
        self.ids = set(_ID_RE.findall(text)) | set(_TRACKING_RE.findall(text))
        self.cards = {p.card_last_four for p in records.payments} | ({own_card} if own_card else set())
        amounts = set(_numbers_in(data)) | {_amount(m) for m in _NUMBER_RE.finditer(" ".join(words))}
        amounts |= _derived(records, desk)
        base = sorted(amounts)
        self.money = {round(a, 2) for a in base}
        self.money |= {round(a + b, 2) for i, a in enumerate(base) for b in base[i:]}
        self.money |= {round(abs(a - b), 2) for i, a in enumerate(base) for b in base[i + 1 :]}

    def holds(self, figure: Figure) -> bool:
        if figure.kind == "card":
            return figure.value in self.cards
        if figure.kind == "id":
            return figure.value in self.ids
        value = float(figure.value)
        slack = _CENT if "." in figure.value else _ROUNDED
        return any(abs(value - known) < slack for known in self.money)


def unfounded(known: Known, messages: Iterable[str]) -> list[str]:
    """The figures the messages state that nothing known holds, each once, as written."""
    out: dict[str, None] = {}
    for text in messages:
        for figure in figures_in(text):
            if not known.holds(figure):
                out[figure.text] = None
    return list(out)


def _amount(match: re.Match[str]) -> float:
    return float(match.group(1).replace(",", "") + (match.group(2) or ""))


def _numbers_in(data: Any) -> Iterable[float]:
    if isinstance(data, bool):
        return
    if isinstance(data, int | float):
        yield float(data)
    elif isinstance(data, dict):
        for value in data.values():
            yield from _numbers_in(value)
    elif isinstance(data, list | tuple):
        for value in data:
            yield from _numbers_in(value)


def _derived(records: SystemOfRecord, desk: Desk) -> set[float]:
    """Sums a desk works out from one record: a line's price times its quantity, the discount's
    share of an item or a line and what is left once it is off, and every refund made together."""
    out = {round(sum(float(c.value) for c in desk.made("issue_refund")), 2)}
    for order in records.orders:
        for item in order.items:
            for price in (item.unit_price, item.unit_price * item.quantity):
                out |= {price, price * order.discount_percent / 100, price * (100 - order.discount_percent) / 100}
    return out
