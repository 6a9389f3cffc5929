"""The support world's vocabulary and its typed catalog: categories, tiers,
departments, facts, policy variants, knowledge-base articles and issue types.

The words themselves (templates, articles, replies) live in `content.py`; this
module gives them types and checks them once at import."""

from __future__ import annotations

from dataclasses import dataclass

from supportenv import content
from supportenv.records import picklable

CATEGORIES = ("billing", "delivery", "refund", "account", "technical", "general")
PRIORITIES = ("low", "medium", "high", "urgent")
# How much the problem holds the customer up, as its words say (content.IMPACT_LINES): it alone
# sets the priority (ticket_priority), so a triage must read the words to get it.
IMPACTS = ("blocking", "soon", "normal", "can_wait")
_PRIORITY_OF_IMPACT = {"blocking": "urgent", "soon": "high", "normal": "medium", "can_wait": "low"}
TIERS = ("regular", "premium", "enterprise")
DEPARTMENTS = ("billing", "logistics", "technical", "accounts", "security", "enterprise_success")
SENTIMENT_LABELS = ("angry", "frustrated", "neutral", "satisfied")
PERSONAS = ("terse", "verbose", "angry", "polite", "confused")
ESCALATION_RULES = ("never", "always", "over_refund_cap", "enterprise")

# The eight actions of the source designs (supportenv.actions builds and checks them).
ACTION_KINDS = (
    "classify_issue",
    "ask_for_more_info",
    "respond_with_solution",
    "suggest_knowledge_base",
    "assign_department",
    "escalate_to_human",
    "request_callback",
    "mark_resolved",
)
# A call of one of the help desk's tools (supportenv.tools): allowed only by the tasks that list it.
TOOL_KIND = "use_tool"
# Dollars charged per paid action (second source design).
ACTION_COSTS = {
    "suggest_knowledge_base": 1.0,
    "assign_department": 5.0,
    "request_callback": 10.0,
    "escalate_to_human": 15.0,
}

# Facts an agent may ask for, and the words a free-text question may use for each.
FACT_SYNONYMS: dict[str, tuple[str, ...]] = {
    "order_id": ("order id", "order number", "order #", "order no"),
    "amount": ("amount", "how much", "price", "sum", "total"),
    "card_last_four": ("last four", "last 4", "card number", "card ending"),
    "account_email": ("email", "e-mail", "account address", "login"),
    "error_code": ("error code", "error message", "status code", "what error"),
    "tracking_number": ("tracking", "tracking number", "shipment number"),
    # (not "platform": "I'm sorry the platform is down" is the customer's word for the service)
    "device_model": ("device", "phone model", "which phone", "what phone"),
    "charge_date": ("date of the charge", "charge date", "when were you charged", "which date"),
    "app_version": ("app version", "version of the app", "which version", "build number"),
    "invoice_number": ("invoice number", "invoice id", "invoice #", "bill number"),
    "new_address": ("new address", "new delivery address", "correct address", "address to send", "send it to"),
}
REQUESTABLE_FIELDS = tuple(FACT_SYNONYMS)
# The fact whose presence verifies the customer's identity.
IDENTITY_FACT = "account_email"

# Templates [0, TRAIN_TEMPLATES) are used by every split; the rest only by `test`.
TRAIN_TEMPLATES = 6


@dataclass(frozen=True)
class PolicyVariant:
    name: str
    refund_caps: tuple[tuple[str, float], ...]  # (tier, dollars)

    def refund_cap(self, tier: str) -> float:
        return dict(self.refund_caps)[tier]


POLICY_VARIANTS = {
    "standard": PolicyVariant("standard", (("regular", 100.0), ("premium", 300.0), ("enterprise", 1000.0))),
    # Held out: generated only for the test split, to measure generalisation to new policy.
    "strict_caps": PolicyVariant("strict_caps", (("regular", 50.0), ("premium", 150.0), ("enterprise", 500.0))),
}
HELD_OUT_POLICY_VARIANTS = ("strict_caps",)


