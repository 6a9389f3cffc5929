"""Deterministic judging of the agent's free text: politeness, rudeness, relevance
and keyword stuffing. No model, no randomness: phrase lists and counts.

An answer is credited with an issue when it says that issue's solution; citing the
issue's knowledge-base article alone is not an answer. Naming other issues' solutions (or
citing a wrong article) costs, and naming two or more of them, or repeating one phrase
over and over, is stuffing and earns nothing."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache, wraps
from typing import NamedTuple, TypeVar

from supportenv.records import frozen_record
from supportenv.solutions import PHRASE_OWNER, phrases_said

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


_RUDE_RE = re.compile("|".join(map(re.escape, RUDE_PHRASES)))
_POLITE_RE = re.compile("|".join(map(re.escape, POLITE_PHRASES)))
# Every solution phrase and the issue it belongs to; one regex finds them all in one pass
# (longest first, so a phrase never hides inside a shorter one's match).


R = TypeVar("R")
# Longer texts are judged afresh each time, so that the caches' memory stays small.
MAX_CACHED_TEXT_CHARS = 1000


def _cached_for_short_texts(judging: Callable[..., R]) -> Callable[..., R]:
    """`judging(text, ...)`, cached (agents send the same texts over and over) unless the text is long."""
    cached = lru_cache(maxsize=4096)(judging)

    @wraps(judging)
    def judge_text(text: str, *args: object) -> R:
        return judging(text, *args) if len(text) > MAX_CACHED_TEXT_CHARS else cached(text, *args)

    judge_text.cache = cached  # type: ignore[attr-defined]
    return judge_text


class _Analysis(NamedTuple):
    lower: str
    rude: bool
    polite: bool
    named: frozenset[str]  # issues whose solution phrases occur
    owner_counts: tuple[tuple[str, int], ...]  # (issue, occurrences of one of its phrases)


@_cached_for_short_texts
def _analyse(text: str) -> _Analysis:
    """Everything about a text that does not depend on the ticket."""
    lower = text.lower()
    counts = phrases_said(text)
    return _Analysis(
        lower,
        _RUDE_RE.search(lower) is not None,
        _POLITE_RE.search(lower) is not None,
        frozenset(PHRASE_OWNER[p] for p in counts),
        tuple((PHRASE_OWNER[p], n) for p, n in counts.items()),
    )


def is_rude(text: str) -> bool:
    return _analyse(text).rude


class Verdict(NamedTuple):
    """The part of a judgement that does not depend on the customer's facts."""

    lower: str
    rude: bool
    polite: bool
    solves: tuple[str, ...]
    wrong_solutions: int
    stuffed: bool


@_cached_for_short_texts
def verdict(text: str, intents: tuple[tuple[str, str], ...], article_id: str) -> Verdict:
    """Judge `text` for a ticket whose intents are (issue_id, article_id) pairs (see
    Scenario.intent_keys)."""
    lower, rude, polite, named, owner_counts = _analyse(text)
    own = {issue_id for issue_id, _ in intents}
    wrong = len(named - own) if named else 0
    if article_id and article_id not in {article for _, article in intents}:
        wrong += 1
    repeated = max([n for owner, n in owner_counts if owner in own], default=0)
    stuffed = wrong > MAX_WRONG_SOLUTIONS or repeated > MAX_PHRASE_REPEATS
    # An article id is a citation, not an answer: an issue is solved by saying its solution.
    solves = () if stuffed else tuple([i for i, _ in intents if i in named])
    return Verdict(lower, rude, polite, solves, wrong, stuffed)


def judge(
    text: str, intents: tuple[tuple[str, str], ...], article_id: str, fact_values: Sequence[str]
) -> TextJudgement:
    """Judge an answer `text` for a ticket whose intents are (issue_id, article_id) pairs
    (Scenario.intent_keys), given the facts the customer has revealed."""
    lower, rude, polite, solves, wrong, stuffed = verdict(text, intents, article_id)
    # Without the frozen __init__: this runs on every response (supportenv.records).
    return frozen_record(
        TextJudgement,
        {
            "rude": rude,
            "polite": polite,
            "solves": solves,
            "wrong_solutions": wrong,
            "stuffed": stuffed,
            "personalised": any(v and v.lower() in lower for v in fact_values),
        },
    )
