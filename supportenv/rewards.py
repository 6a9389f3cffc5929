"""The step-reward table. The first source design's entries are kept exactly
(classify +0.3 / repeat -0.1, respond +0.5 / before classifying -0.2, escalate
+0.5 (+0.1 premium) / unneeded -0.3, resolve +0.3 / premature -0.1 to -0.2);
the rest extends it to every action and to rude or irrelevant text."""

from __future__ import annotations

# name -> (value, when it applies). The README's reward table is generated from this.
REWARD_TABLE: dict[str, tuple[float, str]] = {
    "classify_correct": (0.3, "classify_issue, first use, right category"),
    "classify_wrong": (-0.1, "classify_issue, first use, wrong category"),
    "classify_repeat": (-0.1, "classify_issue used again"),
    "issue_type_correct": (0.1, "classify_issue names the right issue type (first use)"),
    "priority_correct": (0.1, "classify_issue names the right priority, with the right category (first use)"),
    "ask_new_fact": (0.1, "ask_for_more_info, per needed fact revealed"),
    "ask_repeat": (-0.1, "ask_for_more_info for a fact already given"),
    "ask_irrelevant": (-0.05, "ask_for_more_info, per fact the customer cannot or need not give"),
    "respond_after_classify": (
        0.5,
        "respond_with_solution after classifying that says the solution of an issue (per issue), its facts in hand",
    ),
    "respond_before_classify": (-0.2, "respond_with_solution before classifying"),
    "respond_missing_facts": (-0.2, "respond_with_solution before the needed facts were gathered"),
    "respond_irrelevant": (
        -0.1,
        "respond_with_solution that says no open issue's solution (another's fix, a bare citation), or is stuffed",
    ),
    "respond_wrong_citation": (-0.1, "respond_with_solution that solves an issue but cites an article of none"),
    "respond_needs_escalation": (0.0, "respond_with_solution that promises a refund policy says to escalate"),
    "claim_doubted": (
        0.25,
        "respond_with_solution that tells right what the records show of a claim they contradict, which the "
        "customer doubts (expert task; the rest once it accepts: claim_accepted)",
    ),
    "claim_accepted": (
        0.25,
        "respond_with_solution that explains again, after the customer's doubt, what the records show, and the "
        "customer accepts it: the claim is answered (expert task)",
    ),
    "respond_interim": (
        0.1,
        "respond_with_solution with the safe first steps of an issue policy says to escalate (first time)",
    ),
    "respond_handover": (
        0.0,
        "respond_with_solution that only announces the hand-over policy requires (escalate_to_human makes it)",
    ),
    "respond_repeat": (-0.1, "respond_with_solution after the issue was already solved"),
    "rude_language": (-0.3, "rude or blaming language in any text"),
    "politeness": (
        0.05,
        "respond_with_solution whose words are courteous (thanks, an apology, please, I understand, happy to help,"
        " glad to, ...) and not rude",
    ),
    "personalised": (0.05, "response mentions the customer's own facts"),
    "kb_correct": (
        0.1,
        "suggest_knowledge_base with the article of an issue not answered yet, or one accepted (first time)",
    ),
    "kb_redundant": (-0.05, "suggest_knowledge_base with the article of an issue already answered"),
    "kb_wrong": (-0.1, "suggest_knowledge_base with a wrong or repeated article"),
    "department_correct": (0.2, "assign_department to the right team when the case must be routed"),
    "department_wrong": (-0.2, "assign_department to the wrong team"),
    "department_needless": (-0.1, "assign_department when the agent can solve the case itself"),
    "escalate_required": (0.5, "escalate_to_human when policy requires it"),
    "escalate_premium_bonus": (0.1, "extra for a required escalation of a premium or enterprise customer"),
    "escalate_unneeded": (-0.3, "escalate_to_human when not required"),
    "escalate_repeat": (-0.1, "escalate_to_human again"),
    "escalate_unasked": (
        -0.3,
        "escalate_to_human of a sign-in the account does not recognise as a takeover, before asking the customer "
        "whether it was theirs (expert task)",
    ),
    "promise_untooled": (
        -0.2,
        "a text the customer reads promising or offering what no desk tool does: a carrier trace, store credit, a "
        "shipping credit, status updates, an updated receipt (expert task; once an episode)",
    ),
    "callback_ok": (
        0.1,
        "request_callback for a premium or enterprise customer whose case policy says to escalate (first time)",
    ),
    "callback_needless": (
        -0.05,
        "request_callback for a premium or enterprise customer whose case no specialist takes",
    ),
    "callback_not_allowed": (-0.2, "request_callback for a regular customer, or again"),
    "resolve_proper": (
        0.3,
        "mark_resolved once the case is handled as the task asks",
    ),
    "resolve_partial": (-0.1, "mark_resolved with the work half done"),
    "resolve_premature": (-0.2, "mark_resolved before anything was done"),
    "repeat_action": (-0.05, "per earlier identical action (progressive)"),
    "customer_left": (-0.2, "the customer ran out of patience and left"),
    "off_task": (-0.05, "in issue_classification (triage only), any action but classify_issue and mark_resolved"),
    "tool_used": (
        0.0,
        "use_tool that looks something up, or verifies a customer whose case needs no change (free here; its "
        "cost counts in the grade's efficiency)",
    ),
    "tool_not_found": (-0.05, "use_tool naming a record that is not on the account"),
    "tool_refused": (-0.1, "use_tool for a change policy forbids as asked (the result says why)"),
    "identity_verified": (0.1, "use_tool verify_identity that verifies the customer when the case needs a change"),
    "identity_unmatched": (
        0.1,
        "use_tool verify_identity refused because the order id or card the customer gave is not on the account "
        "(first time; expert task)",
    ),
    "refusal_told": (
        0.5,
        "a text telling a customer whose order id and card both failed to verify that its details do not match "
        "the records, so nothing changes (first time; expert task)",
    ),
    "escalate_unchecked": (
        -0.3,
        "escalate_to_human of a customer whose order id and card the records do not hold, before verify_identity "
        "refused them (expert task)",
    ),
    "told_unverified": (
        -0.2,
        "a text telling a customer whose details do not match the records a figure it did not give (an id, a "
        "sum, a card's last four; expert task)",
    ),
    "unnoticed_told": (
        0.5,
        "respond_with_solution telling the customer of the refund, made, of money taken wrongly from it that it "
        "never noticed (its amount; first time; expert task)",
    ),
    "change_needed": (0.3, "use_tool that makes a change the case needs"),
    "change_unwanted": (-0.3, "use_tool that makes a change the case does not need (or makes it again)"),
    "respond_before_change": (
        -0.2,
        "respond_with_solution that tells the customer a change is done that the records do not show yet",
    ),
    "told_partly": (
        -0.1,
        "respond_with_solution that leaves out what the records show: a refund's amount and when it reaches "
        "the card, a pending refund's date, a late parcel's new delivery date, why a payment was declined, the "
        "day an order outside the return window was delivered (and that the window has passed), a parcel's last scan",
    ),
    "invalid_action": (-0.1, "output that did not parse into an action (the error is shown in the next observation)"),
}


def reward(name: str) -> float:
    return REWARD_TABLE[name][0]
