"""Seeded procedural scenarios: (task_id, split, seed) -> one ticket, always the same.

Each scenario draws from its own `random.Random`, seeded from a SHA-256 of the key
(split included, so the splits' seed streams are disjoint), so no global random
state is touched and results are identical in every process and on every machine.

A world key (optional, secret, given by the caller: this library never reads the
environment) seals the world: each generator is seeded by an HMAC-SHA256 of (task, split,
seed) under it instead, so without the key no one can reproduce a ticket's hidden facts or
its expected handling from its public (task, split, seed). Without one, the world is the
public one. Ticket ids are opaque in both: an HMAC of (task, split, seed) under the world
key or a fixed public one, so they name no category, split or seed.

Generalisation is measurable: the `test` split also draws paraphrase templates and
a policy variant that `train` and `validation` never produce.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar, cast

from supportenv import content
from supportenv.catalog import (
    ARTICLE_CATEGORY,
    ARTICLES,
    ARTICLES_BY_ID,
    CATEGORIES,
    CHANGE_FAMILIES,
    CLAIM_FAMILIES,
    DESK_FACTS,
    HELD_OUT_FAMILIES,
    HELD_OUT_POLICY_VARIANTS,
    IDENTITY_FACT,
    IMPACTS,
    ISSUE_TYPE_IDS,
    ISSUE_TYPES,
    ISSUE_TYPES_BY_ID,
    POLICY_VARIANTS,
    RECORD_ISSUES,
    REQUESTABLE_FIELDS,
    TRAIN_TEMPLATES,
    VERIFIED_CHANGE_ISSUES,
    IssueType,
    PolicyVariant,
    desk_rules,
    policy_rules,
    ticket_priority,
)
from supportenv.records import picklable
from supportenv.tasks import EXPERT_TASK_ID, get_task

if TYPE_CHECKING:
    from supportenv.world.system_of_record import SystemOfRecord

T = TypeVar("T")

SPLITS = ("train", "validation", "test")
# The generator's version: a token of another version is refused, since its actions would replay
# on different tickets or records. world-13: more judgement families, drawn on nine expert tickets in
# ten whose first issue has one; orders list their discount and shipping fee. world-14: a parcel's
# order charged twice or above its total, unnoticed by the customer (P_UNNOTICED_CHARGE). world-15: the
# account's latest sign-in from a device and a town it does not know, the customer's or a stranger's,
# which only the customer can tell (P_UNKNOWN_SIGN_IN); the locked account rarer as a second issue.
# world-16: an order's product lists believably at what it is charged (a $23 office chair was not).
# world-17: an impostor, who has the account email but neither an order id nor a card the account holds,
# asks for an address change (P_IMPOSTOR); as often, an honest customer mistypes its order id (P_MISTYPED).
# world-18: a card declined as expired took no payment in that month or after (else the issuer declined it);
# an order delivered before its address could change was left at the door, not with the customer; an order
# whose words time it ("Returned the item two weeks ago", "almost two weeks") as old as they say (DAYS_THE_WORDS_SAY);
# codes that "go to an old number" come by text.
WORLD_VERSION = "world-18"
# What salts every ticket's draws (and its id): changed only to redraw every ticket, which world-13 to
# world-16 do not (their tickets are world-11's but for the judgement families and the records, for
# world-15's expert tickets whose second issue was drawn as a locked account: P_LOCKED_SECOND, and for
# world-16's expert amounts below the cheapest product and products that do not fit their order's amount).
TICKET_STREAM = "world-11"
MAX_INTENTS = 3
PUBLIC_WORLD = "public"  # the world id without a world key
# Ticket ids of the public world: opaque at a glance, but anyone holding this library can
# compute them (only a world key makes them unpredictable).
PUBLIC_TICKET_KEY = b"supportenv public ticket ids"
# Base32 characters (5 bits each) after "TKT-": 60 bits, so even three million seeds of one
# split collide with odds of about 4 in a million.
TICKET_ID_CHARS = 12

# How often the optional ingredients of a message appear.
P_DISTRACTOR = 0.3
P_TYPO = 0.15
P_HELD_OUT_TEMPLATE = 0.35  # test split only
P_HELD_OUT_POLICY = 0.4  # test split only
P_MISLEADING_MENTION = 0.15  # the customer names another topic, pulling retrieval the wrong way
_FIXABLE = (content.FAULT, content.REQUEST)  # kinds of issue that can hold the customer up
_FIRST_SENTENCE_RE = re.compile(r"[^.!?]*")
_COLON_HEAD = 25  # a template that starts "Suggestion: ..." has its colon this early
_LONG_MESSAGE_WORDS = 30  # a message this long at least may be called long ("let me explain everything")
P_COLLEAGUE_ASKED = 0.75  # action_selection: a colleague replied first, asking for the details

_TOKEN_RE = re.compile(r"[a-z0-9]+")
_WORD_RE = re.compile(r"[A-Za-z]{6,}")
_PATIENCE = {"angry": 3, "terse": 4, "confused": 6}
_STARTING_MOOD = {
    "angry": (-0.9, -0.6),
    "terse": (-0.4, 0.0),
    "verbose": (-0.15, 0.2),
    "polite": (0.0, 0.3),
    "confused": (-0.2, 0.15),
}
_ISSUE_OF_ARTICLE = {issue.article_id: issue.issue_id for issue in ISSUE_TYPES}
_CATEGORY_OF_ARTICLE = {issue.article_id: issue.category for issue in ISSUE_TYPES}
_REVENUE = {"regular": (10, 800), "premium": (800, 8000), "enterprise": (20000, 250000)}
# Mentions of another topic: an article found while searching (by its title, not claimed to be
# about this problem), or a past issue in the customer's words.
# ({this}: the issue of the article's kind in a message of several, as "this" would be the last one)
_MISLEADING = (
    'I looked through your help pages (I found "{title}") but nothing covered {this}.',
    'I read "{title}" on your site, but it didn\'t cover {this}.',
)
_MISLEADING_PAST = "Last month I wrote in about {issue} too."
# Words that no calm customer writes: a message with one starts the customer frustrated at best.
_UPSET_RE = re.compile(
    r"\b(?:unhappy|not happy|hacked|stolen|compromised|worst|unacceptable|furious|ridiculous|unbelievable"
    r"|had enough|fed up|disappointed|disappointment|let me down|so annoying|losing money|sweet time"
    r"|painfully|fix it now|seriously|spare me|or i'm leaving|shouldn't have to|properly this time)\b",
    re.IGNORECASE,
)
_UPSET_MOOD = (-0.45, -0.25)  # frustrated, by episode.sentiment_label
# The lowest mood of a message without upset words: the bottom of neutral, by episode.sentiment_label
# (a persona lowers the mood below it only when its words show it), and how far above it at least
# such a message may start.
_CALM_FLOOR = -0.2
_CALM_SPAN = 0.1


@dataclass(frozen=True)
class Expected:
    """What correct handling of this ticket looks like (hidden from the agent)."""

    category: str
    issue_type: str
    priority: str
    facts: tuple[str, ...]
    article_id: str
    department: str
    escalate: bool
    escalate_intents: tuple[str, ...]
    solvable: tuple[str, ...]  # intents the agent must answer itself
    identity_required: bool
    callback_allowed: bool

    def to_dict(self) -> dict[str, object]:
        return {
            "category": self.category,
            "issue_type": self.issue_type,
            "priority": self.priority,
            "facts_to_gather": list(self.facts),
            "article_id": self.article_id,
            "answer_intents": list(self.solvable),
            "escalate": self.escalate,
            "escalate_intents": list(self.escalate_intents),
            "department": self.department if self.escalate else None,
            "verify_identity_first": self.identity_required,
            "callback_allowed": self.callback_allowed,
        }


@dataclass(frozen=True)
class Briefing:
    """What the agent is shown of a ticket that never changes during its episode: the
    ticket, the customer's profile, the rules and the task. Field names are the Observation's own."""

    ticket_id: str
    task_id: str
    customer_tier: str
    customer_tenure_days: int
    customer_total_revenue: float
    requestable_fields: tuple[str, ...]
    issue_types: tuple[str, ...]
    policy: tuple[str, ...]
    task_instructions: str
    max_steps: int
    allowed_actions: tuple[str, ...] = ()  # the action kinds the task takes


@dataclass(frozen=True)
class Scenario:
    task_id: str
    split: str
    seed: int
    world: str  # the id of the world it came from (world_id), never its key
    ticket_id: str
    intents: tuple[IssueType, ...]  # the primary issue first
    impact: str  # how much the problem holds the customer up, as its words say (catalog.IMPACTS)
    tier: str
    persona: str
    tenure_days: int
    total_revenue: float
    initial_sentiment: float
    patience: int
    hidden_facts: tuple[tuple[str, str], ...]
    opening_message: str
    template_ids: tuple[str, ...]
    policy: PolicyVariant
    policy_text: tuple[str, ...]
    prefix_steps: int  # action_selection: 1 when a colleague already asked for the details (supportenv.replay)
    expected: Expected
    products: tuple[str, ...] = ()  # per intent: the product (or plan) its words name ("" if none)
    record_seed: int = 0  # seeds the system of record's own draws (supportenv.world.system_of_record)
    # The expert task's judgement family (catalog.CLAIM_FAMILIES): the records disagree with the
    # first issue's claim, and nothing is to change (or, for catalog.CHANGE_FAMILIES, another change
    # than the claim implies); "" when the records bear the claim out.
    family: str = ""
    # The expert ticket's order the customer means, where the order id it gives (its order_id fact)
    # is another, earlier order of the same product on its account; "" when the id it gives is right.
    meant_order_id: str = ""
    # How the expert ticket's order in question was charged wrongly without the customer noticing
    # (UNNOTICED_CHARGES: twice, or more than its listed total), or "": the desk finds it on the order's
    # payments and refunds the money taken beyond the total, unasked (P_UNNOTICED_CHARGE).
    unnoticed_charge: str = ""
    # Whose was the latest sign-in of the account, from a device and a town the account does not
    # know (UNKNOWN_SIGN_INS): the customer's own ("theirs"), or someone else's ("stranger": a takeover,
    # escalated to security); "" when there is none. Only the customer knows, so the desk asks
    # (P_UNKNOWN_SIGN_IN).
    unknown_sign_in: str = ""
    # Where the customer is not the account holder (an impostor, who knows the account email but gives an
    # order id and a card the account does not hold): the holder's own order id and card, which the records
    # hold instead, as (fact, value); () when the customer is the holder (P_IMPOSTOR).
    holder_proofs: tuple[tuple[str, str], ...] = ()
    # Where the order id the customer gives is its own order's mistyped (two digits swapped, or one wrong): no
    # order of the account has it, but its card verifies it, and asked again it corrects itself; the order it
    # means is meant_order_id (P_MISTYPED).
    order_id_mistyped: bool = False
    # What is derived from the scenario, worked out on first use and kept (the per-step hot path
    # reads it): by name, the properties below and what supportenv.casework says of the case.
    # Not a field of eq, hash or repr.
    derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def kept(self, name: str, build: Callable[[Scenario], T]) -> T:
        """`build(self)`, worked out once and kept in `derived` under `name`."""
        if name in self.derived:
            return cast(T, self.derived[name])
        made = self.derived[name] = build(self)
        return made

    @property
    def impostor(self) -> bool:
        """Whether the customer is not the account holder and cannot be verified (holder_proofs)."""
        return bool(self.holder_proofs)

    def holder_value(self, name: str) -> str:
        """What the records hold of an identity proof: the holder's, where the customer is an impostor."""
        for fact, value in self.holder_proofs:
            if fact == name:
                return value
        return self.facts_by_name.get(name, "")

    @property
    def order_in_question(self) -> str:
        """The id of the order the ticket is about ("" if none): the one the customer means (an impostor's:
        the holder's order it would change)."""
        return self.meant_order_id or self.holder_value("order_id")

    @property
    def issue(self) -> IssueType:
        return self.intents[0]

    @property
    def facts_by_name(self) -> dict[str, str]:
        return self.kept("facts_by_name", _facts_by_name)

    @property
    def intent_keys(self) -> tuple[tuple[str, str], ...]:
        """(issue_id, article_id) per intent: the form text.verdict judges by."""
        return self.kept("intent_keys", _intent_keys)

    @property
    def kb_suggestions(self) -> dict[str, tuple[tuple[str, str, float], ...]]:
        """The category's articles by keyword score against the opening message: (article_id,
        title, score), best first, per category (see `suggestions`)."""
        return self.kept("kb_suggestions", _kb_suggestions)

    def suggestions(self, category: str, issue_type: str) -> tuple[tuple[str, str, float], ...]:
        """The knowledge-base articles the help desk suggests once the ticket is classified: the
        article of the issue type set, then the other articles of the category set by keyword
        score. Only the triage picks them, so they help an agent that triaged the ticket and
        never triage it, nor correct a wrong triage, for one that did not (a fixed triage that
        trusted the top suggestion would otherwise be handed the ticket's article). Kept per
        triage once built (an episode sees one or two)."""
        memo: dict[tuple[str, str], tuple[tuple[str, str, float], ...]] = self.kept("suggestions_by_triage", _no_memo)
        found = memo.get((category, issue_type))
        if found is None:
            found = memo[(category, issue_type)] = self._suggestions(category, issue_type)
        return found

    def _suggestions(self, category: str, issue_type: str) -> tuple[tuple[str, str, float], ...]:
        matches = self.kb_suggestions.get(category, ())
        issue = ISSUE_TYPES_BY_ID.get(issue_type)
        if issue is None or issue.category != category:
            return matches
        own = next((m for m in matches if m[0] == issue.article_id), None)
        own = own or (issue.article_id, ARTICLES_BY_ID[issue.article_id].title, 0.0)
        return (own, *(m for m in matches if m[0] != issue.article_id))

    @property
    def records(self) -> SystemOfRecord:
        """The ticket's system of record: its account, orders, payments, refunds, subscriptions and incidents."""
        from supportenv.world.system_of_record import build_records

        return self.kept("records", build_records)

    @property
    def briefing(self) -> Briefing:
        return self.kept("briefing", _briefing)

    def to_dict(self) -> dict[str, object]:
        """Everything about the scenario, hidden parts included (for inspection, not agents)."""
        return {
            "task_id": self.task_id,
            "split": self.split,
            "seed": self.seed,
            "world": self.world,
            "ticket_id": self.ticket_id,
            "intents": [i.issue_id for i in self.intents],
            "categories": [i.category for i in self.intents],
            "tier": self.tier,
            "persona": self.persona,
            "tenure_days": self.tenure_days,
            "total_revenue": self.total_revenue,
            "initial_sentiment": self.initial_sentiment,
            "patience": self.patience,
            "opening_message": self.opening_message,
            "hidden_facts": dict(self.hidden_facts),
            "kb_suggestions": {c: [[a, score] for a, _, score in m] for c, m in self.kb_suggestions.items()},
            "template_ids": list(self.template_ids),
            "policy_variant": self.policy.name,
            **({"family": self.family} if self.family else {}),
            **({"meant_order_id": self.meant_order_id} if self.meant_order_id else {}),
            **({"unnoticed_charge": self.unnoticed_charge} if self.unnoticed_charge else {}),
            **({"unknown_sign_in": self.unknown_sign_in} if self.unknown_sign_in else {}),
            **({"impostor": {"holder_proofs": dict(self.holder_proofs)}} if self.holder_proofs else {}),
            **({"order_id_mistyped": True} if self.order_id_mistyped else {}),
            "prefix_steps": self.prefix_steps,
            "expected_handling": self.expected.to_dict(),
        }