@dataclass(frozen=True)
class Article:
    article_id: str
    title: str
    keywords: tuple[str, ...]
    steps: tuple[str, ...]


@dataclass(frozen=True)
class IssueType:
    """One kind of problem: what it is, what the agent needs and what policy requires."""

    issue_id: str
    category: str
    title: str
    required_facts: tuple[str, ...]
    extra_facts: tuple[str, ...]  # facts this customer knows but the case does not need
    article_id: str
    department: str
    escalation: str  # one of ESCALATION_RULES
    identity_required: bool
    solution_phrases: tuple[str, ...]  # a correct answer contains at least one
    templates: tuple[str, ...]

    def knows(self, fact: str) -> bool:
        """Whether this issue's customer knows `fact` (one the case needs or one it does not)."""
        return fact in self.required_facts or fact in self.extra_facts


ARTICLES: tuple[Article, ...] = tuple(Article(a, t, tuple(k), tuple(s)) for a, t, k, s in content.ARTICLES)
ARTICLES_BY_ID = {a.article_id: a for a in ARTICLES}

ISSUE_TYPES: tuple[IssueType, ...] = tuple(
    IssueType(
        issue_id=d["issue_id"],
        category=d["category"],
        title=d["title"],
        # Identity checks need the account email, so it is always among the required facts.
        required_facts=tuple(d["required_facts"])
        + ((IDENTITY_FACT,) if d["identity_required"] and IDENTITY_FACT not in d["required_facts"] else ()),
        extra_facts=tuple(
            f
            for f in d["extra_facts"]
            if f not in d["required_facts"] and not (d["identity_required"] and f == IDENTITY_FACT)
        ),
        article_id=d["article"],
        department=d["department"],
        escalation=d["escalation"],
        identity_required=bool(d["identity_required"]),
        solution_phrases=tuple(p.lower() for p in d["solution_phrases"]),
        templates=tuple(d["templates"]),
    )
    for d in content.ISSUES
)
ISSUE_TYPES_BY_ID = {t.issue_id: t for t in ISSUE_TYPES}
ISSUE_TYPE_IDS = tuple(ISSUE_TYPES_BY_ID)
# What each article needs before it can be applied: the facts of the issue it is written for.
ARTICLE_NEEDS: dict[str, tuple[str, ...]] = {
    a.article_id: next((i.required_facts for i in ISSUE_TYPES if i.article_id == a.article_id), ()) for a in ARTICLES
}
# The category each article is filed under: its issue's, or for the articles written for no
# issue, the one its id names (KB-BIL-06 is billing's).
_CATEGORY_OF_PREFIX = {
    "PAY": "billing",
    "BIL": "billing",
    "DEL": "delivery",
    "REF": "refund",
    "ACC": "account",
    "SEC": "account",
    "TEC": "technical",
    "GEN": "general",
}
ARTICLE_CATEGORY: dict[str, str] = {
    a.article_id: next(
        (i.category for i in ISSUE_TYPES if i.article_id == a.article_id), _CATEGORY_OF_PREFIX[a.article_id[3:6]]
    )
    for a in ARTICLES
}


def ticket_priority(impact: str) -> str:
    """The policy's priority of a ticket whose customer states `impact`: urgent when the problem
    stops its work or must be sorted today, high when it must be sorted within a day or two (or by
    the end of the week), low when it can wait, medium when the customer says nothing of it."""
    return _PRIORITY_OF_IMPACT[impact]


def stated_impact(message: str) -> str:
    """The impact the customer's words state (catalog.IMPACTS; "normal" when they say nothing of it)."""
    text = message.lower()
    for impact in ("can_wait", "soon", "blocking"):  # "not urgent" before anything urgent-sounding
        if any(cue in text for cue in content.IMPACT_CUES[impact]):
            return impact
    return "normal"


