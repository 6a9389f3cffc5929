"""The customer simulator and the policy rules, through the episode transition."""

from __future__ import annotations

import copy
import random
import re

from supportenv import content, customer, episode, expert
from supportenv.actions import Action, ask, assign, callback, classify, escalate, resolve, respond
from supportenv.catalog import (
    ARTICLES,
    ARTICLES_BY_ID,
    DEPARTMENTS,
    ISSUE_TYPES,
    ISSUE_TYPES_BY_ID,
    REQUESTABLE_FIELDS,
)
from supportenv.customer import issue_words
from supportenv.episode import missing_facts, observe, sentiment_label, step, unsolved
from supportenv.expert import solution_message
from supportenv.graders import grade_state
from supportenv.replay import new_episode
from supportenv.solutions import content_stems, first_steps_said
from supportenv.world import generate

HARD = "end_to_end_resolution"


def seed_where(predicate, task=HARD, split="train"):
    return next(seed for seed in range(50_000) if predicate(generate(task, split, seed)))


def test_facts_stay_hidden_until_asked_for():
    seed = seed_where(lambda s: len(s.expected.facts) >= 2)
    scenario, state = new_episode(HARD, "train", seed)
    first, second = scenario.expected.facts[:2]
    obs = step(scenario, state, classify(scenario.expected.category)).observation
    text = " ".join(t for _, t, _ in obs.history)
    assert scenario.facts_by_name.get(first) not in text and obs.revealed_facts == ()
    obs = step(scenario, state, ask(first)).observation
    assert dict(obs.revealed_facts) == {first: scenario.facts_by_name.get(first)}
    assert (
        scenario.facts_by_name.get(first) in obs.customer_message
        and scenario.facts_by_name.get(second) not in obs.customer_message
    )


def test_free_text_questions_are_understood():
    seed = seed_where(lambda s: "order_id" in s.expected.facts)
    scenario, state = new_episode(HARD, "train", seed)
    obs = step(scenario, state, ask(question="Could you tell me your order number?")).observation
    assert ("order_id", scenario.facts_by_name.get("order_id")) in obs.revealed_facts


def test_unknown_facts_get_i_dont_know_and_cost_patience():
    seed = seed_where(lambda s: any(s.facts_by_name.get(f) is None for f in REQUESTABLE_FIELDS))
    scenario, state = new_episode(HARD, "train", seed)
    unknown = next(f for f in REQUESTABLE_FIELDS if scenario.facts_by_name.get(f) is None)
    patience = state.patience
    result = step(scenario, state, ask(unknown))
    assert result.observation.revealed_facts == ()
    assert result.observation.customer_message in content.UNKNOWN_REPLIES[unknown]
    assert state.patience < patience and dict(result.breakdown)["ask_irrelevant"] < 0


def test_repeated_questions_anger_and_exhaust_the_customer():
    seed = seed_where(lambda s: "order_id" in s.expected.facts)
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, ask("order_id"))
    before = state.sentiment
    result = step(scenario, state, ask("order_id"))
    assert state.sentiment < before and "ask_repeat" in dict(result.breakdown)
    while not result.truncated:
        result = step(scenario, state, ask("order_id"))
    assert state.customer_left and not result.terminated and "customer_left" in dict(result.breakdown)


def test_sentiment_moves_with_the_agent():
    seed = seed_where(lambda s: not s.expected.escalate and s.persona != "angry")
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category))
    for fact in scenario.expected.facts:
        step(scenario, state, ask(fact))
    calm = state.sentiment
    step(scenario, state, respond(solution_message(scenario, state, list(scenario.expected.solvable))))
    assert state.sentiment > calm, "a right answer calms"
    scenario, state = new_episode(HARD, "train", seed)
    before = state.sentiment
    step(scenario, state, respond("Calm down, it's your own fault."))
    assert state.sentiment < before, "rudeness angers"
    scenario, state = new_episode(HARD, "train", seed)
    before = state.sentiment
    result = step(scenario, state, assign(scenario.expected.department))
    assert "department_needless" in dict(result.breakdown), "a needless transfer is charged"
    # ... but routing is internal: the customer never sees it, so it neither replies nor sulks.
    assert state.sentiment == before and state.history[-1][0] == "system"


def test_identity_must_be_verified_before_refunds():
    seed = seed_where(
        lambda s: s.issue.issue_id == "refund_request" and not s.expected.escalate and len(s.intents) == 1
    )
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify("refund"))
    step(scenario, state, ask("order_id", "amount"))
    step(scenario, state, respond(solution_message(scenario, state, ["refund_request"])))
    assert "verify_identity" in state.violations


def test_callbacks_only_for_premium_and_enterprise():
    """Allowed for premium and enterprise customers, and paid for only when a specialist takes
    the case (as the policy says); a regular customer's is a violation."""
    for tier, escalating, paid in (("regular", True, ""), ("premium", True, "callback_ok"), ("premium", False, "")):
        seed = seed_where(lambda s, t=tier, e=escalating: s.tier == t and s.expected.escalate == e)
        scenario, state = new_episode(HARD, "train", seed)
        result = step(scenario, state, callback("call me"))
        assert ("callback_ok" in dict(result.breakdown)) == bool(paid)
        assert ("callback_not_allowed" in state.violations) == (tier == "regular")
        assert ("callback_needless" in dict(result.breakdown)) == (tier == "premium" and not escalating)


def test_policy_is_stated_to_the_agent():
    scenario, state = new_episode(HARD, "test", seed_where(lambda s: s.policy.name == "strict_caps", split="test"))
    policy = " ".join(observe(scenario, state).policy)
    assert "regular $50" in policy and "identity" in policy and "Callbacks" in policy


def test_escalation_required_by_policy_is_rewarded():
    seed = seed_where(lambda s: s.issue.escalation == "always")
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category))
    result = step(scenario, state, escalate("security incident"))
    assert dict(result.breakdown)["escalate_required"] == 0.5


# ---- the customer reacts to what was actually done, and its words match its mood ----


def _pattern(*kinds: str) -> re.Pattern[str]:
    return _pattern_of([t for kind in kinds for t in content.REACTIONS[kind]])


def _pattern_of(templates: list[str]) -> re.Pattern[str]:
    # (each also as it reads after another reaction's sentence: without its opening interjection, "Okay, that
    # covers ..." as "That covers ...": customer.without_repeated_thanks)
    going_on = [customer.without_repeated_thanks(f"Yes. {t}").removeprefix("Yes. ") for t in templates]
    return re.compile(
        "|".join(re.sub(r"\\\{\w+\\\}", ".+", re.escape(t)) for t in dict.fromkeys([*templates, *going_on]))
    )


_DETOURS = (
    respond("Thank you, please see the attached article."),
    respond("Sorry for the trouble. Please try restarting the app."),
    escalate(),
    escalate("I'm escalating this to a specialist, who will contact you shortly."),
    assign("technical"),
    resolve(),
)


def _mixed_steps(count: int):
    """(scenario, state before, action, state after) over expert plans with detours: bare
    citations, wrong answers, silent and told escalations, transfers, early closes."""
    for seed in range(count):
        rng = random.Random(seed)
        scenario, state = new_episode(HARD, "validation", seed)
        while not state.done:
            roll = rng.random()
            if roll < 0.6:
                action = expert.expert_action(scenario, state, HARD)
            elif roll < 0.8:
                action = rng.choice(_DETOURS)
            else:
                action = respond("Thanks for waiting, this should help.", rng.choice(ARTICLES).article_id)
            before = copy.deepcopy(state)
            step(scenario, state, action)
            yield scenario, before, action, state


def _reply_now(state) -> str:
    speaker, text, at = state.history[-1]
    return text if speaker == "customer" and at == state.step else ""


def test_the_customer_says_fixed_only_when_it_is():
    solved = _pattern(*(k for k in content.REACTIONS if k.startswith("solved_")))
    partly = _pattern("partly_solved", "partly_solved_photos")
    seen = 0
    for scenario, before, action, after in _mixed_steps(150):
        reply = _reply_now(after)
        if solved.fullmatch(reply):
            seen += 1
            assert all(i in after.solved_intents for i in scenario.expected.solvable), (scenario.ticket_id, reply)
            assert action.kind == "respond_with_solution" and len(after.solved_intents) > len(before.solved_intents)
        if partly.fullmatch(reply.removeprefix("Yes, please. ")):
            pending = [] if after.escalated else list(scenario.expected.escalate_intents)
            waiting = unsolved(scenario, after) + [i for i in pending if i not in after.interim_answers]
            assert issue_words(waiting) in reply, "it names what is still open"
    assert seen > 50


def test_internal_routing_and_silent_escalations_get_no_reply():
    for _, before, action, after in _mixed_steps(80):
        unseen = action.kind == "assign_department" or (action.kind == "escalate_to_human" and not action.text)
        if unseen and not after.customer_left:
            assert _reply_now(after) == "", action
            assert after.sentiment == before.sentiment, "it cannot be moved by what it did not see"


def _solved_kinds(mood: str) -> list[str]:
    solved = [k for k in content.REACTIONS if k.startswith(("solved_", "escalated"))]
    if mood in ("plain", "grudging"):
        return [k for k in solved if k.endswith("_" + mood)]
    return [k for k in solved if not k.endswith(("_plain", "_grudging"))]


def test_words_match_the_mood_shown():
    """Glad words only from a satisfied customer, plain ones from a neutral one, grudging ones
    from one still annoyed: the label shown after the reply."""
    glad, plain, grudging = (_pattern(*_solved_kinds(m)) for m in ("glad", "plain", "grudging"))
    seen = set()
    for _, _, _, after in _mixed_steps(150):
        reply = _reply_now(after).removeprefix("Yes, please. ").removeprefix("Yes, that's right. ")
        label = sentiment_label(after.sentiment)
        if glad.fullmatch(reply):
            assert label == "satisfied", (reply, label)
        if plain.fullmatch(reply):
            assert label == "neutral", (reply, label)
        if grudging.fullmatch(reply):
            assert label in ("angry", "frustrated"), (reply, label)
        seen.add(label)
    assert {"satisfied", "neutral"} <= seen


def test_every_answer_kind_has_a_reply_in_every_mood():
    kinds = {kind for _, kind, _ in content.ISSUE_WORDS.values()}
    for kind in kinds:
        assert all(f"solved_{kind}{mood}" in content.REACTIONS for mood in ("", "_plain", "_grudging")), kind
    replies = [t for k in content.REACTIONS for t in content.REACTIONS[k]]
    assert len(replies) == len(set(replies)), "a reply tells its kind apart"


