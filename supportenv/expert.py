"""The expert: what correct handling does next, given the hidden scenario.

Used by the action-selection grader (was each step an expert-acceptable choice?, judged
on the grader's replay), by the action-selection task's opening (a previous agent's first
steps) and by the oracle agent (which proves full marks are reachable)."""

from __future__ import annotations

from supportenv import casework, customer
from supportenv.actions import Action, use_tool
from supportenv.catalog import (
    ARTICLES_BY_ID,
    DESK_REFUND_DAYS,
    ISSUE_TYPES_BY_ID,
    RETURN_WINDOW_DAYS,
    TOOL_KIND,
    IssueType,
)
from supportenv.customer import spoken_list
from supportenv.episode import (
    EpisodeState,
    fact_label,
    first_steps_given,
    given_value,
    is_check_in,
    is_clarifying_question,
    missing_facts,
    offered_article_fits,
    open_issues,
    refusal_told_at,
    sign_in_names,
    unnoticed_untold,
    unsolved,
    verification_failed_at,
)
from supportenv.tasks import EXPERT_TASK_ID
from supportenv.text import is_rude, verdict
from supportenv.tools import LOST_AFTER_DAYS
from supportenv.world import Scenario, identity_proof
from supportenv.world.system_of_record import SignIn


def _first_fact(scenario: Scenario, state: EpisodeState) -> str:
    value = next(
        (given_value(scenario, state, name) for name, _ in scenario.hidden_facts if name in state.revealed), ""
    )
    # (an order id the customer mistyped: the order it is, as found)
    return (
        scenario.meant_order_id if scenario.order_id_mistyped and value == scenario.facts_by_name["order_id"] else value
    )


def solution_message(scenario: Scenario, state: EpisodeState, intents: list[str]) -> str:
    """A polite, relevant, personalised answer naming each issue's first solution."""
    fact = _first_fact(scenario, state)
    ref = f" regarding {fact}" if fact else ""
    if intents == [scenario.intents[0].issue_id] and casework.is_mistaken(scenario, intents[0]):
        # A claim the records contradict: what they show is the answer (again, if the customer doubted it).
        again = "I understand the worry, and I have checked again. " if state.pushed_back else ""
        records_say = _told_of(scenario, intents[0]).strip()
        return f"Thank you for your patience{ref}. {again}{records_say}{_unnoticed(scenario, state)}"
    told = {i: _told_of(scenario, i) for i in intents} if scenario.task_id == EXPERT_TASK_ID else {}
    # (an issue the records settle is told as they do, without an article's step that promises what no tool
    # does, which the desk rules forbid: "I have sent your order again", not "Open a carrier trace")
    steps = " Also: ".join(
        step
        for issue, step in ((i, _solution_step(ISSUE_TYPES_BY_ID[i])) for i in intents)
        if not (told.get(issue) and casework.names_untooled(step))
    )
    plan = f" Here is what we will do: {steps}." if steps else ""
    return (
        f"Thank you for your patience{ref}, and I'm sorry for the trouble.{plan}{''.join(told.values())}"
        f"{_unnoticed(scenario, state)}"
    )


def _unnoticed(scenario: Scenario, state: EpisodeState) -> str:
    """The refund, made, of the money taken wrongly that the customer never noticed, until it is told."""
    refund = casework.unnoticed_refund(scenario)
    if refund is None or not state.unnoticed_refunded_at or not unnoticed_untold(scenario, state):
        return ""
    amount = f"${float(refund.value):,.2f}"
    found = (
        f"order {refund.target} was charged twice, so I have refunded the duplicate {amount}"
        if scenario.unnoticed_charge == "duplicate"
        else f"you were charged {amount} more than order {refund.target}'s listed total, so I have refunded it"
    )
    return f" I also found that {found} to your card; it reaches it in {DESK_REFUND_DAYS}."


