"""The customer simulator: agenda-style and deterministic.

Hidden facts come out only when asked for; questions about things the customer
cannot know get an "I don't know"; repeated or irrelevant questions cost patience
(the episode decides how much). Replies are natural language from templates, picked
by a stable hash of (ticket, step, what was asked), never by a random generator.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from hashlib import blake2b as _blake2b

from supportenv import content
from supportenv.catalog import FACT_SYNONYMS, ISSUE_TYPES_BY_ID
from supportenv.memo import cached_by_text
from supportenv.records import picklable
from supportenv.solutions import puts_a_choice
from supportenv.world import Scenario


@dataclass(frozen=True)
class Answer:
    reply: str
    revealed: tuple[str, ...]  # fact names newly revealed
    repeated: tuple[str, ...]  # fact names already revealed before
    unknown: tuple[str, ...]  # fact names the customer cannot give
    corrected: tuple[str, ...] = ()  # fact names given before, given again corrected (the order id)
    rechecked: tuple[str, ...] = ()  # proofs given before that the records do not hold, checked and given again


# An empty 4-byte blake2b, copied per pick: copying it then hashing the key gives the same
# digest as blake2b(key, digest_size=4) in about half the time of building one with options.
_EMPTY_HASH = _blake2b(digest_size=4)


def _pick(key: str, options: tuple[str, ...]) -> str:
    """Choose a template deterministically from a stable hash of `key` ("ticket|step|...")."""
    hasher = _EMPTY_HASH.copy()
    hasher.update(key.encode())
    return options[int.from_bytes(hasher.digest(), "big") % len(options)]


# Each field's words as whole words ("sum" is not in "summary").
_FIELD_WORDS = {
    name: re.compile("|".join(rf"(?<!\w){re.escape(w)}(?!\w)" for w in words)) for name, words in FACT_SYNONYMS.items()
}


_NEW_BEFORE_RE = re.compile(r"\b(?:new|personal|other|different|another)\s+(?:\w+\s+)?$")
_NOT_PAID_BEFORE_RE = re.compile(r"\b(?:sale|current|listed|lower|reduced|discounted)\s+$")
_NOT_PAID_AFTER_RE = re.compile(r"^\s+(?:adjustment|match|drop)")
# An email that is a message, not the account's address: "did the reset email arrive?", "send
# them to you by email", "I can email you the steps"; a login that is the act ("did the login work?").
_MESSAGE_BEFORE_RE = re.compile(
    r"\b(?:by|via|an|a|reset|confirmation|verification|welcome|receipt|our|that|this|the\s+\w+ing)\s+(?:\w+\s+)?$"
)
_MESSAGE_AFTER_RE = re.compile(
    r"^(?:s\b|\s+(?:you|me|us|them|it|arrive\w*|came|come|we|i\b|link|with|from|to\b|work\w*|page|screen|"
    r"attempts?|button|form))"
)
_MEDIUM_WORDS = ("email", "e-mail", "login")


def _names_the_fact(name: str, lower: str, match: re.Match[str]) -> bool:
    before, after = lower[: match.start()], lower[match.end() :]
    if name != "new_address" and _NEW_BEFORE_RE.search(before):
        return False  # "which new email address would you like?" is not the one on record
    if name == "amount" and (_NOT_PAID_BEFORE_RE.search(before) or _NOT_PAID_AFTER_RE.match(after)):
        return False  # "the sale price", "your price adjustment" are not what the customer paid
    # ... and an email that is a message, or a login that is the act, is no address
    is_message = bool(_MESSAGE_BEFORE_RE.search(before) or _MESSAGE_AFTER_RE.match(after))
    return not (match.group(0) in _MEDIUM_WORDS and is_message)


_COUNTRY_RE = re.compile(r"\bcountr(?:y|ies)\b|\bwhere (?:do you live|are you|would you like)", re.IGNORECASE)


def _ships_abroad(scenario: Scenario) -> bool:
    return any(i.issue_id in content.ABROAD_ISSUES for i in scenario.intents)


@cached_by_text
def fields_in_question(question: str) -> tuple[str, ...]:
    """The facts a free-text question asks for, by the words people use for them. A "new" one
    ("which new email address would you like?") is not the fact on record (only new_address is
    a new thing the customer can be asked for), and an email that is a message is no address."""
    # (only the sentences that ask: "Happy to help with the price match." asks for no amount; and not their
    # purpose: "So I can look into the price of the desk, could you share the order id?" asks for no amount,
    # audit round 67)
    asking = " ".join(s for s in _SENTENCE_RE.split(question) if _ASKS_RE.search(s.lower()))
    return fields_named(_PURPOSE_RE.sub(" ", asking))


def fields_named(text: str) -> tuple[str, ...]:
    """The facts `text` names, by the words people use for them (as fields_in_question reads them)."""
    lower = text.lower()
    return tuple(
        name
        for name, words in _FIELD_WORDS.items()
        if any(_names_the_fact(name, lower, m) for m in words.finditer(lower))
    )


_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")  # (a sentence ends at . ! or ?, before a space)
# A clause that says what a question is for, before it ("So I can look into ..., could you ...?").
_PURPOSE_RE = re.compile(r"\b(?:so (?:that )?(?:i|we) can|in order to)\b[^,;:?.!]*[,;:]", re.IGNORECASE)
_ASKS_RE = re.compile(
    r"\?\s*$|\b(?:please|could you|can you|would you|share|send|provide|tell me|let me know|confirm|need)\b"
)


def _capitalise(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fact_replies(scenario: Scenario, name: str) -> tuple[str, ...]:
    """The ways to give fact `name`, in the words of the issue it was drawn for (the first
    intent that lists it, as world.generate draws them): "both charges" for a double charge."""
    owner = next((i.issue_id for i in scenario.intents if i.knows(name)), "")
    own = (
        content.FAMILY_FACT_REPLIES.get(scenario.family, {}).get(name)
        if owner == scenario.intents[0].issue_id
        else None
    )
    replies = own or content.ISSUE_FACT_REPLIES.get(owner, {}).get(name) or content.FACT_REPLIES[name]
    if name == "order_id" and scenario.meant_order_id:
        # (an earlier order's id, given by mistake: from memory, not read off the order's confirmation; round 72)
        replies = tuple(r for r in replies if not _READ_OFF_RE.search(r)) or replies
    return replies


# Words of a fact read off a document of the order ("the confirmation email says order ...").
_READ_OFF_RE = re.compile(r"\b(?:email|receipt|confirmation|invoice|says)\b")
_IT_RE = re.compile(r"it\b")
# A question whether anything changed lately ("did anything change on your side recently?").
# A question whether something changed ("Has anything changed recently?", "any recent changes?"), not
# one that says a change may be needed ("in case anything needs changing": audit round 64).
_CHANGES_RE = re.compile(
    r"\b(?:anything|something)\s+(?:(?:has|have|that|been|else)\s+)?(?:changed?|different)\b|"
    # (what the customer or its people changed, not "before I can change anything": rounds 74 and 76)
    r"\b(?:you|your \w+|anyone|anybody|someone|somebody|they)\s+(?:(?!(?:I|we|before)\b)\w+\s+){0,2}?changed?\s+"
    r"anything\b|"
    # (not what the desk makes: "before I make any changes"; round 79)
    r"(?<!make )(?<!making )(?<!made )\bany\s+(?:recent\s+)?changes\b"
    r"(?!\s+(?:are|is|were|be)?\s*(?:needed|required|due))"
    r"|\brecent(?:ly)?\s+chang\w*",
    re.IGNORECASE,
)


_QUESTION_RE = re.compile(r"[^.!?]*\?")


def asks_what_changed(text: str) -> bool:
    """Whether a question of the text asks what the customer or its people changed ("Have there been any
    changes on your side?"), not a sentence of what the desk will do ("before I make any changes"; round 79)."""
    return any(_CHANGES_RE.search(asked) for asked in _QUESTION_RE.findall(text))


# A yes-or-no question ("Have you received a shipping confirmation?"), however it is led into.
_YES_NO_RE = re.compile(
    r"^(?:[\w' ]+,\s+)?(?:(?:and|so|also|just|first|before \w+[^,]*),?\s+)*(?:could you tell me )?"
    r"(?:do|does|did|have|has|had|is|are|was|were|can|could|would|will)\b|\bwhether\b",
    re.IGNORECASE,
)
# A question what happened ("what went wrong with it?", "what arrived instead?").
_WHAT_HAPPENED_RE = re.compile(
    r"\b(?:what|how|why)\b[^?.!]*\b(?:went wrong|go wrong|happened|happen|arrived|came|turned up|is wrong|was wrong|"
    r"the problem|the issue|is going on|seems to be|you received|you got)\b|\bdid you (?:receive|get) instead\b",
    re.IGNORECASE,
)


def _own_words(scenario: Scenario) -> str:
    """What the customer wrote of its first issue (its template as it stands in the opening), or
    that issue in its plain words."""
    issue_id, index = scenario.template_ids[0].rsplit("/", 1)
    template = ISSUE_TYPES_BY_ID[issue_id].templates[int(index)]
    pattern = re.escape(template).replace(re.escape("{product}"), ".+?")
    found = re.search(pattern, scenario.opening_message, re.IGNORECASE)
    said = found.group(0) if found else f"it's about {issue_words([issue_id])}."
    return said[:1].lower() + said[1:] if not said.startswith(("I ", "I'")) else said


# A question how pressing the problem is ("Is this urgent?", "Is it stopping you from working?").
_IMPACT_QUESTION_RE = re.compile(
    r"\b(?:urgent\w*|how soon|by when|deadline|time[- ]sensitive|can (?:it|this|that) wait|stopping you|"
    r"holding you up|blocking you|affecting your work|in a hurry|rush)\b",
    re.IGNORECASE,
)


# A question that only asks for what the agent asked for by name ("Could you please share these
# details?" with the fields): the request itself, not a question of its own (make run's first
# episode answered it "Not that I know of.").
_ASKS_FOR_THE_FIELDS_RE = re.compile(
    r"^\s*(?:(?:could|can|would|will) you\s+)?(?:please\s+)?(?:kindly\s+)?(?:share|provide|send|give|tell|confirm|"
    r"let me know|pass on)\b(?:\s+(?:me|us|with me|please))*\s+(?:these|those|the|them|that|this|it|your)?"
    r"\s*(?:details?|info(?:rmation)?|facts?|things|them|those|these)?\s*(?:,?\s*please)?\s*\?$",
    re.IGNORECASE,
)


# An open issue a customer asked for by name, and the option of a choice that names it.
_WANTED_OPTION = {"refund_request": re.compile(r"\brefund|\bmoney back\b", re.IGNORECASE)}


def choice_kind(scenario: Scenario, question: str) -> str:
    """The kind of the customer's reply to an either-or: the option it asked for by name, where the
    choice names it ("choice_refund_request"), else "choice" (whichever the desk thinks best)."""
    issues = [i.issue_id for i in scenario.intents]
    wanted = [i for i, words in _WANTED_OPTION.items() if i in issues and words.search(question)]
    return f"choice_{wanted[0]}" if wanted else "choice"


def _question_for_no_fact(question: str, fields: tuple[str, ...] = ()) -> str:
    """The first question in `question` that names no fact, nor a new address (answered apart),
    nor only asks for the `fields` named."""
    return next(
        (
            q
            for q in _QUESTION_RE.findall(question or "")
            if not fields_in_question(q)
            and not _NEW_EMAIL_RE.search(q)
            and not (fields and _ASKS_FOR_THE_FIELDS_RE.match(q))
        ),
        "",
    )


# A question for the address the customer wants to move to ("which new email would you like?").
_NEW_EMAIL_RE = re.compile(r"\bnew\s+(?:\w+\s+)?(?:e-?mail|login)\b", re.IGNORECASE)


def new_email(scenario: Scenario) -> str:
    """The address a customer who asks to change its email wants instead: its name at another provider."""
    on_record = scenario.facts_by_name.get("account_email", "me@mail.test")
    domain = _pick(f"{scenario.ticket_id}|new_email", content.NEW_EMAIL_DOMAINS)
    return f"{on_record.split('@')[0]}@{domain}"


_PROOFS = ("order_id", "card_last_four")


def answer(
    scenario: Scenario,
    already: tuple[str, ...],
    fields: tuple[str, ...],
    question: str,
    step: int,
    correct_to: str = "",
) -> Answer:
    """The customer's answer to a question for facts. `correct_to`: the order id it means, where
    the one it gave is an earlier order's and it has not said so yet (asked for the order id again,
    it corrects itself)."""
    # (the fields named and those the question's words ask for: a customer answers the whole question)
    wanted = list(dict.fromkeys((*fields, *fields_in_question(question))))
    facts = scenario.facts_by_name
    if correct_to and "order_id" in already and facts["order_id"] in question:
        wanted.append("order_id")  # ("Is ORD-1 the order you mean? It is from March.": the order id, asked again)
    wanted = list(dict.fromkeys(wanted))
    ticket = scenario.ticket_id
    revealed: list[str] = []
    repeated: list[str] = []
    unknown: list[str] = []
    parts: list[str] = []
    corrected: list[str] = []
    rechecked: list[str] = []
    for name in wanted:
        value = facts.get(name)
        if name == "order_id" and name in already and correct_to:
            corrected.append(name)
        elif name in already and scenario.impostor and name in _PROOFS:
            # (an impostor asked to check the order id or card it gave, which the account does not hold: it
            # gives the same again, as one who made it up would; audit round 74: "Why are you asking again?")
            rechecked.append(name)
        elif name in already:
            repeated.append(name)
        elif value is None:
            unknown.append(name)
        else:
            revealed.append(name)
            options = _fact_replies(scenario, name)
            if len(parts) % 2:  # second in its sentence: an "it" there would mean the first fact
                options = tuple(o for o in options if not _IT_RE.match(o)) or options
            parts.append(_pick(f"{ticket}|{step}|{name}", options).format(value))
    sentences = []
    if corrected:
        options = content.TYPO_CORRECTIONS if scenario.order_id_mistyped else content.ORDER_CORRECTIONS
        sentences.append(_pick(f"{ticket}|{step}|corrected", options).format(given=facts["order_id"], meant=correct_to))
    if parts:
        # Two facts to a sentence, as people write them ("It's X and the order is Y. ...").
        sentences += [_capitalise(spoken_list(parts[i : i + 2])) + "." for i in range(0, len(parts), 2)]
    for name in rechecked:
        sentences.append(_pick(f"{ticket}|{step}|{name}|again", content.RECHECKED_REPLIES).format(facts[name]))
    if repeated:
        sentences.append(_pick(f"{ticket}|{step}", content.REPEAT_REPLIES))
    for name in unknown:
        sentences.append(_pick(f"{ticket}|{step}|{name}", content.UNKNOWN_REPLIES[name]))
    if (
        question
        and _NEW_EMAIL_RE.search(question)
        and any(i.issue_id in content.NEW_EMAIL_ISSUES for i in scenario.intents)
    ):
        sentences.append(_pick(f"{ticket}|{step}|new_email", content.NEW_EMAIL_REPLIES).format(new_email(scenario)))
    if question and asks_what_changed(question):
        sentences.append(_pick(f"{ticket}|{step}|changes", content.CHANGE_REPLIES))
    elif question and _WHAT_HAPPENED_RE.search(question):
        # "...and what arrived in the box instead?": the customer tells it again, in its own words.
        sentences.append(_pick(f"{ticket}|{step}|again", content.TOLD_AGAIN_REPLIES).format(_own_words(scenario)))
    elif (other := _question_for_no_fact(question, fields)) and _COUNTRY_RE.search(other) and _ships_abroad(scenario):
        # "Which country are you in?" of a customer asking about shipping abroad: it knows (audit round 43)
        country = _pick(f"{ticket}|country", content.COUNTRIES)
        sentences.append(_pick(f"{ticket}|{step}|country", content.COUNTRY_REPLIES).format(country))
    elif other and not corrected:  # (a correction of the order id is the answer to "is that the right order?")
        # "Is this stopping you from working?", "Do you still have the backup codes?": answered, never
        # met with "Sorry, I don't follow" (nor passed over after the facts).
        replies = (
            content.CONFIRMED_REPLIES  # "is ORD-1 the order where the wrong item arrived?" of a fact given
            if repeated and _YES_NO_RE.match(other.strip())
            else content.IMPACT_REPLIES[scenario.impact]
            if _IMPACT_QUESTION_RE.search(other)
            # ("would you prefer it sent again or your money back?": chosen, not "Not that I know of"; round 70)
            else content.REACTIONS["question_" + choice_kind(scenario, other)]
            if puts_a_choice(other)
            else content.NOT_THAT_I_KNOW_REPLIES
            if _YES_NO_RE.match(other.strip())
            else content.UNSURE_REPLIES
        )
        sentences.append(_pick(f"{ticket}|{step}|other", replies))
    if not sentences:
        sentences.append(_pick(f"{ticket}|{step}", content.VAGUE_REPLIES))
    return Answer(
        reply=" ".join(sentences),
        revealed=tuple(revealed),
        repeated=tuple(repeated),
        unknown=tuple(unknown),
        corrected=tuple(corrected),
        rechecked=tuple(rechecked),
    )


# A sentence that opens with thanks or a word of assent ("Thanks, that's exactly what I wanted!", "Right, I'll ...").
# (followed by its comma: "Thanks for looking into it" is a sentence of its own)
_MARKERS = ("okay", "ok", "right", "alright")  # (words that only start a sentence, unlike "Fine." or "Great.")
_OPENING_WORD_RE = re.compile(
    r"^(thanks|thank you|great|perfect|brilliant|okay|ok|right|alright|fine)(?:[,!]|\.(?!\.))\s*", re.I
)
_THANKS_RE = re.compile(r"\bthank", re.IGNORECASE)
_THANKS_FOR_RE = re.compile(r"^(?:thanks|thank you)(?: (?:so much|a lot))? for ", re.IGNORECASE)
_TRAILING_THANKS_RE = re.compile(r",\s*(?:thanks|thank you)(?: (?:a lot|so much))?([.!])$", re.IGNORECASE)


@cached_by_text
def without_repeated_thanks(reply: str) -> str:
    """A reply made of several reactions (the news taken in, then an issue thanked for) as one person
    writes it: no second "Thanks," after thanks, nor a second "Right," (audit round 70: "That's a relief,
    thank you. Thanks, that's exactly what I wanted!"), and thanks for two things said once."""
    sentences = _SENTENCE_RE.split(reply)
    if len(sentences) < 2:
        return reply
    kept: list[str] = []
    for sentence in sentences:
        thanked_before = any(_THANKS_RE.search(k) for k in kept)
        if kept:
            sentence = _without_repeated_openings(sentence, kept, thanked_before)
            if not sentence:
                continue  # (a bare "Thanks!" after thanks)
        if kept and thanked_before:
            # (nor a closing ", thanks" after thanks: "... from my end, thanks. That answers it, thanks."; round 74)
            sentence = _TRAILING_THANKS_RE.sub(r"\1", sentence)
        thanks_for = _THANKS_FOR_RE.match(sentence) if kept else None
        if thanks_for:
            # Thanks for a second thing: "Thanks for checking the tracking, and for doing that.", and not
            # after "..., thanks." ("I'll wait a bit longer, thanks. Thanks for dealing with it."; round 77).
            if _THANKS_FOR_RE.match(kept[-1]):
                kept[-1] = f"{kept[-1][:-1]}, and {sentence[thanks_for.end() - len('for ') :]}"
                continue
            kept[-1] = _TRAILING_THANKS_RE.sub(r"\1", kept[-1])
        kept.append(sentence)
    return " ".join(kept)


def _without_repeated_openings(sentence: str, kept: list[str], thanked_before: bool) -> str:
    """`sentence`, not the reply's first, without the opening words a reply has had already or that start a
    second reaction: thanks after thanks, and an interjection after the first sentence ("Right, so it's paid
    after all. Okay, thanks for doing that."; the s5 note; "No, that wasn't me! ... Okay, fine. That answers it,
    I suppose."; round 78)."""
    while opening := _OPENING_WORD_RE.match(sentence):
        word, rest = opening.group(1).lower(), sentence[opening.end() :]
        # (a bare "Fine." after the first sentence is a word of its own: "This is ridiculous. Fine."; a bare
        # "Okay." only starts the next reaction: "That's a relief, thank you. Okay. About time."; round 79)
        if word.startswith("thank"):
            drop = thanked_before
        else:
            drop = bool(rest) or word in _MARKERS or any(k.lower().startswith(word) for k in kept)
        if not drop:
            return sentence
        if not rest:
            return ""
        sentence = rest[0].upper() + rest[1:]
    return sentence


@lru_cache(maxsize=4096)
def _written_forms(line: str) -> tuple[str, ...]:
    """A reaction's line as a reply may hold it: as it is, and as it reads after another reaction's sentence
    (without_repeated_thanks drops its opening interjection, or its thanks after thanks)."""
    return tuple(
        dict.fromkeys(
            [line, *(without_repeated_thanks(f"{before} {line}")[len(before) + 1 :] for before in ("Yes.", "Thanks."))]
        )
    )


def wrote(line: str, text: str) -> bool:
    """Whether a customer's reply `text` holds the reaction `line`, in either of the forms a reply writes it."""
    return any(form in text for form in _written_forms(line))


def react(kind: str, scenario: Scenario, step: int, said: tuple[str, ...] = (), **words: str) -> str:
    """The customer's reply to a non-question action (solved, rude, escalated, ...); `words`
    fill the reply's placeholders ({issue}, {remaining}, {fact}, and {reply}: a reply to add to).
    A reply in `said` (what the customer wrote before) is not said again while another fits."""
    return _fresh_pick(f"{scenario.ticket_id}|{step}|{kind}", content.REACTIONS[kind], said, words)


def _fresh_pick(key: str, templates: tuple[str, ...], said: tuple[str, ...], words: dict[str, str]) -> str:
    replies = tuple(t.format(**words) for t in templates) if words else templates
    return _pick(key, tuple(r for r in replies if r not in said) or replies)


# A sign-in, in the words an agent may use ("the sign-in from York", "someone logged into", "a login", "your
# account was accessed", "a session"), and a question of whose it was ("was that you?", "was the Braga sign-in
# yours?", "do you recognise it?", "did you sign in from York?"), not whether a sign-in worked ("were you able
# to sign in after the reset?": code review of world-15).
_SIGN_IN_RE = re.compile(
    r"\b(?:sign(?:ed|ing)?[- ]?(?:ins?|into|on)|log(?:ged|ging)?[- ]?(?:ins?|into|on)|logins?|accessed|sessions?)\b",
    re.IGNORECASE,
)
_WHOSE_RE = re.compile(
    r"\b(?:was|were|is)\b[^.?!]{0,60}?\b(?:you|yours|your own)\s*\?|\brecogni[sz]e\b|\bfamiliar\b|\byours\b"
    r"|\bby you\b|\byou made\b|\bmade by you\b|\bwhether (?:it|that|this|they|these|those) (?:was|were) you\b"
    r"|\bdid you (?:do|make)\b|\bdid you (?:sign|log)(?:ged)?[- ]?(?:in|into|on)\b[^.?!]*\b(?:from|on|in)\b"
    r"|\b(?:if|whether) you (?:signed|logged)[- ]?(?:in|into|on)\b[^.?!]*\b(?:from|on|in)\b",
    re.IGNORECASE,
)
# A question put to the customer, or a request to it to confirm ("Could you confirm whether ..."), not a
# statement of what the agent will do ("I will review your sign-ins to confirm whether they were yours").
_ASKING_RE = re.compile(
    r"\?|\b(?:please|could you|can you|would you)\b[^.?!]*\b(?:confirm|tell (?:me|us)|let (?:me|us) know)\b"
    r"|^\s*(?:please )?(?:confirm|let (?:me|us) know)\b",
    re.IGNORECASE,
)


def _names(sentence: str, names: tuple[str, ...]) -> bool:
    return any(re.search(rf"\b{re.escape(name)}\b", sentence, re.IGNORECASE) for name in names if name)


@cached_by_text
def sign_in_questions(text: str, names: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The sentences of the text that ask the customer whose a sign-in was: a question (or a request to
    confirm) asking whose, about a sign-in named in it or in the sentence before ("I see a sign-in from York
    on 28 Nov. Was that you?"); a sign-in's device or place (`names`) names it too."""
    sentences = _SENTENCE_RE.split(text)
    return tuple(
        sentence
        for n, sentence in enumerate(sentences)
        if _ASKING_RE.search(sentence)
        and _WHOSE_RE.search(sentence)
        and any(_SIGN_IN_RE.search(s) or _names(s, names) for s in (sentence, sentences[n - 1] if n else ""))
    )


def asks_whose_sign_in(text: str, names: tuple[str, ...] = ()) -> bool:
    """Whether the text asks the customer whose a sign-in was (sign_in_questions)."""
    return bool(sign_in_questions(text, names))


def without_sign_in_questions(text: str, names: tuple[str, ...] = ()) -> str:
    """The text without its questions of whose a sign-in was (answered on their own)."""
    asked = sign_in_questions(text, names)
    return " ".join(s for s in _SENTENCE_RE.split(text) if s not in asked) if asked else text


def tells_of_a_sign_in(text: str, device: str, place: str) -> bool:
    """Whether the text names this sign-in to the customer: a sentence about a sign-in naming its device
    or its place ("we've escalated the sign-in from a Chromebook in York")."""
    return any(_SIGN_IN_RE.search(s) and _names(s, (device, place)) for s in _SENTENCE_RE.split(text))


# How the customer says yes to an offer in the agent's answer (episode._yes_to), and how the
# next step knows it did.
YES_TO_OFFER = "Yes, please."


def asked_for_another_number(reply: str) -> bool:
    """Whether a customer reply to a callback asked to be called on another number."""
    return reply in content.REACTIONS["callback_no_phone"]


# A choice the customer made among options the agent put to it is a yes to one of them.
_CHOICES = (*content.REACTIONS["question_choice"], *content.REACTIONS["question_choice_refund_request"])


def accepted_offer(reply: str) -> bool:
    """Whether a customer reply said yes to something the agent offered (or chose one of the
    options it put)."""
    return reply.startswith((YES_TO_OFFER, *_CHOICES))


def spoken_list(items: Iterable[str]) -> str:
    """Items as a sentence lists them, each once: "a", "a and b", "a, b and c"."""
    names = list(dict.fromkeys(items))
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)


def issue_words(issue_ids: list[str] | tuple[str, ...]) -> str:
    """Issues as the customer names them: "the double charge and my late parcel"."""
    return spoken_list(content.ISSUE_WORDS[i][0] for i in issue_ids)


def solved_reply(
    issue_id: str, mood: str, asked_for_photos: bool, done_for_them: bool = False, news: bool = False
) -> str:
    """The kind of reply to a right answer to the customer's last open issue: it fits the
    answer (steps to take, photos to send, a promise, information) and the mood the customer
    shows after it (a sentiment label): glad if satisfied, plain if neutral, grudging if still
    annoyed. A replacement the answer asked no photos for is only a promise; steps the answer
    says the agent took already ("I've cancelled it") are thanked for as done; `news` (the expert task's
    issue answered by what the records show, with nothing changed) as information."""
    kind = content.ISSUE_WORDS[issue_id][1]
    if news:  # (what the records show, and nothing changed: not "good to know it's being put right"; round 72)
        kind = "info"
    elif kind == "photos" and not asked_for_photos:
        kind = "promise"
    if done_for_them and kind in ("steps", "fix"):
        kind = "done"
    return in_mood("solved_" + kind, mood)


# Words of a solved reply that call the whole case covered ("that covers everything").
_ALL_COVERED_RE = re.compile(r"\b(?:everything|all of it|covers it all|deals with all)\b", re.IGNORECASE)
# Words of a solved reply that fit only an answer to one issue.
_ONE_ISSUE_RE = re.compile(r"\b(?:my question|answers it)\b", re.IGNORECASE)


def solved(
    scenario: Scenario,
    step: int,
    issue_ids: list[str],
    mood: str,
    asked_for_photos: bool,
    done_for_them: bool = False,
    said: tuple[str, ...] = (),
    all_done: bool = True,
    news: frozenset[str] = frozenset(),
) -> str:
    """The customer's reply to an answer that solved its last open issues (`issue_ids`): the reply
    to the main one, the last that is not an idea (a fix matters more to a customer than its
    suggestion noted), then the photos the answer asked for and the idea it passed on, where
    that reply does not say them already. An answer to several issues gets a reply that fits several;
    with more to come (`all_done` false: a takeover still to hand over), none that calls it all covered."""
    ideas = [i for i in issue_ids if content.ISSUE_WORDS[i][2] == content.IDEA]
    main = next((i for i in reversed(issue_ids) if i not in ideas), issue_ids[-1])
    kind = solved_reply(main, mood, asked_for_photos, done_for_them, main in news)
    kinds = {solved_reply(i, mood, asked_for_photos, done_for_them, i in news) for i in issue_ids if i not in ideas}
    if len(kinds) > 1 and not asked_for_photos:
        # Answers of different kinds (a refund made, steps to try): thanks that fit them all.
        kind = in_mood("solved_mixed", mood)
    options = content.REACTIONS[kind]
    if len(issue_ids) - len(ideas) > 1:  # "that answers my question" is for one issue, not several
        options = tuple([t for t in options if not _ONE_ISSUE_RE.search(t)])
    if not all_done:
        options = tuple([t for t in options if not _ALL_COVERED_RE.search(t)]) or tuple(
            t
            for t in content.REACTIONS[solved_reply(main, mood, asked_for_photos, done_for_them, main in news)]
            if not _ALL_COVERED_RE.search(t)
        )
    reply = _fresh_pick(f"{scenario.ticket_id}|{step}|{kind}", options, said, {})
    if asked_for_photos and not kind.startswith("solved_photos"):
        reply = react(in_mood("solved_photos_too", mood), scenario, step, said, reply=reply)
    if ideas and main not in ideas:
        reply = react(in_mood("solved_idea_too", mood), scenario, step, said, reply=reply)
    return reply


def in_mood(kind: str, mood: str) -> str:
    """The variant of reply `kind` for the mood the customer shows after it (a sentiment label):
    glad if satisfied, plain if neutral, grudging if still annoyed."""
    if mood in ("angry", "frustrated"):
        return kind + "_grudging"
    return kind if mood == "satisfied" else kind + "_plain"


picklable(Answer)  # pickle and copy alike on both builds