def tokenize(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower())


def rng_for(*key: object, world_key: bytes | None = None) -> random.Random:
    """A generator for `key`'s draws: seeded by a SHA-256 of it, or by an HMAC under the world key."""
    message = "|".join(("supportenv", TICKET_STREAM, *map(str, key))).encode()
    digest = hashlib.sha256(message).digest() if world_key is None else hmac.digest(world_key, message, "sha256")
    return random.Random(int.from_bytes(digest[:8], "big"))


def world_id(world_key: bytes | None) -> str:
    """The name of a world, safe to log and to write into tokens: "public", or "sealed-"
    and the first 4 bytes of an HMAC under the key (which tells nothing of the key)."""
    if world_key is None:
        return PUBLIC_WORLD
    return "sealed-" + hmac.digest(world_key, b"supportenv world id", "sha256")[:4].hex()


def ticket_id(task_id: str, split: str, seed: int, world_key: bytes | None = None) -> str:
    """The ticket's opaque id: stable for its (task, split, seed) in its world, and telling nothing of them."""
    message = "|".join(("ticket", TICKET_STREAM, task_id, split, str(seed))).encode()
    digest = hmac.digest(PUBLIC_TICKET_KEY if world_key is None else world_key, message, "sha256")
    return "TKT-" + base64.b32encode(digest[:10]).decode()[:TICKET_ID_CHARS]


