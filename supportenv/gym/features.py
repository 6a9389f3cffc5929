"""Numeric features and discrete macro-actions for classic RL (`SupportEnvFeatures-v0`).

Macro-actions
-------------
`MACRO_ACTIONS` holds the label of every index of the `Discrete(85)` action space:

====================  =====================  ==============================================================
indices               label                  the library action it becomes (`macro_action`)
====================  =====================  ==============================================================
0 .. 31               ``classify:<issue>``   classify_issue(category of the issue, that issue, priority =
                                             the policy's for the impact the opening states:
                                             `catalog.ticket_priority`)
32 .. 42              ``ask:<field>``        ask_for_more_info for one requestable fact
43 .. 74              ``answer:<issue>``     respond_with_solution: a polite message naming the issue's
                                             solution (built like `expert.solution_message`, mentioning the
                                             first revealed fact) with the issue's knowledge-base article
75 .. 80              ``assign:<dept>``      assign_department
81                    ``escalate``           escalate_to_human with a polite reason
82                    ``callback``           request_callback
83                    ``resolve``            mark_resolved
84                    ``gather``             ask_for_more_info for every fact that the articles of the issues
                                             raised need (as the prompt states them) and the customer has not
                                             given (`needed_fields`; added last, so the indices before stay)
====================  =====================  ==============================================================

Issues are in `catalog.ISSUE_TYPE_IDS` order, fields in `REQUESTABLE_FIELDS` order, departments
in `DEPARTMENTS` order. Every macro-action is a well-formed action.

Features
--------
`FeatureEncoder.encode(observation, last_action_kind)` is a function of the public `Observation`
and the kind of the agent's own previous action only (the agent knows what it did). It never sees
the hidden scenario: no hidden fact, no expected handling. Besides the observation it uses the
static, public catalog (which issue needs which facts, its department and escalation rule, its
solution phrases) and the policy text stated in the observation. Blocks, in order
(`FeatureEncoder.slices` gives each one's slice, `FeatureEncoder.names` every dimension's name):

- ``bias`` (1): always 1.
- ``task`` (3): one-hot of the task.
- ``words`` (n_buckets, default 512): hashed bag of unigrams and bigrams of all customer turns
  (lower-cased; tokens with digits become ``<num>``; bucket = zlib.crc32 of the token), binary,
  scaled to unit length.
- ``kb`` (one per article): each article's score in the encoder's own keyword search of the public knowledge
  base over the customer's opening message (0 when not matched; the observation's suggestions
  come only once the ticket is classified); ``kb_first`` and ``kb_rest`` (one per article each): the same search
  over the part of the opening message that raises its first issue, and the best score over the
  parts after it (`text.message_parts` cuts it where the customer turns to another issue);
  ``kb_latest`` (one per article): the same search over the latest
  customer message, when it is not the opening one (a reply naming what is still wrong, say).
- ``tier`` (3), ``sentiment`` (1, the score in [-1, 1]), ``sentiment_label`` (4).
- ``progress`` (3): step / max_steps, no step taken yet, only one step left.
- ``classified`` (1), ``category`` (6), ``issue_type`` (one per issue type): the agent's triage so far.
- ``revealed`` (11): which facts the customer has given.
- ``checklist_missing`` (11): facts the catalog says the classified issue type needs that are not
  revealed yet; ``checklist_done`` (1): classified, and none of them is missing.
- ``escalated`` (1), ``department`` (6), ``routed_to_issue_department`` (1), ``callback`` (1).
- ``answered_issue`` (one per issue type): issue types whose solution an agent turn in the history named;
  ``answer`` (3): an answer was given, the customer said everything is solved, the customer said
  part is solved; ``answer_rejected`` (1): the latest customer turn says the answer did not help.
- ``over_refund_cap`` (1): a revealed amount exceeds the tier's refund cap stated in the policy text.
- ``policy_escalation`` (1): the policy requires escalating the classified issue type (always for
  security issues; for outages when enterprise; for refunds over the cap).
- ``issue_department`` (6): the catalog department of the classified issue type.
- ``last_action`` (10): one-hot of the previous action's kind (8 kinds, invalid, none).
- ``feedback`` (17): the last action's feedback is non-empty, and which known note it contains.
- ``raised_needs`` (11): the facts that the articles of the issues raised need and the customer
  has not given (`needed_fields`: the classified issue, then the best match of each part of the
  opening message), what the ``gather`` macro-action asks for.
- ``raised_escalation`` (1) and ``escalation_department`` (6): the stated policy requires escalating
  one of the issues raised, and the catalog department of the first such issue.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

import numpy as np

from supportenv import content
from supportenv.actions import ACTION_KINDS, INVALID_KIND, Action
from supportenv.catalog import (
    ARTICLE_NEEDS,
    ARTICLES,
    ARTICLES_BY_ID,
    CATEGORIES,
    DEPARTMENTS,
    ISSUE_TYPE_IDS,
    ISSUE_TYPES,
    ISSUE_TYPES_BY_ID,
    REQUESTABLE_FIELDS,
    SENTIMENT_LABELS,
    TIERS,
    IssueType,
    stated_impact,
    ticket_priority,
)
from supportenv.episode import Observation
from supportenv.tasks import TASKS
from supportenv.text import message_parts
from supportenv.world import kb_matches

DEFAULT_BUCKETS = 512

# ---- macro-actions ----

CLASSIFY_START = 0
ASK_START = CLASSIFY_START + len(ISSUE_TYPE_IDS)
ANSWER_START = ASK_START + len(REQUESTABLE_FIELDS)
ASSIGN_START = ANSWER_START + len(ISSUE_TYPE_IDS)
ESCALATE = ASSIGN_START + len(DEPARTMENTS)
CALLBACK = ESCALATE + 1
RESOLVE = CALLBACK + 1
GATHER = RESOLVE + 1

MACRO_ACTIONS: tuple[str, ...] = (
    *(f"classify:{i}" for i in ISSUE_TYPE_IDS),
    *(f"ask:{f}" for f in REQUESTABLE_FIELDS),
    *(f"answer:{i}" for i in ISSUE_TYPE_IDS),
    *(f"assign:{d}" for d in DEPARTMENTS),
    "escalate",
    "callback",
    "resolve",
    "gather",
)
N_MACRO_ACTIONS = len(MACRO_ACTIONS)
assert N_MACRO_ACTIONS == GATHER + 1


def macro_index(label: str) -> int:
    """The index of a macro-action label such as "classify:double_charge" or "resolve"."""
    try:
        return MACRO_ACTIONS.index(label)
    except ValueError:
        raise ValueError(f"unknown macro-action {label!r}; see MACRO_ACTIONS") from None


def triage_priority(issue: IssueType, obs: Observation) -> str:
    """The priority the policy gives the ticket, for what its opening says of the problem's impact
    (the same for any issue: `issue` is kept so that every classify macro reads alike)."""
    return ticket_priority(stated_impact(_opening(obs)))


def solution_step(issue: IssueType) -> str:
    """The step of the issue's article that names its solution (the catalog guarantees one)."""
    phrase = issue.solution_phrases[0]
    return next((s for s in ARTICLES_BY_ID[issue.article_id].steps if phrase in s.lower()), phrase).rstrip(".")