def _issues_with(escalation: str) -> str:
    return ", ".join(f"{i.issue_id} (to {i.department})" for i in ISSUE_TYPES if i.escalation == escalation)


def policy_rules(variant: PolicyVariant) -> tuple[str, ...]:
    """The support policy as the agent reads it, written from the same catalog data the
    episode enforces (escalation rules, departments, identity checks, refund caps), so no
    rule is enforced that is not stated here."""
    caps = ", ".join(f"{tier} ${cap:.0f}" for tier, cap in variant.refund_caps)
    identity = ", ".join(i.issue_id for i in ISSUE_TYPES if i.identity_required)
    return (
        "Classify the ticket (category, issue type and priority) before answering it.",
        "Priority, from what the customer says of any of its issues: urgent when it stops their work or must be "
        "sorted today; high when it must be sorted within a day or two or by the end of the week; low when they say "
        "it can wait; medium when they say nothing of it.",
        "Before answering or escalating an issue, gather the facts its knowledge-base article needs (each article "
        "lists them).",
        f"Verify identity (have the account email) before answering or escalating these issues: {identity}.",
        "Always escalate these to a human and route them to the department named (either may come first): "
        f"{_issues_with('always')}.",
        f"For enterprise customers, escalate and route these: {_issues_with('enterprise')}.",
        "Refunds whose amount (the amount field) is above the tier's cap must be escalated to a human and routed: "
        f"{_issues_with('over_refund_cap')}; caps: {caps}.",
        "With several issues to escalate, route to the first one's department.",
        "Answer every other issue yourself: do not escalate or transfer what you can solve.",
        "Callbacks are only for premium and enterprise customers, and help only when the case is escalated to a "
        "specialist (who calls).",
        "Send a knowledge-base article only for an issue still open (free in the grade, but no answer by itself); "
        "one for an issue already answered or handed over adds cost and no help.",
        'Be polite, in words the customer can read (thanks, an apology, please, "I understand", "happy to '
        'help", "glad to", "of course", "let me know", ...); never blame the customer.',
    )


# The issues whose change needs the customer verified first (a password reset goes to the email on file).
VERIFIED_CHANGE_ISSUES = (
    "double_charge",
    "wrong_amount",
    "refund_request",
    "lost_package",
    "address_change",
    "subscription_cancel",
)
# The expert task's tickets are about something the system of record holds: a change it needs
# (supportenv.casework) or a state it bears out (a refund on its way, a declined card, a late parcel).
RECORD_ISSUES = (*VERIFIED_CHANGE_ISSUES, "account_locked", "refund_status", "payment_failure", "delayed_delivery")
# The expert task's judgement families: the claim of the ticket's first issue, as the customer
# makes it, disagrees with what the records show. Nothing is to change where the records answer
# the claim (a "double charge" that is one charge and an authorisation that will drop, or whose
# duplicate was refunded already; a "lost" parcel the carrier left in a safe place, or one last
# scanned days ago, not a week; a refund asked for that was issued already, or for an order
# delivered outside the return window; an "overcharge" that is the order's shipping fee; an
# address to change on an order delivered already; a "failed" checkout whose last attempt went
# through): the customer is told what the records show.
# The CHANGE_FAMILIES still need a change, but not the one the claim implies: other orders were
# charged twice too (each order's duplicate not yet refunded is refunded, the lookalikes not), part of the order
# was refunded before (refund what is left), one item of several goes back (refund what was paid
# for it, after the order's discount), a return the warehouse received was never refunded
# (refund it, though the customer only asks where the money is), a "late" parcel has had no scan
# for a week (it is lost: reship it), the account has two subscriptions (cancel only the one the
# customer names).
CLAIM_FAMILIES = {
    "double_charge": ("pending_authorisation", "duplicate_already_refunded", "several_duplicates"),
    "lost_package": ("left_in_safe_place", "not_lost_yet"),
    "refund_request": ("refund_already_issued", "outside_return_window", "partly_refunded", "item_of_several"),
    "wrong_amount": ("shipping_not_overcharge",),
    "address_change": ("already_delivered",),
    "refund_status": ("refund_never_issued",),
    "delayed_delivery": ("stalled_in_transit",),
    "subscription_cancel": ("two_subscriptions",),
    "payment_failure": ("paid_on_retry",),
}
ALL_FAMILIES = tuple(f for families in CLAIM_FAMILIES.values() for f in families)
CHANGE_FAMILIES = (
    "several_duplicates",
    "partly_refunded",
    "item_of_several",
    "refund_never_issued",
    "stalled_in_transit",
    "two_subscriptions",
)
HELD_OUT_FAMILIES = ("refund_already_issued",)  # drawn only by the test split
# Facts the desk needs beyond an issue's article to look its records up (the payments are found by the account email).
DESK_FACTS = {"payment_failure": ("account_email",)}
DESK_REFUND_DAYS = "3-5 business days"  # how long a refund takes to reach the card
RETURN_WINDOW_DAYS = 30  # a refund request is refunded only for an order delivered this many days ago or fewer