def _fact_value(name: str, issue: IssueType, tier: str, policy: PolicyVariant, rng: random.Random) -> str:
    if name == "order_id":
        return f"ORD-{rng.randrange(100000, 999999)}"
    if name == "amount":
        if issue.escalation == "over_refund_cap":
            # Straddle the tier's cap so that some refunds must be escalated.
            return f"{rng.choice((0.3, 0.6, 0.9, 1.4, 2.2)) * policy.refund_cap(tier):.2f}"
        return f"{rng.randrange(900, 40000) / 100:.2f}"
    if name == "card_last_four":
        return f"{rng.randrange(0, 10000):04d}"
    if name == "account_email":
        user = rng.choice(("alex", "sam", "priya", "chen", "maria", "tom", "fatima", "jo", "noah", "lena"))
        return f"{user}.{rng.randrange(10, 99)}@{rng.choice(('example.com', 'mail.test', 'corp.example'))}"
    if name == "error_code":
        if issue.issue_id == "error_403":
            return f"403-{rng.choice(('ROLE', 'SCOPE', 'ACL'))}-{rng.randrange(100, 999)}"
        return f"E{rng.randrange(1000, 9999)}"
    if name == "tracking_number":
        return "1Z" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(10))
    if name == "device_model":
        return rng.choice(_DEVICES)
    if name == "charge_date":
        return f"2026-{rng.randrange(1, 12):02d}-{rng.randrange(1, 28):02d}"
    if name == "app_version":
        return f"{rng.randrange(3, 7)}.{rng.randrange(0, 10)}.{rng.randrange(0, 20)}"
    if name == "invoice_number":
        return f"INV-2026-{rng.randrange(10000, 99999)}"
    if name == "new_address":
        street = rng.choice(("Harbour Road", "Elm Street", "Station Lane", "Mill Way", "Park Avenue", "Quay Street"))
        town = rng.choice(("Leeds", "Bristol", "Cork", "Utrecht", "Lyon", "Porto"))
        return f"{rng.randrange(2, 180)} {street}, {town}"
    raise ValueError(f"no generator for fact {name!r}")


# Devices by kind, and the facts drawn to fit the customer's words (once the message is written):
# a device the issue's words allow ("my mobile app" runs on a phone or a tablet, "on my tablet" on a
# tablet, a website on anything) and an app version only where the customer uses an app.
_PHONES = ("Pixel 8", "iPhone 15", "Galaxy S23", "OnePlus 12")
_TABLETS = ("iPad Air", "Galaxy Tab S9")
_COMPUTERS = ("MacBook Air", "ThinkPad X1")
_DEVICES = (*_PHONES, *_TABLETS, *_COMPUTERS)
_WORDED_FACTS = ("device_model", "app_version")
_TABLET_RE = re.compile(r"\btablet\b", re.IGNORECASE)
_PHONE_RE = re.compile(r"\b(?:phone|mobile|number)\b", re.IGNORECASE)
_APP_RE = re.compile(r"\b(?:app|apps|application|program|authenticator)\b", re.IGNORECASE)
# Issues whose device is the phone the customer signs in with.
_PHONE_ISSUES = ("two_factor_lost",)


def _devices_for(issue: IssueType, words: str) -> tuple[str, ...]:
    """The devices an issue's words allow: a tablet or a phone it names, a phone or a tablet for
    an app, anything for a website."""
    if _TABLET_RE.search(words):
        return _TABLETS
    if _PHONE_RE.search(words) or issue.issue_id in _PHONE_ISSUES:
        return _PHONES
    if _APP_RE.search(words):
        return (*_PHONES, *_TABLETS)
    return _DEVICES


def _devices_said(issue: IssueType, words: str) -> set[str]:
    """The devices an issue's words allow, for an issue whose facts include the device."""
    if not issue.knows("device_model"):
        return set(_DEVICES)
    return set(_devices_for(issue, words))


def _worded_fact(
    name: str, owners: list[tuple[IssueType, str]], tier: str, policy: PolicyVariant, rng: random.Random
) -> str | None:
    """Fact `name` drawn to fit the words of the issues that list it (`owners`: (issue, its
    template)), or None where it does not fit them (no app version without an app)."""
    if name == "device_model":
        allowed = [set(_devices_for(issue, words)) for issue, words in owners]
        fitting = [d for d in _DEVICES if all(d in a for a in allowed)] or _devices_for(*owners[0])
        return rng.choice(tuple(fitting))
    if name == "app_version" and not any(name in i.required_facts or _APP_RE.search(w) for i, w in owners):
        return None
    return _fact_value(name, owners[0][0], tier, policy, rng)


def needs_escalation(issue: IssueType, tier: str, facts: dict[str, str], policy: PolicyVariant) -> bool:
    if issue.escalation == "always":
        return True
    if issue.escalation == "enterprise":
        return tier == "enterprise"
    if issue.escalation == "over_refund_cap":
        return float(facts["amount"]) > policy.refund_cap(tier)
    return False


# keyword -> indexes of the articles that list it, so retrieval touches only words present.
_KEYWORD_INDEX: dict[str, list[int]] = {}
for _index, _article in enumerate(ARTICLES):
    for _keyword in _article.keywords:
        _KEYWORD_INDEX.setdefault(_keyword, []).append(_index)


def kb_matches(message: str, category: str | None = None, limit: int = 3) -> tuple[tuple[str, float], ...]:
    """Score every article (of `category`, if given) by keyword overlap with the message; best first."""
    hits: dict[int, int] = {}
    for word in set(tokenize(message)):
        for index in _KEYWORD_INDEX.get(word, ()):
            if category is None or ARTICLE_CATEGORY[ARTICLES[index].article_id] == category:
                hits[index] = hits.get(index, 0) + 1
    scored = sorted((-n / len(ARTICLES[i].keywords), i) for i, n in hits.items())
    return tuple((ARTICLES[i].article_id, round(-score, 3)) for score, i in scored[:limit])


def _typo(text: str, rng: random.Random, keep: str = "") -> str:
    """Swap two inner letters of one longer word: the kind of slip people make; none in `keep`
    (the line that states the impact: a reader still reads it, a cue search would not)."""
    start = text.find(keep) if keep else -1
    kept = range(start, start + len(keep)) if start >= 0 else range(0)
    words = [m for m in _WORD_RE.finditer(text) if m.start() not in kept]
    if not words:
        return text
    match = words[rng.randrange(len(words))]
    word = match.group()
    i = rng.randrange(1, len(word) - 2)
    slipped = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    return text[: match.start()] + slipped + text[match.end() :]


# A template that leaves out its subject ("Want to send the shoes back.") gets it back when it
# goes on from other words ("..., but I want to send the shoes back.").
_SUBJECT_OF = {
    "Can't": "I can't",
    "Got": "I got",
    "Want": "I want",
    "Need": "I need",
    "Lost": "I lost",
    "Opened": "I opened",
    "Tried": "I tried",
    "Been": "I've been",
    "Looks": "It looks",
    "Sending": "I'm sending",
    "Switching": "I'm switching",
    "Getting": "I'm getting",
    "Returned": "I returned",
    "Checking": "I'm checking",
    "Suggestion:": "I have a suggestion:",
    "Idea": "I have an idea",
    "Typo": "There's a typo",
}


def _lower_first(text: str) -> str:
    """`text` going on from other words: its subject given back, its first letter small."""
    first, _, rest = text.partition(" ")
    if first in _SUBJECT_OF:  # (and then its first letter small too: "Also, there's a typo", not "There's")
        text = f"{_SUBJECT_OF[first]} {rest}"
    if text[:2] in ("I ", "I'") or not text:
        return text
    return text[0].lower() + text[1:]


# How many issues a ticket raises, drawn from these. A ticket handed over mid-conversation
# always raises two (a colleague's triage names only the first, so the words must be read to
# handle the rest); most hard tickets raise more than one.
_INTENT_COUNTS: dict[str, dict[str, tuple[int, ...]]] = {
    "issue_classification": {"regular": (1,), "premium": (1,), "enterprise": (1,)},
    "action_selection": {"regular": (2,), "premium": (2,), "enterprise": (2,)},
    "end_to_end_resolution": {"regular": (1, 2, 2), "premium": (1, 2, 2), "enterprise": (2, 2, 3)},
    EXPERT_TASK_ID: {"regular": (1, 2, 2), "premium": (1, 2, 2), "enterprise": (2, 2, 3)},
}
# How often an expert ticket's second issue is about the records too (two cases worked on the desk at once).
P_SECOND_RECORD_ISSUE = 0.7
# The records issue that fits every first issue, and how often a second issue drawn as it stays it.
_FITS_ALL = "account_locked"
P_LOCKED_SECOND = 0.15


def _fit_together(issue: IssueType, other: IssueType) -> bool:
    """Whether one customer plausibly raises both on one ticket: different teams' topics, not two
    different stories about the one order it gives, and nothing that looks ahead on an account
    the customer wants ended, nor anything seen signed in on an account it is locked out of."""
    if issue.department == other.department or issue.category == other.category:
        return False
    for ending, rest in ((issue, other), (other, issue)):
        looks_ahead = content.ISSUE_WORDS[rest.issue_id][2] in (content.IDEA, content.QUESTION)
        if ending.issue_id in content.ENDS_THE_ACCOUNT and (
            looks_ahead or rest.issue_id in content.CHANGES_TO_THE_ACCOUNT
        ):
            return False
        if ending.issue_id in content.LOCKED_OUT and rest.issue_id in content.SEEN_SIGNED_IN:
            return False
    both_orders = "order_id" in issue.required_facts and "order_id" in other.required_facts
    return not both_orders or frozenset((issue.issue_id, other.issue_id)) in content.ONE_ORDER_PAIRS


_MONEY_FACTS = ("amount", "charge_date")