def _told_of(scenario: Scenario, issue: str) -> str:
    """What the expert tells of a change made for the issue: a refund's amount and when it arrives."""
    remedy = casework.remedy_for(scenario, issue)
    settling = casework.settled_by(scenario, issue)
    if remedy is None and settling is not None:  # (a lost parcel's money back: its refund tells the parcel too)
        return _told_of(scenario, settling.issue)
    if remedy is not None and scenario.family == "several_duplicates" and issue == scenario.intents[0].issue_id:
        refunds = casework.remedies_for(scenario, issue)
        each = spoken_list([f"${float(r.value):,.2f} on order {r.target}" for r in refunds])
        return (
            " I have checked every payment on your account: the orders charged twice and not refunded yet are "
            f"refunded now, {each}; they reach your card in {DESK_REFUND_DAYS}."
        )
    if remedy is not None and remedy.tool == "issue_refund":
        return (
            f"{_why_this_amount(scenario, remedy)} I have refunded ${float(remedy.value):,.2f} to your card; it "
            f"reaches it in {DESK_REFUND_DAYS}."
        )
    if remedy is not None and remedy.tool == "reship_order":
        order = scenario.records.order(remedy.target)
        if order is None or order.status == "delivered" or not order.events:  # (a wrong or damaged item delivered)
            return " I have sent your order again."
        return (
            f" The carrier has not scanned your parcel since {order.events[-1].when}, more than {LOST_AFTER_DAYS} "
            "days ago, so it counts as lost: I have sent your order again."
        )
    finding = casework.finding_for(scenario, issue)
    if finding is None:
        return ""
    if finding.kind == "decline_reason":
        return f" Our records show the payment was declined because {casework.reason_words(finding.value)}."
    told = _TOLD_BY_FAMILY.get(scenario.family) if casework.is_mistaken(scenario, issue) else None
    told = told or _TOLD_BY_KIND.get(finding.kind) or _TOLD_BY_ISSUE[issue]
    return " " + told.format(value=finding.value, money=_money_words(finding.value))


def _money_words(value: str) -> str:
    try:
        return f"${float(value):,.2f}"
    except ValueError:
        return value


# What the expert tells of what the records show ({value}: the finding's; {money}: it as money), by the
# judgement family whose claim it answers, else by the kind of finding, else by the issue.
_TOLD_BY_FAMILY = {
    "not_lost_yet": (
        "The carrier last scanned your parcel on {value}, so it is still on its way: a parcel counts as lost only "
        f"after {LOST_AFTER_DAYS} days without a scan, and then we will send it again."
    ),
    "duplicate_already_refunded": (
        f"Our records show the duplicate charge was refunded to your card on {{value}}; it takes {DESK_REFUND_DAYS} "
        "to show, so please check your statement."
    ),
    "already_delivered": "Our records show the order was already delivered on {value}, so its address can no longer "
    "be changed.",
    "refund_already_issued": (
        f"Our records show your refund was issued on {{value}}; it takes {DESK_REFUND_DAYS} to reach your card, so "
        "please check your statement."
    ),
}
_TOLD_BY_KIND = {
    "paid": "Our records show your last attempt on {value} went through: the payment was taken and your order is "
    "paid, so there is nothing to retry.",
    "authorisation": "Our records show one charge: the second payment is an authorisation hold, not a charge, and it "
    "will drop off your statement within a few days.",
    "place": "The carrier's records show it was delivered and left in a safe place: {value}.",
    "window": f"Our records show the order was delivered on {{value}}, more than {RETURN_WINDOW_DAYS} days ago, so it "
    f"is outside our {RETURN_WINDOW_DAYS}-day return window and I can't refund it.",
    "shipping": "Our records show you were charged the order's listed total: the difference from the item's price is "
    "the {money} shipping fee, so there is no overcharge to refund.",
}
_TOLD_BY_ISSUE = {
    "refund_status": "Our records show your refund was requested on {value} and is on its way.",
    "delayed_delivery": "The carrier's new delivery date is {value}.",
}


