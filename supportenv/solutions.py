"""Which issues' solutions a text says, read the way a person would: tolerant of word forms
("refunded the duplicate charge" says "refund the duplicate charge") and of the little words
between ("issued a refund of the duplicate charge"), but never finding a phrase inside
another word or across a sentence's unrelated words.

A text and every solution phrase become sequences of stems of their content words (a light
suffix-stripping stemmer; articles, pronouns and prepositions dropped). A phrase is said where
its stems stand in order in the text's, with at most a few other words among them ("standard
shipping for the desk lamp takes 3-5 days" says "standard shipping takes"). Phrases of
different issues may overlap; the verdict (supportenv.text) does not charge a right answer for
a neighbouring fix's words."""

from __future__ import annotations

import re
from collections import Counter

from supportenv.catalog import ARTICLES_BY_ID, FACT_SYNONYMS, ISSUE_TYPES
from supportenv.memo import cached_by_text

_WORD_RE = re.compile(r"[a-z0-9]+")
# Words that carry no meaning of a solution; dropping them lets phrasing vary around the fix.
_DETERMINERS = ("a", "an", "the", "this", "that", "these", "those", "any", "all", "s")
_PRONOUNS = ("my", "your", "our", "their", "his", "her", "its", "it", "i", "we", "you", "they", "me", "us", "them")
_LINKS = ("to", "of", "for", "on", "in", "at", "by", "with", "from", "into", "onto", "and", "or")
_AUXILIARIES = ("will", "can", "could", "would", "shall", "should", "please", "just", "now", "is", "are", "was")
_AUXILIARIES_MORE = ("were", "be", "been", "being", "have", "has", "had", "do", "does", "did")
_STOPWORDS = frozenset((*_DETERMINERS, *_PRONOUNS, *_LINKS, *_AUXILIARIES, *_AUXILIARIES_MORE))