def _two_sums(issue: IssueType, other: IssueType) -> bool:
    """Whether two issues would each need an amount or a charge date of their own: the customer
    gives one of each, so on the expert task, where the records hold both, they never meet
    (two issues about the one order share them: its amount, its payment)."""
    shared = {f for f in _MONEY_FACTS if issue.knows(f)} & {f for f in _MONEY_FACTS if other.knows(f)}
    one_order = "order_id" in issue.required_facts and "order_id" in other.required_facts
    return bool(shared) and not one_order


# Issues no expert ticket raises: a price adjustment's one remedy is store credit, which no desk tool gives
# and the desk rules forbid promising (the expert told the customer of it, on 6 tickets in 2,000).
_OFF_THE_DESK = ("price_adjustment",)


def _pick_intents(task_id: str, tier: str, rng: random.Random) -> tuple[IssueType, ...]:
    """The ticket's issues, the primary first; each further one for another department than
    those before it, as two issues a customer raises together are rarely one team's topic."""
    count = rng.choice(_INTENT_COUNTS[task_id][tier])
    second_on_record = task_id == EXPERT_TASK_ID and count > 1 and rng.random() < P_SECOND_RECORD_ISSUE
    chosen: list[IssueType] = []
    while len(chosen) < count:
        issue = ISSUE_TYPES[rng.randrange(len(ISSUE_TYPES))]
        if task_id == EXPERT_TASK_ID and not chosen and issue.issue_id not in RECORD_ISSUES:
            continue  # the expert task's ticket is about something the records hold
        if task_id == EXPERT_TASK_ID and issue.issue_id in _OFF_THE_DESK:
            continue
        if second_on_record and len(chosen) == 1 and issue.issue_id not in RECORD_ISSUES:
            continue  # (every first issue fits some other records issue: account_locked fits them all)
        if second_on_record and len(chosen) == 1 and issue.issue_id == _FITS_ALL and rng.random() >= P_LOCKED_SECOND:
            # Fitting every first issue, the locked account would be on two expert tickets in five, and a
            # script sending a reset blindly would earn on them: as often, the second issue is any other.
            second_on_record = False
            continue
        if task_id == EXPERT_TASK_ID and any(_two_sums(issue, other) for other in chosen):
            continue
        if not chosen and issue.issue_id in content.ALWAYS_PRESSING and rng.random() < 0.5:
            # Rarer than most first issues: with two impacts instead of four, the ones a fixed
            # triage guess would hit most often.
            continue
        if all(_fit_together(issue, other) for other in chosen):
            chosen.append(issue)
    return tuple(chosen)


def sounds_upset(message: str) -> bool:
    """Does the message use words of an upset customer ("unhappy", "hacked", "had enough")?"""
    return _UPSET_RE.search(message) is not None


def starting_mood_range(persona: str, message: str) -> tuple[float, float]:
    """The range the starting sentiment is drawn from: the persona's, at most frustrated when
    the opening message sounds upset, and never below neutral when it does not (a terse "Need a
    return label please. Thanks." is no frustrated customer, whatever its persona)."""
    low, high = _STARTING_MOOD.get(persona, (-0.4, 0.1))
    if not sounds_upset(message):
        return max(low, _CALM_FLOOR), max(high, _CALM_FLOOR + _CALM_SPAN)
    upset_low, upset_high = _UPSET_MOOD
    if high > upset_high:
        return min(low, upset_low), upset_high
    return low, high


def _persona_line(
    lines: tuple[tuple[str, tuple[str, ...], str], ...],
    kinds: set[str],
    said: set[str],
    rng: random.Random,
    avoid: frozenset[str] = frozenset(),
) -> tuple[str, str]:
    """A persona line (text, what it says) that fits every kind of issue in the message and
    says nothing already said. Every persona has lines that fit anything. A line that says
    one of `avoid` is passed over for the next fitting one (drawn as before, so that a ticket whose
    line does not say it stays as it was)."""
    fitting = [(text, note) for text, fits, note in lines if kinds <= set(fits) and not (note and note in said)]
    at = fitting.index(rng.choice(fitting))
    return next(line for line in fitting[at:] + fitting[:at] if line[1] not in avoid)


# Issues of an order placed in the last few days (an address is changed before delivery): no opener may
# say the customer has meant to write about it for a while.
_RECENT_ORDER_ISSUES = ("address_change",)
# Words of a problem that began just now: no opener may say the customer has meant to write for a while.
_SUDDEN_RE = re.compile(
    r"\b(?:yesterday|today|this morning|overnight|right now|suddenly|for an hour|since about|just unpacked|"
    r"before it (?:goes|ships))\b",
    re.IGNORECASE,
)


def _impact(intents: tuple[IssueType, ...], persona: str, rng: random.Random) -> tuple[str, str]:
    """How much the problem holds the customer up, and what it says of it: of all its issues if
    it raised several, else in words that fit its issue ("" when it says nothing). Always that it
    is pressing when an issue's words say so (content.ALWAYS_PRESSING)."""
    pressing = any(i.issue_id in content.ALWAYS_PRESSING for i in intents)
    impact = rng.choice(("blocking", "soon") if pressing else IMPACTS)
    if impact == "normal":
        return impact, ""
    several = len(intents) > 1
    angry = persona == "angry" and impact == "can_wait"
    own = [content.OWN_SOON[i.issue_id] for i in intents if i.issue_id in content.OWN_SOON]
    if impact == "soon" and own:
        return impact, own[0][several]
    if several:
        line = rng.choice(content.ANGRY_CAN_WAIT_FOR_SEVERAL if angry else content.IMPACT_LINES_FOR_SEVERAL[impact])
        # (the issue that is always pressing, if there is one: "the price adjustment has to be sorted
        # today" beside a hijacked account would be odd)
        pressing_one = next(
            (i for i in intents if i.issue_id in content.ALWAYS_PRESSING),
            next((i for i in intents if content.ISSUE_WORDS[i.issue_id][2] in _FIXABLE), intents[0]),
        )
        words = content.ISSUE_WORDS[pressing_one.issue_id][0]
        return impact, line.replace("{issue}", words[:1].upper() + words[1:])
    issue = intents[0]
    kind = content.ISSUE_WORDS[issue.issue_id][2]
    lines = content.ANGRY_CAN_WAIT if angry else content.IMPACT_LINES[impact]
    return impact, rng.choice(
        [text for text, kinds, categories in lines if kind in kinds and issue.category in categories]
    )


# On the expert task the records show what the customer's words say happened: the templates whose
# words say the carrier marked a "lost" parcel delivered are only for the family whose records show
# it delivered (left in a safe place), and a declined card is a checkout's, not a subscription's.
_SAYS_DELIVERED = {"lost_package": frozenset((0, 2, 5, 6, 7))}
# ("How do I cancel my subscription?" asks how, not to have it cancelled: audit round 55)
_NOT_ON_RECORD = {"payment_failure": frozenset((0,)), "subscription_cancel": frozenset((0,))}
# Words a judgement family's records would contradict: the whole order refunded where one item of
# several goes back, a discount missed where the difference is shipping, a duplicate taken yesterday
# where it was refunded days ago.
_NOT_FOR_FAMILY = {
    ("refund_request", "item_of_several"): frozenset((0, 1, 4, 5, 6)),
    ("wrong_amount", "shipping_not_overcharge"): frozenset((3,)),
    ("double_charge", "duplicate_already_refunded"): frozenset((4,)),
    ("payment_failure", "paid_on_retry"): frozenset((3,)),
    # ("the tracking hasn't updated in ten days", "it's been two weeks" of a parcel placed eight days ago and
    # scanned six days ago: audit round 72)
    ("lost_package", "not_lost_yet"): frozenset((3, 4)),
}
# Words that say when the charge was taken, and how many days ago the records must date it for them: a
# duplicate "when I checked out yesterday" taken ten days ago (audit round 72).
_CHARGED_DAYS_AGO = {("double_charge", 4): (0, 2)}


# Words another issue of the ticket's would contradict: a refund of an order that "didn't meet my needs" beside
# the parcel of that order lost on its way (audit round 73); only words that need no parcel received fit.
_NOT_BESIDE = {("refund_request", "lost_package"): frozenset((0, 2, 3, 4, 5, 7))}


def _fits_the_records(
    issue: IssueType, index: int, family: str, facts: dict[str, str] | None = None, beside: frozenset[str] = frozenset()
) -> bool:
    if index in _NOT_ON_RECORD.get(issue.issue_id, ()) or index in _NOT_FOR_FAMILY.get((issue.issue_id, family), ()):
        return False
    if family == IMPOSTOR and index in _NOT_FOR_AN_IMPOSTOR.get(issue.issue_id, ()):
        return False
    if any(index in _NOT_BESIDE.get((issue.issue_id, other), ()) for other in beside):
        return False
    charged = _CHARGED_DAYS_AGO.get((issue.issue_id, index))
    if charged and facts is not None:
        from supportenv.world.system_of_record import days_before_today

        if not charged[0] <= days_before_today(facts.get("charge_date", "2000-01-01")) <= charged[1]:
            return False
    delivered = _SAYS_DELIVERED.get(issue.issue_id)
    return delivered is None or (index in delivered) == (family == "left_in_safe_place")


