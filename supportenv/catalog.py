"""The support world's fixed vocabulary: categories, tiers, departments, facts,
knowledge-base articles and issue types. Pure data; everything else reads it."""

from __future__ import annotations

from dataclasses import dataclass

CATEGORIES = ("billing", "delivery", "refund", "account", "technical", "general")
PRIORITIES = ("low", "medium", "high", "urgent")
TIERS = ("regular", "premium", "enterprise")
DEPARTMENTS = ("billing", "logistics", "technical", "accounts", "security", "enterprise_success")
SENTIMENT_LABELS = ("angry", "frustrated", "neutral", "satisfied")
PERSONAS = ("terse", "verbose", "angry", "polite", "confused")

# Dollars charged per paid action (second source design).
ACTION_COSTS = {
    "suggest_knowledge_base": 1.0,
    "assign_department": 5.0,
    "request_callback": 10.0,
    "escalate_to_human": 15.0,
}

# Refunds above the tier's cap must be escalated to a human.
REFUND_CAPS = {"regular": 100.0, "premium": 300.0, "enterprise": 1000.0}

# Facts an agent may ask for, and the words a free-text question may use for each.
FACT_SYNONYMS: dict[str, tuple[str, ...]] = {
    "order_id": ("order id", "order number", "order #", "order no"),
    "amount": ("amount", "how much", "price", "sum", "total"),
    "card_last_four": ("last four", "last 4", "card number", "card ending"),
    "account_email": ("email", "e-mail", "account address", "login"),
    "error_code": ("error code", "error message", "status code", "what error"),
    "tracking_number": ("tracking", "tracking number", "shipment number"),
    "device_model": ("device", "phone model", "which phone", "what phone", "platform"),
    "charge_date": ("date of the charge", "charge date", "when were you charged", "which date"),
}
REQUESTABLE_FIELDS = tuple(FACT_SYNONYMS)


@dataclass(frozen=True)
class Article:
    article_id: str
    title: str
    keywords: tuple[str, ...]
    steps: tuple[str, ...]


ARTICLES: tuple[Article, ...] = (
    Article(
        "KB-PAY-01",
        "Fixing a declined card payment",
        ("payment", "declined", "card", "failed", "checkout", "pay"),
        ("Check the card's expiry date and billing address", "Update the payment method", "Retry the payment"),
    ),
    Article(
        "KB-BIL-02",
        "Duplicate or double charges",
        ("charged", "twice", "double", "duplicate", "charge", "statement"),
        ("Confirm the duplicate transaction", "Refund the duplicate charge", "Allow 3-5 business days"),
    ),
    Article(
        "KB-DEL-01",
        "Tracking a delayed order",
        ("delivery", "late", "delayed", "order", "arrived", "shipping", "package"),
        ("Look up the tracking number", "Confirm the new delivery date with the carrier", "Offer a shipping credit"),
    ),
    Article(
        "KB-DEL-02",
        "Lost package claims",
        ("lost", "package", "never", "missing", "delivered", "carrier"),
        ("Open a carrier trace", "Ship a replacement or refund", "Confirm the shipping address"),
    ),
    Article(
        "KB-REF-01",
        "Requesting a refund",
        ("refund", "return", "money", "back", "cancel", "order"),
        (
            "Confirm the order and amount",
            "Check the refund cap for the tier",
            "Issue the refund to the original payment method",
        ),
    ),
    Article(
        "KB-ACC-01",
        "Unlocking a locked account",
        ("locked", "account", "login", "password", "sign", "access"),
        ("Verify the account email", "Send a password reset link", "Unlock the account"),
    ),
    Article(
        "KB-SEC-01",
        "Securing a compromised account",
        ("hacked", "compromised", "unauthorized", "suspicious", "security", "account"),
        ("Verify identity", "Force a password reset and sign out all sessions", "Escalate to the security team"),
    ),
    Article(
        "KB-TEC-01",
        "Fixing 403 Forbidden errors",
        ("403", "forbidden", "error", "dashboard", "access", "denied"),
        ("Check the user's role permissions", "Clear the browser cache and cookies", "Sign out and back in"),
    ),
    Article(
        "KB-TEC-02",
        "App crashes on launch",
        ("crash", "crashes", "app", "closes", "launch", "freezes"),
        ("Update the app to the latest version", "Reinstall the app", "Send the crash report"),
    ),
    Article(
        "KB-GEN-01",
        "Updating account details",
        ("email", "change", "update", "details", "address", "account"),
        ("Verify identity", "Change the email in account settings", "Confirm via the new address"),
    ),
)
ARTICLES_BY_ID = {a.article_id: a for a in ARTICLES}


@dataclass(frozen=True)
class IssueType:
    """One kind of problem: what it is, what the agent needs and what policy requires."""

    issue_id: str
    category: str
    title: str
    severity: str  # base priority before tier adjustment
    required_facts: tuple[str, ...]
    article_id: str
    department: str
    # "never", "always", "over_refund_cap" or "enterprise" (escalate for enterprise customers).
    escalation: str
    # Phrases of which a correct answer contains at least one.
    solution_phrases: tuple[str, ...]
    openings: tuple[str, ...]
    # Other facts this customer knows and will give if asked (not required).
    extra_facts: tuple[str, ...] = ()


