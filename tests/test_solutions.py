"""Solutions are read as a person reads them: word forms and small words may vary, a phrase
is never found inside another word, and overlapping phrases count once (the longer)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supportenv.catalog import ARTICLES_BY_ID, ISSUE_TYPE_IDS, ISSUE_TYPES
from supportenv.solutions import PHRASE_OWNER, phrases_said, stem, steps_said
from supportenv.text import verdict

DATA = Path(__file__).parent / "data"

# Answers written the way agents write them (several from the blind audit), each with the
# one issue it solves.
PARAPHRASES = [
    ("I've refunded the duplicate charge to your original card; please allow 3-5 business days.", "double_charge"),
    ("I have issued a refund of the duplicate charge to your card.", "double_charge"),
    ("I'm refunding the duplicate charge now.", "double_charge"),
    ("I've compared the charge with the price and credited the price difference to your card.", "wrong_amount"),
    ("I'm updating the shipping address on your order before it ships.", "address_change"),
    ("We're sending the correct item by priority shipping, and you can keep the incorrect item.", "wrong_item"),
    ("Please retry your payment once the card details are right.", "payment_failure"),
    ("Could you send us photos of the damaged box and item?", "damaged_item"),
    ("You can take the parcel to a drop-off point near you.", "return_label"),
    ("I've sent a password reset link to your email.", "account_locked"),
    ("Please reinstall the app from the store.", "app_crash"),
    ("Our engineers are investigating the problem right now.", "service_outage"),
    ("I have cancelled the subscription, so no further renewals will be billed.", "subscription_cancel"),
    ("Please sign out of all sessions on every device.", "account_takeover"),
    ("I've regenerated the API key for your integration.", "integration_failure"),
    ("Standard shipping for the desk lamp takes 3-5 business days.", "shipping_policy_question"),
    ("We are signing out every active session on all devices.", "account_takeover"),
    ("I will change the delivery address on your order before it ships.", "address_change"),
    ("If it has already left, we'll get the courier to reroute it.", "address_change"),
    ("Our standard delivery usually takes 3-5 business days.", "shipping_policy_question"),
    ("You won't be billed for any further renewals.", "subscription_cancel"),
    ("Please send us a few pictures of the damage.", "damaged_item"),
    ("I'll refund the price difference to your card.", "wrong_amount"),
    ("Please turn off any extensions and reload the page.", "slow_performance"),
    ("Switching off background sync while you work should help.", "slow_performance"),
    ("We'll send you a replacement at no cost.", "damaged_item"),
    ("I've opened a trace with the carrier for your parcel.", "lost_package"),
    ("So I have refunded the full $180.00 to your original payment method.", "refund_request"),
    ("If you have a new card, add it as your payment method, then try again.", "payment_failure"),
    ("I have ended your membership, so it will not renew.", "subscription_cancel"),
    ("I have emailed you a link to reset your password.", "account_locked"),
    # From blind audit round 19.
    (
        "Please check whether the card has expired and that the billing address matches, then try the payment "
        "once more.",
        "payment_failure",
    ),
    (
        "The $90.00 is within the refund limit for your tier, so I'm sending it back to your original payment method.",
        "refund_request",
    ),
    (
        "Your order will now head to 87 Quay Street; if it has left, we'll get the courier to divert it.",
        "address_change",
    ),
    ("I have changed where order ORD-237098 is going to 87 Quay Street, Leeds.", "address_change"),
    (
        "We'll get the right one over to you on our fastest delivery. Hang on to the wrong one, no need to send "
        "it back.",
        "wrong_item",
    ),
    ("Can you snap a pic of the crack? We'll pop a new one in the post for you, on us.", "damaged_item"),
    (
        "I have checked the order against what was packed, and we will ship you the correct item by priority "
        "shipping; please keep the other one.",
        "wrong_item",
    ),
    # A new key is the old one regenerated, however it is made (blind audit round 24).
    ("Make yourself a fresh key under Developer settings and paste it into your connector.", "integration_failure"),
    ("Rotate your API token, then reconnect the integration with an admin login.", "integration_failure"),
    # Money sent back, however it is said (blind audit round 27).
    (
        "Your order ORD-776292 for $600.00 is within the refund limit on your account, so I'm sending the full "
        "amount back to the payment method you used.",
        "refund_request",
    ),
    ("I'm putting the $600.00 back on the card you paid with.", "refund_request"),
    ("I'm sending the difference back to your original payment method.", "wrong_amount"),
    ("I'm sending the duplicate payment back to the card you used.", "double_charge"),
    # A parcel's destination switched, a charge returned (blind audit round 30).
    (
        "Done - once I'd confirmed it's your account, I switched the destination on ORD-387004 to 107 Park Avenue, "
        "Porto. If it has already been dispatched, we'll get the delivery company to divert it to you there.",
        "address_change",
    ),
    ("We're returning the extra one to the card you paid with, within 3-5 business days.", "double_charge"),
    ("I am returning the difference to your original payment method.", "wrong_amount"),
    # The charge taken twice, however it is named (blind audit round 17).
    ("I've reversed the extra payment back onto the card you paid with.", "double_charge"),
    ("I have refunded the second payment, so you only pay once.", "double_charge"),
    ("We'll reimburse the duplicate transaction within five working days.", "double_charge"),
    # Said in other words than any phrase: read from the article's own steps (blind audit round 5).
    ("Our standard shipping usually arrives within 3 to 5 business days.", "shipping_policy_question"),
    ("I'm crediting the difference back to your original payment method.", "wrong_amount"),
    (
        "Please generate a new API key in your developer settings and reauthorise the integration.",
        "integration_failure",
    ),
]


def _own(issue: str) -> tuple[tuple[str, str], ...]:
    return ((issue, next(i.article_id for i in ISSUE_TYPES if i.issue_id == issue)),)


@pytest.mark.parametrize(("text", "issue"), PARAPHRASES)
def test_natural_answers_say_their_solution(text, issue):
    assert issue in {PHRASE_OWNER[p] for p in phrases_said(text)} | steps_said(text), (text, phrases_said(text))
    judged = verdict(text, _own(issue), "")
    assert judged.solves == (issue,) and judged.wrong_solutions == 0, judged


def test_every_article_step_that_names_a_fix_is_a_right_answer_to_its_issue():
    """Quoting an article's step is never charged as another issue's fix."""
    for issue in ISSUE_TYPES:
        for step in ARTICLES_BY_ID[issue.article_id].steps:
            judged = verdict(step, _own(issue.issue_id), issue.article_id)
            assert judged.wrong_solutions == 0 and not judged.stuffed, (issue.issue_id, step, judged)
        assert any(verdict(step, _own(issue.issue_id), "").solves for step in ARTICLES_BY_ID[issue.article_id].steps)


def test_no_phrase_inside_another_word():
    assert not phrases_said("We'll prefund the reduplicate charges soon.")
    assert not phrases_said("That charge stays unrefunded for the duplicated order.")


def test_word_forms_share_a_stem():
    for forms in (
        ("refund", "refunds", "refunded", "refunding"),
        ("update", "updates", "updated", "updating"),
        ("ship", "ships", "shipped", "shipping"),
        ("address", "addresses"),
        ("process", "processed", "processing"),
        ("cancel", "cancels", "cancelled", "canceled", "cancelling"),
    ):
        assert len({stem(w) for w in forms}) == 1, forms


def test_stuffing_still_earns_nothing():
    every = "; ".join(p for issue in ISSUE_TYPES for p in issue.solution_phrases)
    judged = verdict(f"We will {every}.", (("double_charge", "KB-BIL-02"),), "")
    assert judged.stuffed and judged.solves == ()


def test_courtesy_and_generic_steps_say_no_issue():
    for text in (
        "Thanks for contacting us, we are looking into it.",
        "I have verified your identity.",
        "Thank you for reaching out, and I'm sorry for the trouble.",
        "Could you please share your order number?",
    ):
        assert not steps_said(text) and not phrases_said(text), text


def test_a_corpus_of_natural_answers_is_read_as_solving_its_issue():
    """550 answers written for the purpose by models that saw only the knowledge base of the first
    25 issue types (blind
    audit rounds 18 to 20: 22 per issue, in their own words, from a casual two-liner to a
    numbered list, 250 of them avoiding the article's own words on purpose). Each must be judged
    to solve its issue and name no other; a few may refer to the fix as no reader of the article
    would (a pronoun across a clause: "that second one ... I've refunded it"), or give only
    the first step of a case that waits for the customer."""
    issue_of = {i.article_id: i.issue_id for i in ISSUE_TYPES}
    lines = [json.loads(line) for line in (DATA / "natural_answers.jsonl").read_text().splitlines() if line.strip()]
    assert len(lines) == 550 and {issue_of[d["article"]] for d in lines} == set(ISSUE_TYPE_IDS[:25])
    missed = []
    for d in lines:
        issue = issue_of[d["article"]]
        judged = verdict(d["text"], ((issue, d["article"]),), d["article"])
        if judged.solves != (issue,) or judged.wrong_solutions or judged.stuffed:
            missed.append((issue, d["text"]))
    assert len(missed) <= 5, missed


def test_an_answer_that_announces_an_issue_for_later_does_not_answer_it():
    """From audit round 19: "I will deal with cancelling your membership next" was read as the
    cancellation's answer (before the account email was in), and the shipping answer beside it lost."""
    text = (
        "Standard shipping takes 3-5 business days, and orders over the threshold ship free. "
        "I will deal with cancelling your membership next; I just need to confirm your identity first."
    )
    intents = (("shipping_policy_question", "KB-GEN-03"), ("subscription_cancel", "KB-BIL-04"))
    assert verdict(text, intents, "KB-GEN-03").solves == ("shipping_policy_question",)
    done = "I'll help you with that: I have cancelled your subscription, so no further renewals will be billed."
    assert verdict(done, intents, "KB-BIL-04").solves == ("subscription_cancel",)


def test_a_careful_answer_to_two_issues_is_not_taken_for_stuffing():
    """From audit round 22: a refund of a double charge and an integration's steps, put as
    questions, in one answer, were judged stuffed ("banks usually take about 3-5 business days"
    read as the shipping article's step, "admin login ... webhook address" as a login-email
    change): numbers are no key words of a step, and no phrase spans unrelated words."""
    text = (
        "I can see you were charged $187.90 twice on 2026-05-12. That second payment shouldn't have happened, so "
        "I've sent it back to the card you used; banks usually take about 3-5 business days to show it. About the "
        "webhook: could you try making a brand-new API key under developer settings? Once you have it, would you "
        "mind reconnecting the integration using an admin login? And could you check that the webhook address is "
        "still right, then resend the events that didn't arrive?"
    )
    intents = (("double_charge", "KB-BIL-02"), ("integration_failure", "KB-TEC-05"))
    judged = verdict(text, intents, "KB-BIL-02")
    assert not judged.stuffed and judged.solves == ("double_charge", "integration_failure"), judged


def test_thanks_and_a_promise_to_come_to_an_idea_do_not_answer_it():
    """From audit round 23: "Thanks for those. ... I'll reply about your wishlist idea next." was
    read as the feature request's answer (the article's courtesy step, "thank the customer for
    the idea"); thanking is courtesy, and a promise to reply later answers nothing."""
    text = (
        "Thanks for those. The courier says your parcel is due on Friday and I have added a shipping credit for "
        "the wait. I'll reply about your wishlist idea next."
    )
    intents = (("delayed_delivery", "KB-DEL-01"), ("feature_request", "KB-GEN-02"))
    assert verdict(text, intents, "KB-DEL-01").solves == ("delayed_delivery",)


def test_a_short_answer_to_two_issues_may_use_neighbouring_fixes_words():
    """From audit round 27: a short answer to a declined card and a cracked item was judged
    stuffed, as its words also say three other issues' fixes ("billing address ... update" an
    address change's, "ship you a free replacement" a lost parcel's and free shipping's). A
    sentence that says one of the ticket's fixes may use a neighbouring fix's words or two; many,
    or a sentence of other fixes only, still make stuffing."""
    text = (
        "Thanks! Card 0954: make sure the expiry and billing address on file are current (update the card if it "
        "was replaced), then retry. Cracked item on ORD-717067: reply with photos of the damage and the box, we'll "
        "open a carrier claim and ship you a free replacement."
    )
    intents = (("payment_failure", "KB-PAY-01"), ("damaged_item", "KB-DEL-04"))
    judged = verdict(text, intents, "KB-DEL-04")
    assert not judged.stuffed and judged.solves == ("payment_failure", "damaged_item"), judged
    # every phrase of every issue in one sentence with the ticket's own is still stuffing
    everything = "We will " + "; and ".join(p for i in ISSUE_TYPES for p in i.solution_phrases) + "."
    assert verdict(everything.replace(";", ","), intents, "KB-DEL-04").stuffed


def test_a_fix_given_now_with_the_customers_part_after_it_is_no_announcement():
    """From blind audit round 41: "We are sending a password reset link to ..., and once you complete
    the reset you can sign in again" was read as announcing something for later (its "sending" and
    "once"), so the unlock was not credited. "Once I have your email" is later; "once you" is not."""
    intents = (("address_change", "KB-DEL-05"), ("account_locked", "KB-ACC-01"))
    for text in (
        "We are sending a password reset link to sam.33@example.com, and once you complete the reset you can sign in.",
        "We are sending a password reset link to sam.33@example.com, and your account will be unlocked once you "
        "complete the reset.",
        "We are sending a password reset link to sam.33@example.com, and you can then sign in.",
    ):
        assert verdict(text, intents, "KB-ACC-01").solves == ("account_locked",), text
    later = "I will deal with getting you back into your account once I have your email."
    assert verdict(later, intents, "KB-ACC-01").solves == ()


def test_an_email_address_is_no_delivery_address():
    """From blind audit round 41: "To switch to your personal address, update the login email ..."
    was read as also saying the delivery address was changed ("address" and "update": "address
    has been changed"), so one answer was credited with two issues."""
    intents = (("email_change", "KB-ACC-02"), ("address_change", "KB-DEL-05"))
    text = (
        "Thank you, I have verified your identity with priya.16@mail.test. To switch to your personal address, "
        "update the login email in your account settings; we will then send a confirmation link to the new address."
    )
    assert verdict(text, intents, "KB-ACC-02").solves == ("email_change",)
    both = text + " I have also updated the shipping address on your order before it ships."
    assert verdict(both, intents, "KB-ACC-02").solves == ("email_change", "address_change")


def test_an_outage_answer_in_other_words_is_read():
    """From blind audit round 43: "a live incident page ... the engineering team is already working on
    a fix ... I can sign you up for email alerts" said all three steps of the outage article and was
    read as no solution; with "status page" it was."""
    text = (
        "We have a live incident page where you can follow the current platform problem; the engineering team is "
        "already working on a fix, and if you like I can sign you up for email alerts about the incident."
    )
    intents = (("service_outage", "KB-TEC-03"), ("price_adjustment", "KB-REF-04"))
    assert verdict(text, intents, "KB-TEC-03").solves == ("service_outage",)


def test_a_question_that_asks_which_says_no_solution():
    """From blind audit round 43: an ask "Which country would you like us to ship to, so I can confirm
    it is supported?" was read as answering the international shipping question."""
    from supportenv.solutions import without_fact_questions

    text = "Which country would you like us to ship to, so I can confirm it is supported?"
    assert verdict(without_fact_questions(text), (("international_shipping", "KB-DEL-06"),), "").solves == ()


def test_naming_the_issue_is_no_solution_to_it():
    """From blind audit round 45: "Yes, we do offer price adjustments." was read as the price
    adjustment's solution (its phrase was the issue's own name), and a question that said it was
    credited as the answer. The fix is said: the store credit, the 14 days, a one-time adjustment."""
    intents = (("price_adjustment", "KB-REF-04"),)
    for text in (
        "Thanks for asking. Yes, we do offer price adjustments.",
        "Yes, we do offer price adjustments; I am happy to sort this today.",
    ):
        assert verdict(text, intents, "KB-REF-04").solves == (), text
    fix = "The price dropped within 14 days of purchase, so I have applied the difference as store credit."
    assert verdict(fix, intents, "KB-REF-04").solves == ("price_adjustment",)


def test_a_promise_to_answer_in_the_same_reply_is_no_answer():
    """From blind audit round 46 (main line): a question for the billing facts that ended "I will
    answer your password manager question in the same reply." was read as the password advice."""
    from supportenv.solutions import without_fact_questions

    intents = (("password_advice", "KB-SEC-03"), ("double_charge", "KB-BIL-02"))
    text = (
        "Could you share the order ID, the amount and the charge date? "
        "I will answer your password manager question in the same reply."
    )
    assert verdict(without_fact_questions(text), intents, "").solves == ()
    advice = "Yes: use a password manager, and give every site a unique password of at least twelve characters."
    assert verdict(advice, intents, "KB-SEC-03").solves == ("password_advice",)