_CHECKOUT = "payment_failure"  # the issue whose amount is a declined checkout's, not the order in question's


def _facts_by_name(scenario: Scenario) -> dict[str, str]:
    facts: dict[str, str] = {}
    for key, value in scenario.hidden_facts:
        facts.setdefault(key, value)  # the first wins, as a scan would find it
    return facts


def _intent_keys(scenario: Scenario) -> tuple[tuple[str, str], ...]:
    return tuple((i.issue_id, i.article_id) for i in scenario.intents)


def _kb_suggestions(scenario: Scenario) -> dict[str, tuple[tuple[str, str, float], ...]]:
    return {
        category: tuple((a, ARTICLES_BY_ID[a].title, s) for a, s in kb_matches(scenario.opening_message, category))
        for category in CATEGORIES
    }


def _briefing(scenario: Scenario) -> Briefing:
    task = get_task(scenario.task_id)
    revenue = scenario.total_revenue
    if scenario.task_id == EXPERT_TASK_ID:
        # Never less than what the records show the customer paid (audit round 55): the drawn
        # figure counts orders older than those the records list, not fewer.
        records = scenario.records
        paid = sum((p.amount for p in records.payments if p.status == "captured"), 0.0)
        revenue = round(max(revenue, paid - sum((r.amount for r in records.refunds if r.status == "issued"), 0.0)), 2)
    return Briefing(
        ticket_id=scenario.ticket_id,
        task_id=scenario.task_id,
        customer_tier=scenario.tier,
        customer_tenure_days=scenario.tenure_days,
        customer_total_revenue=revenue,
        requestable_fields=REQUESTABLE_FIELDS,
        issue_types=ISSUE_TYPE_IDS,
        policy=scenario.policy_text,
        task_instructions=task.instructions,
        max_steps=task.max_steps,
        allowed_actions=task.allowed_actions,
    )


def _no_memo(scenario: Scenario) -> dict[Any, Any]:
    return {}


@dataclass(frozen=True)
class _OrderPrice:
    """What an expert ticket's order is charged (its amount), for the product the customer's words name:
    the order in question's, or a declined checkout's where the amount is that."""

    checkout: bool  # the amount is a declined checkout's (_CHECKOUT's), not the order in question's
    fitting: tuple[str, ...]  # the products an order charged it lists believably
    rng: random.Random  # draws a product that fits, apart from every other draw

    def prices(self, issue: IssueType) -> bool:
        """Whether the product `issue`'s words name is the one the order charged the amount holds."""
        return (issue.issue_id == _CHECKOUT) == self.checkout


def _fitting(product: str, issue: IssueType, price: _OrderPrice | None) -> str:
    """`product`, drawn for `issue`'s words, or where the order of it charged the ticket's amount would
    list it at a price no one would believe of it (a $23 office chair), one drawn that it would not."""
    if price is None or product not in content.PRODUCTS or not price.prices(issue) or product in price.fitting:
        return product  # (a plan the words name is no product: content.PLANS)
    return price.rng.choice(price.fitting) if price.fitting else product


def _order_price(
    intents: tuple[IssueType, ...], facts: dict[str, str], family: str, unnoticed: str, rng: random.Random
) -> _OrderPrice | None:
    """What the expert ticket's order of the product its words name is charged, or None without an amount."""
    from supportenv.world.system_of_record import products_fitting

    if "amount" not in facts:
        return None
    issues = {i.issue_id for i in intents}
    fitting = products_fitting(facts["amount"], issues, family, unnoticed)
    return _OrderPrice(_drawn_for(intents, "amount").issue_id == _CHECKOUT, fitting, rng)


def _drawn_for(intents: tuple[IssueType, ...], fact: str) -> IssueType:
    """The issue a fact is drawn for: the first that lists it."""
    return next(i for i in intents if i.knows(fact))


def _compose_message(
    intents: tuple[IssueType, ...],
    split: str,
    persona: str,
    rng: random.Random,
    impact_rng: random.Random,
    family: str | None = None,
    family_rng: random.Random | None = None,
    mixup: bool = False,
    price: _OrderPrice | None = None,
    facts: dict[str, str] | None = None,
) -> tuple[str, tuple[str, ...], tuple[str, ...], str, str]:
    """The opening message. `family` is the expert ticket's judgement family ("" for none); None
    on the other tasks, whose words need not fit records. `family_rng` draws what the family's own
    words add (content.FAMILY_LINES), apart from every other draw. `price`: what the order of the
    product the words name is charged, on the expert task (None on the others, or without an amount);
    `facts`, the ticket's, whose dates the expert task's words must fit."""
    template_ids, bodies, products = [], [], []
    beside = frozenset(i.issue_id for i in intents)
    said: set[str] = set()  # what the message has said besides its issues (see content.PERSONA_OPENERS)
    devices = set(_DEVICES)  # the one device the customer has, as the words so far allow it
    for issue in intents:
        held_out = split == "test" and rng.random() < P_HELD_OUT_TEMPLATE
        candidates = range(TRAIN_TEMPLATES, len(issue.templates)) if held_out else range(TRAIN_TEMPLATES)
        # No words that need another device than those before them ("my tablet" after a lost
        # phone's codes): the customer gives one device model for both.
        fitting = [i for i in candidates if devices & _devices_said(issue, issue.templates[i])] or list(candidates)
        if family is not None:
            # (the split's own templates that fit the records, else the others that do)
            others = range(TRAIN_TEMPLATES) if held_out else range(TRAIN_TEMPLATES, len(issue.templates))
            fitting = (
                [i for i in fitting if _fits_the_records(issue, i, family, facts, beside)]
                or [
                    i
                    for i in others
                    if _fits_the_records(issue, i, family, facts, beside) and (held_out or split == "test")
                ]
                or fitting
            )
        index = rng.choice(fitting)
        devices &= _devices_said(issue, issue.templates[index])
        template_ids.append(f"{issue.issue_id}/{index}")
        product = _fitting(rng.choice(content.PRODUCTS), issue, price)
        products.append(product if "{product}" in issue.templates[index] else "")
        bodies.append(issue.templates[index].replace("{product}", product))
    if family and family in content.FAMILY_LINES and family_rng is not None:
        # (the product the first issue's words named, else one drawn for the family's words; a plan
        # of two is a monthly one, as a customer who wants to end it before it renews speaks of)
        named = content.MONTHLY_PLANS if family == "two_subscriptions" else content.PRODUCTS
        product = products[0] or _fitting(family_rng.choice(named), intents[0], price)
        products[0] = product
        bodies[0] += " " + family_rng.choice(content.FAMILY_LINES[family]).replace("{product}", product)
    if mixup and family_rng is not None:
        # (the order it means, by what it holds and when: the id it gives later is an earlier one's)
        product = products[0] or _fitting(family_rng.choice(content.PRODUCTS), intents[0], price)
        products[0] = product
        bodies[0] += " " + family_rng.choice(content.RECENT_ORDER_LINES).replace("{product}", product)
    body = bodies[0]
    joiners = list(content.MULTI_ISSUE_JOINERS)
    for extra in bodies[1:]:
        # No colon after a colon ("And another thing: suggestion: ...").
        joiners_fitting = [
            j for j in joiners if not (j.rstrip().endswith(":") and ":" in extra[:_COLON_HEAD])
        ] or joiners
        joiner = rng.choice(joiners_fitting)
        joiners.remove(joiner)  # "While I'm here, ... While I'm here, ..." reads as a form
        body += joiner + _lower_first(extra)
    impact, impact_line = _impact(intents, persona, impact_rng)
    if impact_line:
        body += " " + impact_line
        said.add("pressing")  # no closer then says again, or against it, how pressing it is
    if rng.random() < P_MISLEADING_MENTION:
        # Another topic of the same kind, as a customer would plausibly have read about.
        own = {i.article_id for i in intents}
        kind = intents[0].category
        near = [a for a in ARTICLES if a.article_id not in own and _CATEGORY_OF_ARTICLE.get(a.article_id) == kind]
        other = rng.choice(near or [a for a in ARTICLES if a.article_id not in own])
        past = (
            content.ISSUE_WORDS[_ISSUE_OF_ARTICLE[other.article_id]][0] if other.article_id in _ISSUE_OF_ARTICLE else ""
        )
        mentions = (*_MISLEADING, _MISLEADING_PAST) if past else _MISLEADING
        mention = rng.choice(mentions)
        if mention in _MISLEADING:
            said.add("searched")
        else:  # a past ticket: no opener may then say this is its first
            said.add("first_contact")
        this = content.ISSUE_WORDS[intents[0].issue_id][0] if len(intents) > 1 else "this"
        body += " " + mention.format(title=other.title, issue=past, this=this)
    openers = content.PERSONA_OPENERS[persona]
    urgent = any(i.issue_id in content.URGENT_ISSUES for i in intents)
    # (what happened just now has not been going on a while, nor has an order still to be sent: an address to
    # change is an order of the last few days; audit round 70)
    recent = urgent or any(i.issue_id in _RECENT_ORDER_ISSUES for i in intents)
    avoid = frozenset(
        ([content.A_WHILE] if recent or _SUDDEN_RE.search(body) else [])
        + ([content.LONG] if len(body.split()) < _LONG_MESSAGE_WORDS else [])
    )
    distractor = ""
    if rng.random() < P_DISTRACTOR and persona != "angry":  # an angry customer makes no small talk
        distractor = rng.choice(content.DISTRACTORS)
    if distractor:
        # Before the issue, never after it: a closer ("Can you help me with this?") must follow
        # the problem, not the small talk; and after no opener that leads into the problem
        # ("so here goes: ", "not sure who to ask, but ").
        openers = tuple(line for line in openers if not line[0].endswith(content.LEADS_INTO_THE_ISSUE))
        # ... and never with an urgent problem. (Its sentence is drawn, and the openers narrowed,
        # all the same: the rest of the ticket is drawn as before.)
        body = body if urgent else f"{distractor} {body}"
    kinds = {content.ISSUE_WORDS[i.issue_id][2] for i in intents}
    opener, note = _persona_line(openers, kinds, said, rng, avoid)
    first_sentence = _FIRST_SENTENCE_RE.match(body)
    if opener.endswith(": ") and first_sentence is not None and ":" in first_sentence.group():
        opener = opener[:-2] + ". "  # no colon after a colon ("... doing this right: my parcel: ...")
    closer, _ = _persona_line(content.PERSONA_CLOSERS[persona], kinds, said | {note}, rng, avoid - {content.A_WHILE})
    if closer.endswith("?") and body.endswith("?"):
        closer = ""  # "Could you correct it on my order? Can you help me with this?" asks twice
    if opener and not opener.endswith(". "):  # "Hi there, " and "I've had enough: " go on with a small letter
        body = _lower_first(body)
    return f"{opener}{body}{closer}".strip(), tuple(template_ids), tuple(products), impact, impact_line