def desk_rules(variant: PolicyVariant) -> tuple[str, ...]:
    """The expert task's rules for working on the system of record (supportenv.tools and
    supportenv.casework enforce them), after the policy every task states."""
    # (imported here: the world package imports this module first)
    from supportenv.tools import LOST_AFTER_DAYS
    from supportenv.world.system_of_record import TODAY

    caps = ", ".join(f"{tier} ${cap:.0f}" for tier, cap in variant.refund_caps)
    window = RETURN_WINDOW_DAYS
    return (
        f"Today is {TODAY.isoformat()}; every date in the records is on or before it.",
        "Tools (use_tool) show and change the customer's records; the records decide, not the claim: look them "
        "up, and where they differ from what the customer thinks, change nothing they do not bear out and tell "
        "the customer what they show. First make sure a record is the one the customer means: an order is the one "
        "whose items and dates fit what they describe (look_up_customer lists the account's orders of the last two "
        "years).",
        "Verify the customer with verify_identity before any refund, address change, cancellation or reship (only "
        "those: for the other issues the identity check above is having the account email): it needs the account "
        "email and the order id or the card's last four digits, given by the customer in this conversation (values "
        "you looked up do not prove who the customer is). Asking for them is never wasted where such a change may "
        "be needed. A customer whose order id or card the account does not hold is not verified: ask for the "
        "other one too; where verify_identity refuses both, change nothing however they push, tell them the "
        "details they gave do not match our records, tell them nothing from the records they have not given "
        "themselves (no order id, amount, card ending or address), and route the ticket to security and "
        "escalate it as a suspected takeover (it keeps its triage).",
        "Make each change the records show the case needs, and no other. Money is owed back where it was taken "
        "and should not have been, for what the customer sends back, and for a lost parcel whose money the "
        "customer wants back: a duplicate charge (a second "
        "captured payment of one order; a payment only authorised is a hold, not a charge) and an overcharge "
        "(what was captured beyond the order's listed total, which includes its shipping fee) are refunded in "
        "full; money refunded already is not owed again, and no refund is more than is left of the order's "
        "payment after its earlier refunds. A refund request is owed what was paid for what goes back: the "
        "order's payment, or for items of an order of several, each item's price times its quantity less the "
        "order's discount_percent, rounded to the cent (never the shipping); only for an order delivered "
        f"{window} days ago or fewer (an order never delivered has no window). A return the warehouse received "
        "(order status returned) with no refund on record is owed what is left of its payment. Any refund but a "
        f"duplicate or an overcharge is at most the tier's cap ({caps}): above it, escalate and refund nothing. "
        "A parcel in transit with no tracking scan for "
        f"{LOST_AFTER_DAYS} days or more is lost: reship it, unless the customer asks for its money back: then "
        "refund it (never both). An order can be sent to a new address until it is delivered. Cancel only the "
        "subscription the customer asks to end; send a password reset to a locked account. Put right what the "
        "records show is wrong with what the customer raises, though they only ask about it, and, though they "
        "have not noticed it, with the order they write about and with their account's security (read the "
        "account once you have its email), and tell them (what they have not noticed needs no article's facts "
        "from them, only what verifies them); where they say several orders went wrong, check every one. The "
        "account's other orders, which they do not raise, are not the case's: leave them as they are.",
        "Make a change before you tell the customer it is done, then tell them what was done: a refund's amount "
        f"and that it reaches their card in {DESK_REFUND_DAYS} (a refund the desk issues; the bank's 5-10 business "
        "days of KB-REF-02 are for one issued before); a reship, a new address, a cancellation or a reset "
        "link in words. Where you change nothing, or less than the customer asks, tell them the fact in the "
        "records that decides it, with its date, amount or place (a refund above the cap: that it is escalated "
        "because of the cap). Offer or promise nothing the tools do not do (an article's shipping credit, store "
        "credit, carrier trace, status-update subscription or updated receipt): tell the customer what the tools "
        "did and what the records show.",
        "A sign-in the account does not recognise (recognised: false) may be the customer's on another device, "
        "or someone else's, and only they can tell: ask them whether it was theirs, naming its device, place and "
        "day (a question in an answer, or ask_for_more_info with an empty fields list). One they did not make is a "
        "takeover: route it to security and escalate it, as policy escalates an account_takeover (the ticket keeps "
        "its triage; a locked account still gets its reset); one they made needs nothing more.",
        "When the records answer the question, tell the customer what they show: the date a pending refund was "
        "requested, a late parcel's new delivery date from the carrier, why a payment was declined (or, where a "
        "later attempt went through, that it did and the day). Payments are "
        "looked up by the account email, orders by their id. A customer told that the records contradict what "
        "they claimed may doubt it once: explain again what the records show; the issue is answered once they "
        "accept it.",
    )


