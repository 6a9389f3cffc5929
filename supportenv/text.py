"""Deterministic judging of the agent's free text: politeness, rudeness, relevance
and keyword stuffing. No model, no randomness: phrase lists and counts."""

from __future__ import annotations

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
)
POLITE_PHRASES = ("please", "sorry", "apolog", "thank", "happy to help", "glad to help", "i understand")
# Saying one solution phrase more often than this is stuffing, not an answer;
# so is naming the solutions of two or more other issues.
MAX_PHRASE_REPEATS = 2


@dataclass(frozen=True)
class TextJudgement:
    rude: bool
    polite: bool
    relevant: bool  # names this issue's solution, without stuffing
    wrong_solutions: int  # other issues' solutions named
    stuffed: bool
    personalised: bool  # mentions one of the customer's own facts


def is_rude(text: str) -> bool:
    lower = text.lower()
    return any(p in lower for p in RUDE_PHRASES)


def is_polite(text: str) -> bool:
    lower = text.lower()
    return any(p in lower for p in POLITE_PHRASES)


def _mentions(lower: str, issue: IssueType) -> int:
    return sum(lower.count(p) for p in issue.solution_phrases)


def _most_repeated(lower: str, issue: IssueType) -> int:
    return max(lower.count(p) for p in issue.solution_phrases)


def judge_response(text: str, issue: IssueType, article_id: str, fact_values: list[str]) -> TextJudgement:
    lower = text.lower()
    own_mentions = _mentions(lower, issue)
    wrong = sum(1 for other in ISSUE_TYPES if other.issue_id != issue.issue_id and _mentions(lower, other))
    if article_id and article_id != issue.article_id:
        wrong += 1
    stuffed = wrong >= 2 or _most_repeated(lower, issue) > MAX_PHRASE_REPEATS
    names_solution = own_mentions > 0 or article_id == issue.article_id
    return TextJudgement(
        rude=is_rude(lower),
        polite=is_polite(lower),
        relevant=names_solution and not stuffed,
        wrong_solutions=wrong,
        stuffed=stuffed,
        personalised=any(v and v.lower() in lower for v in fact_values),
    )