def _redraw_an_amount_below_every_product(
    intents: tuple[IssueType, ...], tier: str, policy: PolicyVariant, facts: dict[str, str], rng: random.Random
) -> None:
    """The expert ticket's amount is an order's total (the order in question's, or a declined checkout's),
    and no order costs less than the cheapest product: one drawn below it is drawn again, from `rng` (a
    generator of its own, so that no other draw of the ticket moves)."""
    from supportenv.world.system_of_record import CHEAPEST_CENTS

    if "amount" not in facts:
        return
    while round(float(facts["amount"]) * 100) < CHEAPEST_CENTS:
        facts["amount"] = _fact_value("amount", _drawn_for(intents, "amount"), tier, policy, rng)


P_FAMILY = 0.9  # how often an expert ticket whose first issue has a judgement family draws it


def _draw_family(
    split: str,
    intents: tuple[IssueType, ...],
    tier: str,
    facts: dict[str, str],
    policy: PolicyVariant,
    rng: random.Random,
) -> str:
    """The judgement family of the expert ticket's first issue (catalog.CLAIM_FAMILIES), or ""
    (the claim stands). Only the test split draws the held-out families; a refund asked for above
    the cap is escalated, so it is never one found issued already, outside the return window or
    refunded in part."""
    from supportenv.world.system_of_record import products_fitting

    families = [f for f in CLAIM_FAMILIES.get(intents[0].issue_id, ()) if split == "test" or f not in HELD_OUT_FAMILIES]
    if not families or rng.random() >= P_FAMILY:
        return ""
    family = rng.choices(families, weights=[FAMILY_WEIGHTS.get(f, 1) for f in families])[0]
    if _shares_the_order(intents) or needs_escalation(intents[0], tier, facts, policy):
        return ""  # (one claim about the order per ticket, and none that policy sends to a human)
    if family == "refund_never_issued" and float(facts.get("amount", "inf")) > policy.refund_cap(tier):
        return ""  # (a refund the desk makes itself: never one policy sends to a human)
    if family == "shipping_not_overcharge" and float(facts.get("amount", "0")) < _SHIPPED_AT_LEAST:
        return ""  # (a charge that is mostly the shipping fee would be an odd purchase)
    if "amount" in facts and not products_fitting(facts["amount"], {i.issue_id for i in intents}, family):
        return ""  # (an order no product lists believably at: one item of several, at the amount, dearer than any)
    return family


# How much likelier a family is drawn than its issue's others (1 when not named): an item of several
# sent back asks the desk to work out an amount, several orders charged twice to go through them all.
_SHIPPED_AT_LEAST = 30.0  # dollars: the least charge whose difference from the items is a shipping fee
FAMILY_WEIGHTS = {"item_of_several": 3, "several_duplicates": 2}


def _shares_the_order(intents: tuple[IssueType, ...]) -> bool:
    """Whether a later issue is about the first issue's order too (content.ONE_ORDER_PAIRS)."""

    def about_an_order(issue: IssueType) -> bool:
        return issue.knows("order_id")

    return about_an_order(intents[0]) and any(about_an_order(i) for i in intents[1:])


# How many days ago (a range) a charge the records show was made, where the customer's charge date
# must be recent: an authorisation that has not dropped yet is days old, not months; a checkout
# that keeps failing failed lately; a plan's renewal the customer wants to stop was charged lately.
_RECENT_CHARGE_DAYS = {
    "pending_authorisation": (1, 4),
    "duplicate_already_refunded": (3, 10),
    "several_duplicates": (3, 20),  # ("other orders this month")
    "refund_never_issued": (24, 34),  # (delivered, sent back, at the warehouse for ten days and more)
    "refund_status": (14, 30),  # (a return chased now was bought weeks ago, not months)
    "payment_failure": (0, 3),
    "subscription_cancel": (18, 28),  # (renewing within days: "about to renew")
}


def _date_the_charge_lately(
    intents: tuple[IssueType, ...], family: str, facts: dict[str, str], rng: random.Random
) -> None:
    """Redraw the expert ticket's charge date as recent where its records need it (_RECENT_CHARGE_DAYS:
    by the judgement family, else by the issue the charge date belongs to)."""
    from supportenv.world.system_of_record import iso_days_ago

    owner = next((i.issue_id for i in intents if i.knows("charge_date")), "")
    days = _RECENT_CHARGE_DAYS.get(family) or _RECENT_CHARGE_DAYS.get(owner)
    if days:
        facts["charge_date"] = iso_days_ago(rng.randrange(*days))


def _date_the_charge_as_the_words_do(
    intents: tuple[IssueType, ...], template_ids: tuple[str, ...], facts: dict[str, str]
) -> None:
    """An order charged when the words of the issue the charge date belongs to time it: "Returned the item
    two weeks ago" of an order bought 20-24 days ago, not 15 (audit round 77) nor 30. Moved by no draw, so
    that no other one changes."""
    from supportenv.world.system_of_record import days_before_today, days_the_words_say, iso_days_ago

    owner = next((i.issue_id for i in intents if i.knows("charge_date")), "")
    said = days_the_words_say([t for t in template_ids if t.startswith(f"{owner}/")])
    drawn = days_before_today(facts["charge_date"]) if facts.get("charge_date") else said
    if said and not said <= drawn < said + 5:  # (nor much older: "two weeks ago", not a month)
        facts["charge_date"] = iso_days_ago(said + drawn % 5)


P_MIXUP = 0.35  # how often an expert ticket about an order gives the id of an earlier order of the same product


_MIXUP_TENURE_DAYS = 401  # the least tenure of a mixed-up ticket: its earlier order is up to 400 days old
_ORDER_TENURE_DAYS = 91  # the least tenure of an expert ticket about an order: placed up to 60 days ago


def _least_tenure(task_id: str, facts: dict[str, str], meant_order_id: str) -> int:
    """The fewest days an expert ticket's account has been open, so that its records fit in them: a
    customer who mixes two orders of one product up has had it long enough for both, one writing
    about an order or a charge for that order or charge (no account is opened after its orders)."""
    from supportenv.world.system_of_record import days_before_today

    if task_id != EXPERT_TASK_ID:
        return 0
    charged = days_before_today(facts["charge_date"]) + 1 if facts.get("charge_date") else 0
    ordered = _MIXUP_TENURE_DAYS if meant_order_id else _ORDER_TENURE_DAYS if "order_id" in facts else 0
    return max(charged, ordered)


def _draw_mixup(intents: tuple[IssueType, ...], facts: dict[str, str], rng: random.Random) -> str:
    """The id of the order the customer means, where the id it gives is of another, earlier order
    of the same product on its account (the order_id fact stays what it gives); "" when it gives
    the right one. Only where the first issue is about an order the customer names by its id."""
    if not intents[0].knows("order_id") or "order_id" not in facts:
        return ""
    if IDENTITY_FACT not in facts:
        return ""  # (the desk finds the order meant among the account's, looked up by its email)
    if rng.random() >= P_MIXUP:
        return ""
    meant = facts["order_id"]
    while meant == facts["order_id"]:
        meant = f"ORD-{rng.randrange(100000, 999999)}"
    return meant