def test_the_reply_fits_what_the_answer_gives():
    """Photos to send for a damaged item (not a troubleshooting "I'll give it a go"), when the
    answer asks for them; no thanks for a change made when the answer gave steps the customer follows."""
    moods = ("satisfied", "neutral", "angry")
    replies = {mood: customer.solved_reply("damaged_item", mood, asked_for_photos=True) for mood in moods}
    assert all("photos" in " ".join(content.REACTIONS[kind]) for kind in replies.values())
    unasked = [customer.solved_reply("damaged_item", mood, asked_for_photos=False) for mood in moods]
    assert not any("photo" in " ".join(content.REACTIONS[kind]).lower() for kind in unasked)
    done = " ".join(content.REACTIONS["solved_done"])
    for issue in ("subscription_cancel", "email_change", "invoice_request", "return_label"):
        words = " ".join(content.REACTIONS[customer.solved_reply(issue, "satisfied", asked_for_photos=False)])
        assert "sorting it out" not in words and "taking care of that" not in words, issue
        assert "give it a go" not in words, issue
    assert "sorting it out" in done, "kept for changes the agent makes (a new delivery address)"


def test_facts_are_given_in_the_words_of_their_issue():
    """A double charge's amount and date are each charge's; a declined payment has no charge."""
    for issue_id, wrong in (
        ("double_charge", ("the charge is", "the charge was", "altogether")),
        ("payment_failure", ("the charge",)),
    ):
        seen = 0
        for seed in range(600):
            scenario = generate(HARD, "train", seed)
            if scenario.issue.issue_id != issue_id:
                continue
            fields = tuple(f for f in ("amount", "charge_date") if f in scenario.facts_by_name)
            for turn in range(4):
                reply = customer.answer(scenario, (), fields, "", turn).reply
                assert not any(w in reply.lower() for w in wrong), reply
                if issue_id == "double_charge":
                    assert re.search(r"\b(both|each|twice)\b", reply), reply
                seen += 1
        assert seen


def test_the_expert_names_what_it_asks_for():
    seed = seed_where(lambda s: len(s.intents) == 1 and len(s.expected.facts) >= 2)
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, expert.expert_action(scenario, state, HARD))
    action = expert.expert_action(scenario, state, HARD)
    assert action.kind == "ask_for_more_info"
    labels = [episode.fact_label(f) for f in action.fields]
    assert action.text == f"Could you please share your {', '.join(labels[:-1])} and {labels[-1]}?"
    assert expert.ask_message(["order_id"]) == "Could you please share your order id?"


def test_safe_first_steps_of_an_escalation_are_credited():
    """An account takeover answered with its article's steps, then routed and escalated:
    both are credited, as the prompt says (answer what you can, escalate what policy requires)."""
    seed = seed_where(lambda s: s.issue.issue_id == "account_takeover" and len(s.intents) == 1)
    scenario, state = new_episode(HARD, "train", seed)
    plan = []
    while not state.done:
        plan.append(expert.expert_action(scenario, state, HARD))
        step(scenario, state, plan[-1])
    steps = "; ".join(s.lower() for s in ARTICLES_BY_ID["KB-SEC-01"].steps)
    at = next(i for i, a in enumerate(plan) if a.kind == "assign_department")
    scenario, state = new_episode(HARD, "train", seed)
    results = []
    for action in [*plan[:at], respond(f"I'm sorry about this. Please {steps}.", "KB-SEC-01"), *plan[at:]]:
        assert expert.is_acceptable(scenario, state, HARD, action), action
        results.append(step(scenario, state, action))
    assert "respond_interim" in dict(results[at].breakdown) and results[at].reward > 0
    assert grade_state(scenario, state).passed


def test_an_answer_that_only_announces_the_hand_over_is_no_first_step():
    """An answer that says only "I'm handing your case to our security team" gives the customer
    nothing to do and hands nothing over (blind audit round 23): neither credited as safe first
    steps nor charged as a wrong answer, and the customer asks when it will happen, until
    escalate_to_human does it."""
    seed = seed_where(lambda s: s.issue.issue_id == "account_takeover" and len(s.intents) == 1)
    scenario, state = new_episode(HARD, "train", seed)
    plan = []
    while not state.done:
        plan.append(expert.expert_action(scenario, state, HARD))
        step(scenario, state, plan[-1])
    at = next(i for i, a in enumerate(plan) if a.kind == "assign_department")
    scenario, state = new_episode(HARD, "train", seed)
    for action in plan[:at]:
        step(scenario, state, action)
    result = step(scenario, state, respond("Thanks. I'm handing your case to our security team now.", "KB-SEC-01"))
    parts = dict(result.breakdown)
    assert "respond_handover" in parts and "respond_interim" not in parts and "respond_irrelevant" not in parts
    assert "escalate_to_human carries it out" in result.observation.last_action_feedback
    assert "when" in state.history[-1][1].lower()
    for action in plan[at:]:
        step(scenario, state, action)
    assert grade_state(scenario, state).passed