def _check_catalog() -> None:
    """Fail at import, not mid-episode, if the content breaks an invariant we rely on."""
    for issue in ISSUE_TYPES:
        where = f"issue {issue.issue_id}"
        assert issue.category in CATEGORIES, where
        assert issue.department in DEPARTMENTS and issue.escalation in ESCALATION_RULES, where
        assert issue.article_id in ARTICLES_BY_ID, where
        assert set(issue.required_facts + issue.extra_facts) <= set(REQUESTABLE_FIELDS), where
        assert len(issue.templates) > TRAIN_TEMPLATES, where
        if issue.escalation == "over_refund_cap":
            assert "amount" in issue.required_facts, where
        steps = ARTICLES_BY_ID[issue.article_id].steps
        assert any(issue.solution_phrases[0] in s.lower() for s in steps), f"{where}: no article step names its fix"
    for impact, lines in content.IMPACT_LINES.items():
        several = content.IMPACT_LINES_FOR_SEVERAL[impact]
        if impact == "can_wait":
            lines += content.ANGRY_CAN_WAIT
            several += content.ANGRY_CAN_WAIT_FOR_SEVERAL
        if impact == "soon":
            several += tuple(line for own in content.OWN_SOON.values() for line in own)
        for line in (*(text for text, *_ in lines), *(line.replace("{issue}", "It") for line in several)):
            assert stated_impact(line) == impact, f"impact line {line!r} does not read as {impact}"
        for issue in ISSUE_TYPES:
            kind = content.ISSUE_WORDS[issue.issue_id][2]
            assert any(kind in k and issue.category in c for _, k, c in lines), (
                f"no {impact} line fits {issue.issue_id}"
            )
    phrases = [p for issue in ISSUE_TYPES for p in issue.solution_phrases]
    assert len(phrases) == len(set(phrases)), "solution phrases must be unique across issues"


_check_catalog()


picklable(PolicyVariant, Article, IssueType)  # pickle and copy alike on both builds