# How often an expert ticket about a parcel's order finds the order charged wrongly, unnoticed by the customer.
P_UNNOTICED_CHARGE = 0.4
# How: a second captured payment of the order, or one payment above its listed total (a price the
# checkout showed lower than the card was charged).
UNNOTICED_CHARGES = ("duplicate", "overcharge")
# The issues about an order's parcel, whose order may hold a charge the customer never saw; never
# beside an issue about money, whose own payments are the case (a double charge, a refund, ...).
_PARCEL_ISSUES = ("delayed_delivery", "lost_package", "address_change")
_MONEY_ISSUES = (
    "double_charge",
    "wrong_amount",
    "refund_request",
    "refund_status",
    "payment_failure",
    "price_adjustment",
)


def _draw_unnoticed_charge(intents: tuple[IssueType, ...], facts: dict[str, str], rng: random.Random) -> str:
    """How the order a ticket about a parcel names was charged wrongly without the customer noticing
    ("" if it was not): only where the customer knows what verifies it (its account email and the
    order id), as the desk's refund needs it. Drawn from a generator of its own, so that it moves no
    other draw of the ticket."""
    issues = {i.issue_id for i in intents}
    if not issues & set(_PARCEL_ISSUES) or issues & set(_MONEY_ISSUES):
        return ""
    if "order_id" not in facts or IDENTITY_FACT not in facts or rng.random() >= P_UNNOTICED_CHARGE:
        return ""
    return rng.choice(UNNOTICED_CHARGES)


# How often an expert ticket finds the account signed in lately from a device and a town it does not
# know: on a locked account, and on any other whose email the case needs (where the customer writes about
# something else, and the desk reads the account all the same); whose the sign-in was, only the customer
# can say.
P_UNKNOWN_SIGN_IN = 0.5
P_UNKNOWN_SIGN_IN_ELSEWHERE = 0.15
UNKNOWN_SIGN_INS = ("theirs", "stranger")
# A sign-in someone else made is a takeover: escalated to security, as the customer's own report would be.
TAKEOVER = "account_takeover"
# (never beside an issue already about who is signed in, nor one a human takes over: the escalation a
# stranger's sign-in needs must be its own to be earned)
_LOCKED = "account_locked"
_NOT_BESIDE_A_SIGN_IN = ("account_takeover", "two_factor_lost")


def _draw_unknown_sign_in(
    intents: tuple[IssueType, ...],
    tier: str,
    facts: dict[str, str],
    policy: PolicyVariant,
    needed: tuple[str, ...],
    rng: random.Random,
) -> str:
    """Whose the unknown latest sign-in of the account was ("" if there is none), where the case needs the
    account's email (`needed`: the facts it needs), so that the desk reads the account: drawn from a
    generator of its own, so that it moves no other draw of the ticket."""
    issues = {i.issue_id for i in intents}
    if issues & set(_NOT_BESIDE_A_SIGN_IN) or IDENTITY_FACT not in needed:
        return ""
    if any(needs_escalation(i, tier, facts, policy) for i in intents):
        return ""
    if rng.random() >= (P_UNKNOWN_SIGN_IN if _LOCKED in issues else P_UNKNOWN_SIGN_IN_ELSEWHERE):
        return ""
    return rng.choice(UNKNOWN_SIGN_INS)


# How often an expert ticket asking for an address change comes from an impostor: someone who has the
# account email (a leaked list, a shared inbox) but neither an order id nor a card of the account, and wants
# a parcel sent elsewhere. It cannot be verified however it pushes: the desk changes nothing, tells it the
# details do not match, tells it nothing the records hold, and routes the ticket to security as a suspected
# takeover. Rare, as fraud is: a fixed policy that refuses every address change fails the honest ones.
P_IMPOSTOR = 0.15
# ... and as often, the customer is the holder and mistypes its order id: the first check fails as an
# impostor's does, and only the other proof (its card) or the id asked for again tells them apart.
P_MISTYPED = 0.15
IMPOSTOR_ISSUES = ("address_change",)
# (the words of an address a slip of the fingers got wrong: the holder's address would then be the
# impostor's but for a typo)
_NOT_FOR_AN_IMPOSTOR = {"address_change": frozenset((2, 5))}
NEW_ADDRESS = "new_address"  # (asked of an impostor as of anyone; once its details fail, not needed)
IMPOSTOR = "impostor"  # the "family" an impostor's opening words are drawn for (_fits_the_records)
MISTYPED = "mistyped"


def _draw_impostor(task_id: str, intents: tuple[IssueType, ...], rng: random.Random) -> str:
    """Whether the expert ticket's customer is an impostor (P_IMPOSTOR: "impostor"), or the holder who mistypes
    its order id (P_MISTYPED: "mistyped"), or neither (""): only on a ticket whose first issue asks for a change
    an impostor would want (IMPOSTOR_ISSUES), which then raises that one alone, so that no other issue is
    answered on the email alone before the verification fails. Drawn from a generator of its own."""
    if task_id != EXPERT_TASK_ID or intents[0].issue_id not in IMPOSTOR_ISSUES:
        return ""
    draw = rng.random()
    return IMPOSTOR if draw < P_IMPOSTOR else MISTYPED if draw < P_IMPOSTOR + P_MISTYPED else ""


def _mistype(facts: dict[str, str], rng: random.Random) -> str:
    """The customer's order id, mistyped in its facts (two neighbouring digits swapped, or one digit off), with
    the card it paid with, which verifies it: the id of the order it means is returned."""
    meant = facts["order_id"]
    digits = list(meant.split("-", 1)[1])
    given = meant
    while given == meant or given.split("-", 1)[1][0] == "0":
        typo = digits.copy()
        at = rng.randrange(len(typo) - 1)
        if rng.random() < 0.5:
            typo[at], typo[at + 1] = typo[at + 1], typo[at]
        else:
            typo[at] = str((int(typo[at]) + rng.choice((1, 9))) % 10)
        given = "ORD-" + "".join(typo)
    facts["order_id"] = given
    facts.setdefault("card_last_four", f"{rng.randrange(0, 10000):04d}")
    facts.pop("tracking_number", None)  # (none read off a confirmation it mistyped the id of)
    return meant


def _impostor_proofs(facts: dict[str, str], rng: random.Random) -> tuple[tuple[str, str], ...]:
    """The impostor's made-up order id and card go in its facts (what it gives); the holder's own, which
    the records hold, are returned. The impostor knows no tracking number."""

    def draw(name: str) -> str:
        return f"ORD-{rng.randrange(100000, 999999)}" if name == "order_id" else f"{rng.randrange(0, 10000):04d}"

    holder = []
    for name in ("order_id", "card_last_four"):
        own, given = draw(name), facts.get(name, "")
        while not given or given == own:
            given = draw(name)
        facts[name] = given
        holder.append((name, own))
    facts.pop("tracking_number", None)
    return tuple(holder)


def _date_the_order_meant_lately(
    intents: tuple[IssueType, ...], family: str, facts: dict[str, str], rng: random.Random
) -> None:
    """The order a customer calls recent was paid lately (its charge date, where the customer gives
    one and no other rule dates it), so that the earlier order it mixes it up with is the older."""
    from supportenv.world.system_of_record import iso_days_ago

    owner = next((i.issue_id for i in intents if i.knows("charge_date")), "")
    dated = family in _RECENT_CHARGE_DAYS or owner in _RECENT_CHARGE_DAYS
    if "charge_date" in facts and owner == intents[0].issue_id and not dated:
        facts["charge_date"] = iso_days_ago(rng.randrange(3, 31))


def _needs_verifying(
    intents: tuple[IssueType, ...], tier: str, facts: dict[str, str], policy: PolicyVariant, family: str = ""
) -> bool:
    """Whether the expert task's case needs a change only a verified customer may have (the first
    issue of a judgement family needs none, but one of CHANGE_FAMILIES needs its own change)."""
    changes_first = family in CHANGE_FAMILIES
    changing = intents[1:] if family and not changes_first else intents
    return any(
        (i.issue_id in VERIFIED_CHANGE_ISSUES or (changes_first and i is intents[0]))
        and not needs_escalation(i, tier, facts, policy)
        for i in changing
    )


def identity_proof(facts: dict[str, str]) -> str:
    """The fact that, with the account email, verifies the customer: its order id, or else its card."""
    return "order_id" if "order_id" in facts else "card_last_four"


def _add_identity_proofs(
    intents: tuple[IssueType, ...],
    facts: dict[str, str],
    tier: str,
    policy: PolicyVariant,
    rng: random.Random,
    family: str = "",
) -> None:
    """The expert task's customer knows what proves who it is (its account email, and its order id
    or card) and what the desk looks its records up by."""
    wanted = [f for i in intents for f in DESK_FACTS.get(i.issue_id, ())]
    # (a judgement family's customer knows them too, as any customer would, though nothing is to change)
    if family or _needs_verifying(intents, tier, facts, policy, family):
        wanted += [IDENTITY_FACT, identity_proof(facts)]
    for name in dict.fromkeys(wanted):
        if name not in facts:
            facts[name] = _fact_value(name, intents[0], tier, policy, rng)


