"""The agent's text is judged the way a person reads it: corpora of polite, rude and curt support
answers (tests/data, written for the purpose) are judged as a supervisor would, words count only as
words and phrases in their context, and every tone rule is real (each catches a corpus answer)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from supportenv import text
from supportenv.text import (
    BLAME_RULES,
    POLITE_RULES,
    RUDE_ORDER_RULES,
    RUDE_RULES,
    ToneRules,
    is_polite,
    is_rude,
    verdict,
)

DATA = Path(__file__).resolve().parent / "data"


def answers(name: str) -> list[str]:
    """One answer per line; blank lines and "#" comments skipped."""
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


POLITE = answers("polite_answers.txt")
RUDE = answers("rude_answers.txt")
CURT = answers("curt_answers.txt")


def tone(answer: str) -> tuple[bool, bool]:
    judged = verdict(answer, (), "")
    return judged.rude, judged.polite


def misjudged(corpus: list[str], expected: tuple[bool, bool]) -> list[str]:
    return [f"{tone(a)} {a}" for a in corpus if tone(a) != expected]


def test_corpora_are_large_varied_and_distinct():
    assert len(POLITE) >= 200 and len(RUDE) >= 60 and len(CURT) >= 20
    everything = POLITE + RUDE + CURT
    assert len(set(everything)) == len(everything), "an answer appears twice"


def test_polite_answers_are_polite_and_not_rude():
    wrong = misjudged(POLITE, (False, True))
    assert not wrong, "(rude, polite) should be (False, True):\n" + "\n".join(wrong)


def test_rude_answers_are_rude_and_so_not_polite():
    wrong = misjudged(RUDE, (True, False))
    assert not wrong, "(rude, polite) should be (True, False):\n" + "\n".join(wrong)


def test_curt_answers_are_neither_rude_nor_polite():
    wrong = misjudged(CURT, (False, False))
    assert not wrong, "(rude, polite) should be (False, False):\n" + "\n".join(wrong)


# The words the old substring judge called rude anywhere, in a benign sense and in a rude one.
SAME_WORDS = [
    ("We'll do whatever it takes to fix this.", "Whatever. It'll get there."),
    ("Pay however you like, whatever you prefer.", "Yeah, whatever you say."),
    ("This old link is useless now; use the new one.", "You're useless at this."),
    ("The kiosk is a dumb terminal.", "That's a dumb question."),
    ("Your dumbbells ship on Monday.", "Are you dumb?"),
    ("To help you stay calm, down below are the steps.", "Calm down, it's a late parcel."),
    ("Once the rush calms down, deliveries speed up.", "You need to calm down."),
    ("It's not your fault the courier was late.", "It's your own fault for ordering late."),
    ("None of this was your fault.", "No, it's your fault."),
    ("We'll deal with it right away.", "Deal with it."),
    ("I'm sorry you have to deal with it.", "Sorry, but deal with it."),
    ("You can read the manual online if you like.", "Read the manual."),
    ("There's no such thing as a stupid question.", "What a stupid question."),
    ("Your browser will stop complaining once it's renewed.", "Stop complaining."),
    ("Let's figure it out together.", "Figure it out yourself."),
    ("The warning should go away after a restart.", "Just go away."),
    ("Parcels sometimes get lost between depots.", "Get lost."),
    ("I don't blame you for being cautious.", "Blame yourself for picking the slow option."),
]


@pytest.mark.parametrize(("benign", "rude"), SAME_WORDS)
def test_the_same_words_are_rude_only_in_a_rude_context(benign, rude):
    assert not is_rude(benign), benign
    assert is_rude(rude), rude


def test_case_curly_quotes_and_spacing_do_not_hide_rudeness():
    for answer in ("YOU’RE AN IDIOT.", "You  are\tan idiot.", "“Whatever.”", "it’s your own fault"):
        assert is_rude(answer), answer
    assert tone("THANK YOU, I’LL LOOK INTO IT.") == (False, True)


ALL_RULES: list[tuple[str, ToneRules, list[str]]] = [
    ("rude", RUDE_RULES, RUDE),
    ("rude order", RUDE_ORDER_RULES, RUDE),
    ("blame", BLAME_RULES, RUDE),
    ("polite", POLITE_RULES, POLITE),
]


@pytest.mark.parametrize(("kind", "rules", "corpus"), ALL_RULES, ids=[kind for kind, *_ in ALL_RULES])
def test_every_tone_rule_catches_an_answer_in_its_corpus(kind, rules, corpus):
    tones = [text.tone_text(a) for a in corpus]
    idle = [rule.pattern.pattern[:80] for rule in rules.rules if not any(rule.pattern.search(t) for t in tones)]
    assert not idle, f"{kind} rules that no answer in their corpus sets off:\n" + "\n".join(idle)


@pytest.mark.parametrize(("kind", "rules", "corpus"), ALL_RULES, ids=[kind for kind, *_ in ALL_RULES])
def test_every_match_contains_one_of_its_rules_phrases(kind, rules, corpus):
    """A rule is only tried on texts that have one of its phrases, so each match must contain one
    (as whole words); checked on every answer of every corpus."""
    as_words = {p: re.compile(rf"(?<![a-z]){re.escape(p)}(?![a-z])") for rule in rules.rules for p in rule.phrases}
    missing = []
    for answer in POLITE + RUDE + CURT:
        tone_form = text.tone_text(answer)
        for rule in rules.rules:
            for match in rule.pattern.finditer(tone_form):
                spans = [m.span() for p in rule.phrases for m in as_words[p].finditer(tone_form)]
                if not any(match.start() <= start and end <= match.end() for start, end in spans):
                    missing.append(f"{match.group()!r} in {answer!r}: none of {rule.phrases[:6]}")
    assert not missing, f"{kind} matches outside their rules' phrases:\n" + "\n".join(missing)


@pytest.mark.parametrize(
    ("answer", "solved"),
    [
        ("Please reinstall the app.", True),
        ("Please reinstall the apps.", True),  # word forms may vary (supportenv.solutions)
        ("Please reinstall the apparatus.", False),  # but a phrase is never found inside a word
    ],
)
def test_solution_phrases_match_as_whole_phrases(answer, solved):
    intents = (("app_crash", "KB-TEC-02"),)
    assert verdict(answer, intents, "").solves == (("app_crash",) if solved else ())


def test_a_greeting_and_good_news_are_courteous():
    """From audit round 27: "Good news on the address, Sam: ..." earned no politeness."""
    assert is_polite("Good news on the address, Sam: it now goes to 12 Mill Way.")
    assert is_polite("Hi Sam, the label is in the returns portal.")
    assert not is_polite("The label is in the returns portal.")