def _why_this_amount(scenario: Scenario, remedy: casework.Remedy) -> str:
    """Why a refund is the amount it is, where it is not the amount the customer asked for."""
    order = scenario.records.order(remedy.target)
    if scenario.family == "partly_refunded":
        earlier = scenario.records.refunds_for(remedy.target)
        return f" ${earlier[0].amount:,.2f} of the order was refunded on {earlier[0].issued}, so"
    if scenario.family == "item_of_several" and order:
        item = order.items[0]
        return f" The {item.product} was bought with the order's {order.discount_percent}% discount, so"
    if scenario.family == "refund_never_issued" and order:
        back = next((e.when for e in order.events if e.status == "returned"), "")
        return f" Your return reached our warehouse on {back}, but no refund was issued, so"
    return ""


def _look_up_to_answer(scenario: Scenario, state: EpisodeState, issue: str) -> Action | None:
    """The look-up that shows what the customer must be told of an issue the records answer."""
    if issue == "service_outage":  # (what the answer says of the incident, checked first)
        look = use_tool("check_service_status")
        return None if look in state.actions else look
    finding = casework.finding_for(scenario, issue)
    if finding is None:
        return None
    if finding.kind in ("decline_reason", "paid"):
        look = use_tool("look_up_payments", account_email=scenario.facts_by_name["account_email"])
    else:
        look = use_tool("look_up_order", order_id=scenario.order_in_question)
    return None if look in state.actions else look


def _order_check(scenario: Scenario, state: EpisodeState) -> Action | None:
    """The desk rules ask that an order be the one the customer means (what it holds, when it was
    placed): where the ticket is about an order, look the account's orders up once the account email
    is in, which also finds the order meant where the id given is an earlier one's."""
    if not scenario.order_in_question or "account_email" not in state.revealed:
        return None
    if not scenario.intents[0].knows("order_id"):
        return None
    given = scenario.facts_by_name.get("order_id", "")
    looks = [use_tool("look_up_customer", account_email=scenario.facts_by_name["account_email"])]
    if scenario.meant_order_id and given:
        # (the order id given, not the one meant, looked up first: the natural check that shows it is
        # another order, or none, so that a player who makes it is not charged; audit rounds 61, 72, 77)
        looks.insert(0, use_tool("look_up_order", order_id=given))
    return next((look for look in looks if look not in state.actions), None)


def _payments_check(scenario: Scenario, state: EpisodeState) -> Action | None:
    """The desk rules ask that what is wrong with the order the customer writes about be put right,
    noticed or not: its payments are read on every ticket that names an order (so that checking them is
    never charged as an extra look-up; audit round 64)."""
    order = scenario.order_in_question
    if not order or scenario.records.order(order) is None:
        return None
    look = use_tool("look_up_order", order_id=order)
    return None if look in state.actions else look


def _sign_in_check(scenario: Scenario, state: EpisodeState) -> Action | None:
    """The desk rules ask that the account's sign-ins be read once its email is in, whatever the ticket
    is about, and the customer asked whose one the account does not recognise was (only it knows)."""
    if "account_email" not in state.revealed:
        return None
    look = use_tool("look_up_customer", account_email=scenario.facts_by_name["account_email"])
    if look not in state.actions:
        return look
    sign_in = casework.unknown_sign_in(scenario)
    if sign_in is None or state.sign_in_told_at:
        return None
    return Action("respond_with_solution", text=sign_in_question(sign_in))


def sign_in_question(sign_in: SignIn) -> str:
    """The question whose a sign-in was, naming its device, place and day."""
    return (
        f"Thank you. Your account shows a sign-in on {sign_in.when} from a {sign_in.device} in {sign_in.place}, "
        "which it does not recognise. Was that you?"
    )


