"""Agent policies. Each maps the library's Observation to an Action, so the same
policy runs in-process or against the gRPC services.

- `rule`: a deterministic rule-based agent that reads only what any agent sees
  (the ticket text, tier, policy text and the public knowledge base).
- `random`: seeded uniform choice over well-formed actions; a floor to beat.
"""

from __future__ import annotations

import random
from typing import Protocol

from supportenv.actions import ACTION_KINDS, Action
from supportenv.catalog import (
    ARTICLES,
    ARTICLES_BY_ID,
    CATEGORIES,
    DEPARTMENTS,
    PRIORITIES,
    REFUND_CAPS,
    REQUESTABLE_FIELDS,
)
from supportenv.episode import Observation


class Policy(Protocol):
    name: str

    def begin(self, task_id: str, seed: int) -> None:
        """Called before each episode."""

    def act(self, obs: Observation) -> Action: ...


# Keyword rules of the rule-based agent: first match wins.
_CATEGORY_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("account", ("hacked", "compromised", "unauthorized", "don't recognise", "locked", "log in", "login", "password")),
    ("refund", ("refund", "money back", "returned")),
    ("billing", ("charged", "charge", "declined", "payment", "pay ")),
    ("delivery", ("package", "parcel", "delivery", "arrive", "shipping", "tracking", "delivered")),
    ("technical", ("403", "forbidden", "crash", "error", "freezes", "app", "dashboard")),
)
_URGENT_WORDS = ("hacked", "compromised", "unauthorized", "don't recognise")
_HIGH_WORDS = ("twice", "double", "two times", "lost", "missing", "never came", "locked")
_FACTS_BY_CATEGORY = {
    "billing": ("order_id", "amount"),
    "delivery": ("order_id", "tracking_number"),
    "refund": ("order_id", "amount", "account_email"),
    "account": ("account_email",),
    "technical": ("error_code", "device_model"),
    "general": ("account_email",),
}
_DEPARTMENT_BY_CATEGORY = {
    "billing": "billing",
    "refund": "billing",
    "delivery": "logistics",
    "account": "accounts",
    "technical": "technical",
    "general": "accounts",
}


def _raise(priority: str) -> str:
    return PRIORITIES[min(PRIORITIES.index(priority) + 1, len(PRIORITIES) - 1)]


class RulePolicy:
    name = "rule"

    def begin(self, task_id: str, seed: int) -> None:
        self._task_id = task_id
        self._asked = False
        self._answered = False

    def _opening(self, obs: Observation) -> str:
        return next((text for speaker, text, _ in obs.history if speaker == "customer"), obs.customer_message).lower()

    def _category(self, text: str) -> str:
        for category, words in _CATEGORY_RULES:
            if any(w in text for w in words):
                return category
        return "general"

    def _must_escalate(self, obs: Observation, text: str, category: str) -> bool:
        if any(w in text for w in _URGENT_WORDS):
            return True
        if category == "technical" and obs.customer_tier == "enterprise" and "403" in text:
            return True
        facts = dict(obs.revealed_facts)
        if category == "refund" and "amount" in facts:
            return float(facts["amount"]) > REFUND_CAPS[obs.customer_tier]
        return False

    def act(self, obs: Observation) -> Action:
        text = self._opening(obs)
        category = self._category(text)
        if not obs.category:
            priority = (
                "urgent"
                if any(w in text for w in _URGENT_WORDS)
                else "high"
                if any(w in text for w in _HIGH_WORDS)
                else "medium"
            )
            if obs.customer_tier == "enterprise":
                priority = _raise(priority)
            return Action("classify_issue", category=category, priority=priority)
        if self._task_id == "issue_classification":
            return Action("mark_resolved", text="Classified.")
        if not self._asked:
            self._asked = True
            return Action(
                "ask_for_more_info", fields=_FACTS_BY_CATEGORY[category], text="Could you please share these details?"
            )
        if self._must_escalate(obs, text, category):
            department = "security" if any(w in text for w in _URGENT_WORDS) else _DEPARTMENT_BY_CATEGORY[category]
            if obs.assigned_department != department:
                return Action("assign_department", department=department, text="Routing per policy.")
            if not obs.escalated:
                return Action("escalate_to_human", text="I'm sorry for the trouble; a specialist will take this over.")
            return Action("mark_resolved", text="Escalated.")
        if not self._answered and obs.kb_matches:
            self._answered = True
            article = ARTICLES_BY_ID[obs.kb_matches[0][0]]
            steps = "; ".join(s.lower() for s in article.steps)
            return Action(
                "respond_with_solution",
                text=f"Thank you for reaching out, I'm sorry for the trouble. Here is what we will do: {steps}.",
                article_id=article.article_id,
            )
        return Action("mark_resolved", text="Answered.")


class RandomPolicy:
    """Uniformly random well-formed actions, seeded per episode for reproducibility."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self._base_seed = seed
        self._rng = random.Random(seed)

    def begin(self, task_id: str, seed: int) -> None:
        self._rng = random.Random(f"{self._base_seed}|{task_id}|{seed}")

    def act(self, obs: Observation) -> Action:
        rng = self._rng
        kind = rng.choice(ACTION_KINDS)
        if kind == "classify_issue":
            return Action(kind, category=rng.choice(CATEGORIES), priority=rng.choice(PRIORITIES))
        if kind == "ask_for_more_info":
            return Action(kind, fields=(rng.choice(REQUESTABLE_FIELDS),))
        if kind == "respond_with_solution":
            article = rng.choice(ARTICLES)
            return Action(kind, text=f"Please try this: {article.steps[0].lower()}.", article_id=article.article_id)
        if kind == "suggest_knowledge_base":
            return Action(kind, article_id=rng.choice(ARTICLES).article_id)
        if kind == "assign_department":
            return Action(kind, department=rng.choice(DEPARTMENTS))
        return Action(kind)


POLICIES = {"rule": RulePolicy, "random": RandomPolicy}


def make_policy(name: str) -> Policy:
    try:
        return POLICIES[name]()
    except KeyError:
        raise SystemExit(f"unknown policy {name!r}; choose from {', '.join(POLICIES)}") from None