def _first_fact(obs: Observation) -> str:
    return next((value for _, value in obs.revealed_facts if value), "")


def answer_message(issue: IssueType, obs: Observation) -> str:
    fact = _first_fact(obs)
    ref = f" regarding {fact}" if fact else ""
    return (
        f"Thank you for your patience{ref}, and I'm sorry for the trouble. "
        f"Here is what we will do: {solution_step(issue)}."
    )


def escalation_reason(obs: Observation) -> str:
    fact = _first_fact(obs)
    ref = f" about {fact}" if fact else ""
    team = f"the {obs.assigned_department.replace('_', ' ')} team" if obs.assigned_department else "a specialist"
    return (
        f"I'm sorry for the trouble{ref}. Our policy requires a specialist here, so I'm escalating "
        f"this to {team}, who will contact you shortly."
    )


def macro_action(index: int, obs: Observation) -> Action:
    """The library action of macro-action `index`, given the current public observation."""
    index = int(index)
    if not 0 <= index < N_MACRO_ACTIONS:
        raise ValueError(f"macro-action {index} is out of range 0..{N_MACRO_ACTIONS - 1}")
    if index < ASK_START:
        issue = ISSUE_TYPES[index - CLASSIFY_START]
        return Action(
            "classify_issue",
            category=issue.category,
            priority=triage_priority(issue, obs),
            issue_type=issue.issue_id,
        )
    if index < ANSWER_START:
        return Action(
            "ask_for_more_info",
            fields=(REQUESTABLE_FIELDS[index - ASK_START],),
            text="Could you please share these details?",
        )
    if index < ASSIGN_START:
        issue = ISSUE_TYPES[index - ANSWER_START]
        return Action("respond_with_solution", text=answer_message(issue, obs), article_id=issue.article_id)
    if index < ESCALATE:
        return Action("assign_department", department=DEPARTMENTS[index - ASSIGN_START], text="Routing per policy.")
    if index == ESCALATE:
        return Action("escalate_to_human", text=escalation_reason(obs))
    if index == CALLBACK:
        return Action("request_callback", text="Thank you for your patience; a specialist will call you back.")
    if index == GATHER:
        # With nothing left to ask, the first issue's facts again (the feedback says they were given).
        issues = raised_issues(obs)
        fields = needed_fields(obs) or (ARTICLE_NEEDS[issues[0].article_id] if issues else ("account_email",))
        return Action("ask_for_more_info", fields=fields, text="Could you please share these details?")
    return Action("mark_resolved", text="Handled per policy.")