def stem(word: str) -> str:
    """A light stemmer: refunds/refunded/refunding -> refund, update/updating -> updat,
    replace/replacement -> replac, pay/payment -> pay."""
    if len(word) > 4 and word.endswith(("ies", "ied")):
        return word[:-3] + "y"
    for suffix in ("ments", "ment", "ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not (suffix == "s" and word.endswith("ss")):
            word = word[: -len(suffix)]
            break
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if len(word) >= 4 and word[-1] == word[-2] and word[-1] not in "aeious":
        word = word[:-1]  # shipp -> ship, resett -> reset
    return word


# Words support agents use for the same thing, read as one (by stem): a synonym in the answer
# says the same solution as the article's word ("change the delivery address" says "update the
# shipping address"). Both the phrases and the texts are read through this table.
_SAME_AS = {
    "delivery": "ship",
    "deliver": "ship",
    "courier": "carrier",
    "reroute": "redirect",
    "rerout": "redirect",
    "membership": "subscription",
    "end": "cancel",
    "renewal": "renew",
    "chang": "updat",
    "edit": "updat",
    "modify": "updat",
    "amend": "updat",
    "switch": "updat",
    "pictur": "photo",
    "imag": "photo",
    "receipt": "invoic",
    "log": "sign",
    "lodg": "fil",
    "reimburs": "refund",
    "look": "check",  # "have a look at our status page"
    "visit": "check",
    "suggestion": "idea",
    "gap": "differenc",
    "revis": "updat",
    "tap": "click",
    "typ": "updat",  # "type the new address into the login email box"
    "enter": "updat",
    "postag": "ship",
    "thre": "3",
    "fiv": "5",
    "ten": "10",
    "sent": "send",
    "search": "trac",  # a carrier's search for a parcel is a trace
    "hunt": "trac",
    "broken": "damag",
    "pic": "photo",
    "crack": "damag",
    "divert": "redirect",
    "uptim": "statu",
    "regular": "standard",
    "current": "latest",
    "newest": "latest",
    "releas": "version",
    "remov": "delet",
    "removal": "delet",
    "eras": "delet",
    "wip": "delet",
    "refresh": "reload",
    "issuer": "bank",
    "backup": "recovery",
    "deletion": "delet",
    "reconnect": "reauthoriz",
    "connector": "integration",
    "expiry": "expir",
    "disabl": "turn-off",
    "not": "no",
    "t": "no",  # the n't of won't, don't
    "never": "no",
}


# Two-word verbs read as one word, after stemming ("switch off" is "turn off").
_SAME_AS_PAIR = {
    ("turn", "off"): "turn-off",
    ("switch", "off"): "turn-off",
    ("shut", "off"): "turn-off",
    ("free", "charg"): "no-cost",
    ("no", "cost"): "no-cost",
    ("new", "one"): "replac",
    ("onc", "mor"): "again",  # "try the payment once more"
    ("add", "ons"): "extension",  # browser add-ons
    ("another", "one"): "replac",
    ("new", "item"): "replac",
    ("new", "parcel"): "replac",
    ("extra", "one"): "duplicate-charge",
    ("second", "one"): "duplicate-charge",
    # The charge taken twice, however it is named ("reverse the extra payment").
    **{
        (which, what): "duplicate-charge"
        for which in ("duplicat", "extra", "second", "doubl", "repeat")
        for what in ("charg", "pay", "payment", "transaction")
    },
}


# Expressions made of small words, read as the word they mean before the small words are
# dropped ("our engineers are on it", "your money back").
_SAME_AS_EXPRESSION = (
    (re.compile(r"\b(?:on it|looking into it|working on it|working on (?:a |the )?fix)\b"), "investigating"),
    # an outage's status page and its updates, in other words (audit round 43)
    (re.compile(r"\b(?:incident|service status|live status|system status) page\b"), "status page"),
    # ... and a notification setting's ("Settings > Notifications", "switch off the marketing emails")
    (
        re.compile(r"\bsettings\s*>\s*notifications?\b|\bnotifications? (?:settings|page|tab)\b"),
        "notification preferences",
    ),
    (re.compile(r"\bsign (?:you|them) up (?:for|to)\b"), "subscribe you to"),
    (re.compile(r"\b(?:email |e-mail )?alerts\b"), "updates"),
    (re.compile(r"\b(?:your )?money back\b"), "refund"),
    (re.compile(r"\bsign[- ]?in (?:email|address)"), "login email"),
    (re.compile(r"\bhang(?:ing)? on to\b"), "keep"),
    (re.compile(r"\bon us\b"), "at no cost"),
    # where a parcel goes, and who carries it ("switched the destination", "the delivery company")
    (re.compile(r"\bdestination\b"), "shipping address"),
    (re.compile(r"\b(?:delivery|shipping|postal|parcel) (?:company|firm|service)\b"), "carrier"),
    (
        re.compile(r"\b(?:has|have|had) (?:already )?(?:been )?(?:dispatched|shipped|sent out|gone out)\b"),
        "has already left",
    ),
    # two-factor is one thing ("the two I can fix" says nothing of it)
    (re.compile(r"\btwo[- ]factor\b|\b2fa\b|\b2-step\b|\btwo[- ]step\b"), "twofactor"),
    (re.compile(r"\bworking days\b"), "business days"),
    (re.compile(r"\bpass(?:ed|ing)? (?:it |this |that )?(?:along|on)\b"), "post"),
    # money given back is a refund: "return the funds", "has been returned to your card"
    (re.compile(r"\breturn(?:ed|ing|s)? (?:the |your )?(?:funds|money|full amount)\b"), "refund"),
    # ... and so is a charge given back: "we're returning the extra one to your card"
    (
        re.compile(r"\breturn(?:ed|ing|s)? (?=(?:the |your |that )?(?:extra|duplicate|second|double|repeat\w*|\$))"),
        "refund ",
    ),
    (re.compile(r"\breturn(?:ed|ing|s)? (?=(?:the |your |that )?(?:difference|overcharge|overpaid)\b)"), "credit "),
    (re.compile(r"\b(?:has|have) been returned\b|\bwas returned\b"), "refunded"),
    # "sending the full amount back to your card", "putting the $600.00 back on the card you used"
    # (and money sent back is refunded or credited: "sending the duplicate payment back")
    (
        re.compile(
            r"\b(?:send|sending|sent|put|putting|pay|paying|paid|give|giving) "
            r"((?:the |your |it |this |that )?(?:full |whole |entire )?(?:amount|money|funds|sum|\$[\d,.]+) )"
            r"(?:of \$?[\d,.]+ )?back\b"
        ),
        r"refund \1back",
    ),
    (
        re.compile(
            r"\b(?:send|sending|sent|put|putting|pay|paying|paid) "
            r"((?:the |your )?(?:duplicat|extra|second|doubl|repeat)\w* (?:charge|payment|transaction)s? )back\b"
        ),
        r"refund \1back",
    ),
    (
        re.compile(r"\b(?:send|sending|sent|put|putting|pay|paying|paid) ((?:the |your )(?:[\w$.,-]+ ){1,2}?)back\b"),
        r"credit \1back",
    ),
    (re.compile(r"\brefund (?:limit|ceiling|maximum)\b"), "refund cap"),
    (
        re.compile(r"\b(?:the )?payment method you (?:used|paid with)\b"),
        "original payment method",
    ),
    (re.compile(r"\b(?:without charging you(?: anything)?|free of charge|at no charge|for free)\b"), "at no cost"),
    (re.compile(r"\b(?:send|ship|post)(?:ing)? you another\b"), "send a replacement"),
    (
        re.compile(r"\bwhere (?:it|it's|your order|the order|order [\w-]+) (?:is )?(?:going|headed|heading)\b"),
        "shipping address",
    ),
    (re.compile(r"\b(?:will now|is now|will) head(?:s|ing)? to\b"), "shipping address is updated to"),
    # a new key made for the integration is the old one regenerated: "make yourself a fresh key",
    # "rotate the API token"
    (
        re.compile(
            r"\b(?:generat|creat|mak|issu|roll|rotat|get)\w* (?:yourself |you )?(?:(?:a|an|the|your) )?"
            r"(?:(?:fresh|new|brand[- ]new|replacement) )?(?:api |access |integration )?(?:key|token)s?\b"
        ),
        "regenerate the api key",
    ),
)


def content_stems(text: str) -> tuple[str, ...]:
    out: list[str] = []
    lower = text.lower()
    for expression, meaning in _SAME_AS_EXPRESSION:
        lower = expression.sub(meaning, lower)
    last_word = -1  # where the last word that is no number is: "the duplicate $39.99 charge" is a pair
    for word in (stem(w) for w in _WORD_RE.findall(lower) if w not in _STOPWORDS):
        pair = _SAME_AS_PAIR.get((out[last_word], word)) if last_word >= 0 else None
        if pair:
            out[last_word] = pair
            continue
        out.append(word)
        if not word.isdigit():
            last_word = len(out) - 1
    return tuple(_SAME_AS.get(word, word) for word in out)


# Every solution phrase as its stems, with the issue it belongs to: longest first.
_PHRASES: tuple[tuple[tuple[str, ...], str, str], ...] = tuple(
    sorted(
        ((content_stems(p), p, issue.issue_id) for issue in ISSUE_TYPES for p in issue.solution_phrases),
        key=lambda entry: -len(entry[0]),
    )
)
_BY_FIRST_STEM: dict[str, list[tuple[tuple[str, ...], str, str]]] = {}
for _entry in _PHRASES:
    _BY_FIRST_STEM.setdefault(_entry[0][0], []).append(_entry)


# Other words a phrase's own may have among them, in all ("shipping for the desk lamp takes"),
# not counting numbers.
MAX_INSERTED_WORDS = 3


def _span(stems: tuple[str, ...], start: int, phrase_stems: tuple[str, ...]) -> int | None:
    """Where a phrase starting at `start` ends (exclusive), its words in order with at most
    MAX_INSERTED_WORDS others among them; None if it is not there."""
    at, inserted = start + 1, 0
    for wanted in phrase_stems[1:]:
        while at < len(stems) and stems[at] != wanted:
            # (a number among them is a fact's value, "your refund of $34.99 is approved")
            at, inserted = at + 1, inserted + (not stems[at].isdigit())
            if inserted > MAX_INSERTED_WORDS:
                return None
        if at == len(stems):
            return None
        at += 1
    return at


_CLAUSE_END_RE = re.compile(r"[;:!?()\n]|\.(?=\s|$)")


def phrases_said(text: str) -> Counter[str]:
    """How often the text says each solution phrase (by the phrase's catalog text). Phrases of
    different issues may share words ("send a replacement" and "replacement at no cost"): each
    is counted, and the verdict decides what the answer solves for its own ticket."""
    said: Counter[str] = Counter()
    # A phrase is said within one sentence or clause (a comma may come between its words: "if you
    # have a new card, add it as your payment method").
    for clause in _CLAUSE_END_RE.split(text):
        stems = content_stems(clause)
        # Where each match lies: a phrase never overlaps itself, nor one of its issue's other phrases ("the
        # public roadmap" says "public roadmap" once, not "the roadmap" too; audit round 65).
        spans: list[tuple[str, int, int]] = []
        for start, first in enumerate(stems):
            for phrase_stems, phrase, owner in _BY_FIRST_STEM.get(first, ()):
                end = _span(stems, start, phrase_stems)
                if end is None or any(o == owner and start < e and b < end for o, b, e in spans):
                    continue
                said[phrase] += 1
                spans.append((owner, start, end))
    return said


PHRASE_OWNER = {phrase: owner for _, phrase, owner in _PHRASES}


# ---- the article's own steps, said in other words ----

# A step is said when the answer has this share of its content words (and at least two of them):
# "our standard shipping usually arrives within 3 to 5 business days" says "standard shipping
# takes 3-5 business days".
STEP_COVERAGE = 0.6
# Steps too alike across articles ("verify the account holder's identity") say no one issue's fix.
_GENERIC_STEP_SIMILARITY = 0.5
# A word in the steps of this many issues' articles (an eighth of them, 3 of the first 25) is
# common, not a key word of any step: the more articles, the more words any few share by chance.
_COMMON_IN_ISSUES = max(3, len(ISSUE_TYPES) // 8)


# Words that tell the agent what to do rather than what the customer hears ("Explain that ...").
_INSTRUCTION_WORDS = frozenset(
    content_stems("explain mention tell describe customer share point let confirm make sure thank")
)


# A step that hands the case on ("Escalate the case to the security team") is the escalation
# action's to do, not words of a fix: an answer that only announces a hand-over gives no first steps.
_HANDOVER_WORDS = frozenset(content_stems("escalate escalation"))


def _step_words(step: str) -> frozenset[str]:
    # (numbers are no key words: "3-5 business days" is how long a refund, a delivery or a
    # bank takes, the fix of no one issue)
    return frozenset(w for w in content_stems(step) if not w.isdigit()) - _INSTRUCTION_WORDS


def _distinct_steps() -> tuple[tuple[frozenset[str], str], ...]:
    """(key words, issue) of every step of an issue's article that belongs to that article alone.
    Words many articles use ("payment", "method", "order", "account") are not a step's key words."""
    steps = [
        (_step_words(s), issue.issue_id)
        for issue in ISSUE_TYPES
        for s in ARTICLES_BY_ID[issue.article_id].steps
        if not _HANDOVER_WORDS & set(content_stems(s))
    ]
    users: dict[str, set[str]] = {}
    for words, owner in steps:
        for word in words:
            users.setdefault(word, set()).add(owner)
    common = {word for word, owners in users.items() if len(owners) >= _COMMON_IN_ISSUES}

    def alike(a: frozenset[str], b: frozenset[str]) -> bool:
        return len(a & b) / len(a | b) >= _GENERIC_STEP_SIMILARITY

    keyed = [(words - common, owner) for words, owner in steps]
    return tuple(
        (key, owner)
        for key, owner in keyed
        if len(key) >= 2 and not any(other != owner and alike(key, k) for k, other in keyed if k)
    )


_STEPS = _distinct_steps()
# Steps a team carries out ("Have the security team reset two-factor authentication"): what the
# hand-over does, not a first step the customer can take while it comes.
_TEAM_WORDS = frozenset(content_stems("team"))
_FIRST_STEPS = tuple((step, owner) for step, owner in _STEPS if not step & _TEAM_WORDS)


@cached_by_text
def first_steps_said(text: str, phrases_from: str | None = None) -> frozenset[str]:
    """The issues whose safe first steps the text says (an issue to escalate may get them before
    the hand-over): a solution phrase of theirs (read from `phrases_from`, by default the text),
    or a step of their article other than one a team carries out, read without the text's
    announcements ("I'm passing that to our security team next")."""
    said = without_announcements(text)
    words = set(content_stems(said))
    stepped = (owner for step, owner in _FIRST_STEPS if len(step & words) >= max(2, STEP_COVERAGE * len(step)))
    phrased = phrases_said(without_announcements(said if phrases_from is None else phrases_from))
    return frozenset(PHRASE_OWNER[p] for p in phrased) | frozenset(stepped)


def steps_said(text: str) -> frozenset[str]:
    """The issues one of whose article's own steps the text says, in whatever words."""
    words = set(content_stems(text))
    return frozenset(owner for step, owner in _STEPS if len(step & words) >= max(2, STEP_COVERAGE * len(step)))


# Where a sentence ends: its punctuation, or a line break (a list's items are sentences too).
_SENTENCE_END_RE = re.compile(r"(?<=[.!?;:])\s+|\s*\n\s*")
# Small words of phrasal verbs and clauses ("look up", "sign out", "when"): part of a step's key
# words, but too common to show on their own that a sentence says that step.
_PARTICLES = frozenset(("up", "out", "back", "off", "down", "over", "when", "if", "so", "no", "then", "again"))


def _sentence_says(step: frozenset[str], words: set[str]) -> bool:
    key = step - _PARTICLES
    return len(key & words) >= max(2, STEP_COVERAGE * len(key))


def steps_said_in_a_sentence(text: str) -> frozenset[str]:
    """The issues one of whose article's steps a single sentence of the text says, in its key
    words other than particles. Stricter than `steps_said`: a long answer gathers many words,
    and across its sentences (or in its small words: "look up", "sign out") they can cover
    another article's step by chance; charging an answer for saying another issue's fix needs
    the fix said in one place, in words that carry it."""
    said: set[str] = set()
    for sentence in _SENTENCE_END_RE.split(text):
        words = set(content_stems(sentence))
        said.update(owner for step, owner in _STEPS if _sentence_says(step, words))
    return frozenset(said)


# ---- what an answer only announces ----

# A sentence that says the agent will turn to something later ("I'll come to your refund next",
# "I will deal with cancelling your membership once I have your email") names a topic, not a
# fix: its words are not read as that issue's solution.
_LATER_VERB_RE = re.compile(
    r"\b(?:i'm|i am|we're|we are)\s+(?:now\s+|then\s+|also\s+)?(?:passing|handing|sending|taking|bringing|moving)\b|"
    r"\b(?:i'll|i will|i'm going to|i am going to|let me|let's|we'll|we will)\s+(?:now\s+|then\s+|also\s+)?"
    r"(?:come|get|turn|move on|go on|deal|look|take care|handle|sort|help|see to|attend|reply|answer|respond|"
    r"write|get back)\b"
)
# ("once I have your email" is later; "once you complete the reset" is the customer's part of a fix given now)
_LATER_WHEN_RE = re.compile(
    r"\b(?:next|afterwards|after that|in a moment|shortly|separately|later|in my next|"
    r"in (?:the|this) same (?:reply|message)|"
    r"(?:once|as soon as|when) (?:i|we)\b)"
)


# A sentence that opens with what the agent will do after it ("Before I unlock your account, one quick
# question: ..."): the fix it names comes later (audit round 65).
_BEFORE_I_RE = re.compile(r"^\W*(?:\w+,\s+)?before (?:i|we)\b")


def announcements(text: str) -> tuple[str, ...]:
    """The sentences of `text` that only announce what the agent will turn to later."""
    return tuple(
        sentence
        for sentence in _SENTENCE_END_RE.split(text)
        if (_LATER_VERB_RE.search(sentence.lower()) and _LATER_WHEN_RE.search(sentence.lower()))
        or _BEFORE_I_RE.search(sentence.lower())
    )


def without_announcements(text: str) -> str:
    """The text without its announcements, as the solutions it says are read from."""
    later = announcements(text)
    if not later:
        return text
    return " ".join(sentence for sentence in _SENTENCE_END_RE.split(text) if sentence not in later)


# ---- what an answer only asks ----

# A question that names a fact ("could you send me your order ID and the amount you paid?") asks
# for it: its words ("order", "amount paid") are not read as an article's step ("Confirm the
# order and the amount paid"). Its exact solution phrases still are ("... and photos of the damage?").
_FACT_WORDS_RE = re.compile(
    "|".join(rf"(?<!\w){re.escape(w)}(?!\w)" for words in FACT_SYNONYMS.values() for w in words), re.IGNORECASE
)


# ... and so does one that asks what, which or where ("Which country would you like us to ship
# to, so I can confirm it is supported?" says no step of the article: audit round 43).
_WH_QUESTION_RE = re.compile(
    r"^\W*(?:and |so |also |then )?(?:which|what|where|when|who|whose|how (?:many|much|long))\b", re.IGNORECASE
)


@cached_by_text
def asks_for_a_fact(sentence: str) -> bool:
    if not sentence.rstrip().endswith("?"):
        return False  # (first: the cheap test rules out most sentences)
    return bool(_FACT_WORDS_RE.search(sentence) or _WH_QUESTION_RE.match(sentence))


# A question that puts a choice to the customer ("Would you prefer a replacement or a refund?",
# "Which account should we keep?"): the customer says what it prefers, and the options it names
# are no answer to another issue (text.verdict).
_CHOICE_RE = re.compile(
    r"\b(?:prefer|rather)\b|\b(?:would|do) you (?:like|want)\b.*\bor\b|\b(?:shall|should) (?:i|we)\b.*\bor\b"
    r"|\b(?:which|what)\b.*\b(?:would|should|shall) (?:you|we|i)\b|\bwhich (?:\w+ )?do you (?:want|like|need)\b",
    re.IGNORECASE,
)


def puts_a_choice(sentence: str) -> bool:
    return sentence.rstrip().endswith("?") and bool(_CHOICE_RE.search(sentence))


# A fix put off until a fact is in ("Once I have your order ID, I'll send the correct item",
# "As soon as you send the order number we will ...", "With your order ID I can ..."): a plan
# that waits for the fact, which it asks for, not a fix given before it (audit round 47).
_WAITS_FOR_RE = re.compile(
    r"\b(?:once|as soon as|when|after|if)\s+(?:i|we)\s+(?:have|get|receive|see|know)\b"
    r"|\b(?:once|as soon as|when|after|if)\s+you\s+(?:can\s+)?(?:send|give|share|provide|reply|confirm|tell|let)\b"
    r"|^\W*with (?:your|the|that)\b[^,.]{0,40},?\s+(?:i|we)\s*(?:can|could|will|'ll)\b",
    re.IGNORECASE,
)


# ... and a change put off until the customer is verified ("before I can change the delivery address I need to
# confirm your identity another way": audit round 76 read it as told done).
_PUT_OFF_RE = re.compile(r"\b(?:before|until)\s+(?:i|we)\s+(?:can|could|am able to|are able to)\b", re.IGNORECASE)


@cached_by_text
def waits_for_a_fact(sentence: str) -> bool:
    """Whether `sentence` puts what it says off until the customer gives a fact it names (or is verified)."""
    if _PUT_OFF_RE.search(sentence):
        return True
    waits = _WAITS_FOR_RE.search(sentence)
    return bool(waits and _FACT_WORDS_RE.search(sentence, waits.start()))


def _asks_or_waits(sentence: str) -> bool:
    return asks_for_a_fact(sentence) or waits_for_a_fact(sentence)


def without_fact_questions(text: str) -> str:
    """The text without its questions that ask for a fact, and the plans that wait for one, as the
    article steps it says are read from."""
    sentences = _SENTENCE_END_RE.split(text)
    return " ".join(s for s in sentences if not _asks_or_waits(s)) if any(map(_asks_or_waits, sentences)) else text


def sentences_of(text: str) -> list[str]:
    return [s for s in _SENTENCE_END_RE.split(text) if s]