def test_first_steps_for_one_issue_leave_the_other_asked_about():
    """From audit round 19: "Okay. That's a start, I suppose." to first steps for a takeover,
    with a refund still unanswered; the customer names what still waits for an answer."""
    steps = "; ".join(s.lower() for s in ARTICLES_BY_ID["KB-SEC-01"].steps)
    said = first_steps_said(steps)  # (a ticket whose other issue these words do not fix as well)
    seed = seed_where(
        lambda s: (
            len(s.intents) == 2
            and s.intents[0].issue_id == "account_takeover"
            and len(s.expected.solvable) == 1
            and s.expected.solvable[0] not in said
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    _ready_to_answer(scenario, state)
    step(scenario, state, respond(f"I'm sorry about this. Please {steps}.", "KB-SEC-01"))
    reply = _reply_now(state)
    # (the article's last step, "escalate the case to the security team", tells of the hand-over)
    assert re.fullmatch(_pattern("interim_open_handover"), reply), reply
    assert issue_words(list(scenario.expected.solvable)) in reply, reply


def _one_answer_and_escalation(issue_id: str) -> int:
    """A seed whose ticket has two issues: one the agent answers, and `issue_id`, to escalate."""
    return seed_where(
        lambda s: len(s.intents) == 2 and len(s.expected.solvable) == 1 and s.expected.escalate_intents == (issue_id,)
    )


def test_an_answer_with_first_steps_for_the_issue_to_escalate_is_waited_on():
    """From audit round 21: an answer to a late parcel that also asked "do you still have your
    backup codes?" got "...but what about my login code?"; the customer waits for the hand-over."""
    seed = _one_answer_and_escalation("two_factor_lost")
    scenario, state = new_episode(HARD, "train", seed)
    article = _ready_to_answer(scenario, state)
    solvable = list(scenario.expected.solvable)
    text = solution_message(scenario, state, solvable) + " Do you still have the backup recovery codes from setup?"
    step(scenario, state, respond(text, article))
    # (after the check-in's answer, "Yes, that's right.", the reaction goes on without its interjection)
    reply = _reply_now(state).removeprefix("Yes, that's right. ")
    assert re.fullmatch(_pattern("partly_solved_first_steps", "partly_solved_first_steps_photos"), reply), reply


def test_first_steps_in_an_answer_to_another_issue_are_credited_and_taken_up():
    """From audit round 25: the safe first steps of a takeover in the answer to the other issue
    earned nothing (the same words on their own earned respond_interim), and the customer said
    it would wait for the team as if it had been given nothing to do."""
    seed = _one_answer_and_escalation("account_takeover")
    scenario, state = new_episode(HARD, "train", seed)
    article = _ready_to_answer(scenario, state)
    steps = "; ".join(s.lower() for s in ARTICLES_BY_ID["KB-SEC-01"].steps[:2])
    text = solution_message(scenario, state, list(scenario.expected.solvable)) + f" Meanwhile, please {steps}."
    result = step(scenario, state, respond(text, article))
    assert {"respond_after_classify", "respond_interim"} <= set(dict(result.breakdown)), result.breakdown
    assert "escalating the suspected account takeover" in result.observation.last_action_feedback
    reply = _reply_now(state)
    assert re.fullmatch(_pattern("partly_solved_first_steps", "partly_solved_first_steps_photos"), reply), reply
    while not state.done:
        step(scenario, state, expert.expert_action(scenario, state, HARD))
    assert grade_state(scenario, state).passed


def test_an_issue_only_sent_an_article_is_still_asked_about_as_read():
    """From audit round 25: after an article for the slowness, an answer to the other issue got
    "What about the slowness?" as if nothing had been sent; the customer says it read the article
    and still does not know what to do."""
    seed = seed_where(lambda s: len(s.intents) == 2 and len(s.expected.solvable) == 2 and not s.expected.escalate)
    scenario, state = new_episode(HARD, "train", seed)
    first, second = scenario.expected.solvable
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    step(scenario, state, Action(kind="suggest_knowledge_base", article_id=ISSUE_TYPES_BY_ID[second].article_id))
    _answer(scenario, state, [first])
    reply = _reply_now(state)
    assert re.fullmatch(_pattern("partly_solved_after_article", "partly_solved_after_article_photos"), reply), reply
    assert customer.issue_words([second]) in reply, reply


def test_one_answer_to_two_issues_solves_the_one_whose_facts_are_in():
    """From audit round 22: an answer to an email change (its facts in) and a double charge (its
    charge date not asked for) solved neither; it solves the first, and the customer asks for
    what the second needs."""
    seed = seed_where(
        lambda s: (
            len(s.expected.solvable) == 2
            and not s.expected.escalate
            and set(ISSUE_TYPES_BY_ID[s.expected.solvable[1]].required_facts)
            - set(ISSUE_TYPES_BY_ID[s.expected.solvable[0]].required_facts)
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    first, second = scenario.expected.solvable
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    needs = ISSUE_TYPES_BY_ID[first].required_facts
    if needs:
        step(scenario, state, ask(*needs))
    article = ISSUE_TYPES_BY_ID[first].article_id
    result = step(scenario, state, respond(solution_message(scenario, state, [first, second]), article))
    parts = dict(result.breakdown)
    assert parts["respond_after_classify"] > 0 and parts["respond_missing_facts"] < 0, parts
    assert first in state.solved_intents and second not in state.solved_intents
    assert re.search(_pattern("missing_facts"), _reply_now(state)), _reply_now(state)
    # Said rudely, the same answer still solves the first issue, and the customer answers the insult.
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    if needs:
        step(scenario, state, ask(*needs))
    step(scenario, state, respond("Calm down. " + solution_message(scenario, state, [first, second]), article))
    assert first in state.solved_intents and _reply_now(state) in content.REACTIONS["rude"], _reply_now(state)


def test_a_customer_with_an_issue_still_open_is_not_shown_satisfied():
    """ "Thanks, but I still need help with ..." comes with a neutral label at best."""
    partly = _pattern("partly_solved", "partly_solved_photos")
    seen = 0
    for _, _, _, after in _mixed_steps(300):
        if partly.fullmatch(_reply_now(after).removeprefix("Yes, please. ").removeprefix("Yes, that's right. ")):
            seen += 1
            assert sentiment_label(after.sentiment) != "satisfied"
    assert seen


def test_a_follow_up_on_an_answered_issue_is_not_a_repeat():
    """From audit round 7: confirming an offer the customer accepted is not "you said that before";
    saying the same answer again is."""
    seed = seed_where(lambda s: len(s.intents) == 1 and not s.expected.escalate and not s.expected.facts)
    scenario, state = new_episode(HARD, "train", seed)
    plan = [expert.expert_action(scenario, state, HARD)]
    step(scenario, state, plan[0])
    answer = expert.expert_action(scenario, state, HARD)
    step(scenario, state, answer._replace(text=answer.text + " Would you like me to send you a summary?"))
    assert _reply_now(state).startswith("Yes, please.")
    issue = scenario.issue
    follow_up = step(scenario, state, respond(f"Done, as promised: we {issue.solution_phrases[0]}. Anything else?"))
    assert "respond_repeat" not in dict(follow_up.breakdown) and follow_up.reward == 0.0
    assert "carrying out what the customer accepted" in follow_up.observation.last_action_feedback
    again = step(scenario, state, answer)
    assert dict(again.breakdown).get("respond_repeat") == -0.1


def test_a_question_in_an_answer_gets_its_answer():
    seed = seed_where(lambda s: len(s.intents) == 1 and not s.expected.escalate and not s.expected.facts)
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, expert.expert_action(scenario, state, HARD))
    answer = expert.expert_action(scenario, state, HARD)
    step(scenario, state, answer._replace(text=answer.text + " Could you double-check that your address is right?"))
    assert _reply_now(state).startswith("Yes, that's right. ")


def test_a_second_fact_in_a_sentence_is_not_an_it():
    """From audit round 17: "The confirmation email says order ORD-220646 and it shows error
    E1863." (the "it" reads as the email)."""
    for seed in range(200):
        scenario, state = new_episode(HARD, "train", seed)
        fields = tuple(f for f in REQUESTABLE_FIELDS if f in scenario.facts_by_name)
        if len(fields) < 2:
            continue
        step(scenario, state, ask(*fields))
        assert not re.search(r"\band it\b", _reply_now(state)), _reply_now(state)


def test_an_answer_that_names_a_given_fact_in_a_question_is_not_a_re_ask():
    """From audit round 18: "Could you take a quick look at those two things for the card ending
    2227?" in an answer got "I already told you that!"."""
    seed = seed_where(
        lambda s: len(s.intents) == 1 and not s.expected.escalate and "card_last_four" in s.expected.facts
    )
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    reply = _answer(
        scenario, state, list(scenario.expected.solvable), after=" Could you check that for the card ending?"
    )
    assert not any(reply.startswith(r) for r in content.REPEAT_REPLIES), reply


def test_several_facts_come_two_to_a_sentence():
    seed = seed_where(lambda s: sum(f in s.facts_by_name for f in REQUESTABLE_FIELDS) >= 4)
    scenario, state = new_episode(HARD, "train", seed)
    fields = tuple(f for f in REQUESTABLE_FIELDS if f in scenario.facts_by_name)[:4]
    step(scenario, state, ask(*fields))
    reply = _reply_now(state)
    assert ", and" not in reply and reply.count(".") >= 2, reply


def test_an_announced_hand_over_is_waited_for_not_asked_about():
    """From audit round 7: after an answer that says the other issue goes to a specialist, the
    customer waits for it rather than saying it still needs help with it."""
    seed = seed_where(lambda s: len(s.intents) == 2 and len(s.expected.solvable) == 1 and s.expected.escalate)
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    while (action := expert.expert_action(scenario, state, HARD)).kind != "respond_with_solution":
        step(scenario, state, action)
    step(scenario, state, action._replace(text=action.text + " I'll pass the rest on to a specialist next."))
    assert re.fullmatch(_pattern("partly_solved_handover"), _reply_now(state)), _reply_now(state)


def test_an_answer_that_says_it_comes_to_the_other_issue_next_is_let_go_on():
    """From audit round 16: "I'll come to your refund next" got "What about my refund?"; the
    customer lets the agent go on instead, and still names the issue left."""
    seed = seed_where(lambda s: len(s.intents) == 2 and len(s.expected.solvable) == 2)
    scenario, state = new_episode(HARD, "train", seed)
    first, second = scenario.expected.solvable
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    _answer(scenario, state, [first], after=" I'll come to the other part of your message next.")
    reply = _reply_now(state)
    assert re.fullmatch(_pattern("partly_solved_next", "partly_solved_next_photos"), reply), reply
    assert customer.issue_words([second]) in reply, reply
    # ... or whose last sentence turns to it (audit round 25: "Now, let's sort out your refund.")
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    _answer(scenario, state, [first], after=" Now, let's sort out the rest of your message.")
    assert re.fullmatch(_pattern("partly_solved_next", "partly_solved_next_photos"), _reply_now(state))
    # ... or that says it will do it straight after (audit round 26)
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    _answer(scenario, state, [first], after=" I will set up the rest of your request straight after this.")
    assert re.fullmatch(_pattern("partly_solved_next", "partly_solved_next_photos"), _reply_now(state))
    scenario, state = new_episode(HARD, "train", seed)  # (audit round 27: "I am handling ...")
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    _answer(scenario, state, [first], after=" I am handling the rest of your message right after this.")
    assert re.fullmatch(_pattern("partly_solved_next", "partly_solved_next_photos"), _reply_now(state))
    scenario, state = new_episode(HARD, "train", seed)  # (audit round 29: "... separately")
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    _answer(scenario, state, [first], after=" I am also arranging the rest of your request separately.")
    assert re.fullmatch(_pattern("partly_solved_next", "partly_solved_next_photos"), _reply_now(state))


def test_an_answer_that_asks_for_a_fact_gets_it_and_a_check_in_gets_no_yes():
    """From audit round 8: "could you tell me the email on your account?" inside an answer gets
    the email (counted as given); "anything else I can help with?" gets no "Yes, that's right"."""
    seed = seed_where(
        lambda s: (
            len(s.intents) == 1
            and not s.expected.escalate
            and not s.expected.facts
            and "account_email" in s.facts_by_name
            and s.facts_by_name["account_email"] not in s.opening_message
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, expert.expert_action(scenario, state, HARD))
    answer = expert.expert_action(scenario, state, HARD)
    result = step(scenario, state, answer._replace(text=answer.text + " Is there anything else I can help with?"))
    assert result.reward > 0 and not _reply_now(state).startswith("Yes"), _reply_now(state)
    step(scenario, state, respond("By the way, could you tell me the email address on your account?"))
    assert "account_email" in state.revealed and scenario.facts_by_name["account_email"] in _reply_now(state)
    assert customer.fields_in_question("Would you like a summary?") == ()  # "sum" is not in "summary"


def test_questions_in_an_answer_get_the_right_first_words():
    """From audit round 9: an offer gets a yes (even with an email address in it), a check of what
    the customer knows a confirmation, a request or a question about the future nothing."""
    from supportenv.episode import _last_question, _yes_to

    offer = _last_question("Done. Would you like me to subscribe lena.96@mail.test to status updates?")
    assert _yes_to(offer) == "Yes, please."
    assert _yes_to("Is your delivery address still 12 Mill Way?") == "Yes, that's right."
    assert _yes_to("Could you reply with a few photos of the damage?") == ""
    assert _yes_to("Could you let me know whether that makes scrolling smoother?") == ""
    assert _yes_to("Is there anything else I can help with?") == ""


def test_carrying_out_an_accepted_offer_is_credited_as_expert_grade():
    seed = seed_where(lambda s: not s.expected.escalate, task="action_selection")
    scenario, state = new_episode("action_selection", "train", seed)
    while (action := expert.expert_action(scenario, state, "action_selection")).kind != "mark_resolved":
        if action.kind == "respond_with_solution" and not unsolved(scenario, state)[1:]:
            action = action._replace(text=action.text + " Would you like me to email you a summary?")
        step(scenario, state, action)
    assert _reply_now(state).startswith("Yes, please.")
    done = respond("I've emailed you the summary, as promised. Thank you for your patience.")
    assert expert.is_acceptable(scenario, state, "action_selection", done)
    result = step(scenario, state, done)
    assert "respond_repeat" not in dict(result.breakdown)
    step(scenario, state, resolve())
    parts = {c.name: c for c in grade_state(scenario, state).components}
    assert parts["step_quality"].score == 1.0 and parts["efficiency"].score == 1.0, parts


def test_the_article_of_any_issue_is_the_right_one_to_send():
    """From audit round 10: a guide for the second issue is no wrong article, and one the customer
    just said yes to is carried out at no charge to speed or cost."""
    seed = seed_where(lambda s: len(s.intents) == 2 and not s.expected.escalate, task="action_selection")
    scenario, state = new_episode("action_selection", "train", seed)
    second = scenario.intents[1].article_id
    step(scenario, state, expert.expert_action(scenario, state, "action_selection"))  # triage
    sent = step(scenario, state, Action("suggest_knowledge_base", article_id=second))
    assert dict(sent.breakdown) == {"kb_correct": 0.1}
    while not state.done:
        step(scenario, state, expert.expert_action(scenario, state, "action_selection"))
    assert grade_state(scenario, state).score > 0.6


# ---- from blind audit round 11: the customer's own words, what the answer asked, the main fix, the mood ----


def test_the_customer_names_its_issues_in_its_own_words():
    """ "I'll look out for news on the 403 error" came from a customer who only ever wrote "my
    reports page says I don't have permission". Every reply that names an issue ({issue} and
    {remaining}, a past problem in an opening message) says its ISSUE_WORDS label, so the label
    must fit whichever template opened the ticket: each of its words is one the templates use
    (or one that names nothing: "problem"), and a code (a number, a capitalised abbreviation such
    as 2FA or API) only if every template says it."""
    names_nothing = {"get", "back", "problem", "question"}
    for issue in ISSUE_TYPES:
        label = content.ISSUE_WORDS[issue.issue_id][0]
        said = {s for t in issue.templates for s in content_stems(t)}
        for word in content_stems(label):
            # By stem, or one word's stem the start of the other's ("slowness", "slow").
            in_templates = word in said or any(word.startswith(s) or s.startswith(word) for s in said if len(s) >= 4)
            assert in_templates or word in names_nothing, (issue.issue_id, label, word)
        codes = {w.lower() for t in issue.templates for w in re.findall(r"\b(?:\w*\d\w*|[A-Z]{2,}\w*)\b", t)}
        for word in re.findall(r"[\w-]+", label.lower()):
            if word in codes or any(c.isdigit() for c in word):
                assert all(word in t.lower() for t in issue.templates), (issue.issue_id, label, word)


def _ready_to_answer(scenario, state) -> str:
    """Triage and gather the facts as the expert does; the article its first answer cites."""
    while (action := expert.expert_action(scenario, state, HARD)).kind != "respond_with_solution":
        step(scenario, state, action)
    return action.article_id


def _answer(scenario, state, issues: list[str], before: str = "", after: str = "") -> str:
    """The customer's reply to the expert's answer for `issues` (with `before` and `after` it),
    given once the expert has triaged and gathered the facts."""
    article = _ready_to_answer(scenario, state)
    step(scenario, state, respond(before + solution_message(scenario, state, issues) + after, article))
    return _reply_now(state)


def _damaged_and(s, solvable: int, escalate: bool = False) -> bool:
    """A damaged item and one more issue, `solvable` of the two answered by the agent."""
    ids = [i.issue_id for i in s.intents]
    return (
        "damaged_item" in ids
        and len(ids) == 2
        and len(s.expected.solvable) == solvable
        and s.expected.escalate == escalate
    )


def test_an_answer_that_asks_for_photos_gets_them_promised():
    """ "Okay, that covers the damaged item, thanks" (another issue waiting for a hand-over) and
    "Okay, I'll try that, thanks." (one answer for a damaged item and an app crash) ignored the
    answer's request for photos of the damage. Whatever the reply (an issue still open, a hand-over
    to wait for, all solved, a follow-up), the customer says it will send them, and the gym's
    encoder still reads the reply as partly or fully solved; an answer asking for none gets none."""
    from supportenv.gym.features import _PARTLY_SOLVED, _SOLVED

    seed = seed_where(lambda s: _damaged_and(s, 2) and s.expected.solvable[-1] != "damaged_item")
    scenario, state = new_episode(HARD, "train", seed)
    reply = _answer(scenario, state, ["damaged_item"])
    assert "photos" in reply and _PARTLY_SOLVED.fullmatch(reply), reply
    scenario, state = new_episode(HARD, "train", seed)  # both issues in one answer
    reply = _answer(scenario, state, list(scenario.expected.solvable))
    assert "photos" in reply and _SOLVED.fullmatch(reply), reply

    seed = seed_where(lambda s: _damaged_and(s, 1, escalate=True))
    scenario, state = new_episode(HARD, "train", seed)
    reply = _answer(scenario, state, ["damaged_item"], after=" I'll pass the rest on to a specialist.")
    assert "photos" in reply and _pattern("partly_solved_handover_photos").fullmatch(reply), reply

    seed = seed_where(lambda s: [i.issue_id for i in s.intents] == ["damaged_item"] and not s.expected.escalate)
    scenario, state = new_episode(HARD, "train", seed)
    article = _ready_to_answer(scenario, state)
    step(
        scenario, state, respond("I'm so sorry it arrived damaged. We'll replace the damaged item at no cost.", article)
    )
    reply = _reply_now(state)
    assert "photo" not in reply.lower() and _SOLVED.fullmatch(reply), reply
    step(scenario, state, respond("Also, could you send us a few photos of the damage for the carrier?"))
    assert "photos" in _reply_now(state), _reply_now(state)


def test_a_fix_and_an_idea_in_one_answer_get_thanks_for_the_fix_first():
    """ "Great, thanks for passing it on!" after an answer whose main content was the invoice, with
    a feature request noted on the side: the reply is the fix's (in the mood shown), then a word
    on the suggestion, whichever of the two the ticket raised first."""
    from supportenv.gym.features import _SOLVED

    for idea_first in (True, False):
        seed = seed_where(
            lambda s, first=idea_first: (
                len(s.intents) == 2
                and len(s.expected.solvable) == 2
                and (s.intents[0].issue_id == "feature_request") == first
                and "feature_request" in s.expected.solvable
            )
        )
        scenario, state = new_episode(HARD, "train", seed)
        fix = next(i for i in scenario.expected.solvable if i != "feature_request")
        reply = _answer(scenario, state, list(scenario.expected.solvable))
        fix_kind = "solved_" + content.ISSUE_WORDS[fix][1]
        fix_replies = [t for mood in ("", "_plain", "_grudging") for t in content.REACTIONS[fix_kind + mood]]
        assert any(reply.startswith(t) for t in fix_replies), (fix, reply)
        assert "suggestion" in reply and _SOLVED.fullmatch(reply), reply


def test_goodbyes_fit_the_mood_shown():
    """ "Okay, goodbye." right after "Thanks, that's exactly what I wanted!" (sentiment +0.58): the
    customer's goodbye is warm when satisfied, plain when neutral, curt when still annoyed."""
    moods = {"closed": ("satisfied",), "closed_plain": ("neutral",), "closed_grudging": ("frustrated", "angry")}
    seen = set()
    for _, _, action, after in _mixed_steps(150):
        reply = _reply_now(after)
        for kind, labels in moods.items():
            if reply in content.REACTIONS[kind]:
                assert action.kind == "mark_resolved" and sentiment_label(after.sentiment) in labels, (reply, kind)
                seen.add(kind)
    # A rude answer solves the case but leaves the customer annoyed: a curt goodbye.
    seed = seed_where(
        lambda s: (
            len(s.intents) == 1 and not s.expected.escalate and s.persona == "angry" and s.initial_sentiment < -0.5
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    _answer(scenario, state, list(scenario.expected.solvable), before="Calm down. ")
    step(scenario, state, resolve())
    assert _reply_now(state) in content.REACTIONS["closed_grudging"], (_reply_now(state), state.sentiment)
    assert seen >= {"closed", "closed_plain"}, seen


# ---- from blind audit round 12: requests not keywords, facts that fit, words and mood, labels, offers ----


def test_only_a_request_for_photos_gets_them_promised():
    """ "... And I'll send you the photos now." after an answer that said "click your profile
    picture": only a request for photos (or photos of the item, its damage or its packaging) is
    one, never a mere mention of a picture."""
    from supportenv.episode import _asks_for_photos

    asks = (
        "Here is what we will do: Ask for photos of the damage and the packaging.",
        "Could you send us a few photos of the damage for the carrier?",
        "Please send photos.",
        "Could you reply with a few photos of the damage?",
        "A photo of the damage would help us.",
        "Pictures of the parcel, please.",
        "Please attach a couple of clear pictures.",
        "Could you take a picture of the box?",
        "We need photos of the packaging too.",
        "Please email us images of the damaged item.",
    )
    mentions = (
        "Click your profile picture, then choose Settings.",
        "Tap your profile picture in the top corner and pick Security.",
        "Upload a new profile picture in settings.",
        "The picture on our website shows the colour.",
        "Please have your photo ID ready.",
        "You can change your display picture under Account.",
        "Our image server was down; it is fixed now.",
        "Open the picture gallery tab.",
        "Thanks for the photos, we will replace it.",
        "There is no need to send photos.",
    )
    assert all(_asks_for_photos(t) for t in asks), [t for t in asks if not _asks_for_photos(t)]
    assert not any(_asks_for_photos(t) for t in mentions), [t for t in mentions if _asks_for_photos(t)]
    seed = seed_where(lambda s: [i.issue_id for i in s.intents] == ["account_locked"] and not s.expected.escalate)
    scenario, state = new_episode(HARD, "train", seed)
    reply = _answer(scenario, state, ["account_locked"], after=" Then click your profile picture to check it.")
    assert "photo" not in reply.lower(), reply


def test_an_answer_to_several_issues_gets_a_reply_for_several():
    """ "Brilliant, that answers my question. Thanks!" to one answer that covered an outage and a
    refund's status: a reply to several issues answered at once never speaks of one question."""
    from supportenv.gym.features import _SOLVED

    singular = re.compile(r"\b(?:my question|answers it)\b", re.I)
    for mood in ("satisfied", "neutral", "frustrated"):
        for kind in ("fix", "steps", "photos", "promise", "done", "noted", "info"):
            assert any(not singular.search(t) for t in content.REACTIONS[customer.in_mood("solved_" + kind, mood)])
    seeds = [
        seed
        for seed in range(3_000)
        if len((s := generate(HARD, "train", seed)).expected.solvable) >= 2
        and not s.expected.escalate
        and "feature_request" not in s.expected.solvable
        and any(content.ISSUE_WORDS[i][1] == "info" for i in s.expected.solvable)
    ]
    assert len(seeds) >= 10
    for seed in seeds:
        scenario, state = new_episode(HARD, "train", seed)
        reply = _answer(scenario, state, list(scenario.expected.solvable))
        assert not singular.search(reply) and _SOLVED.fullmatch(reply), (seed, reply)


def test_an_offer_at_the_end_of_an_answer_gets_a_yes():
    """ "If you'd like, I can subscribe you to status updates." at the end of a solving answer
    was ignored: an offer put as a statement is an offer too ("If you'd like, I can ...", "I can
    also ... if you want", "Would you like me to ..."), and a plain statement is none."""
    from supportenv.episode import _last_question, _yes_to

    offers = (
        "Done. If you'd like, I can subscribe you to status updates.",
        "Done. I can also email you a summary if you want.",
        "Done. Would you like me to email you a summary?",
        "Done. If you like, we can send you a reminder when it ships.",
        "Done. Would you like me to send you the steps by email.",
        # (audit rounds 41 and 42: an offer, then a word that the customer may say yes)
        "Done. I'd be glad to subscribe you to status updates. Let me know if you would like that.",
        "Done. I'd be glad to subscribe you to status updates. Please let me know if that would help.",
    )
    for text in offers:
        assert _yes_to(_last_question(text)) == "Yes, please.", text
    for text in (
        "Done. You can reset it yourself if you want to.",
        "Done. It should arrive on Monday.",
        "Done. Let me know if you need anything else.",
    ):
        assert _yes_to(_last_question(text)) == "", text
    seed = seed_where(lambda s: len(s.intents) == 1 and not s.expected.escalate and not s.expected.facts)
    scenario, state = new_episode(HARD, "train", seed)
    reply = _answer(
        scenario, state, list(scenario.expected.solvable), after=" If you'd like, I can email you a summary."
    )
    assert reply.startswith("Yes, please. "), reply


def test_every_issue_reads_naturally_in_every_reply_that_names_it():
    """ "I'll wait for the team on someone getting into my account." (the customer had written of
    suspicious activity) and "I still need help with my suggestion" (a feature idea): every reply
    that names issues reads naturally with every issue's label, alone or with another."""
    bad = re.compile(
        r"\bon someone\b|\bwith someone\b|\bsomeone getting\b|help (?:me )?with my (?:suggestion|feature idea)"
        r"|question about my \w+ question|problem with my (?:feature idea|\w+ question)|\ban answer on \w+ing\b",
        re.IGNORECASE,
    )
    labels = [words[0] for words in content.ISSUE_WORDS.values()]
    assert content.ISSUE_WORDS["account_takeover"][0] == "the suspicious activity on my account"
    assert "suggestion" not in content.ISSUE_WORDS["feature_request"][0]
    from supportenv.world import _MISLEADING_PAST

    for kind, templates in content.REACTIONS.items():
        for template in (*templates, _MISLEADING_PAST):
            if "{issue}" not in template and "{remaining}" not in template:
                continue
            for one in labels:
                for two in (one, *(customer.spoken_list((one, other)) for other in labels if other != one)):
                    text = template.format(issue=two, remaining=two, fact="order id")
                    assert not bad.search(text), (kind, text)
                    # Several issues take no singular verb ("the outage and my refund isn't sorted").
                    if two != one:
                        assert not re.search(re.escape(two) + r" (?:is|isn't|has|hasn't|was)\b", text), (kind, text)


def test_a_fix_the_agent_made_is_thanked_for_as_done():
    """From blind audit round 15: "I have cancelled your subscription" is thanked for as done,
    not "for walking me through it"; steps for the customer to take still get the steps reply."""
    for mood in ("satisfied", "neutral", "frustrated"):
        assert customer.solved_reply("subscription_cancel", mood, False, done_for_them=True).startswith("solved_done")
        assert customer.solved_reply("subscription_cancel", mood, False).startswith("solved_steps")
    seed = next(
        s
        for s in range(400)
        if [i.issue_id for i in generate(HARD, "validation", s).intents] == ["subscription_cancel"]
    )
    scenario, state = new_episode(HARD, "validation", seed)
    exp = scenario.expected
    step(scenario, state, classify(exp.category, exp.priority, exp.issue_type))
    step(scenario, state, ask(*exp.facts))
    done = step(
        scenario, state, respond("Thanks. I have cancelled your subscription, so it will not renew.", "KB-BIL-04")
    )
    assert (
        done.observation.customer_message
        in content.REACTIONS[customer.in_mood("solved_done", done.observation.sentiment_label)]
    )


# ---- findings of the twenty-sixth blind audit ----


def test_a_question_whether_anything_changed_gets_an_answer():
    """ "Did anything change on your side recently, and is there an error code?" got only the
    code; the customer answers both, knowing of nothing but what it wrote."""
    seed = seed_where(lambda s: "error_code" in s.expected.facts)
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    question = "Did anything change on your side recently, and is there an error code shown?"
    result = step(scenario, state, ask("error_code", question=question))
    reply = _reply_now(state)
    assert scenario.facts_by_name.get("error_code") in reply
    assert any(r in reply for r in content.CHANGE_REPLIES), reply
    assert "ask_new_fact" in dict(result.breakdown)


def test_a_call_offered_to_a_customer_whose_phone_is_gone_asks_for_another_number():
    seed = seed_where(
        lambda s: (
            s.expected.callback_allowed
            and s.issue.issue_id == "two_factor_lost"
            and re.search(r"lost my phone|phone was stolen", s.opening_message, re.IGNORECASE)
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, callback("A specialist will call you to get you back in."))
    assert re.fullmatch(_pattern("callback_no_phone"), _reply_now(state)), _reply_now(state)


def test_an_answer_given_inside_a_question_is_applied():
    """An ask whose question also answers an issue that needs no fact ("Could you send me the
    order number? And yes, express delivery is available ...") was taken for a question only:
    the customer, who read the answer, later said it was never given. It is applied as an answer
    (and its fields asked as ever), while one that names the fix the facts are asked for ("so
    that I can refund the duplicate charge") stays a question."""
    seed = seed_where(
        lambda s: (
            len(s.intents) == 2
            and s.intents[1].issue_id == "shipping_policy_question"
            and s.intents[0].required_facts
            and not s.expected.escalate
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    first = scenario.intents[0]
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    text = (
        "Could you send me the "
        + " and ".join(f.replace("_", " ") for f in first.required_facts)
        + "? "
        + solution_message(scenario, state, ["shipping_policy_question"])
    )
    result = step(scenario, state, ask(*first.required_facts, question=text))
    parts = dict(result.breakdown)
    assert {"respond_after_classify", "ask_new_fact"} <= set(parts), parts
    assert "shipping_policy_question" in state.solved_intents
    assert all(scenario.facts_by_name.get(f) in _reply_now(state) for f in first.required_facts)
    # the fix the facts are for, named in the question, is why it asks: no answer yet
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    text = "Could you send me those details so that I can " + solution_message(scenario, state, [first.issue_id])
    result = step(scenario, state, ask(*first.required_facts, question=text))
    assert "respond_missing_facts" not in dict(result.breakdown) and not state.solved_intents


# ---- findings of the twenty-seventh blind audit ----


def test_issues_named_in_the_question_for_their_facts_are_asked_about_not_answered():
    """An answer to a feature idea that ended "For the refund and the login email change, could
    you send me your order ID, the amount you paid, and the email on your account?" was charged
    as an early answer to both (respond_missing_facts, and the identity check broken), and the
    customer, giving the order id, asked "Don't you need my order id?". Issues named only in the
    question that asks for their facts are what it asks about."""
    seed = seed_where(
        lambda s: (
            len(s.intents) == 2
            and s.intents[0].issue_id == "feature_request"
            and s.intents[1].issue_id == "email_change"
            and not s.expected.escalate
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    text = (
        solution_message(scenario, state, ["feature_request"])
        + " For the login email change, could you send me the email currently on your account?"
    )
    result = step(scenario, state, respond(text, "KB-GEN-02"))
    parts = dict(result.breakdown)
    assert "respond_missing_facts" not in parts and parts.get("respond_after_classify") == 0.5, parts
    assert not state.violations and state.solved_intents == ["feature_request"]
    reply = _reply_now(state)
    assert scenario.facts_by_name.get("account_email") in reply and "Don't you need" not in reply, reply
    while not state.done:
        step(scenario, state, expert.expert_action(scenario, state, HARD))
    assert grade_state(scenario, state).passed


def test_a_check_in_is_answered_and_asks_for_no_fact():
    """ "Is there anything else I can help you with today?" got "Sorry, I don't follow. What
    information are you after?" and was charged as a pointless question; the customer says
    what is still open, or that it is all done."""
    seed = seed_where(lambda s: len(s.intents) == 1 and not s.expected.escalate)
    scenario, state = new_episode(HARD, "train", seed)
    while (action := expert.expert_action(scenario, state, HARD)).kind != "respond_with_solution":
        step(scenario, state, action)
    check_in = ask(question="Is there anything else I can help you with today?")
    result = step(scenario, state, check_in)
    assert "ask_irrelevant" not in dict(result.breakdown)
    assert re.fullmatch(_pattern("check_in_open"), _reply_now(state)), _reply_now(state)
    step(scenario, state, action)
    step(scenario, state, check_in)
    assert re.fullmatch(_pattern("check_in_done"), _reply_now(state)), _reply_now(state)


# ---- findings of the twenty-eighth blind audit ----


def test_an_offer_before_a_question_for_facts_still_gets_its_yes():
    """ "... I can sign you up for status updates if that helps. For the refund, could you send me
    the order number?" got the facts and no word on the offer; the yes comes first, with them."""
    from supportenv.episode import _makes_an_offer

    assert _makes_an_offer("I can sign you up for status updates if that helps. Could you send the order number?")
    assert not _makes_an_offer("You can reset it yourself if you want to. Could you send the order number?")
    seed = seed_where(
        lambda s: (
            len(s.intents) == 2
            and not s.intents[0].required_facts
            and s.intents[1].required_facts
            and not s.expected.escalate
            and all(f in s.facts_by_name for f in s.intents[1].required_facts)
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    first, second = scenario.intents
    label = customer.spoken_list(f.replace("_", " ") for f in second.required_facts)
    text = (
        solution_message(scenario, state, [first.issue_id])
        + f" If you'd like, I can email you a summary. Could you send me your {label}?"
    )
    step(scenario, state, respond(text, first.article_id))
    reply = _reply_now(state)
    assert reply.startswith("Yes, please. ") and customer.accepted_offer(reply), reply
    assert all(scenario.facts_by_name.get(f) in reply for f in second.required_facts), reply


def test_one_answer_solving_issues_of_different_kinds_is_thanked_for_all():
    """A refund made and steps to try, in one answer, got "Great, I'll do that right away", which
    fits only the steps."""
    for mood in ("satisfied", "neutral", "frustrated"):
        kind = customer.in_mood("solved_mixed", mood)
        assert kind in content.REACTIONS
    seed = seed_where(
        lambda s: (
            len(s.intents) == 2
            and len(s.expected.solvable) == 2
            and {content.ISSUE_WORDS[i.issue_id][1] for i in s.intents} == {"promise", "fix"}
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    reply = _answer(scenario, state, list(scenario.expected.solvable))
    kinds = [k for k in content.REACTIONS if k.startswith("solved_mixed")]
    assert re.fullmatch(_pattern(*kinds), reply.removeprefix("Yes, please. ")), reply


def test_no_goodbye_names_a_time_of_day():
    """ "Have a nice evening!" closed a ticket about an outage "this morning": the world has no clock."""
    clock = re.compile(r"\b(?:morning|afternoon|evening|tonight|night)\b", re.IGNORECASE)
    for kind in ("closed", "closed_plain", "closed_grudging"):
        assert not any(clock.search(t) for t in content.REACTIONS[kind]), kind


def test_an_email_that_is_a_message_is_not_the_account_email():
    """ "Did the reset email arrive?" got "I gave you that already." (read as asking for the
    account email again), and an offer to send details "by email" got the account address."""
    for question in (
        "Did the reset email arrive, and were you able to log in again?",
        "Would you like me to send those details to you by email?",
        "Can I email you the steps?",
        "Did the login work?",
    ):
        assert "account_email" not in customer.fields_in_question(question), question
    for question in ("What is the email on your account?", "Which email do you sign in with?", "What's your login?"):
        assert customer.fields_in_question(question) == ("account_email",), question


def test_a_question_is_answered_whole_with_the_fields_it_names():
    """An ask for the order id whose words also asked "which phone are you using and what version
    of the app?" got only the order id."""
    seed = seed_where(lambda s: all(f in s.facts_by_name for f in ("order_id", "device_model", "app_version")))
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    question = "What is the order number? And which phone are you using, and what version of the app is on it?"
    step(scenario, state, ask("order_id", question=question))
    reply = _reply_now(state)
    assert all(scenario.facts_by_name.get(f) in reply for f in ("order_id", "device_model", "app_version")), reply


# ---- findings of the twenty-ninth blind audit ----


def test_a_hand_over_announced_next_is_no_first_step():
    """ "For the stolen phone and your login codes, I'm passing that to our security team next."
    at the end of an answer to two other issues was credited as the two-factor issue's first
    steps: its words, with "the two I can fix" earlier, covered "Have the security team reset
    two-factor authentication". An announcement says no fix, and two-factor is one word."""
    from supportenv.solutions import announcements, steps_said, without_announcements

    text = (
        "Let me take the two I can fix right now. Please turn off background sync while you work. "
        "For the stolen phone and your login codes, I'm passing that to our security team next."
    )
    assert announcements(text) == (
        "For the stolen phone and your login codes, I'm passing that to our security team next.",
    )
    assert "two_factor_lost" not in steps_said(without_announcements(text))
    assert "two_factor_lost" not in verdict_solves(text, ("two_factor_lost", "slow_performance"))


def verdict_solves(text, issues):
    from supportenv.text import verdict

    return verdict(text, tuple((i, ISSUE_TYPES_BY_ID[i].article_id) for i in issues), "").solves


def test_noting_the_number_the_customer_asked_to_be_called_on_is_a_courtesy():
    """After "Okay, but not on my old mobile ... The other number on my account works.", the agent's
    "I've noted that the specialist should call the other number" was charged as a wrong answer and
    got "Sorry, but that's not what I asked about."."""
    seed = seed_where(
        lambda s: (
            s.expected.callback_allowed
            and s.issue.issue_id == "two_factor_lost"
            and re.search(r"lost my phone|phone was stolen", s.opening_message, re.IGNORECASE)
        )
    )
    scenario, state = new_episode(HARD, "train", seed)
    plan = []
    while not state.done:
        plan.append(expert.expert_action(scenario, state, HARD))
        step(scenario, state, plan[-1])
    scenario, state = new_episode(HARD, "train", seed)
    for action in plan[:-1]:
        step(scenario, state, action)
    step(scenario, state, callback("A security specialist will call you to get you back in."))
    assert customer.asked_for_another_number(_reply_now(state))
    noted = respond("Understood, I've noted that the specialist should call the other number on your account.")
    assert expert.is_acceptable(scenario, state, HARD, noted)
    result = step(scenario, state, noted)
    assert "respond_irrelevant" not in dict(result.breakdown), result.breakdown
    assert re.fullmatch(_pattern("follow_up"), _reply_now(state)), _reply_now(state)
    step(scenario, state, plan[-1])
    assert grade_state(scenario, state).passed


def test_a_customer_who_searched_the_help_pages_says_so_of_an_article():
    seed = seed_where(lambda s: re.search(r"looked through your help pages", s.opening_message) is not None)
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    step(scenario, state, Action(kind="suggest_knowledge_base", article_id=scenario.issue.article_id))
    assert re.fullmatch(_pattern("article_again"), _reply_now(state)), _reply_now(state)


# ---- findings of the thirtieth blind audit ----


def test_a_hand_over_to_the_team_that_resets_two_factor_is_no_first_step():
    """ "I will pass that to our security team, who handle two-factor resets." was credited as the
    issue's first steps: its words are those of the step the team carries out, the hand-over."""
    from supportenv.solutions import first_steps_said

    assert "two_factor_lost" not in first_steps_said(
        "About the code going to your old number: I will pass that to our security team, who handle two-factor resets."
    )
    assert "two_factor_lost" in first_steps_said("Meanwhile, try the backup recovery codes you saved at setup.")
    seed = _one_answer_and_escalation("two_factor_lost")
    scenario, state = new_episode(HARD, "train", seed)
    article = _ready_to_answer(scenario, state)
    text = solution_message(scenario, state, list(scenario.expected.solvable)) + (
        " About your login codes: I will pass that to our security team, who handle two-factor resets."
    )
    result = step(scenario, state, respond(text, article))
    assert "respond_interim" not in dict(result.breakdown), result.breakdown
    assert re.fullmatch(_pattern("partly_solved_handover", "partly_solved_handover_photos"), _reply_now(state))
    # ... and the expert's judgement of the step agrees with its reward: the hand-over alone is no step
    scenario, state = new_episode(HARD, "train", seed)
    _ready_to_answer(scenario, state)
    handover = respond("I will pass that to our security team, who handle two-factor resets.", "KB-SEC-02")
    assert not expert.is_acceptable(scenario, state, HARD, handover)
    assert "respond_interim" not in dict(step(scenario, state, handover).breakdown)


def test_a_check_in_sent_as_an_answer_is_answered_not_charged():
    seed = seed_where(lambda s: len(s.intents) == 1 and not s.expected.escalate)
    scenario, state = new_episode(HARD, "train", seed)
    while (action := expert.expert_action(scenario, state, HARD)).kind != "mark_resolved":
        step(scenario, state, action)
    result = step(scenario, state, respond("Is there anything else I can help you with today?"))
    assert "respond_irrelevant" not in dict(result.breakdown), result.breakdown
    assert re.fullmatch(_pattern("check_in_done"), _reply_now(state)), _reply_now(state)


def test_a_question_for_someone_else_to_act_gets_no_yes():
    """ "Could your workspace admin confirm your permissions?" got "Yes, that's right."."""
    from supportenv.episode import _yes_to

    assert _yes_to("Could your workspace admin confirm your permissions?") == ""
    assert _yes_to("Is that the right address?") == "Yes, that's right."


def test_a_check_in_is_no_wrong_choice_once_but_not_twice_running():
    """From audit round 31: a check-in before closing, answered and not charged, still counted as
    a step no expert takes in action selection's step quality (its step is counted by efficiency
    already). Once is a courtesy; a second straight after is not, nor one in place of a question
    the case still needs."""
    task = "action_selection"
    for check_in in (ask(question="Is there anything else I can help you with today?"), respond("Anything else?")):
        scenario, state = new_episode(task, "train", seed_where(lambda s: True, task))
        if missing_facts(scenario, state):
            assert not expert.is_acceptable(scenario, state, task, check_in)
        while (action := expert.expert_action(scenario, state, task)).kind != "mark_resolved":
            step(scenario, state, action)
        assert expert.is_acceptable(scenario, state, task, check_in)
        step(scenario, state, check_in)
        assert not expert.is_acceptable(scenario, state, task, check_in)


# ---- from blind audit round 33: replies that fit what the agent said in the same message ----


def _two_to_answer(split: str = "validation", count: int = 400):
    """(seed, first, second, a fact of the second's the customer has not written): tickets with two
    issues the agent answers, the second needing a fact the first does not."""
    for seed in range(count):
        s = generate(HARD, split, seed)
        if len(s.expected.solvable) != 2 or s.expected.escalate:
            continue
        first, second = s.expected.solvable
        later = [
            f
            for f in ISSUE_TYPES_BY_ID[second].required_facts
            if f not in ISSUE_TYPES_BY_ID[first].required_facts and s.facts_by_name.get(f, "") not in s.opening_message
        ]
        if later:
            yield seed, first, second, later[0]


def test_facts_given_with_a_reply_get_no_go_ahead_nor_ready_when_you_are():
    """ "It's order ORD-759687. Okay, that covers the slowness, thanks. Ready when you are for the
    invoice." (and "Sure, go ahead with ..."): to an answer that also asked for the other issue's
    facts, the customer gives them and says they are what the agent needs; "go ahead" is only
    for an answer that said it comes to the rest next."""
    from supportenv.episode import fact_label

    go_ahead = re.compile(r"go ahead|ready when you are|all ears", re.IGNORECASE)
    seen = 0
    for seed, first, second, later in _two_to_answer():
        for also in ("", " I'll come to the other part of your message next."):
            scenario, state = new_episode(HARD, "validation", seed)
            step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
            if ISSUE_TYPES_BY_ID[first].required_facts:
                step(scenario, state, ask(*ISSUE_TYPES_BY_ID[first].required_facts))
            text = solution_message(scenario, state, [first]) + also + f" Could you share your {fact_label(later)}?"
            step(scenario, state, respond(text, ISSUE_TYPES_BY_ID[first].article_id))
            reply = _reply_now(state)
            assert later in state.revealed and scenario.facts_by_name[later] in reply, reply
            assert not go_ahead.search(reply), reply
            given = _pattern("partly_solved_facts_given", "partly_solved_facts_given_photos")
            assert given.search(reply) and customer.issue_words([second]) in reply, reply
            seen += 1
    assert seen >= 20
    # Said without a question, "I'll come to ... next" is still let go on, as a proposal.
    seed, first, _, _ = next(_two_to_answer())
    scenario, state = new_episode(HARD, "validation", seed)
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    _answer(scenario, state, [first], after=" I'll come to the other part of your message next.")
    assert re.fullmatch(_pattern("partly_solved_next", "partly_solved_next_photos"), _reply_now(state))


def _escalation_with_first_steps(count: int = 600):
    """(seed, the issue to escalate, its article's first steps said as an instruction): tickets with
    one issue the agent answers and one that policy escalates."""
    for seed in range(count):
        s = generate(HARD, "validation", seed)
        if len(s.intents) != 2 or len(s.expected.solvable) != 1 or len(s.expected.escalate_intents) != 1:
            continue
        issue = ISSUE_TYPES_BY_ID[s.expected.escalate_intents[0]]
        if issue.escalation == "over_refund_cap":
            continue
        steps = "; ".join(x.lower() for x in ARTICLES_BY_ID[issue.article_id].steps[:2])
        yield seed, issue.issue_id, f" Meanwhile, please {steps}."


def test_first_steps_with_an_announced_hand_over_are_taken_up_not_kept_as_advice():
    """ "I'll keep your advice on the suspicious activity on my account in mind for now." right after
    the answer said that issue goes to the security specialists: the customer takes the first
    steps up and waits for the team, whether they come with an answer or on their own."""
    handover = " I'm also passing this to our specialist team, who will contact you."
    advice = re.compile(r"your advice|the tips on|I'll start with that\.|That's a start", re.IGNORECASE)
    seen = 0
    for seed, issue_id, first_steps in _escalation_with_first_steps():
        scenario, state = new_episode(HARD, "validation", seed)
        article = _ready_to_answer(scenario, state)
        solvable = list(scenario.expected.solvable)
        answer = solution_message(scenario, state, solvable) + first_steps + handover
        result = step(scenario, state, respond(answer, article))
        if "respond_interim" not in dict(result.breakdown):
            continue  # (steps that are no safe first step for this issue)
        reply = _reply_now(state)
        assert not advice.search(reply), reply
        with_answer = _pattern("partly_solved_first_steps_handover", "partly_solved_first_steps_handover_photos")
        assert with_answer.fullmatch(reply), reply
        assert customer.issue_words([issue_id]) in reply, reply
        # The first steps on their own, with the word of the hand-over, before the answer.
        scenario, state = new_episode(HARD, "validation", seed)
        _ready_to_answer(scenario, state)
        result = step(scenario, state, respond("I'm sorry about this." + first_steps + handover))
        if "respond_after_classify" in dict(result.breakdown):
            continue  # (the first steps say the other issue's fix too: "sign out" of an access error)
        assert "respond_interim" in dict(result.breakdown), result.breakdown
        assert not advice.search(_reply_now(state)), _reply_now(state)
        alone = _pattern(
            "interim_handover", "interim_handover_plain", "interim_handover_grudging", "interim_open_handover"
        )
        assert alone.fullmatch(_reply_now(state)), _reply_now(state)
        seen += 1
    assert seen >= 5
    # Without the word of the hand-over, the steps are still advice to keep in mind.
    seed, _, first_steps = next(_escalation_with_first_steps())
    scenario, state = new_episode(HARD, "validation", seed)
    article = _ready_to_answer(scenario, state)
    answer = solution_message(scenario, state, list(scenario.expected.solvable)) + first_steps
    step(scenario, state, respond(answer, article))
    assert re.fullmatch(_pattern("partly_solved_first_steps", "partly_solved_first_steps_photos"), _reply_now(state))


_CHOICES = (
    "Would you prefer a replacement or a refund?",
    "Which account should we keep?",
    "Would you like me to email you a summary or send it by text?",
)


def test_a_choice_put_in_an_answer_is_answered_and_no_irrelevant_answer():
    """ "Would you prefer a replacement or a refund?" was charged respond_irrelevant, judged no
    expert's step, and met with "I don't see what that has to do with the wrong item": a choice
    put to the customer is a reasonable step once the facts are in, and the customer chooses (the
    option it asked for, where it asked for one). One more straight after follows up on the choice
    (a courtesy, as carrying out an accepted offer is) and the customer says it has chosen; a
    third says nothing new and is charged as before."""
    from supportenv.text import verdict

    task = "action_selection"
    seen = set()
    for seed in range(60):
        scenario, state = new_episode(task, "validation", seed)
        while missing_facts(scenario, state) or not state.category:
            step(scenario, state, expert.expert_action(scenario, state, task))
        # (a choice whose options are an open issue's fix, "a replacement or a refund" for a lost
        # parcel, answers it: the others are put here)
        texts = [
            f"{before} {c}"
            for before, c in zip(
                ("I'm sorry for the trouble with your order.", "Sorry, one more thing.", "And another thing."),
                _CHOICES[seed % 3 :] + _CHOICES[: seed % 3],
                strict=True,
            )
        ]
        if state.done or any(verdict(t, scenario.intent_keys, "").solves for t in texts):
            continue
        question, again, third = map(respond, texts)
        assert expert.is_acceptable(scenario, state, task, question), (seed, question.text)
        result = step(scenario, state, question)
        parts = dict(result.breakdown)
        assert "respond_irrelevant" not in parts and result.reward >= 0, parts
        reply = _reply_now(state)
        choice = _pattern("question_choice", "question_choice_refund_request")
        assert choice.fullmatch(reply) and customer.accepted_offer(reply), reply
        if "refund" in question.text and "refund_request" in [i.issue_id for i in scenario.intents]:
            assert re.fullmatch(_pattern("question_choice_refund_request"), reply), reply
        seen.add(question.text.split(". ", 1)[1])
        assert expert.is_acceptable(scenario, state, task, again)
        assert "respond_irrelevant" not in dict(step(scenario, state, again).breakdown)
        reply = _reply_now(state)
        assert reply.startswith(content.REACTIONS["question_choice_again"]) and not customer.accepted_offer(reply), (
            reply
        )
        assert not expert.is_acceptable(scenario, state, task, third)
        assert "respond_irrelevant" in dict(step(scenario, state, third).breakdown)
    assert seen == set(_CHOICES), seen
    # An either-or put with a solution gets a choice, not a "Yes, please." to half of it.
    from supportenv.episode import _makes_an_offer, _yes_to

    assert _yes_to(_CHOICES[2]) == "" and not _makes_an_offer(_CHOICES[2])
    assert _yes_to("Would you like me to email you a summary?") == customer.YES_TO_OFFER


def test_a_direct_question_in_an_answer_is_never_passed_over():
    """ "Which account should we keep?" in an answer was ignored: a question the customer can
    answer from its situation gets an answer (a choice, that it will report back, or that it knows
    no more than it wrote), placed where it reads naturally; a check-in or a question about the
    answer itself ("How does that sound?") is left to the reply, as before."""
    cases = {
        " Which account should we keep?": ("question_choice", True),
        " When did you first notice this?": ("question_open", True),
        " Could you let me know whether that helps?": ("question_report", False),
    }
    seen = 0
    for seed in range(60):
        scenario = generate(HARD, "validation", seed)
        if len(scenario.intents) != 1 or scenario.expected.escalate:
            continue
        scenario, state = new_episode(HARD, "validation", seed)
        unasked = _answer(scenario, state, list(scenario.expected.solvable))
        for question, (kind, first) in cases.items():
            scenario, state = new_episode(HARD, "validation", seed)
            reply = _answer(scenario, state, list(scenario.expected.solvable), after=question)
            assert "respond_after_classify" in dict(state.last_breakdown), state.last_breakdown
            assert reply != unasked, (question, reply)  # the question is not passed over
            answers = [t for t in content.REACTIONS[kind] if (reply.startswith(t) if first else reply.endswith(t))]
            assert answers, (question, reply)
            seen += 1
        for question in (" How does that sound?", " Is there anything else I can help with?"):
            scenario, state = new_episode(HARD, "validation", seed)
            reply = _answer(scenario, state, list(scenario.expected.solvable), after=question)
            asked = [t for k in ("question_choice", "question_open", "question_report") for t in content.REACTIONS[k]]
            assert not any(t in reply for t in asked), reply
    assert seen >= 10


def test_an_answer_that_says_nothing_is_not_called_off_the_topic():
    """From audit round 33: "I've looked into your refund and everything is sorted now." got
    "That has nothing to do with my refund.": the replies to an answer that solves nothing fit an
    answer about the issue that says nothing as well as one about something else."""
    off_topic = re.compile(r"nothing to do with|not what I asked|what that has to do with", re.I)
    assert not any(off_topic.search(line) for line in content.REACTIONS["unhelpful"])


def test_the_customer_names_the_address_it_wants_and_never_quotes_the_rules():
    """From audit rounds 33 and 34: "...and which new email address would you like to move to?"
    got only the address on record; "Wait, I thought callbacks were only for premium customers."
    and "Shouldn't you ask for my account email first?" spoke the help desk's rules, not a
    customer's words; "Ready when you are for our integration." read as a form."""
    scenario = next(
        s
        for s in (generate("end_to_end_resolution", "validation", seed) for seed in range(3000))
        if any(i.issue_id == "email_change" for i in s.intents) and s.facts_by_name.get("account_email")
    )
    question = "Could you confirm the email on your account, and which new email address would you like to use?"
    reply = customer.answer(scenario, (), ("account_email",), question, 2).reply
    assert scenario.facts_by_name["account_email"] in reply and customer.new_email(scenario) in reply, reply
    rules = re.compile(r"premium|enterprise|callbacks? (?:are|is) only|ask for my .* first|ready when you are", re.I)
    for kind in ("no_callback", "missing_facts", "partly_solved_next", "partly_solved_next_photos"):
        assert not any(rules.search(line) for line in content.REACTIONS[kind]), kind


def test_asking_whether_the_fix_worked_is_a_check_in():
    """From audit round 35: "Did the reset email arrive, and were you able to log back in?" got "I'm
    not sure how to answer that." and was charged as a question for no fact; the customer says
    whether all is done, as to any check-in."""
    seed = seed_where(lambda s: len(s.intents) == 1 and not s.expected.escalate)
    scenario, state = new_episode(HARD, "train", seed)
    while (action := expert.expert_action(scenario, state, HARD)).kind != "respond_with_solution":
        step(scenario, state, action)
    step(scenario, state, action)
    for question in ("Did the reset email arrive, and were you able to log back in?", "Did that work for you?"):
        result = step(scenario, state, ask(question=question))
        assert "ask_irrelevant" not in dict(result.breakdown), question
        assert re.fullmatch(_pattern("check_in_done"), _reply_now(state)), _reply_now(state)


# ---- findings of blind audit round 36 ----


def test_an_instruction_with_if_you_would_like_is_no_offer():
    """ "if you would like a copy of your data, please export it first; I will pass the deletion to
    the team" got "Yes, please.": the customer was told what to do, not offered anything."""
    assert not episode._makes_an_offer(
        "About deleting your profile: if you would like a copy of your data and order history, please export it "
        "first; I will pass the deletion request itself to the team that handles it."
    )
    assert episode._makes_an_offer("If you'd like, I can send you a summary by email.")


def test_a_question_for_no_fact_is_answered_and_how_pressing_it_is_too():
    """ "Do you still have the backup recovery codes?" got "Sorry, I don't follow. What information
    are you after?", and "...and is this stopping you from working today?" was passed over: the
    customer answers how pressing it is as its opening said, and that it knows no more otherwise."""
    for impact in ("blocking", "can_wait", "normal"):
        scenario = generate(*next(k for k in _keys() if generate(*k).impact == impact))
        pressing = customer.answer(scenario, (), (), "Is this stopping you from working today?", 2).reply
        assert pressing in content.IMPACT_REPLIES[impact], (impact, pressing)
    scenario = generate(HARD, "train", 0)
    yes_no = customer.answer(scenario, (), (), "Do you still have the backup recovery codes you saved?", 2).reply
    assert yes_no in content.NOT_THAT_I_KNOW_REPLIES, yes_no  # (round 37: not "That's all I have")
    unsure = customer.answer(scenario, (), (), "Which browser were you using at the time?", 2).reply
    assert unsure in content.UNSURE_REPLIES, unsure
    scenario = generate(*next(k for k in _keys() if "order_id" in generate(*k).facts_by_name))
    with_fact = customer.answer(scenario, (), ("order_id",), "Your order id? And which size did you get?", 2)
    assert with_fact.revealed == ("order_id",) and any(line in with_fact.reply for line in content.UNSURE_REPLIES)


def _keys():
    return ((HARD, "train", seed) for seed in range(500))


def test_a_fix_named_in_a_hand_over_is_no_first_step():
    """ "I will hand this to our security team, who can safely reset your two-factor
    authentication" got the credit of safe first steps: the reset is the team's work."""
    handing = "For your lost codes, I will hand this to our security team, who can reset two-factor authentication."
    assert "two_factor_lost" not in episode._first_steps_in(handing)
    steps = "; ".join(s.lower() for s in ARTICLES_BY_ID["KB-SEC-01"].steps)
    assert "account_takeover" in episode._first_steps_in(f"Please {steps}.")


def test_a_question_what_happened_is_answered_in_the_customers_words():
    """From audit round 37: "Could you tell me your order number and what arrived in the box
    instead?" got only the order number; the customer tells what it wrote again."""
    scenario = generate(*next(k for k in _keys() if "order_id" in generate(*k).facts_by_name))
    reply = customer.answer(scenario, (), ("order_id",), "Your order number, and what arrived instead?", 2).reply
    assert scenario.facts_by_name["order_id"] in reply and re.search(r"(?:Like I said|As I wrote), \S", reply), reply
    told = reply.split(", ", 1)[-1] if "Like I said" not in reply else reply.split("Like I said, ", 1)[1]
    assert told[:20].lower() in scenario.opening_message.lower() or "it's about" in told, reply


def test_a_team_named_for_its_work_is_no_hand_over_and_routing_a_solvable_case_says_so():
    """From audit round 37: "send us the crash report so our team can fix it" got "I'll wait for the
    team to sort out deleting my account", and routing a case with nothing to escalate was told
    "wrong department", as if another team were right."""
    assert not episode._announces_a_hand_over("Send us the crash report from the settings menu so our team can fix it.")
    assert episode._announces_a_hand_over("I'm passing this to our security team, who will be in touch.")
    assert episode._announces_a_hand_over("Our accounts team will take it from here.")
    seed = seed_where(lambda s: not s.expected.escalate)
    scenario, state = new_episode(HARD, "train", seed)
    wrong = next(d for d in DEPARTMENTS if d != scenario.expected.department)
    result = step(scenario, state, assign(wrong))
    assert "department_wrong" in dict(result.breakdown), result
    assert "needs no routing" in result.observation.last_action_feedback, result.observation.last_action_feedback


# ---- findings of blind audit round 38 ----


def test_a_question_for_facts_given_already_is_no_answer():
    """ "Thanks! And for the crash, could you tell me your device model and app version, please?"
    (both given already) was credited as the crash's answer, and the ticket passed with it open."""
    seed = seed_where(lambda s: "app_crash" in s.expected.solvable and s.intents[0].issue_id == "app_crash")
    scenario, state = new_episode(HARD, "train", seed)
    _ready_to_answer(scenario, state)
    question = "Thanks! And for the crash, could you tell me your device model and app version, please?"
    result = step(scenario, state, ask("device_model", "app_version", question=question))
    assert "respond_after_classify" not in dict(result.breakdown) and "app_crash" not in state.solved_intents


def test_that_makes_sense_is_no_check_in():
    """ "Thanks, that makes sense! ... would a CSV export work for you, or Excel?" was read as a
    check-in and got "Yes, thanks. But what about my feature idea?"."""
    assert not episode.is_check_in(ask(question="Thanks, that makes sense! Would a CSV export work, or Excel?"))
    assert episode.is_check_in(ask(question="Does that make sense?"))


def test_the_platform_is_no_device_and_what_came_instead_is_told():
    """From audit round 39: "I am sorry the platform is down ... Could you share the email on your
    account?" was read as asking for the device model too (the customer gave one, and the ask was
    charged), and "What did you receive instead of the office chair?" got "I'm not sure"."""
    question = "I am sorry the platform is down for your whole team. Could you share the email on your account?"
    assert customer.fields_in_question(question) == ("account_email",)
    scenario = generate(*next(k for k in _keys() if "order_id" in generate(*k).facts_by_name))
    reply = customer.answer(scenario, (), (), "What did you receive instead of the office chair?", 2).reply
    assert re.match(r"(?:Like I said|As I wrote), ", reply), reply


def test_a_customer_whose_case_is_handed_over_asks_after_the_rest():
    """From blind audit round 40: with an integration handed to a specialist and an address change
    and a lock-out still open, the customer only said "I'll wait to hear from them"."""
    seed = seed_where(lambda s: s.expected.escalate and len(s.expected.solvable) >= 1)
    scenario, state = new_episode(HARD, "train", seed)
    exp = scenario.expected
    step(scenario, state, classify(exp.category, exp.priority, exp.issue_type))
    step(scenario, state, ask(*scenario.expected.facts, question="Could you share these details, please?"))
    step(scenario, state, assign(scenario.expected.department))
    step(scenario, state, escalate("Thank you, I'm passing this to our specialists, who will be in touch."))
    reply = state.history[-1][1]
    assert any(words.lower() in reply.lower() for words in issue_words(list(scenario.expected.solvable)).split(" and "))


def test_an_article_sent_alone_says_the_issue_stays_open_and_is_read():
    """From blind audit rounds 40 to 42: an open issue's article earned "kb_correct" with no word that
    it answers nothing, and the customer who said "I'll read that article" then said "you haven't
    helped me with it yet" as if it had never been sent."""
    seed = seed_where(lambda s: len(s.intents) == 1 and not s.expected.escalate and not s.expected.facts)
    scenario, state = new_episode(HARD, "train", seed)
    exp = scenario.expected
    step(scenario, state, classify(exp.category, exp.priority, exp.issue_type))
    result = step(scenario, state, Action("suggest_knowledge_base", article_id=exp.article_id))
    assert "kb_correct" in dict(result.breakdown)
    assert "stays open until its solution is said in words" in result.observation.last_action_feedback
    step(scenario, state, resolve())
    reply = state.history[-1][1]
    assert "article" in reply.lower(), reply


def test_a_customer_who_paid_knows_what_it_paid():
    """From blind audit round 42: "Sorry, I can't find the amount anywhere." from a customer asking
    for a price adjustment on its own order."""
    seed = seed_where(lambda s: s.intents[0].issue_id == "price_adjustment")
    scenario, state = new_episode(HARD, "train", seed)
    step(scenario, state, classify("refund", scenario.expected.priority, "price_adjustment"))
    step(scenario, state, ask("amount", question="How much did you pay, please?"))
    assert "amount" in state.revealed, state.history[-1]


def test_the_sale_price_is_no_amount_paid():
    """From blind audit round 43: "the order number of the item you'd like the sale price matched on"
    was read as asking for the amount, and the customer's answer with it charged as a needless ask."""
    assert customer.fields_in_question(
        "Could you share the order number of the item you'd like the sale price matched on?"
    ) == ("order_id",)
    assert "amount" in customer.fields_in_question("What price did you pay?")
    # (round 46: the address to switch to is no account email on record)
    assert customer.fields_in_question("Which personal email address would you like to use instead?") == ()
    asked = "Before I look at your price adjustment, could you please confirm the email on your account?"
    assert customer.fields_in_question(asked) == ("account_email",)
    # (round 44: what the agent says before it asks asks for nothing)
    asked = customer.fields_in_question("Happy to help with the price match. Could you share the order number?")
    assert asked == ("order_id",)
    assert "amount" in customer.fields_in_question("Thanks. Please send the amount you paid.")


def test_a_customer_asking_about_shipping_abroad_knows_its_country():
    """From blind audit round 43: "Which country do you live in?" got "I'm not sure, to be honest"
    from a customer who wrote that it lives abroad."""
    seed = seed_where(lambda s: s.intents[0].issue_id == "international_shipping")
    scenario, _ = new_episode(HARD, "train", seed)
    reply = customer.answer(scenario, (), (), "Which country do you live in?", 2).reply
    assert any(country in reply for country in content.COUNTRIES), reply


def test_a_fact_the_customer_has_not_got_is_met_with_why_not_in_its_own_words():
    """From audit round 47: "I'm not sure what the new address is" from a customer who never
    moved. Each field has its own replies, saying why the customer has none."""
    assert set(content.UNKNOWN_REPLIES) == set(REQUESTABLE_FIELDS)
    every = [r for replies in content.UNKNOWN_REPLIES.values() for r in replies]
    assert all(content.UNKNOWN_REPLIES.values()) and len(every) == len(set(every))
    seed = seed_where(lambda s: s.facts_by_name.get("new_address") is None)
    scenario, _ = new_episode(HARD, "train", seed)
    reply = customer.answer(scenario, (), ("new_address",), "", 1).reply
    assert "moved" in reply or "moving" in reply, reply


def _two_issues_the_first_needing_no_fact():
    return seed_where(
        lambda s: (
            len(s.expected.solvable) == 2
            and not s.expected.escalate
            and not ISSUE_TYPES_BY_ID[s.expected.solvable[0]].required_facts
            and ISSUE_TYPES_BY_ID[s.expected.solvable[1]].required_facts
        )
    )


def test_a_fix_that_waits_for_the_fact_it_asks_for_is_no_early_answer():
    """From audit round 47: "As for the wrong item: once I have your order ID I'll send the correct
    item by priority shipping. Could you send me the order ID?" was charged respond_missing_facts,
    and the customer gave the order id and asked "How can you fix that without my order id?". A
    plan put off until a fact is in asks for it (with or without a question mark)."""
    seed = _two_issues_the_first_needing_no_fact()
    for later in (
        "Once I have your {fact}, I will {fix} Could you send me your {fact}?",
        "As soon as you send me your {fact}, we will {fix}",
    ):
        scenario, state = new_episode(HARD, "train", seed)
        first, second = scenario.expected.solvable
        step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
        needs = ISSUE_TYPES_BY_ID[second].required_facts
        steps = [s.rstrip(".").lower() for s in ARTICLES_BY_ID[ISSUE_TYPES_BY_ID[second].article_id].steps]
        fix = ", ".join(steps[:-1]) + " and " + steps[-1] + "."
        plan = later.format(fact=needs[0].replace("_", " "), fix=fix)
        text = solution_message(scenario, state, [first]) + " " + plan
        result = step(scenario, state, respond(text, ISSUE_TYPES_BY_ID[first].article_id))
        parts = dict(result.breakdown)
        assert "respond_missing_facts" not in parts and parts["respond_after_classify"] > 0, (plan, parts)
        assert state.solved_intents == [first] and needs[0] in state.revealed, plan
        assert not re.search(_pattern("missing_facts"), _reply_now(state)), _reply_now(state)


def test_an_answer_given_too_early_for_one_issue_is_said_of_that_issue():
    """The customer names the issue an early answer is held up on ("Do you need my order id for the
    wrong item?"), and does not ask "what about" an issue the answer just tried."""
    seed = _two_issues_the_first_needing_no_fact()
    scenario, state = new_episode(HARD, "train", seed)
    first, second = scenario.expected.solvable
    step(scenario, state, classify(scenario.expected.category, issue_type=scenario.expected.issue_type))
    text = solution_message(scenario, state, [first, second])
    result = step(scenario, state, respond(text, ISSUE_TYPES_BY_ID[first].article_id))
    assert dict(result.breakdown)["respond_missing_facts"] < 0
    reply = _reply_now(state)
    assert issue_words([second]) in reply and re.search(_pattern("missing_facts"), reply), reply
    assert re.match(_pattern("partly_solved_held_up", "partly_solved_held_up_photos"), reply), reply


def test_a_request_for_the_fields_asked_is_not_answered_as_a_question_of_its_own():
    """make run's first episode: ask_for_more_info(card_last_four, amount) with "Could you please
    share these details?" got "... Not that I know of." (newcomer walk-through, 2026-12-04): the
    words only ask for the fields named, so the customer gives (or cannot give) those, no more."""
    scenario = generate(HARD, "test", 0)
    fields = ("card_last_four", "amount")
    for words in ("Could you please share these details?", "Can you provide that, please?", "Please send them?"):
        reply = customer.answer(scenario, (), fields, words, 2).reply
        assert not any(r in reply for r in content.NOT_THAT_I_KNOW_REPLIES + content.UNSURE_REPLIES), (words, reply)
    # A question of its own beside the fields is still answered, and the same words with no field named too.
    own = customer.answer(scenario, (), fields, "Do you still have the backup codes?", 2).reply
    assert any(r in own for r in content.NOT_THAT_I_KNOW_REPLIES), own
    alone = customer.answer(scenario, (), (), "Could you please share these details?", 2).reply
    assert alone, alone


def test_a_questions_purpose_asks_for_no_fact():
    """Audit round 67: "So I can look into ... the price of the standing desk, could you share the order id?"
    was read as asking for the amount too (and the customer's amount charged as needless)."""
    from supportenv.customer import fields_in_question

    question = (
        "So I can look into both the late delivery and the price of the standing desk, could you please share "
        "the order id, the tracking number and the email address on your account?"
    )
    assert set(fields_in_question(question)) == {"order_id", "tracking_number", "account_email"}
    assert set(fields_in_question("So that I can refund it, could you send the amount?")) == {"amount"}