# ---- features ----

LAST_ACTION_KINDS = (*ACTION_KINDS, INVALID_KIND, "none")
# Notes the episode writes into last_action_feedback, and the flag each one sets.
FEEDBACK_NOTES: tuple[tuple[str, str], ...] = (
    ("already_classified", "already classified"),
    ("wrong_category", "category does not fit"),
    ("fact_repeated", "already given"),
    ("question_unhelpful", "cannot give it"),
    ("fact_not_needed", "does not need it"),
    ("classify_first", "classify the ticket before"),
    ("needs_escalation", "policy requires this issue to be escalated"),
    ("answer_irrelevant", "does not address"),
    ("missing_facts", "before gathering what the case needs"),
    ("wrong_article", "article"),
    ("wrong_department", "wrong department"),
    ("needless_transfer", "without a transfer"),
    ("needless_escalation", "did not need a human"),
    ("callback_not_allowed", "callbacks are only"),
    ("closed_early", "closed before it was handled"),
    ("invalid_output", "did not parse"),
)
_TOKEN_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_CAP_RE = re.compile(r"(regular|premium|enterprise) \$(\d+(?:\.\d+)?)")
_PHRASE_ISSUE = tuple((p, n) for n, issue in enumerate(ISSUE_TYPES) for p in issue.solution_phrases)


def _replies(*kinds: str) -> re.Pattern[str]:
    """Matches the customer's replies of these kinds, whatever fills their placeholders."""
    templates = [t for kind in kinds for t in content.REACTIONS[kind]]
    return re.compile("|".join(re.sub(r"\\\{\w+\\\}", ".+", re.escape(t)) for t in templates))


_SOLVED = _replies(*(kind for kind in content.REACTIONS if kind.startswith("solved_")))
_PARTLY_SOLVED = _replies("partly_solved", "partly_solved_photos", "partly_solved_next", "partly_solved_next_photos")
_UNHELPFUL = _replies("unhelpful", "citation_only", "missing_facts")
_TASK_IDS = tuple(t.task_id for t in TASKS)
_ARTICLE_IDS = tuple(a.article_id for a in ARTICLES)


