"""The help desk's tools: look-ups and changes on a ticket's system of record, under policy.

A tool call is a name and string arguments. Look-ups read the records as they stand (the
records the world built, with every change made so far in the episode applied); changes add
to the episode's `Desk` (what was changed, and whether the customer's identity was verified)
when policy allows them, and are refused with the reason when it does not. Each call returns a
`ToolResult`: a status, one sentence for a reader, and the structured data it found.

Pure and deterministic: the records are the scenario's (`Scenario.records`), the desk is a
value, and a call never changes either in place.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from supportenv.errors import InvalidActionError
from supportenv.records import picklable
from supportenv.world.system_of_record import TODAY, Order, SystemOfRecord, as_data, days_before_today

LOOK_UP, CHANGE = "look_up", "change"
# What a tool call can end as: done (or found), nothing matches, or policy forbids it as asked.
OK, NOT_FOUND, REFUSED = "ok", "not_found", "refused"
STATUSES = (OK, NOT_FOUND, REFUSED)
MAX_ARGUMENT_CHARS = 200
# Facts the customer can give that, with the account email, prove who it is: something only the
# account holder knows.
IDENTITY_PROOFS = ("card_last_four", "order_id")
MIN_REFUND, MAX_REFUND = 0.01, 1e7  # a refund is a whole number of cents, below any order's total
LOST_AFTER_DAYS = 7  # a parcel with no scan for this long is lost, and may be reshipped
# The order in which a tool result's data lists the keys of any of its objects (the records' own
# order: an order's id before its items, its total before its payments). The wire carries the data
# with sorted keys (ToolResult.data_json); a prompt puts them back in this order, so the same data
# reads the same, and readably, in process and over gRPC. tests/test_tools.py checks every result.
DATA_KEY_ORDER = (
    "account", "customer_id", "name", "email", "tier", "created", "model", "app_version", "last_seen", "when",
    "device", "place", "recognised", "order", "product", "quantity", "unit_price", "payment_id", "subscription_id",
    "plan", "price", "refund_id", "order_id", "placed", "items", "shipping", "total", "card_last_four", "amount",
    "date", "incidents", "incident_id", "service", "status", "identity_verified", "two_factor", "address",
    "failed_sign_ins", "devices", "sign_ins", "orders", "ship_to", "carrier", "tracking_number", "events",
    "invoice_number", "discount_percent",
    "payments", "refunds", "reshipped", "detail", "decline_reason", "subscriptions", "renews", "requested", "issued",
    "started", "summary",
)  # fmt: skip


@dataclass(frozen=True)
class ToolSpec:
    name: str
    kind: str  # LOOK_UP or CHANGE
    arguments: tuple[str, ...]
    cost: float  # in the grade's efficiency, as the other actions' costs
    description: str  # for the prompt and the tool schemas
    needs_verification: bool = False  # refused until verify_identity has verified the customer


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "look_up_customer",
        LOOK_UP,
        ("account_email",),
        0.5,
        "The account with this email: name, tier, status, two-factor, address on file, devices, recent sign-ins, "
        "and its orders of the last two years in brief (id, date placed, items, total, status), the latest first.",
    ),
    ToolSpec(
        "look_up_order",
        LOOK_UP,
        ("order_id",),
        0.5,
        "The order: items, total, status, carrier, tracking events, and its payments and refunds.",
    ),
    ToolSpec(
        "look_up_payments",
        LOOK_UP,
        ("account_email",),
        0.5,
        "Every payment on the account (captured, "
        "authorised and pending, declined with the reason), the latest first, its refunds and its subscriptions.",
    ),
    ToolSpec("check_service_status", LOOK_UP, (), 0.5, "The service's incidents, open and recently resolved."),
    ToolSpec(
        "verify_identity",
        CHANGE,
        (),
        0.5,
        "Marks the customer verified once it has given, in the "
        "conversation, the account email and its card's last four digits or an order id, matching the records.",
    ),
    ToolSpec(
        "issue_refund",
        CHANGE,
        ("order_id", "amount"),
        2.0,
        "Refunds an amount of an order's captured "
        "payment to the original card. Needs the identity verified; at most what was captured and not yet "
        "refunded. Money charged beyond the order's listed total (a duplicate charge, an overcharge) is "
        "returned in full, reshipped or not; any other refund is at most the tier's refund cap (above it, "
        "escalate), and none once the order was reshipped (never both).",
        needs_verification=True,
    ),
    ToolSpec(
        "update_address",
        CHANGE,
        ("order_id", "new_address"),
        2.0,
        "Ships an order to a new address (before "
        "delivery: an order on its way is redirected). Needs the identity verified.",
        needs_verification=True,
    ),
    ToolSpec(
        "cancel_subscription",
        CHANGE,
        ("subscription_id",),
        2.0,
        "Cancels an active subscription: no further renewals. Needs the identity verified.",
        needs_verification=True,
    ),
    ToolSpec(
        "send_password_reset",
        CHANGE,
        ("account_email",),
        1.0,
        "Sends a password reset link to the account's email on file; completing it unlocks a locked account.",
    ),
    ToolSpec(
        "reship_order",
        CHANGE,
        ("order_id",),
        3.0,
        "Sends the order's items again: for a wrong or damaged "
        f"item delivered, or a parcel with no scan for {LOST_AFTER_DAYS} days. Needs the identity verified; "
        "once per order, and not after a refund of it (a duplicate charge or an overcharge refunded leaves it "
        "paid for).",
        needs_verification=True,
    ),
)
TOOLS_BY_NAME = {t.name: t for t in TOOLS}
TOOL_NAMES = tuple(TOOLS_BY_NAME)


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: tuple[tuple[str, str], ...] = ()

    def argument(self, name: str) -> str:
        return next((value for key, value in self.arguments if key == name), "")

    def label(self) -> str:
        return f"{self.name}({','.join(value for _, value in self.arguments)})"


@dataclass(frozen=True)
class Change:
    """One change made to the records: (tool, the record it changed, the value it set)."""

    tool: str
    target: str
    value: str = ""


@dataclass(frozen=True)
class Desk:
    """What the agent has done to the records in this episode."""

    verified: bool = False
    changes: tuple[Change, ...] = ()

    def made(self, tool: str, target: str = "") -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.tool == tool and (not target or c.target == target))

    def refunded(self, order_id: str) -> float:
        return round(sum((float(c.value) for c in self.made("issue_refund", order_id)), 0.0), 2)


@dataclass(frozen=True)
class ToolResult:
    tool: str
    status: str  # one of STATUSES
    message: str  # one sentence for a reader
    data: dict[str, Any]  # what the tool found or did (JSON-able); empty when nothing matched


def tool_call(name: str, **arguments: str) -> ToolCall:
    return validate(ToolCall(name, tuple((k, str(v)) for k, v in arguments.items())))


def validate(call: ToolCall) -> ToolCall:
    """Raise InvalidActionError with a clear message unless the call names a tool and its arguments."""
    spec = TOOLS_BY_NAME.get(call.name)
    if spec is None:
        raise InvalidActionError(f"unknown tool {call.name!r}; expected one of {', '.join(TOOL_NAMES)}")
    if not all(isinstance(key, str) and isinstance(value, str) for key, value in call.arguments):
        raise InvalidActionError(f"{spec.name}'s arguments are names and string values")
    given = [key for key, _ in call.arguments]
    unknown = [key for key in given if key not in spec.arguments]
    if unknown or len(given) != len(set(given)):
        raise InvalidActionError(f"{spec.name} takes {', '.join(spec.arguments) or 'no arguments'}; got {given}")
    missing = [a for a in spec.arguments if not call.argument(a).strip()]
    if missing:
        raise InvalidActionError(f"{spec.name} needs {', '.join(missing)}")
    if any(len(value) > MAX_ARGUMENT_CHARS for _, value in call.arguments):
        raise InvalidActionError(f"tool arguments are at most {MAX_ARGUMENT_CHARS} characters")
    if spec.name == "issue_refund":
        try:
            amount = float(call.argument("amount").strip().lstrip("$").replace(",", ""))
        except ValueError:
            raise InvalidActionError(
                f"issue_refund's amount must be a number, got {call.argument('amount')!r}"
            ) from None
        if not MIN_REFUND - 0.005 < amount < MAX_REFUND:  # NaN fails both
            raise InvalidActionError(f"issue_refund's amount must be from ${MIN_REFUND:.2f} to ${MAX_REFUND:,.0f}")
    return call


def _amount(call: ToolCall) -> float:
    return round(float(call.argument("amount").strip().lstrip("$").replace(",", "")), 2)


def _same(a: str, b: str) -> bool:
    return a.strip().lower() == b.strip().lower()


class _View:
    """The records as they stand after the desk's changes."""

    def __init__(self, records: SystemOfRecord, desk: Desk, refund_cap: float) -> None:
        self.records, self.desk, self.refund_cap = records, desk, refund_cap

    def order(self, order_id: str) -> Order | None:
        return self.records.order(order_id.strip().upper())

    def paid(self, order: Order) -> tuple[float, float]:
        """(captured, refunded) of an order: its captured payments, and its refunds on record and made here."""
        captured = sum((p.amount for p in self.records.payments_for(order.order_id) if p.status == "captured"), 0.0)
        refunded = sum((r.amount for r in self.records.refunds_for(order.order_id)), 0.0) + self.desk.refunded(
            order.order_id
        )
        return captured, refunded

    def order_data(self, order: Order) -> dict[str, Any]:
        data = as_data(order)
        moved = self.desk.made("update_address", order.order_id)
        if moved:
            data["ship_to"] = moved[-1].value
        data["payments"] = [as_data(p) for p in self.records.payments_for(order.order_id)]
        data["refunds"] = [as_data(r) for r in self.records.refunds_for(order.order_id)] + self.new_refunds(
            order.order_id
        )
        data["reshipped"] = bool(self.desk.made("reship_order", order.order_id))
        return data

    def new_refunds(self, order_id: str = "") -> list[dict[str, Any]]:
        """The refunds issued in this episode (of one order, if given), as the records show refunds."""
        return [
            {
                "refund_id": f"REF-D{number}{c.target[-5:]}",  # (D: made at the desk, in this episode)
                "order_id": c.target,
                "amount": float(c.value),
                "status": "pending",
                "requested": TODAY.isoformat(),
                "issued": "",
            }
            for number, c in enumerate(self.desk.made("issue_refund", order_id), 1)
        ]

    def account_data(self) -> dict[str, Any]:
        data = as_data(self.records.account)
        data["identity_verified"] = self.desk.verified
        if self.desk.made("send_password_reset"):
            data["password_reset_sent"] = True
        # Every order on the account, in brief (look_up_order shows one in full): how the desk finds
        # the order a customer describes when the id it gives is another one's.
        data["orders"] = [
            {
                "order_id": o.order_id,
                "placed": o.placed,
                "items": [{"product": i.product, "quantity": i.quantity} for i in o.items],
                "total": o.total,
                "status": o.status,
            }
            for o in sorted(self.records.orders, key=lambda o: o.placed, reverse=True)
        ]
        return data

    def subscriptions_data(self) -> list[dict[str, Any]]:
        cancelled = {c.target for c in self.desk.made("cancel_subscription")}
        return [
            as_data(replace(s, status="cancelled", renews="") if s.subscription_id in cancelled else s)
            for s in self.records.subscriptions
        ]


