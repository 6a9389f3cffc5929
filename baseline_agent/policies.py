"""Agent policies. Each maps the library's Observation to an Action, so the same
policy runs in-process or against the gRPC services.

- `rule`: deterministic, rule-based; reads only what any agent sees (the ticket text,
  tier, facts given, policy text and the public knowledge base).
- `random`: seeded uniform choice over well-formed actions; the floor to beat.
- `oracle`: reads the hidden scenario and follows the expert; proves full marks are reachable.
- `llm`: a language model behind an OpenAI-compatible endpoint (`llm_policy.py`).
- exploits that a sound grader must not reward: `noop` (closes at once), `escalate_all`,
  `spam` (repeats one action), `classify_only` and `keyword_stuffer` (answers with every
  solution phrase it knows); and fixed scripts that never read the customer's words:
  `constant_triage` (one triage, its checklist, its answer, close), `top_kb` (keeps a
  colleague's triage or sets a fixed one, then trusts the top knowledge-base suggestion),
  `ask_everything` (the same, asking for every field) and `top_kb_escalate` (the same, then
  routes and escalates every ticket).
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import ClassVar, Protocol

from baseline_agent.llm_policy import LLMPolicy
from supportenv import expert
from supportenv.actions import ACTION_KINDS, MAX_TEXT_CHARS, Action, use_tool
from supportenv.catalog import (
    ARTICLE_NEEDS,
    ARTICLES,
    ARTICLES_BY_ID,
    CATEGORIES,
    DEPARTMENTS,
    DESK_REFUND_DAYS,
    ISSUE_TYPE_IDS,
    ISSUE_TYPES,
    ISSUE_TYPES_BY_ID,
    PRIORITIES,
    REQUESTABLE_FIELDS,
    TOOL_KIND,
    VERIFIED_CHANGE_ISSUES,
    IssueType,
    stated_impact,
    ticket_priority,
)
from supportenv.episode import EpisodeState, Observation, step
from supportenv.replay import new_episode
from supportenv.text import message_parts
from supportenv.world import Scenario, generate, kb_matches


class Policy(Protocol):
    name: str
    stochastic: bool

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        """Called before each episode; `trial` varies the randomness of stochastic policies."""

    def act(self, obs: Observation) -> Action: ...


class _Base:
    name = "base"
    stochastic = False

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        self.task_id, self.split, self.seed, self.trial = task_id, split, seed, trial
        self.turn = 0

    def act(self, obs: Observation) -> Action:
        self.turn += 1
        return self.choose(obs)

    def choose(self, obs: Observation) -> Action:
        raise NotImplementedError


# ---- the rule-based baseline ----

# Hand-written keyword rules per issue type, checked in order; the first match wins.
_ISSUE_RULES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "account_takeover",
        ("hacked", "compromised", "recognise", "recognize", "suspicious", "somebody got in", "wasn't me"),
    ),
    ("two_factor_lost", ("two-factor", "2fa", "authenticator", "verification code", "security code", "login codes")),
    (
        "password_advice",
        (
            "strong password",
            "same password",
            "password be",
            "password manager",
            "more secure",
            "good password",
            "better password",
            "short password",
        ),
    ),
    (
        "notification_settings",
        ("marketing emails", "newsletter", "promotional emails", "notifications", "offer emails", "fewer emails"),
    ),
    ("gift_card", ("gift card", "gift voucher", "voucher")),
    ("loyalty_points", ("points", "loyalty", "rewards")),
    (
        "price_adjustment",
        (
            "cheaper",
            "on sale",
            "sale price",
            "price dropped",
            "price went down",
            "marked down",
            "your sale",
            "price adjustment",
            "reduced just after",
        ),
    ),
    ("international_shipping", ("abroad", "overseas", "countries", "country", "customs", "international", "duties")),
    ("profile_update", ("profile", "phone number", "contact number", "mobile number", "display name", "my name")),
    ("data_deletion", ("delete my account", "my data", "erase", "gdpr", "personal information", "wipe everything")),
    ("email_change", ("change the email", "login email", "account email", "email address", "different email")),
    ("account_locked", ("locked", "blocked", "can't sign in", "disabled", "password attempts")),
    ("refund_status", ("no refund", "my refund", "refund still", "refund take", "money hasn't come back")),
    ("return_label", ("return label", "shipping label", "label", "postage")),
    ("refund_request", ("refund", "money back", "reimbursed")),
    ("double_charge", ("twice", "double", "two times", "duplicate", "two identical")),
    ("wrong_amount", ("more than the price", "overcharged", "higher", "full price", "doesn't match")),
    ("subscription_cancel", ("cancel", "subscription", "membership", "renew", "my plan")),
    ("invoice_request", ("invoice", "receipt")),
    ("payment_failure", ("declined", "payment failed", "card", "checkout keeps", "rejected")),
    ("lost_package", ("never came", "missing", "lost", "vanished", "nothing arrived", "marked it as")),
    (
        "wrong_item",
        ("wrong item", "not what i ordered", "never ordered", "wrong thing", "someone else's", "different came"),
    ),
    ("damaged_item", ("damaged", "broken", "cracked", "smashed", "dented", "crushed")),
    ("address_change", ("address", "new place", "wrong street", "where my order is going", "to my office")),
    ("delayed_delivery", ("late", "delayed", "hasn't arrived", "no sign", "waiting almost", "come and gone")),
    ("error_403", ("403", "forbidden", "access denied", "permission")),
    ("integration_failure", ("api", "integration", "webhook", "syncing", "crm", "flowing")),
    ("service_outage", ("down", "outage", "offline", "won't load", "nothing is loading", "nothing works")),
    ("app_crash", ("crash", "closes", "freezes", "shuts down", "quits")),
    ("slow_performance", ("slow", "lags", "forever", "sluggish", "almost a minute")),
    ("shipping_policy_question", ("shipping", "delivery", "express")),
    ("feature_request", ("would be great", "could you add", "feature", "suggestion", "idea for", "any plans")),
)
_CAP_RE = re.compile(r"(regular|premium|enterprise) \$(\d+)")
_DEPARTMENT_BY_CATEGORY = {
    "billing": "billing",
    "refund": "billing",
    "delivery": "logistics",
    "account": "accounts",
    "technical": "technical",
    "general": "accounts",
}
_CATEGORY_OF = {i.issue_id: i.category for i in ISSUE_TYPES}
# The help desk knows which public article covers which issue.
_ISSUE_OF_ARTICLE = {i.article_id: i.issue_id for i in ISSUE_TYPES}
_ARTICLE_OF_ISSUE = {i.issue_id: i.article_id for i in ISSUE_TYPES}
# What the stated policy says to escalate: always, or for enterprise customers.
_SECURITY = tuple(i.issue_id for i in ISSUE_TYPES if i.escalation == "always")
_OUTAGES = tuple(i.issue_id for i in ISSUE_TYPES if i.escalation == "enterprise")


class RulePolicy(_Base):
    name = "rule"

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        super().begin(task_id, split, seed, trial)
        self._asked = False
        self._answered: set[str] = set()
        self._desk_done: set[str] = set()

    @staticmethod
    def _opening(obs: Observation) -> str:
        return next((text for speaker, text, _ in obs.history if speaker == "customer"), obs.customer_message).lower()

    @staticmethod
    def guess_issue(text: str) -> str:
        """The first keyword rule that matches; failing all, the issue of the public article
        whose keywords the text shares most, and failing that a feature request."""
        for issue_id, words in _ISSUE_RULES:
            if any(w in text for w in words):
                return issue_id
        issue_articles = [a for a, _ in kb_matches(text, limit=len(ARTICLES)) if a in _ISSUE_OF_ARTICLE]
        return _ISSUE_OF_ARTICLE[issue_articles[0]] if issue_articles else "feature_request"

    @classmethod
    def guess_issues(cls, text: str) -> list[str]:
        """The issues a message raises, in order: one per part where the customer turns to
        another topic, each of another category than those before it."""
        issues: list[str] = []
        for part in message_parts(text):
            issue = cls.guess_issue(part)
            if not issues or all(_CATEGORY_OF[issue] != _CATEGORY_OF[i] for i in issues):
                issues.append(issue)
        return issues or ["feature_request"]

    def _must_escalate(self, obs: Observation, issue: str) -> bool:
        if issue in _SECURITY:
            return True
        if issue in _OUTAGES:
            return obs.customer_tier == "enterprise"
        facts = dict(obs.revealed_facts)
        if issue == "refund_request" and "amount" in facts:
            caps = {tier: float(cap) for tier, cap in _CAP_RE.findall(" ".join(obs.policy))}
            return float(facts["amount"]) > caps.get(obs.customer_tier, 100.0)
        return False

    def _desk_step(self, obs: Observation, issues: list[str]) -> Action | None:
        """The expert task's tool calls, trusting the customer's claim (the records are read only
        for a subscription's id): verify, then the change each issue asks for, once each."""
        facts = dict(obs.revealed_facts)
        order, email = facts.get("order_id", ""), facts.get("account_email", "")
        wanted: list[tuple[str, Action]] = []
        if any(i in VERIFIED_CHANGE_ISSUES and not self._must_escalate(obs, i) for i in issues):
            wanted.append(("verify", use_tool("verify_identity")))
        for issue in issues:
            if self._must_escalate(obs, issue):
                continue
            if issue in ("double_charge", "wrong_amount", "refund_request") and order and facts.get("amount"):
                wanted.append((issue, use_tool("issue_refund", order_id=order, amount=facts["amount"])))
            elif issue == "lost_package" and order:
                wanted.append((issue, use_tool("reship_order", order_id=order)))
            elif issue == "address_change" and order and facts.get("new_address"):
                wanted.append((issue, use_tool("update_address", order_id=order, new_address=facts["new_address"])))
            elif issue == "account_locked" and email:
                wanted.append((issue, use_tool("send_password_reset", account_email=email)))
            elif issue == "subscription_cancel" and email:
                if "payments" not in self._desk_done:
                    wanted.append(("payments", use_tool("look_up_payments", account_email=email)))
                else:
                    data = obs.tool_result.data if obs.tool_result else {}
                    active = [s["subscription_id"] for s in data.get("subscriptions", []) if s["status"] == "active"]
                    if active:
                        wanted.append((issue, use_tool("cancel_subscription", subscription_id=active[0])))
        for name, action in wanted:
            if name not in self._desk_done:
                self._desk_done.add(name)
                return action
        return None

    def _told(self, obs: Observation, issue: str) -> str:
        """What the answer adds of a refund the desk made: its amount and when it arrives."""
        amount = dict(obs.revealed_facts).get("amount", "")
        if issue in self._desk_done and issue in ("double_charge", "wrong_amount", "refund_request") and amount:
            return f" I have refunded ${amount} to your card; it reaches your card in {DESK_REFUND_DAYS}."
        return ""

    def choose(self, obs: Observation) -> Action:
        issues = self.guess_issues(self._opening(obs))
        if obs.issue_type in _CATEGORY_OF and obs.issue_type != issues[0]:  # a colleague's triage stands
            issues = [obs.issue_type, *(i for i in issues if _CATEGORY_OF[i] != _CATEGORY_OF[obs.issue_type])]
        if not obs.category:
            priority = ticket_priority(stated_impact(self._opening(obs)))
            return Action("classify_issue", category=_CATEGORY_OF[issues[0]], priority=priority, issue_type=issues[0])
        if self.task_id == "issue_classification":
            return Action("mark_resolved", text="Classified.")
        # What the issues' articles say they need (stated in the prompt), not the hidden truth.
        given = dict(obs.revealed_facts)
        needs = [f for i in issues for f in ARTICLE_NEEDS[_ARTICLE_OF_ISSUE[i]]]
        desk = TOOL_KIND in obs.allowed_actions
        if desk:  # the stated desk rules: the email and an order id prove who the customer is
            needs += ["account_email", "order_id"]
        wanted = tuple(dict.fromkeys(f for f in needs if f not in given))
        if not self._asked and wanted:
            self._asked = True
            return Action("ask_for_more_info", fields=wanted, text="Could you please share these details?")
        tool = self._desk_step(obs, issues) if desk else None
        if tool is not None:
            return tool
        for issue in issues:
            if issue not in self._answered and not self._must_escalate(obs, issue):
                self._answered.add(issue)
                article = ARTICLES_BY_ID[_ARTICLE_OF_ISSUE[issue]]
                steps = "; ".join(s.lower() for s in article.steps)
                text = f"Thank you for reaching out, and I'm sorry for the trouble. Here is what we will do: {steps}."
                return Action(
                    "respond_with_solution", text=text + self._told(obs, issue), article_id=article.article_id
                )
        escalating = [i for i in issues if self._must_escalate(obs, i)]
        if escalating:
            first = escalating[0]
            department = "security" if first in _SECURITY[:2] else _DEPARTMENT_BY_CATEGORY[_CATEGORY_OF[first]]
            if obs.assigned_department != department:
                return Action("assign_department", department=department, text="Routing per policy.")
            if not obs.escalated:
                return Action("escalate_to_human", text="I'm sorry for the trouble; a specialist will take this over.")
        return Action("mark_resolved", text="Handled.")


class RandomPolicy(_Base):
    """Uniformly random well-formed actions, seeded per (episode, trial)."""

    name = "random"
    stochastic = True

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        super().begin(task_id, split, seed, trial)
        self._rng = random.Random(f"random|{task_id}|{split}|{seed}|{trial}")

    def choose(self, obs: Observation) -> Action:
        rng = self._rng
        kind = rng.choice(ACTION_KINDS)
        if kind == "classify_issue":
            return Action(
                kind,
                category=rng.choice(CATEGORIES),
                priority=rng.choice(PRIORITIES),
                issue_type=rng.choice(ISSUE_TYPE_IDS),
            )
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


class OraclePolicy(_Base):
    """Reads the hidden scenario and follows the expert, tracking the episode in a
    local shadow copy (the simulation is deterministic, so it matches the server)."""

    name = "oracle"

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        super().begin(task_id, split, seed, trial)
        self._scenario: Scenario
        self._state: EpisodeState
        self._scenario, self._state = new_episode(task_id, split, seed)

    def choose(self, obs: Observation) -> Action:
        action = expert.expert_action(self._scenario, self._state, self.task_id)
        step(self._scenario, self._state, action)
        return action


class NoopPolicy(_Base):
    name = "noop"

    def choose(self, obs: Observation) -> Action:
        return Action("mark_resolved", text="Resolved.")


class EscalateAllPolicy(_Base):
    name = "escalate_all"

    def choose(self, obs: Observation) -> Action:
        if not obs.escalated:
            return Action("escalate_to_human", text="Escalating to a specialist.")
        return Action("mark_resolved", text="Escalated.")


class SpamPolicy(_Base):
    name = "spam"

    def choose(self, obs: Observation) -> Action:
        return Action("respond_with_solution", text="Thank you for contacting us, we are looking into it.")


class ClassifyOnlyPolicy(_Base):
    name = "classify_only"

    def choose(self, obs: Observation) -> Action:
        if not obs.category:
            return Action("classify_issue", category="billing", priority="medium", issue_type="payment_failure")
        return Action("mark_resolved", text="Classified.")


_MOST_PHRASES = max(len(i.solution_phrases) for i in ISSUE_TYPES)


def _phrases_that_fit(phrases: list[str]) -> str:
    """The phrases joined by "; ", as many from the first as an answer's text may hold."""
    room = MAX_TEXT_CHARS - len("Thank you! We will .")
    kept: list[str] = []
    for phrase in phrases:
        if len("; ".join([*kept, phrase])) > room:
            break
        kept.append(phrase)
    return "; ".join(kept)


class KeywordStufferPolicy(_Base):
    name = "keyword_stuffer"
    # Every issue's solution phrases, first ones first, as many as one answer may hold.
    ALL_PHRASES: ClassVar[str] = _phrases_that_fit(
        [p for rank in range(_MOST_PHRASES) for issue in ISSUE_TYPES for p in issue.solution_phrases[rank : rank + 1]]
    )

    def choose(self, obs: Observation) -> Action:
        if self.turn == 1:
            return Action("respond_with_solution", text=f"Thank you! We will {self.ALL_PHRASES}.")
        return Action("mark_resolved", text="Resolved.")


class ConstantTriagePolicy(_Base):
    """One fixed script for every ticket: the same triage, questions, answer and close."""

    name = "constant_triage"
    ISSUE = ISSUE_TYPES[0]

    def priority(self, obs: Observation) -> str:
        return ticket_priority("normal")  # the commonest guess: what a customer who says nothing gets

    def choose(self, obs: Observation) -> Action:
        issue = self.ISSUE
        script = [
            Action("classify_issue", category=issue.category, priority=self.priority(obs), issue_type=issue.issue_id),
            Action("ask_for_more_info", fields=issue.required_facts, text="Could you share these details, please?"),
            _answer_with(issue.article_id),
        ]
        return script[self.turn - 1] if self.turn <= len(script) else Action("mark_resolved", text="Resolved.")


class ConstantTriageTieredPolicy(ConstantTriagePolicy):
    """The same fixed script, its priority the policy's as if the customer said nothing of the
    impact. (The tier once changed that priority; it no longer does, so this guesses as
    constant_triage does, and stays on the scoreboard so that its figures compare.)"""

    name = "constant_triage_tiered"

    def priority(self, obs: Observation) -> str:
        return ticket_priority("normal")


@lru_cache(maxsize=1)
def _commonest_triage() -> dict[str, tuple[str, str]]:
    """Per tier, the (issue type, priority) most common on 5,000 `train` triage tickets."""
    counts: dict[str, Counter[tuple[str, str]]] = {}
    for seed in range(5_000):
        scenario = generate("issue_classification", "train", seed)
        label = (scenario.expected.issue_type, scenario.expected.priority)
        counts.setdefault(scenario.tier, Counter())[label] += 1
    return {tier: count.most_common(1)[0][0] for tier, count in sorted(counts.items())}


class CommonestTriagePolicy(ConstantTriagePolicy):
    """The same fixed script, with the triage most common among training tickets of the
    customer's tier: what an attacker who studied the training split would guess, words unread."""

    name = "commonest_triage"

    def choose(self, obs: Observation) -> Action:
        issue_id, priority = _commonest_triage()[obs.customer_tier]
        self.ISSUE = ISSUE_TYPES_BY_ID[issue_id]
        self._priority = priority
        return super().choose(obs)

    def priority(self, obs: Observation) -> str:
        return self._priority


def _answer_with(article_id: str) -> Action:
    """A polite answer that quotes an article's steps and cites it."""
    steps = "; ".join(s.lower() for s in ARTICLES_BY_ID[article_id].steps)
    return Action(
        "respond_with_solution",
        text=f"Thank you for reaching out, and I'm sorry for the trouble. Please {steps}.",
        article_id=article_id,
    )


class TopKnowledgeBasePolicy(_Base):
    """Trusts whatever the help desk shows instead of the customer's words: a colleague's
    triage if there is one (else one fixed triage), then the top knowledge-base suggestion:
    asks what that article needs, answers with its steps, closes."""

    name = "top_kb"
    ASK_ALL = False
    ESCALATE = False

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        super().begin(task_id, split, seed, trial)
        self._done: set[str] = set()

    @staticmethod
    def _issue(obs: Observation):
        if obs.issue_type:
            return ISSUE_TYPES_BY_ID.get(obs.issue_type, ISSUE_TYPES[0])
        top = obs.kb_matches[0][0] if obs.kb_matches else ""
        return next((i for i in ISSUE_TYPES if i.article_id == top), ISSUE_TYPES[0])

    def choose(self, obs: Observation) -> Action:
        issue = self._issue(obs)
        if not obs.category:
            return Action(
                "classify_issue", category=issue.category, priority=ticket_priority("normal"), issue_type=issue.issue_id
            )
        article = obs.kb_matches[0][0] if obs.kb_matches else issue.article_id
        steps = [
            ("ask", Action("ask_for_more_info", fields=REQUESTABLE_FIELDS if self.ASK_ALL else ARTICLE_NEEDS[article])),
            ("answer", _answer_with(article)),
        ]
        if self.ESCALATE:
            steps += [
                ("assign", Action("assign_department", department=issue.department, text="Routing to the right team.")),
                (
                    "escalate",
                    Action("escalate_to_human", text="I'm sorry for the trouble; a specialist will take this over."),
                ),
            ]
        for name, action in steps:
            if name not in self._done and (action.kind != "ask_for_more_info" or action.fields):
                self._done.add(name)
                return action
        return Action("mark_resolved", text="Resolved.")


class AskEverythingPolicy(TopKnowledgeBasePolicy):
    name = "ask_everything"
    ASK_ALL = True


class TopKnowledgeBaseEscalatePolicy(TopKnowledgeBasePolicy):
    name = "top_kb_escalate"
    ESCALATE = True


class EveryToolPolicy(_Base):
    """Calls every tool once with whatever the customer gave (asking for everything the tools
    take), claims it is all done, closes: the records touched blindly, the customer unread."""

    name = "every_tool"

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        super().begin(task_id, split, seed, trial)
        self._script: list[Action] = []

    def _calls(self, obs: Observation) -> list[Action]:
        facts = dict(obs.revealed_facts)
        email, order = facts.get("account_email", "x@example.com"), facts.get("order_id", "ORD-000000")
        data = obs.tool_result.data if obs.tool_result else {}
        subscription = next((s["subscription_id"] for s in data.get("subscriptions", [])), "SUB-000000")
        return [
            use_tool("look_up_customer", account_email=email),
            use_tool("look_up_order", order_id=order),
            use_tool("check_service_status"),
            use_tool("verify_identity"),
            use_tool("look_up_payments", account_email=email),
            use_tool("cancel_subscription", subscription_id=subscription),
            use_tool("issue_refund", order_id=order, amount=facts.get("amount", "10.00")),
            use_tool("update_address", order_id=order, new_address=facts.get("new_address", "1 Main Street, York")),
            use_tool("send_password_reset", account_email=email),
            use_tool("reship_order", order_id=order),
        ]

    def choose(self, obs: Observation) -> Action:
        issue = ISSUE_TYPES[0]
        if self.turn == 1:
            return Action("classify_issue", category=issue.category, priority="medium", issue_type=issue.issue_id)
        if self.turn == 2:
            fields = ("account_email", "order_id", "card_last_four", "amount", "new_address")
            return Action("ask_for_more_info", fields=fields, text="Could you share these details, please?")
        tools = self._calls(obs) if TOOL_KIND in obs.allowed_actions else []
        if self.turn - 3 < len(tools):
            return tools[self.turn - 3]
        if self.turn - 3 == len(tools):
            return Action(
                "respond_with_solution",
                text="Thank you! I have refunded you, reshipped the order, updated the address, cancelled the "
                f"subscription and sent a password reset; the refund reaches your card in {DESK_REFUND_DAYS}.",
            )
        return Action("mark_resolved", text="Resolved.")


class RefundEverythingPolicy(_Base):
    """Refunds whatever is left of the order the customer names, whatever they wrote, says so,
    closes: the most generous desk, the records read only for the amount left."""

    name = "refund_everything"

    def choose(self, obs: Observation) -> Action:
        issue = ISSUE_TYPES_BY_ID["refund_request"]
        facts = dict(obs.revealed_facts)
        order = facts.get("order_id", "")
        desk = TOOL_KIND in obs.allowed_actions and order
        script = [
            Action("classify_issue", category=issue.category, priority="medium", issue_type=issue.issue_id),
            Action("ask_for_more_info", fields=("account_email", "order_id"), text="Could you share these, please?"),
            *([use_tool("verify_identity"), use_tool("look_up_order", order_id=order)] if desk else []),
        ]
        if self.turn <= len(script):
            return script[self.turn - 1]
        data = obs.tool_result.data.get("order", {}) if obs.tool_result else {}
        if desk and self.turn == len(script) + 1 and data:
            left = self._amount(data)
            if left >= 0.01:
                self._left = left
                return use_tool("issue_refund", order_id=order, amount=f"{left:.2f}")
        if not getattr(self, "_told", False):
            self._told = True
            amount = getattr(self, "_left", 0.0)
            return Action(
                "respond_with_solution",
                text=f"Thank you! I will issue the refund: I have refunded ${amount:,.2f} to your card; "
                f"it reaches your card in {DESK_REFUND_DAYS}.",
                article_id=issue.article_id,
            )
        return Action("mark_resolved", text="Resolved.")

    @staticmethod
    def _amount(order: dict) -> float:
        """What is left of the order's payments after its refunds."""
        captured = sum(p["amount"] for p in order.get("payments", []) if p["status"] == "captured")
        return round(captured - sum(r["amount"] for r in order.get("refunds", [])), 2)


class RefundExcessPolicy(RefundEverythingPolicy):
    """Refunds whatever was captured beyond the listed total of the order the customer names, whatever
    they wrote, says so, closes: world-14's charge the customer never noticed, put right blindly on
    every ticket."""

    name = "refund_excess"

    @staticmethod
    def _amount(order: dict) -> float:
        return round(RefundEverythingPolicy._amount(order) - order.get("total", 0.0), 2)


class RefundDuplicatesPolicy(_Base):
    """Sweeps the account for money taken twice, whatever the customer wrote: every order with a
    second captured payment not refunded yet is refunded it, says so, closes (world-13's families
    reward going through every payment; this script does it for every ticket, blindly)."""

    name = "refund_duplicates"

    def choose(self, obs: Observation) -> Action:
        issue = ISSUE_TYPES_BY_ID["double_charge"]
        script, desk = _blind_opening(
            obs,
            issue,
            "medium",
            Action("ask_for_more_info", fields=("account_email", "card_last_four"), text="Could you share these?"),
            lambda email: [use_tool("verify_identity"), use_tool("look_up_payments", account_email=email)],
        )
        if self.turn <= len(script):
            return script[self.turn - 1]
        if desk and self.turn == len(script) + 1 and obs.tool_result:
            self._refunds = _second_charges(obs.tool_result.data)
        refunds = getattr(self, "_refunds", [])
        if refunds:
            order, amount = refunds.pop(0)
            self._told = f"{getattr(self, '_told', '')} ${amount:,.2f} on {order},"
            return use_tool("issue_refund", order_id=order, amount=f"{amount:.2f}")
        if not getattr(self, "_answered", False):
            self._answered = True
            return Action(
                "respond_with_solution",
                text=f"Thank you! I have refunded the duplicates:{getattr(self, '_told', ' none')} and each reaches "
                f"your card in {DESK_REFUND_DAYS}.",
                article_id=issue.article_id,
            )
        return Action("mark_resolved", text="Resolved.")


class SecureTheAccountPolicy(_Base):
    """Treats every ticket as a locked account someone else got into, whatever the customer wrote: sends a
    password reset, routes to security and escalates the sign-in, closes (world-15's stranger's sign-in,
    secured blindly, never asking whose it was)."""

    name = "secure_account"

    def choose(self, obs: Observation) -> Action:
        issue = ISSUE_TYPES_BY_ID["account_locked"]
        script, _ = _blind_opening(
            obs,
            issue,
            "urgent",
            Action("ask_for_more_info", fields=("account_email",), text="Could you share your account email, please?"),
            lambda email: [use_tool("send_password_reset", account_email=email)],
        )
        script += [
            Action(
                "respond_with_solution",
                text="Thank you! I have sent a password reset link to that address; your account unlocks once the "
                "reset is complete.",
                article_id=issue.article_id,
            ),
            Action("assign_department", department="security", text="Sign-in the account does not recognise."),
            Action(
                "escalate_to_human",
                text="I'm sorry for the trouble. Your account shows a sign-in it does not recognise, so our security "
                "team will check it and contact you shortly.",
            ),
        ]
        return script[self.turn - 1] if self.turn <= len(script) else Action("mark_resolved", text="Resolved.")


class RefuseAsImpostorPolicy(_Base):
    """Treats every ticket as an impostor's, whatever the customer wrote or the records show: asks for the
    email, order id and card, checks them, tells the customer they do not match, routes to security and
    escalates, closes (world-17's impostor, refused blindly on every address change)."""

    name = "refuse_impostor"

    def choose(self, obs: Observation) -> Action:
        issue = ISSUE_TYPES_BY_ID["address_change"]
        fields = ("account_email", "order_id", "card_last_four", "new_address")
        script, _ = _blind_opening(
            obs,
            issue,
            "medium",
            Action("ask_for_more_info", fields=fields, text="Could you share these details, please?"),
            lambda email: [use_tool("verify_identity")],
        )
        script += [
            Action(
                "respond_with_solution",
                text="I'm sorry, but the details you gave don't match our records for this account, so I can't "
                "verify you or make any change.",
            ),
            Action("assign_department", department="security", text="Details do not match the records."),
            Action(
                "escalate_to_human",
                text="As the details given don't match our records, I'm passing this to our security team.",
            ),
        ]
        return script[self.turn - 1] if self.turn <= len(script) else Action("mark_resolved", text="Resolved.")


def _blind_opening(
    obs: Observation, issue: IssueType, priority: str, ask: Action, desk_calls: Callable[[str], list[Action]]
) -> tuple[list[Action], bool]:
    """A blind desk script's opening: a fixed triage, one question, then its tool calls once the account
    email is in (on the expert task only); and whether it has the desk."""
    email = dict(obs.revealed_facts).get("account_email", "")
    desk = TOOL_KIND in obs.allowed_actions and bool(email)
    triage = Action("classify_issue", category=issue.category, priority=priority, issue_type=issue.issue_id)
    return [triage, ask, *(desk_calls(email) if desk else [])], desk


def _second_charges(data: dict) -> list[tuple[str, float]]:
    """(order id, amount) of each order's captured payments beyond its first, less its refunds."""
    captured: dict[str, list[float]] = {}
    for payment in data.get("payments", []):
        if payment["order_id"] and payment["status"] == "captured":
            captured.setdefault(payment["order_id"], []).append(payment["amount"])
    refunded: dict[str, float] = {}
    for refund in data.get("refunds", []):
        refunded[refund["order_id"]] = refunded.get(refund["order_id"], 0.0) + refund["amount"]
    extra = ((order, round(sum(a[1:]) - refunded.get(order, 0.0), 2)) for order, a in captured.items())
    return [(order, amount) for order, amount in extra if amount >= 0.01]


POLICIES: dict[str, type[Policy]] = {
    p.name: p
    for p in (
        RulePolicy,
        RandomPolicy,
        OraclePolicy,
        NoopPolicy,
        EscalateAllPolicy,
        SpamPolicy,
        ClassifyOnlyPolicy,
        KeywordStufferPolicy,
        ConstantTriagePolicy,
        ConstantTriageTieredPolicy,
        CommonestTriagePolicy,
        TopKnowledgeBasePolicy,
        AskEverythingPolicy,
        TopKnowledgeBaseEscalatePolicy,
        EveryToolPolicy,
        RefundEverythingPolicy,
        RefundDuplicatesPolicy,
        RefundExcessPolicy,
        SecureTheAccountPolicy,
        RefuseAsImpostorPolicy,
        LLMPolicy,  # needs a model endpoint: API_BASE_URL, MODEL_NAME (openai is imported only when it is made)
    )
}
# Fixed policies a sound grader must not reward, the scoreboard's and tests/test_agents.py's
# exploit suite: the old degenerate ones, and scripts that never read the customer's words but
# trust what the help desk shows (a colleague's triage, the top knowledge-base suggestion).
EXPLOITS = (
    "noop",
    "escalate_all",
    "spam",
    "classify_only",
    "keyword_stuffer",
    "constant_triage",
    "constant_triage_tiered",
    "commonest_triage",
    "top_kb",
    "ask_everything",
    "top_kb_escalate",
    "every_tool",
    "refund_everything",
    "refund_duplicates",
    "refund_excess",
    "secure_account",
    "refuse_impostor",
)
# Policies that call an external service; offline suites and scoreboards leave them out.
EXTERNAL = ("llm",)


def make_policy(name: str) -> Policy:
    try:
        return POLICIES[name]()
    except KeyError:
        raise SystemExit(f"unknown policy {name!r}; choose from {', '.join(POLICIES)}") from None