@lru_cache(maxsize=4096)  # one per ticket, reused at every step of its episode
def _kb_by_part(text: str) -> tuple[np.ndarray, np.ndarray]:
    """The search over the first part of the message (text.message_parts: the issue it raises
    first) and the best score of each article over the other parts (the issues raised after)."""
    parts = message_parts(text) or [text]
    first, rest = np.zeros(len(_ARTICLE_IDS), dtype=np.float32), np.zeros(len(_ARTICLE_IDS), dtype=np.float32)
    for n, part in enumerate(parts):
        into = first if n == 0 else rest
        for article_id, score in _kb_search(part):
            i = _ARTICLE_IDS.index(article_id)
            into[i] = max(into[i], min(1.0, max(0.0, score)))
    first.flags.writeable = rest.flags.writeable = False
    return first, rest


@lru_cache(maxsize=4096)  # one search per ticket, reused at every step of its episode
def _kb_search(text: str) -> tuple[tuple[str, float], ...]:
    """Every article's keyword score against `text` (the public knowledge base, searched by the
    agent's own features), best first."""
    return kb_matches(text, limit=len(_ARTICLE_IDS))


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens; any token with a digit (ids, amounts, dates) becomes <num>."""
    return ["<num>" if any(c.isdigit() for c in t) else t for t in _TOKEN_RE.findall(text.lower())]


def bucket(term: str, n_buckets: int) -> int:
    """A deterministic bucket (the same in every process, unlike hash())."""
    return zlib.crc32(term.encode("utf-8")) % n_buckets


@lru_cache(maxsize=16384)
def turn_buckets(text: str, n_buckets: int) -> tuple[int, ...]:
    """The buckets of one turn's unigrams and bigrams (cached: turns recur at every step)."""
    toks = tokens(text)
    terms = [*toks, *(f"{a} {b}" for a, b in pairwise(toks))]
    return tuple(sorted({bucket(term, n_buckets) for term in terms}))


@lru_cache(maxsize=16384)
def _issues_named(text: str) -> frozenset[int]:
    lower = text.lower()
    return frozenset(n for phrase, n in _PHRASE_ISSUE if phrase in lower)


def refund_caps(policy: Iterable[str]) -> dict[str, float]:
    """The per-tier refund caps stated in the policy text."""
    return {tier: float(cap) for tier, cap in _CAP_RE.findall(" ".join(policy))}


def over_refund_cap(obs: Observation) -> bool:
    amount = dict(obs.revealed_facts).get("amount", "")
    cap = refund_caps(obs.policy).get(obs.customer_tier)
    try:
        return cap is not None and float(amount) > cap
    except ValueError:
        return False


def answered_issues(obs: Observation) -> set[int]:
    """Indices of the issue types whose solution phrase an agent turn in the history names."""
    found: set[int] = set()
    for speaker, text, _ in obs.history:
        if speaker == "agent":
            found.update(_issues_named(text))
    return found


_ISSUE_OF_ARTICLE = {issue.article_id: issue for issue in ISSUE_TYPES}


def _opening(obs: Observation) -> str:
    return next((text for speaker, text, _ in obs.history if speaker == "customer"), obs.customer_message)


@lru_cache(maxsize=4096)  # one per ticket
def _issues_in(opening: str) -> tuple[IssueType, ...]:
    """The issue of the best-matching issue article of each part of the opening, in order."""
    found: list[IssueType] = []
    for part in message_parts(opening) or [opening]:
        best = next((_ISSUE_OF_ARTICLE[a] for a, _ in _kb_search(part) if a in _ISSUE_OF_ARTICLE), None)
        if best is not None and best not in found:
            found.append(best)
    return tuple(found)


def raised_issues(obs: Observation) -> tuple[IssueType, ...]:
    """The issues the customer raised as the agent's own search reads them: the classified issue
    type first (the agent's triage, or a colleague's), then the best match of each part of the
    opening message (`text.message_parts`). Public information only; it can be wrong."""
    classified = ISSUE_TYPES_BY_ID.get(obs.issue_type)
    searched = _issues_in(_opening(obs))
    if classified is None:
        return searched
    return (classified, *(i for i in searched if i.category != classified.category))


def needed_fields(obs: Observation) -> tuple[str, ...]:
    """What the articles of the raised issues need (`catalog.ARTICLE_NEEDS`, as the prompt states
    it) and the customer has not given, in the order the articles list them."""
    given = {name for name, _ in obs.revealed_facts}
    wanted = (f for issue in raised_issues(obs) for f in ARTICLE_NEEDS[issue.article_id] if f not in given)
    return tuple(dict.fromkeys(wanted))


