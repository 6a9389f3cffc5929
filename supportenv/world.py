"""Seeded scenario generation: (task_id, split, seed) -> one ticket, always the same.

Each scenario draws from its own `random.Random`, seeded from a SHA-256 of the key,
so no global random state is touched and results are identical in every process.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass
from functools import lru_cache

from supportenv.catalog import (
    ARTICLES,
    ISSUE_TYPES,
    PRIORITIES,
    REFUND_CAPS,
    IssueType,
)

SPLITS = ("train", "validation", "test")
WORLD_VERSION = "world-1"

_PERSONA_OPENERS = {
    "terse": ("", ""),
    "verbose": (
        "Hello there, I hope you are well. I have been a customer for a while and ",
        " I have tried everything I can think of and would really appreciate your help with this.",
    ),
    "angry": ("This is ridiculous. ", " Fix it NOW."),
    "polite": ("Hi, ", " Thank you so much for your help."),
    "confused": ("Um, I'm not sure who to ask, but ", " Sorry if this is the wrong place."),
}
_TOKEN_RE = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Expected:
    """What correct handling of this ticket looks like (hidden from the agent)."""

    category: str
    priority: str
    facts: tuple[str, ...]
    article_id: str
    department: str
    escalate: bool
    callback_allowed: bool


@dataclass(frozen=True)
class Scenario:
    task_id: str
    split: str
    seed: int
    ticket_id: str
    issue: IssueType
    tier: str
    persona: str
    tenure_days: int
    total_revenue: float
    initial_sentiment: float
    patience: int
    hidden_facts: tuple[tuple[str, str], ...]
    opening_message: str
    kb_matches: tuple[tuple[str, float], ...]
    expected: Expected

    def fact(self, name: str) -> str | None:
        for key, value in self.hidden_facts:
            if key == name:
                return value
        return None


def tokenize(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower())


def _rng_for(task_id: str, split: str, seed: int) -> random.Random:
    digest = hashlib.sha256(f"supportenv|{WORLD_VERSION}|{task_id}|{split}|{seed}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _fact_value(name: str, issue: IssueType, tier: str, rng: random.Random) -> str:
    if name == "order_id":
        return f"ORD-{rng.randrange(100000, 999999)}"
    if name == "amount":
        if issue.escalation == "over_refund_cap":
            # Straddle the tier's cap so that some refunds must be escalated.
            cap = REFUND_CAPS[tier]
            return f"{rng.choice((0.3, 0.6, 0.9, 1.4, 2.2)) * cap:.2f}"
        return f"{rng.randrange(900, 40000) / 100:.2f}"
    if name == "card_last_four":
        return f"{rng.randrange(0, 10000):04d}"
    if name == "account_email":
        user = rng.choice(("alex", "sam", "priya", "chen", "maria", "tom", "fatima", "jo"))
        return f"{user}.{rng.randrange(10, 99)}@{rng.choice(('example.com', 'mail.test', 'corp.example'))}"
    if name == "error_code":
        if issue.issue_id == "error_403":
            return f"403-{rng.choice(('ROLE', 'SCOPE', 'ACL'))}-{rng.randrange(100, 999)}"
        return f"E{rng.randrange(1000, 9999)}"
    if name == "tracking_number":
        return "1Z" + "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ0123456789") for _ in range(10))
    if name == "device_model":
        return rng.choice(("Pixel 8", "iPhone 15", "Galaxy S23", "iPad Air", "OnePlus 12"))
    if name == "charge_date":
        return f"2026-{rng.randrange(1, 12):02d}-{rng.randrange(1, 28):02d}"
    raise ValueError(f"no generator for fact {name!r}")


def _raise_priority(priority: str) -> str:
    return PRIORITIES[min(PRIORITIES.index(priority) + 1, len(PRIORITIES) - 1)]


def needs_escalation(issue: IssueType, tier: str, facts: dict[str, str]) -> bool:
    if issue.escalation == "always":
        return True
    if issue.escalation == "enterprise":
        return tier == "enterprise"
    if issue.escalation == "over_refund_cap":
        return float(facts["amount"]) > REFUND_CAPS[tier]
    return False


def kb_matches(message: str, limit: int = 3) -> tuple[tuple[str, float], ...]:
    """Score every article by keyword overlap with the message; best first."""
    words = set(tokenize(message))
    scored = []
    for index, article in enumerate(ARTICLES):
        hits = sum(1 for k in article.keywords if k in words)
        if hits:
            scored.append((-hits / len(article.keywords), index, article.article_id))
    scored.sort()
    return tuple((article_id, round(-score, 3)) for score, _, article_id in scored[:limit])


@lru_cache(maxsize=2048)
def generate(task_id: str, split: str, seed: int) -> Scenario:
    """The scenario for (task_id, split, seed). Pure; cached because it is immutable."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(SPLITS)}")
    rng = _rng_for(task_id, split, seed)
    issue = ISSUE_TYPES[rng.randrange(len(ISSUE_TYPES))]
    tier = rng.choices(("regular", "premium", "enterprise"), weights=(5, 3, 2))[0]
    persona = rng.choice(tuple(_PERSONA_OPENERS))
    tenure_days = rng.randrange(3, 3650)
    revenue_range = {"regular": (10, 800), "premium": (800, 8000), "enterprise": (20000, 250000)}[tier]
    total_revenue = round(rng.uniform(*revenue_range), 2)
    sentiment = -0.7 if persona == "angry" else round(rng.uniform(-0.4, 0.1), 2)
    patience = {"angry": 3, "terse": 4}.get(persona, 5)

    facts = {name: _fact_value(name, issue, tier, rng) for name in (*issue.required_facts, *issue.extra_facts)}
    template = issue.openings[rng.randrange(len(issue.openings))]
    before, after = _PERSONA_OPENERS[persona]
    body = template[0].lower() + template[1:] if before.endswith(" ") and before.strip() else template
    opening = f"{before}{body}{after}".strip()

    priority = issue.severity if tier != "enterprise" else _raise_priority(issue.severity)
    expected = Expected(
        category=issue.category,
        priority=priority,
        facts=issue.required_facts,
        article_id=issue.article_id,
        department=issue.department,
        escalate=needs_escalation(issue, tier, facts),
        callback_allowed=tier in ("premium", "enterprise"),
    )
    return Scenario(
        task_id=task_id,
        split=split,
        seed=seed,
        ticket_id=f"TKT-{split[:2].upper()}-{seed:06d}-{issue.category[:3].upper()}",
        issue=issue,
        tier=tier,
        persona=persona,
        tenure_days=tenure_days,
        total_revenue=total_revenue,
        initial_sentiment=sentiment,
        patience=patience,
        hidden_facts=tuple(facts.items()),
        opening_message=opening,
        kb_matches=kb_matches(opening),
        expected=expected,
    )