def look_ups(records: SystemOfRecord, desk: Desk, refund_cap: float) -> dict[str, Any]:
    """All the look-ups can show of the records as `desk` left them: the account, every order in
    full, the payments, refunds and subscriptions, the incidents."""
    view = _View(records, desk, refund_cap)
    return {
        "account": view.account_data(),
        "orders": [view.order_data(o) for o in records.orders],
        "payments": [as_data(p) for p in records.payments],
        "refunds": [as_data(r) for r in records.refunds] + view.new_refunds(),
        "subscriptions": view.subscriptions_data(),
        "incidents": [as_data(i) for i in records.incidents],
    }


def use_tool(
    records: SystemOfRecord, desk: Desk, call: ToolCall, said: dict[str, str], refund_cap: float
) -> tuple[ToolResult, Desk]:
    """Run `call` on the records as `desk` left them. `said` is what the customer has given in
    the conversation (fact name -> value), which verification checks against the records;
    `refund_cap` is the policy's cap for the customer's tier."""
    return run_valid_call(records, desk, validate(call), said, refund_cap)


def run_valid_call(
    records: SystemOfRecord, desk: Desk, call: ToolCall, said: dict[str, str], refund_cap: float
) -> tuple[ToolResult, Desk]:
    """`use_tool` for a call already validated (an episode's action was, when it was taken)."""
    spec = TOOLS_BY_NAME[call.name]
    if spec.needs_verification and not desk.verified:
        # Before any look-up of what the call names, so that an impostor learns nothing of the records.
        message = f"Refused: {call.name} needs the customer's identity verified first."
        return _result(call, REFUSED, message), desk
    return _HANDLERS[spec.name](_View(records, desk, refund_cap), call, said)