def _look_up_before_escalating(scenario: Scenario, state: EpisodeState) -> Action | None:
    """The order of a refund above the cap, looked up before it is escalated: the records decide
    (it may be outside the return window, or refunded in part before); and an outage, checked on
    the status page before it is escalated, as before it is answered (audit round 57)."""
    looks = []
    if "service_outage" in scenario.expected.escalate_intents:
        looks.append(use_tool("check_service_status"))
    if casework.over_the_cap(scenario):
        looks.append(use_tool("look_up_order", order_id=scenario.order_in_question))
    return next((look for look in looks if look not in state.actions), None)


def _solution_step(issue: IssueType) -> str:
    """The article step that names the issue's solution (the catalog guarantees one)."""
    phrase = issue.solution_phrases[0]
    steps = ARTICLES_BY_ID[issue.article_id].steps
    return next((s for s in steps if phrase in s.lower()), phrase).rstrip(".")


def ask_message(fields: list[str]) -> str:
    """A polite question naming, in plain words, each fact it asks for."""
    return f"Could you please share your {spoken_list(map(fact_label, fields))}?"


def escalation_message(scenario: Scenario, state: EpisodeState) -> str:
    fact = _first_fact(scenario, state)
    ref = f" about {fact}" if fact else ""
    why = "Our policy requires a specialist here"
    if scenario.unknown_sign_in == "stranger":
        why = "As that sign-in was not you, someone else may have your password, and our security team must check"
    if scenario.task_id == EXPERT_TASK_ID and casework.over_the_cap(scenario):
        cap = scenario.policy.refund_cap(scenario.tier)
        why = f"The refund is above the {scenario.tier} refund cap of ${cap:,.0f} that I can approve"
    return (
        f"I'm sorry for the trouble{ref}. {why}, so I'm escalating "
        f"this to the {scenario.expected.department.replace('_', ' ')} team, who will contact you shortly."
    )


def _desk_action(scenario: Scenario, state: EpisodeState) -> Action | None:
    """The expert task's next tool call: verify the customer, look up the record a change needs
    to be read first, then make the change; None once every change the case needs is made."""
    missing = casework.check_records(scenario, state.desk).missing
    if not missing:
        return None
    remedy = missing[0]
    if remedy.tool in casework.NEEDS_VERIFICATION and not state.verified:
        # (what verifies the customer, where no issue it raised asked for it: the charge it never noticed)
        proofs = ["account_email", identity_proof(scenario.facts_by_name)]
        if scenario.order_id_mistyped:
            proofs.append("card_last_four")  # (the order id it gave, mistyped, verifies nothing)
        unasked = [f for f in proofs if f not in state.revealed]
        if unasked:
            return Action("ask_for_more_info", fields=tuple(unasked), text=ask_message(unasked))
        return use_tool("verify_identity")
    look = _look_up_before(scenario, remedy)
    if look is not None and look not in state.actions:
        return look
    return Action(TOOL_KIND, tool=remedy.tool, arguments=remedy.call().arguments)


def _look_up_before(scenario: Scenario, remedy: casework.Remedy) -> Action | None:
    """The look-up that shows what a change needs: an order's payments, tracking and status,
    the account's subscriptions, or that the account is locked."""
    if remedy.tool == "cancel_subscription":
        return use_tool("look_up_payments", account_email=scenario.facts_by_name["account_email"])
    if remedy.tool == "issue_refund" and scenario.family == "several_duplicates":
        # (every payment on the account at once: which orders were charged twice, and which not)
        return use_tool("look_up_payments", account_email=scenario.facts_by_name["account_email"])
    if remedy.tool in ("issue_refund", "reship_order", "update_address"):
        return use_tool("look_up_order", order_id=remedy.target)
    if remedy.tool == "send_password_reset":  # (that the account is locked, as the customer says)
        return use_tool("look_up_customer", account_email=remedy.target)
    return None


