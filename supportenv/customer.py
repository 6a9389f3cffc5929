"""The customer simulator: agenda-style and deterministic.

Hidden facts come out only when asked for; questions about things the customer
cannot know get an "I don't know"; repeated or irrelevant questions cost patience
(the episode decides how much). Replies are natural language from templates, picked
by a stable hash of (ticket, step, what was asked), never by a random generator.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from supportenv import content
from supportenv.catalog import FACT_SYNONYMS
from supportenv.world import Scenario


@dataclass(frozen=True)
class Answer:
    reply: str
    revealed: tuple[str, ...]  # fact names newly revealed
    repeated: tuple[str, ...]  # fact names already revealed before
    unknown: tuple[str, ...]  # fact names the customer cannot give


def pick(options: tuple[str, ...], *key: object) -> str:
    """Choose a template deterministically from a stable hash of the key."""
    digest = hashlib.blake2b("|".join(map(str, key)).encode(), digest_size=4).digest()
    return options[int.from_bytes(digest, "big") % len(options)]


def fields_in_question(question: str) -> tuple[str, ...]:
    lower = question.lower()
    return tuple(name for name, words in FACT_SYNONYMS.items() if any(w in lower for w in words))


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def answer(scenario: Scenario, already: tuple[str, ...], fields: tuple[str, ...], question: str, step: int) -> Answer:
    wanted = list(dict.fromkeys(fields or fields_in_question(question)))
    revealed, repeated, unknown, parts = [], [], [], []
    for name in wanted:
        value = scenario.fact(name)
        if name in already:
            repeated.append(name)
        elif value is None:
            unknown.append(name)
        else:
            revealed.append(name)
            parts.append(pick(content.FACT_REPLIES[name], scenario.ticket_id, step, name).format(value))
    sentences = []
    if parts:
        sentences.append(_capitalise(", and ".join(parts)) + ".")
    if repeated:
        sentences.append(pick(content.REPEAT_REPLIES, scenario.ticket_id, step))
    for name in unknown:
        sentences.append(
            _capitalise(pick(content.UNKNOWN_REPLIES, scenario.ticket_id, step, name).format(name.replace("_", " ")))
        )
    if not sentences:
        sentences.append(pick(content.VAGUE_REPLIES, scenario.ticket_id, step))
    return Answer(" ".join(sentences), tuple(revealed), tuple(repeated), tuple(unknown))


def react(kind: str, scenario: Scenario, step: int) -> str:
    """The customer's reply to a non-question action (solved, rude, escalated, ...)."""
    return pick(content.REACTIONS[kind], scenario.ticket_id, step, kind)
