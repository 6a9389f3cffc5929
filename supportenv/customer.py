"""The customer simulator: agenda-style and deterministic.

Hidden facts come out only when asked for; questions about things the customer
cannot know get an "I don't know"; repeated or irrelevant questions cost patience.
Replies are natural language from templates, picked by a hash of (ticket, step).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from supportenv.catalog import FACT_SYNONYMS
from supportenv.world import Scenario

FACT_PHRASES = {
    "order_id": "my order number is {}",
    "amount": "the amount was ${}",
    "card_last_four": "the card ends in {}",
    "account_email": "my account email is {}",
    "error_code": "the error code is {}",
    "tracking_number": "the tracking number is {}",
    "device_model": "I'm using a {}",
    "charge_date": "the charge was on {}",
}
_UNKNOWN = ("I don't know my {}.", "I'm not sure what my {} is, sorry.", "I don't have a {} for this.")
_REPEAT = ("I already told you that!", "I gave you that already.", "Why are you asking again?")
_VAGUE = ("I'm not sure what you need from me.", "Can you be more specific?", "What exactly do you need?")


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
            parts.append(FACT_PHRASES[name].format(value))
    sentences = []
    if parts:
        sentences.append(("Sure, " if scenario.persona == "polite" else "") + ", and ".join(parts) + ".")
    if repeated:
        sentences.append(pick(_REPEAT, scenario.ticket_id, step))
    for name in unknown:
        sentences.append(pick(_UNKNOWN, scenario.ticket_id, step, name).format(name.replace("_", " ")))
    if not sentences:
        sentences.append(pick(_VAGUE, scenario.ticket_id, step))
    reply = " ".join(sentences)
    reply = reply[0].upper() + reply[1:]
    return Answer(reply, tuple(revealed), tuple(repeated), tuple(unknown))


REACTIONS = {
    "solved": ("Thank you, that fixes it!", "Great, that worked.", "Perfect, thanks for sorting this out."),
    "unhelpful": (
        "That doesn't help me at all.",
        "That's not my problem though.",
        "That has nothing to do with my issue.",
    ),
    "rude": ("Excuse me? That's very rude.", "I can't believe you'd talk to me like that.", "Wow. Unbelievable."),
    "premature": ("Wait, my problem isn't fixed yet!", "You can't just close this, nothing was solved."),
    "escalated": ("Okay, I'll wait for the specialist.", "Thanks, I hope they can help quickly."),
    "transferred": ("Okay, transferring me again?", "Fine, I'll talk to that team."),
    "wrong_transfer": ("Why am I being sent there? That's the wrong team.", "This isn't a question for that team."),
    "callback": ("A call would be great, thank you.", "Okay, I'll wait for your call."),
    "article": ("I'll read that article.", "Thanks, I'll take a look at the article."),
    "wrong_article": ("That article is about something else.", "This article doesn't match my problem."),
    "classified": ("Okay.", "Alright, what now?", "Fine."),
    "closed": ("Thanks, bye.", "Alright, thank you."),
    "gave_up": ("I've had enough, I'm taking my business elsewhere.", "Forget it. I'm done talking to you."),
    "no_callback": ("You said you'd call me? I thought that wasn't possible for my plan.",),
}


def react(kind: str, scenario: Scenario, step: int) -> str:
    return pick(REACTIONS[kind], scenario.ticket_id, step, kind)