def expert_action(scenario: Scenario, state: EpisodeState, task_id: str) -> Action:
    exp = scenario.expected
    if not state.category:
        return Action("classify_issue", category=exp.category, priority=exp.priority, issue_type=exp.issue_type)
    if task_id == "issue_classification":
        return Action("mark_resolved", text="Ticket triaged.")
    missing = missing_facts(scenario, state)
    if missing:
        return Action("ask_for_more_info", fields=tuple(missing), text=ask_message(missing))
    if scenario.impostor:
        return _impostor_action(scenario, state)
    check = (
        (_order_check(scenario, state) or _payments_check(scenario, state) or _sign_in_check(scenario, state))
        if task_id == EXPERT_TASK_ID
        else None
    )
    if check is not None:
        return check
    desk = _desk_action(scenario, state) if task_id == EXPERT_TASK_ID else None
    if desk is not None:
        return desk
    # (a lost parcel whose money back goes to a specialist with the refund is settled by that hand-over, not
    # answered with an article's carrier trace, which no tool does)
    by_hand_over = casework.settled_by_escalation(scenario) if task_id == EXPERT_TASK_ID else ()
    todo = [i for i in unsolved(scenario, state) if i not in by_hand_over]
    if todo:
        look = _look_up_to_answer(scenario, state, todo[0]) if task_id == EXPERT_TASK_ID else None
        if look is not None:
            return look
        # One issue per answer, citing its article: the way the prompt describes an answer.
        article = ISSUE_TYPES_BY_ID[todo[0]].article_id
        return Action("respond_with_solution", text=solution_message(scenario, state, todo[:1]), article_id=article)
    if exp.escalate:
        look = _look_up_before_escalating(scenario, state) if task_id == EXPERT_TASK_ID else None
        if look is not None:
            return look
        if state.department != exp.department:
            return Action("assign_department", department=exp.department, text="Routing per policy.")
        if not state.escalated:
            return Action("escalate_to_human", text=escalation_message(scenario, state))
    return Action("mark_resolved", text="Handled per policy.")


# What the expert tells a customer whose details do not match the records (an impostor): that they do not,
# and nothing the records hold; and why the ticket goes to security.
REFUSAL_MESSAGE = (
    "Thank you. I'm sorry, but the order id and the card's last four digits you gave don't match our records "
    "for this account, so I can't verify you or make any change to it."
)
IMPOSTOR_ESCALATION = (
    "As the details given don't match our records for this account, I can't make the change, and I'm passing "
    "this to our security team to review."
)


def _impostor_action(scenario: Scenario, state: EpisodeState) -> Action:
    """The expert's next step with a customer who cannot be verified (its facts gathered): read the account,
    check its details, tell it they do not match, route the ticket to security, escalate it, close it."""
    for look in (
        use_tool("look_up_customer", account_email=scenario.facts_by_name["account_email"]),
        # (the order id it gave, which the account's orders of the last two years do not list: it may be older)
        use_tool("look_up_order", order_id=scenario.facts_by_name["order_id"]),
    ):
        if look not in state.actions:
            return look
    if not verification_failed_at(state):
        return use_tool("verify_identity")
    if not refusal_told_at(state):
        return Action("respond_with_solution", text=REFUSAL_MESSAGE)
    if state.department != scenario.expected.department:
        return Action("assign_department", department=scenario.expected.department, text="Routing per policy.")
    if not state.escalated:
        return Action("escalate_to_human", text=IMPOSTOR_ESCALATION)
    return Action("mark_resolved", text="Details did not match the records; nothing changed; escalated to security.")