def _expected(
    intents: tuple[IssueType, ...],
    tier: str,
    impact: str,
    facts: dict[str, str],
    policy: PolicyVariant,
    task_id: str = "",
    family: str = "",
    mixup: bool = False,
    takeover: bool = False,
    impostor: bool = False,
) -> Expected:
    primary = intents[0]
    escalating = tuple(i for i in intents if needs_escalation(i, tier, facts, policy))
    # (a sign-in the customer did not make, found on the records: a takeover, escalated as one; and an
    # impostor's attempt, whose own issue is refused, not answered)
    escalating += (ISSUE_TYPES_BY_ID[TAKEOVER],) if takeover or impostor else ()
    needed: list[str] = []
    for issue in intents:
        needed.extend(f for f in issue.required_facts if f not in needed)
    if task_id == EXPERT_TASK_ID:
        desk = [f for i in intents for f in DESK_FACTS.get(i.issue_id, ())]
        if mixup:
            desk.append(IDENTITY_FACT)  # (the account's orders, where the one meant is found, by its email)
        if _needs_verifying(intents, tier, facts, policy, family):
            desk += [IDENTITY_FACT, identity_proof(facts)]
        if impostor:
            desk += ["card_last_four"]  # (both proofs: the one asked for first did not match)
        needed.extend(f for f in dict.fromkeys(desk) if f not in needed)
    return Expected(
        category=primary.category,
        issue_type=primary.issue_id,
        priority=ticket_priority(impact),
        facts=tuple(needed),
        article_id=primary.article_id,
        department=(escalating[0] if escalating else primary).department,
        escalate=bool(escalating),
        escalate_intents=tuple(i.issue_id for i in escalating),
        solvable=() if impostor else tuple(i.issue_id for i in intents if i not in escalating),
        identity_required=any(i.identity_required for i in intents),
        callback_allowed=tier in ("premium", "enterprise"),
    )


# Bounded so that server memory stays flat however many episodes are open. The world key is
# part of the cache key, so worlds never share an entry.
@lru_cache(maxsize=256)
def generate(task_id: str, split: str, seed: int, world_key: bytes | None = None) -> Scenario:
    """The scenario for (task_id, split, seed) in the world of `world_key` (None: the public
    world). Pure; cached because it is immutable."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    rng = rng_for(task_id, split, seed, world_key=world_key)
    tier = rng.choices(("regular", "premium", "enterprise"), weights=(5, 3, 2))[0]
    persona = rng.choice(("terse", "verbose", "angry", "polite", "confused"))
    held_out_policy = split == "test" and rng.random() < P_HELD_OUT_POLICY
    policy = POLICY_VARIANTS[rng.choice(HELD_OUT_POLICY_VARIANTS) if held_out_policy else "standard"]
    intents = _pick_intents(task_id, tier, rng)
    who = _draw_impostor(task_id, intents, rng_for(task_id, split, seed, "impostor", world_key=world_key))
    impostor, mistyped = who == IMPOSTOR, who == MISTYPED
    if who:
        intents = intents[:1]  # (the one change it is after)

    facts: dict[str, str] = {}
    for issue in intents:
        for name in (*issue.required_facts, *issue.extra_facts):
            if name not in facts:
                facts[name] = "" if name in _WORDED_FACTS else _fact_value(name, issue, tier, policy, rng)
    if IDENTITY_FACT not in facts and rng.random() < 0.5:
        facts[IDENTITY_FACT] = _fact_value(IDENTITY_FACT, intents[0], tier, policy, rng)
    family, meant_order_id, unnoticed, unknown_sign_in, price = "", "", "", "", None
    holder_proofs: tuple[tuple[str, str], ...] = ()
    if who:
        _add_identity_proofs(intents, facts, tier, policy, rng)
        proofs_rng = rng_for(task_id, split, seed, "impostor proofs", world_key=world_key)
        if impostor:
            holder_proofs = _impostor_proofs(facts, proofs_rng)
        else:
            meant_order_id = _mistype(facts, proofs_rng)
    elif task_id == EXPERT_TASK_ID:
        amount_rng = rng_for(task_id, split, seed, "amount", world_key=world_key)
        _redraw_an_amount_below_every_product(intents, tier, policy, facts, amount_rng)
        # (drawn from a generator of its own, so that it changes no other draw)
        family_rng = rng_for(task_id, split, seed, "family", world_key=world_key)
        family = _draw_family(split, intents, tier, facts, policy, family_rng)
        if "charge_date" in facts:
            _date_the_charge_lately(intents, family, facts, family_rng)
        _add_identity_proofs(intents, facts, tier, policy, rng, family)
        mixup_rng = rng_for(task_id, split, seed, "mixup", world_key=world_key)
        meant_order_id = _draw_mixup(intents, facts, mixup_rng)
        if meant_order_id:
            _date_the_order_meant_lately(intents, family, facts, mixup_rng)
        unnoticed_rng = rng_for(task_id, split, seed, "unnoticed charge", world_key=world_key)
        unnoticed = _draw_unnoticed_charge(intents, facts, unnoticed_rng)
        sign_in_rng = rng_for(task_id, split, seed, "unknown sign-in", world_key=world_key)
        needed = _expected(intents, tier, "normal", facts, policy, task_id, family, bool(meant_order_id)).facts
        unknown_sign_in = _draw_unknown_sign_in(intents, tier, facts, policy, needed, sign_in_rng)
        product_rng = rng_for(task_id, split, seed, "product", world_key=world_key)
        price = _order_price(intents, facts, family, unnoticed, product_rng)

    # The impact is drawn apart from the rest, so that the words it adds leave every other draw as it was.
    impact_rng = rng_for(task_id, split, seed, "impact", world_key=world_key)
    words_rng = rng_for(task_id, split, seed, "family words", world_key=world_key)
    meant, template_ids, products, impact, impact_line = _compose_message(
        intents,
        split,
        persona,
        rng,
        impact_rng,
        IMPOSTOR if who else family if task_id == EXPERT_TASK_ID else None,
        words_rng,
        bool(meant_order_id) and not mistyped,  # (a mistyped id is no earlier order's: nothing to say of it)
        price,
        facts,
    )
    # The facts that must fit the customer's words (its device, its app), in the order drawn.
    words = [issue.templates[int(t.rsplit("/", 1)[1])] for issue, t in zip(intents, template_ids, strict=True)]
    if task_id == EXPERT_TASK_ID:
        _date_the_charge_as_the_words_do(intents, template_ids, facts)
    for name in [n for n, value in facts.items() if not value]:
        owners = [(i, w) for i, w in zip(intents, words, strict=True) if i.knows(name)]
        value = _worded_fact(name, owners, tier, policy, rng)
        if value is None:
            del facts[name]
        else:
            facts[name] = value
    message = _typo(meant, rng, keep=impact_line) if rng.random() < P_TYPO else meant
    low, high = _REVENUE[tier]
    # The mood shown matches the words (as meant, before any typo): angry customers start
    # angry, polite ones calm, and upset words are not met with a neutral mood.
    low_mood, high_mood = starting_mood_range(persona, meant)
    sentiment = round(rng.uniform(low_mood, high_mood), 2)
    return Scenario(
        task_id=task_id,
        split=split,
        seed=seed,
        world=world_id(world_key),
        ticket_id=ticket_id(task_id, split, seed, world_key),
        intents=intents,
        impact=impact,
        tier=tier,
        persona=persona,
        tenure_days=max(rng.randrange(3, 3650), _least_tenure(task_id, facts, "" if mistyped else meant_order_id)),
        # What a customer has spent in all is at least what it paid for the order in question.
        total_revenue=round(max(rng.uniform(low, high), 1.5 * float(facts.get("amount", 0))), 2),
        initial_sentiment=sentiment,
        patience=_PATIENCE.get(persona, 5) + 2 * (len(intents) - 1),
        hidden_facts=tuple(facts.items()),
        opening_message=message,
        template_ids=template_ids,
        policy=policy,
        policy_text=policy_rules(policy) + (desk_rules(policy) if task_id == EXPERT_TASK_ID else ()),
        prefix_steps=int(rng.random() < P_COLLEAGUE_ASKED) if task_id == "action_selection" else 0,
        expected=_expected(
            intents,
            tier,
            impact,
            facts,
            policy,
            task_id,
            family,
            bool(meant_order_id),
            takeover=unknown_sign_in == "stranger",
            impostor=impostor,
        ),
        products=products,
        # The records draw from a generator of their own, so that they change no other draw.
        record_seed=rng_for(task_id, split, seed, "records", world_key=world_key).getrandbits(64),
        family=family,
        meant_order_id=meant_order_id,
        unnoticed_charge=unnoticed,
        unknown_sign_in=unknown_sign_in,
        holder_proofs=holder_proofs,
        order_id_mistyped=mistyped,
    )


picklable(Expected, Briefing, Scenario)  # pickle and copy alike on both builds