ISSUE_TYPES: tuple[IssueType, ...] = (
    IssueType(
        "payment_failure",
        "billing",
        "Payment failure",
        "medium",
        ("card_last_four", "amount"),
        "KB-PAY-01",
        "billing",
        "never",
        ("update your payment method", "update the payment method", "retry the payment", "try the payment again"),
        (
            "My card keeps getting declined when I try to pay for my subscription.",
            "The payment failed at checkout and I don't know why.",
            "I tried to pay three times and every time the card payment is declined.",
        ),
        ("account_email",),
    ),
    IssueType(
        "double_charge",
        "billing",
        "Double charge",
        "high",
        ("order_id", "amount", "charge_date"),
        "KB-BIL-02",
        "billing",
        "never",
        ("refund the duplicate charge", "reverse the duplicate charge", "refund the extra charge"),
        (
            "I was charged twice for the same order!",
            "My statement shows a double charge for one purchase.",
            "You took the money two times for a single order, please fix this.",
        ),
        ("card_last_four",),
    ),
    IssueType(
        "delayed_delivery",
        "delivery",
        "Delayed delivery",
        "medium",
        ("order_id", "tracking_number"),
        "KB-DEL-01",
        "logistics",
        "never",
        ("new delivery date", "shipping credit", "tracking shows"),
        (
            "My order still hasn't arrived and it was supposed to be here last week.",
            "Where is my package? The delivery is very late.",
            "The shipping is delayed again, when will my order arrive?",
        ),
    ),
    IssueType(
        "lost_package",
        "delivery",
        "Lost package",
        "high",
        ("order_id", "tracking_number"),
        "KB-DEL-02",
        "logistics",
        "never",
        ("ship a replacement", "send a replacement", "carrier trace"),
        (
            "The tracking says delivered but the package never came.",
            "My parcel is missing, the carrier lost it.",
            "It has been two weeks and my package is lost somewhere.",
        ),
    ),
    IssueType(
        "refund_request",
        "refund",
        "Refund request",
        "medium",
        ("order_id", "amount", "account_email"),
        "KB-REF-01",
        "billing",
        "over_refund_cap",
        ("issue the refund", "issued a refund", "process the refund", "refund to your original payment method"),
        (
            "I want a refund for my last order, it is not what I expected.",
            "Please give me my money back for this order.",
            "I returned the item and I am still waiting for my refund.",
        ),
    ),
    IssueType(
        "account_locked",
        "account",
        "Locked account",
        "high",
        ("account_email",),
        "KB-ACC-01",
        "accounts",
        "never",
        ("password reset link", "reset your password", "unlocked your account", "unlock your account"),
        (
            "My account is locked and I can't log in.",
            "I got locked out after too many password attempts.",
            "It says my account is locked, I need access today.",
        ),
    ),
    IssueType(
        "account_takeover",
        "account",
        "Suspected account takeover",
        "urgent",
        ("account_email",),
        "KB-SEC-01",
        "security",
        "always",
        ("security team", "secure your account", "sign out all sessions"),
        (
            "Someone hacked my account and changed my settings!",
            "I see logins I don't recognise, I think my account is compromised.",
            "There are unauthorized orders on my account, somebody got in.",
        ),
    ),
    IssueType(
        "error_403",
        "technical",
        "403 error",
        "medium",
        ("error_code", "account_email"),
        "KB-TEC-01",
        "technical",
        "enterprise",
        ("clear the browser cache", "clear your cache", "role permissions", "sign out and back in"),
        (
            "I get a 403 Forbidden error when I open the dashboard.",
            "Access denied on the dashboard, it says 403.",
            "Since this morning the dashboard only shows an error page: forbidden.",
        ),
    ),
    IssueType(
        "app_crash",
        "technical",
        "App crash",
        "medium",
        ("device_model", "error_code"),
        "KB-TEC-02",
        "technical",
        "never",
        ("update the app", "reinstall the app", "latest version"),
        (
            "The app crashes every time I open it.",
            "Your mobile app closes right after launch.",
            "The app freezes and then crashes, I can't use it at all.",
        ),
    ),
)
ISSUE_TYPES_BY_ID = {t.issue_id: t for t in ISSUE_TYPES}

POLICY_RULES: tuple[str, ...] = (
    "Classify the ticket (category and priority) before answering it.",
    "Priority starts from the issue's severity and is raised one level for enterprise customers.",
    "Verify identity (ask for the account email) before account changes or refunds.",
    "Refunds above the tier's cap must be escalated to a human: regular $100, premium $300, enterprise $1000.",
    "Security incidents and enterprise outages are escalated to a human after routing to the right department.",
    "Do not escalate or transfer what you can solve yourself.",
    "Callbacks are only for premium and enterprise customers.",
    "Be polite; never blame the customer.",
)
