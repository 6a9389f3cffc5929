"""Deterministic judging of the agent's free text: politeness, rudeness, relevance
and keyword stuffing. No model, no randomness: phrase lists and counts.

An answer is credited with an issue when it names that issue's solution (or its
knowledge-base article). Naming other issues' solutions costs, and naming two or
more of them, or repeating one phrase over and over, is stuffing and earns nothing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from supportenv.catalog import ISSUE_TYPES, IssueType

RUDE_PHRASES = (
    "stupid",
    "idiot",
    "dumb",
    "shut up",
    "your fault",
    "your own fault",
    "not my problem",
    "whatever",
    "deal with it",
    "stop complaining",
    "useless",
    "calm down",
    "figure it out yourself",
    "read the manual",
)
POLITE_PHRASES = ("please", "sorry", "apolog", "thank", "happy to help", "glad to help", "i understand")
# Saying one solution phrase more often than this is stuffing, not an answer.
MAX_PHRASE_REPEATS = 2
MAX_WRONG_SOLUTIONS = 1


@dataclass(frozen=True)
class TextJudgement:
    rude: bool
    polite: bool
    solves: tuple[str, ...]  # ticket intents whose solution the text names (empty when stuffed)
    wrong_solutions: int  # other issues' solutions (or a wrong article) named
    stuffed: bool
    personalised: bool  # mentions one of the customer's own facts

    @property
    def relevant(self) -> bool:
        return bool(self.solves)


def is_rude(text: str) -> bool:
    lower = text.lower()
    return any(p in lower for p in RUDE_PHRASES)


def is_polite(text: str) -> bool:
    lower = text.lower()
    return any(p in lower for p in POLITE_PHRASES)


def _names(lower: str, issue: IssueType) -> bool:
    return any(p in lower for p in issue.solution_phrases)


def judge_response(
    text: str, intents: Sequence[IssueType], article_id: str, fact_values: Sequence[str]
) -> TextJudgement:
    lower = text.lower()
    own = {i.issue_id for i in intents}
    wrong = sum(1 for other in ISSUE_TYPES if other.issue_id not in own and _names(lower, other))
    if article_id and article_id not in {i.article_id for i in intents}:
        wrong += 1
    repeated = max((lower.count(p) for i in intents for p in i.solution_phrases), default=0)
    stuffed = wrong > MAX_WRONG_SOLUTIONS or repeated > MAX_PHRASE_REPEATS
    solves = () if stuffed else tuple(i.issue_id for i in intents if _names(lower, i) or article_id == i.article_id)
    return TextJudgement(
        rude=is_rude(lower),
        polite=is_polite(lower),
        solves=solves,
        wrong_solutions=wrong,
        stuffed=stuffed,
        personalised=any(v and v.lower() in lower for v in fact_values),
    )