def requires_escalation(issue: IssueType, obs: Observation) -> bool:
    """Whether the stated policy requires escalating `issue` for this customer: always for
    security issues, for outages when enterprise, for refunds over the tier's cap."""
    return (
        issue.escalation == "always"
        or (issue.escalation == "enterprise" and obs.customer_tier == "enterprise")
        or (issue.escalation == "over_refund_cap" and over_refund_cap(obs))
    )


class FeatureEncoder:
    """Turns a public Observation into a float32 vector; see the module docstring for the layout."""

    def __init__(self, n_buckets: int = DEFAULT_BUCKETS) -> None:
        if n_buckets < 1:
            raise ValueError("n_buckets must be positive")
        self.n_buckets = n_buckets
        blocks: list[tuple[str, tuple[str, ...]]] = [
            ("bias", ("bias",)),
            ("task", _TASK_IDS),
            ("words", tuple(str(i) for i in range(n_buckets))),
            ("kb", _ARTICLE_IDS),
            ("kb_first", _ARTICLE_IDS),
            ("kb_rest", _ARTICLE_IDS),
            ("kb_latest", _ARTICLE_IDS),
            ("tier", TIERS),
            ("sentiment", ("score",)),
            ("sentiment_label", SENTIMENT_LABELS),
            ("progress", ("step_fraction", "first_step", "last_step")),
            ("classified", ("classified",)),
            ("category", CATEGORIES),
            ("issue_type", ISSUE_TYPE_IDS),
            ("revealed", REQUESTABLE_FIELDS),
            ("checklist_missing", REQUESTABLE_FIELDS),
            ("checklist_done", ("done",)),
            ("escalated", ("escalated",)),
            ("department", DEPARTMENTS),
            ("routed_to_issue_department", ("routed",)),
            ("callback", ("callback",)),
            ("answered_issue", ISSUE_TYPE_IDS),
            ("answer", ("given", "customer_solved", "customer_partly_solved")),
            ("answer_rejected", ("rejected",)),
            ("over_refund_cap", ("over_cap",)),
            ("policy_escalation", ("required",)),
            ("issue_department", DEPARTMENTS),
            ("last_action", LAST_ACTION_KINDS),
            ("feedback", ("any", *(name for name, _ in FEEDBACK_NOTES))),
            # Added last, so that the dimensions before keep their indices.
            ("raised_needs", REQUESTABLE_FIELDS),
            ("raised_escalation", ("required",)),
            ("escalation_department", DEPARTMENTS),
        ]
        self.slices: dict[str, slice] = {}
        names: list[str] = []
        for block, labels in blocks:
            self.slices[block] = slice(len(names), len(names) + len(labels))
            names.extend(f"{block}:{label}" for label in labels)
        self.names: tuple[str, ...] = tuple(names)
        self.size = len(names)
        self.low = np.zeros(self.size, dtype=np.float32)
        self.low[self.slices["sentiment"]] = -1.0
        self.high = np.ones(self.size, dtype=np.float32)

    def _set(self, x: np.ndarray, block: str, index: int, value: float = 1.0) -> None:
        x[self.slices[block].start + index] = value

    def words(self, obs: Observation) -> np.ndarray:
        out = np.zeros(self.n_buckets, dtype=np.float32)
        for speaker, text, _ in obs.history:
            if speaker != "customer":
                continue
            out[list(turn_buckets(text, self.n_buckets))] = 1.0
        norm = float(np.sqrt(out.sum()))
        return out / norm if norm else out

    def encode(self, obs: Observation, last_action_kind: str = "") -> np.ndarray:
        """The feature vector of `obs`; `last_action_kind` is the kind of the agent's own previous
        action ("" before its first)."""
        x = np.zeros(self.size, dtype=np.float32)
        self._set(x, "bias", 0)
        if obs.task_id in _TASK_IDS:
            self._set(x, "task", _TASK_IDS.index(obs.task_id))
        x[self.slices["words"]] = self.words(obs)
        opening = _opening(obs)
        for article_id, score in _kb_search(opening):
            self._set(x, "kb", _ARTICLE_IDS.index(article_id), min(1.0, max(0.0, score)))
        first, rest = _kb_by_part(opening)
        x[self.slices["kb_first"]] = first
        x[self.slices["kb_rest"]] = rest
        if obs.customer_message != opening:  # a later reply, say one naming what is still wrong
            for article_id, score in _kb_search(obs.customer_message):
                self._set(x, "kb_latest", _ARTICLE_IDS.index(article_id), min(1.0, max(0.0, score)))
        if obs.customer_tier in TIERS:
            self._set(x, "tier", TIERS.index(obs.customer_tier))
        self._set(x, "sentiment", 0, min(1.0, max(-1.0, obs.sentiment_score)))
        if obs.sentiment_label in SENTIMENT_LABELS:
            self._set(x, "sentiment_label", SENTIMENT_LABELS.index(obs.sentiment_label))
        self._set(x, "progress", 0, min(1.0, obs.step / max(1, obs.max_steps)))
        self._set(x, "progress", 1, float(obs.step == 0))
        self._set(x, "progress", 2, float(obs.steps_left <= 1))

        issue = ISSUE_TYPES_BY_ID.get(obs.issue_type)
        revealed = {name for name, _ in obs.revealed_facts}
        self._set(x, "classified", 0, float(bool(obs.category)))
        if obs.category in CATEGORIES:
            self._set(x, "category", CATEGORIES.index(obs.category))
        if issue is not None:
            self._set(x, "issue_type", ISSUE_TYPE_IDS.index(issue.issue_id))
        for n, name in enumerate(REQUESTABLE_FIELDS):
            if name in revealed:
                self._set(x, "revealed", n)
            elif issue is not None and name in issue.required_facts:
                self._set(x, "checklist_missing", n)
        if issue is not None and not set(issue.required_facts) - revealed:
            self._set(x, "checklist_done", 0)

        self._set(x, "escalated", 0, float(obs.escalated))
        if obs.assigned_department in DEPARTMENTS:
            self._set(x, "department", DEPARTMENTS.index(obs.assigned_department))
        if issue is not None and obs.assigned_department == issue.department:
            self._set(x, "routed_to_issue_department", 0)
        self._set(x, "callback", 0, float(obs.callback_scheduled))

        answered = answered_issues(obs)
        for n in answered:
            self._set(x, "answered_issue", n)
        customer_turns = [text for speaker, text, _ in obs.history if speaker == "customer"]
        solved = any(_SOLVED.fullmatch(t) for t in customer_turns)
        partly = any(_PARTLY_SOLVED.fullmatch(t) for t in customer_turns)
        self._set(x, "answer", 0, float(bool(answered) or solved or partly))
        self._set(x, "answer", 1, float(solved))
        self._set(x, "answer", 2, float(partly))
        self._set(
            x,
            "answer_rejected",
            0,
            float(bool(customer_turns) and _UNHELPFUL.fullmatch(customer_turns[-1]) is not None),
        )

        self._set(x, "over_refund_cap", 0, float(over_refund_cap(obs)))
        if issue is not None:
            self._set(x, "policy_escalation", 0, float(requires_escalation(issue, obs)))
            self._set(x, "issue_department", DEPARTMENTS.index(issue.department))

        self._set(x, "last_action", LAST_ACTION_KINDS.index(last_action_kind or "none"))
        feedback = obs.last_action_feedback.lower()
        self._set(x, "feedback", 0, float(bool(feedback)))
        for n, (_, note) in enumerate(FEEDBACK_NOTES, start=1):
            if note in feedback:
                self._set(x, "feedback", n)

        for name in needed_fields(obs):
            self._set(x, "raised_needs", REQUESTABLE_FIELDS.index(name))
        escalating = [i for i in raised_issues(obs) if requires_escalation(i, obs)]
        if escalating:
            self._set(x, "raised_escalation", 0)
            self._set(x, "escalation_department", DEPARTMENTS.index(escalating[0].department))
        return x