def is_acceptable(scenario: Scenario, state: EpisodeState, task_id: str, action: Action) -> bool:
    """Would an expert accept this action here? Judged before the action is applied."""
    exp = scenario.expected
    kind = action.kind
    if action.text and is_rude(action.text):
        return False  # whatever it does, no expert says it rudely (the episode charges any rude text)
    if not state.category:
        if kind == "classify_issue":  # the priority too, as the policy gives it (audit round 36)
            return (action.category, action.issue_type, action.priority) == (exp.category, exp.issue_type, exp.priority)
        if task_id == "issue_classification" or kind in ("respond_with_solution", "mark_resolved"):
            return False  # the policy asks for the triage before an answer; closing skips it
        # Nothing else waits for the triage in the stated policy: a right question, routing,
        # escalation or article is as good before it as after (and its step reward says so).
    elif task_id == "issue_classification":
        return kind == "mark_resolved"
    if is_check_in(action) and not verdict(action.text, scenario.intent_keys, "").solves:
        # A courtesy the customer answers (with what is still open): the efficiency component
        # counts its step, so it is no wrong choice too; once, not one after another.
        return not missing_facts(scenario, state) and not (state.actions and is_check_in(state.actions[-1]))
    if kind == "respond_with_solution":
        judged = verdict(action.text, scenario.intent_keys, action.article_id)
        if judged.rude or judged.wrong_solutions:
            return False
        if _just_accepted(state) or _just_asked_for_another_number(state):
            return True  # carrying out what the customer just accepted or asked for
        # An issue may be answered once its own facts are in, even while another's are missing.
        ready = [i for i in unsolved(scenario, state) if i in judged.solves and not missing_facts(scenario, state, [i])]
        if ready:
            return True
        names = sign_in_names(scenario) if task_id == EXPERT_TASK_ID else None
        if is_clarifying_question(action, names) and not (judged.solves or judged.stuffed):
            # A choice put to the customer ("Would you prefer a replacement or a refund?"), or an
            # open question it answers: reasonable once the facts are in, as a check-in is, and not
            # twice in a row (the episode charges the second as an answer that says nothing; one
            # that follows up on a choice just made is carrying out an accepted offer, above).
            previous = state.actions[-1] if state.actions else None
            return not missing_facts(scenario, state) and not (previous and is_clarifying_question(previous, names))
        if missing_facts(scenario, state):
            return False
        # The safe first steps of an issue to escalate are credited too, as the episode credits them.
        return bool(first_steps_given(scenario, state, action.text, judged.solves))
    if missing_facts(scenario, state):
        return _asks_missing(scenario, state, action)
    if kind == "suggest_knowledge_base":
        wanted = {ISSUE_TYPES_BY_ID[i].article_id for i in open_issues(scenario, state)}
        if _just_accepted(state):  # the guide the customer said yes to
            return offered_article_fits(scenario, action.article_id) and action.article_id not in state.articles
        return action.article_id in wanted and action.article_id not in state.articles
    routing_left = exp.escalate and (state.department != exp.department or not state.escalated)
    if kind == "assign_department":
        return routing_left and action.department == exp.department and state.department != exp.department
    if kind == "escalate_to_human":
        return routing_left and not state.escalated
    if kind == "request_callback":
        return exp.escalate and exp.callback_allowed and not state.callback
    if kind == "mark_resolved":
        return not routing_left and not unsolved(scenario, state)
    return False


def _just_accepted(state: EpisodeState) -> bool:
    """The customer's last reply said yes to an offer in the agent's last answer."""
    return state.history[-1][0] == "customer" and customer.accepted_offer(state.history[-1][1])


def _just_asked_for_another_number(state: EpisodeState) -> bool:
    """The customer's last reply asked to be called on another number (noting it is a courtesy)."""
    return state.history[-1][0] == "customer" and customer.asked_for_another_number(state.history[-1][1])


def _asks_missing(scenario: Scenario, state: EpisodeState, action: Action) -> bool:
    """The action asks for facts the case needs and the customer has not given; one field more
    (a harmless habit, charged by its step reward) does not make the step a wrong choice."""
    if action.kind != "ask_for_more_info" or not action.fields:
        return False
    missing = set(missing_facts(scenario, state))
    asked = set(action.fields)
    return bool(asked & missing) and len(asked - missing) <= 1