def _result(call: ToolCall, status: str, message: str, data: dict[str, Any] | None = None) -> ToolResult:
    return ToolResult(call.name, status, message, data or {})


def _look_up_customer(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    if not _same(call.argument("account_email"), view.records.account.email):
        return _result(call, NOT_FOUND, "No account has that email."), view.desk
    return _result(call, OK, "Found the account.", {"account": view.account_data()}), view.desk


def _look_up_order(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    order = view.order(call.argument("order_id"))
    if order is None:
        return _result(call, NOT_FOUND, "No order has that id on this account."), view.desk
    return _result(call, OK, f"Found order {order.order_id}.", {"order": view.order_data(order)}), view.desk


def _look_up_payments(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    if not _same(call.argument("account_email"), view.records.account.email):
        return _result(call, NOT_FOUND, "No account has that email."), view.desk
    records = view.records
    data = {
        # (the latest first; of one day, the later attempt first, as the records list them in order)
        "payments": [
            as_data(p) for _, p in sorted(enumerate(records.payments), key=lambda ip: (ip[1].date, ip[0]), reverse=True)
        ],
        "refunds": [as_data(r) for r in records.refunds] + view.new_refunds(),
        "subscriptions": view.subscriptions_data(),
    }
    return _result(call, OK, f"{len(records.payments)} payments on the account.", data), view.desk


def _check_service_status(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    incidents = [as_data(i) for i in view.records.incidents]
    open_ = [i for i in incidents if i["status"] != "resolved"]
    message = f"{len(open_)} open incident(s)." if open_ else "All services are running normally."
    return _result(call, OK, message, {"incidents": incidents}), view.desk


_PROOF_WORDS = {"card_last_four": "card's last four digits", "order_id": "order id"}


def _verify_identity(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    if view.desk.verified:
        return _result(call, OK, "The customer is already verified.", {"identity_verified": True}), view.desk
    records = view.records
    email = said.get("account_email", "")
    proofs = {
        "card_last_four": {p.card_last_four for p in records.payments},
        "order_id": {o.order_id for o in records.orders},
    }
    proven = [name for name in IDENTITY_PROOFS if said.get(name, "").strip().upper() in proofs[name]]
    if not _same(email, records.account.email) or not proven:
        missing = "the account email" if not _same(email, records.account.email) else ""
        proof = "" if proven else "the card's last four digits or an order id"
        needs = " and ".join(x for x in (missing, proof) if x)
        message = f"Not verified: the customer has not yet given {needs} matching the records."
        given = [_PROOF_WORDS[name] for name in IDENTITY_PROOFS if said.get(name, "").strip()]
        if given and not proven and not missing:
            # (what it gave, named, so that the desk knows it was given and does not match: not merely missing)
            if len(given) > 1:
                message = (
                    f"Not verified: neither the {given[1]} nor the {given[0]} the customer gave is on this account."
                )
            else:
                message = f"Not verified: the {given[0]} the customer gave is not on this account."
        return _result(call, REFUSED, message, {"identity_verified": False}), view.desk
    desk = replace(view.desk, verified=True)
    return _result(call, OK, "The customer is verified.", {"identity_verified": True}), desk


def _no_such_order(call: ToolCall) -> ToolResult:
    """The result of a change that names an order the account does not have."""
    return _result(call, NOT_FOUND, "No order has that id on this account.")


def _changed(
    view: _View, call: ToolCall, target: str, value: str, message: str, data: dict[str, Any]
) -> tuple[ToolResult, Desk]:
    desk = replace(view.desk, changes=(*view.desk.changes, Change(call.name, target, value)))
    return _result(call, OK, message, data), desk


def _issue_refund(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    order = view.order(call.argument("order_id"))
    if order is None:
        return _no_such_order(call), view.desk
    amount = _amount(call)
    captured, refunded = view.paid(order)
    left = round(captured - refunded, 2)
    if amount > left + 0.005:
        why = f"only ${left:,.2f} of it is left to refund" if left > 0 else "it has nothing left to refund"
        return _result(call, REFUSED, f"Refused: ${amount:,.2f} is more than the order allows ({why})."), view.desk
    # Money taken beyond the order's listed total (a duplicate charge, an overcharge) is an error,
    # returned in full; the cap bounds only the rest, and a reshipped order has no rest (never both,
    # as a refunded order is not reshipped).
    overcharge = max(0.0, round(captured - order.total - refunded, 2))
    if view.desk.made("reship_order", order.order_id) and amount > overcharge + 0.005:
        beyond = f" beyond the ${overcharge:,.2f} overcharged" if overcharge > 0 else ""
        message = f"Refused: order {order.order_id} was reshipped, so ${amount:,.2f}{beyond} cannot be refunded too."
        return _result(call, REFUSED, message), view.desk
    cap = view.refund_cap
    if amount - overcharge > cap + 0.005:
        tier = view.records.account.tier
        beyond = f" beyond the ${overcharge:,.2f} overcharged" if overcharge > 0 else ""
        message = f"Refused: ${amount:,.2f}{beyond} is above the {tier} refund cap of ${cap:,.0f}; escalate it."
        return _result(call, REFUSED, message), view.desk
    card = view.records.payments_for(order.order_id)[0].card_last_four
    message = (
        f"Refunded ${amount:,.2f} of order {order.order_id} to the card ending {card}; "
        "it reaches the card in 3-5 business days."
    )
    result, desk = _changed(view, call, order.order_id, f"{amount:.2f}", message, {})
    return replace(result, data={"order": _View(view.records, desk, view.refund_cap).order_data(order)}), desk


def _update_address(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    order = view.order(call.argument("order_id"))
    if order is None:
        return _no_such_order(call), view.desk
    if order.status not in ("processing", "shipped", "in_transit"):
        message = f"Refused: order {order.order_id} is {order.status}; its address can no longer change."
        return _result(call, REFUSED, message), view.desk
    how = "will ship" if order.status == "processing" else "is being redirected"
    address = call.argument("new_address").strip()
    return _changed(view, call, order.order_id, address, f"Order {order.order_id} {how} to {address}.", {})


def _cancel_subscription(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    wanted = call.argument("subscription_id").strip().upper()
    subscription = next((s for s in view.records.subscriptions if s.subscription_id == wanted), None)
    if subscription is None:
        return _result(call, NOT_FOUND, "No subscription has that id on this account."), view.desk
    if view.desk.made("cancel_subscription", wanted) or subscription.status != "active":
        return _result(call, REFUSED, f"Refused: subscription {wanted} is already cancelled."), view.desk
    message = f"Cancelled {subscription.plan} ({wanted}): no further renewals will be billed."
    return _changed(view, call, wanted, "", message, {})


def _send_password_reset(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    email = view.records.account.email
    if not _same(call.argument("account_email"), email):
        return _result(call, NOT_FOUND, "No account has that email."), view.desk
    return _changed(view, call, email, "", f"Sent a password reset link to {email}.", {})


def _reship_order(view: _View, call: ToolCall, said: dict[str, str]) -> tuple[ToolResult, Desk]:
    order = view.order(call.argument("order_id"))
    if order is None:
        return _no_such_order(call), view.desk
    if view.desk.made("reship_order", order.order_id):
        return _result(call, REFUSED, f"Refused: order {order.order_id} was already reshipped."), view.desk
    # (a refund of money taken beyond the order's total, a duplicate charge or an overcharge, leaves it paid for)
    captured, refunded = view.paid(order)
    if refunded > max(0.0, captured - order.total) + 0.005:
        return _result(call, REFUSED, f"Refused: order {order.order_id} was refunded."), view.desk
    last_scan = order.events[-1].when if order.events else order.placed
    lost = order.status == "in_transit" and days_before_today(last_scan) >= LOST_AFTER_DAYS
    if order.status != "delivered" and not lost:
        message = f"Refused: order {order.order_id} is {order.status}, not delivered or lost."
        return _result(call, REFUSED, message), view.desk
    return _changed(view, call, order.order_id, "", f"Order {order.order_id} is being sent again.", {})


_HANDLERS = {
    "look_up_customer": _look_up_customer,
    "look_up_order": _look_up_order,
    "look_up_payments": _look_up_payments,
    "check_service_status": _check_service_status,
    "verify_identity": _verify_identity,
    "issue_refund": _issue_refund,
    "update_address": _update_address,
    "cancel_subscription": _cancel_subscription,
    "send_password_reset": _send_password_reset,
    "reship_order": _reship_order,
}
assert set(_HANDLERS) == set(TOOL_NAMES)


picklable(ToolSpec, ToolCall, Change, Desk, ToolResult)  # pickle and copy alike on both builds
