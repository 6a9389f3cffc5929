"""Authored content for the support world: knowledge-base articles, the 25 issue
types with their customer openings, persona wording, distractor sentences and the
customer's canned replies. Pure data, no logic; the engine turns it into objects.

Conventions the engine can rely on:
- Issue templates never start with "I" or an acronym, so the first letter can be
  lowered safely after a persona opener; the only placeholder is {product}.
- Persona openers end with ", ", "; ", ": ", "but " or are empty (the issue text after
  all but ": " starts lowercase); closers start with a space.
- FACT_REPLIES (and ISSUE_FACT_REPLIES) start lowercase, have one {} and no trailing
  period, so several can be joined with ", and " into one sentence.
"""

from __future__ import annotations

from typing import TypedDict


class IssueEntry(TypedDict):
    """One issue type as authored; supportenv.catalog.IssueType is what the engine reads."""

    issue_id: str
    category: str
    title: str
    required_facts: tuple[str, ...]
    extra_facts: tuple[str, ...]
    article: str
    department: str
    escalation: str
    identity_required: bool
    solution_phrases: tuple[str, ...]
    templates: tuple[str, ...]


# (article_id, title, keywords, steps). The first 25 belong to issue types; the
# rest are plausible articles that only ever appear as distractor matches.
ARTICLES = (
    # --- billing -------------------------------------------------------------
    (
        "KB-PAY-01",
        "Fixing a declined card payment",
        ("payment", "declined", "card", "failed", "checkout", "pay", "bank"),
        (
            "Check the card expiry date and billing address",
            "Update the payment method if the card has changed",
            "Retry the payment once the details are correct",
        ),
    ),
    (
        "KB-BIL-02",
        "Duplicate or double charges",
        ("charged", "twice", "double", "duplicate", "charges", "statement", "two"),
        (
            "Confirm both transactions on the billing statement",
            "Refund the duplicate charge to the original card",
            "Tell the customer to allow 3-5 business days",
        ),
    ),
    (
        "KB-BIL-03",
        "Charged the wrong amount",
        ("charged", "price", "wrong", "amount", "more", "discount", "total", "bill"),
        (
            "Compare the charge with the listed price and any discount",
            "Credit the price difference to the original payment method",
            "Send an updated receipt showing the corrected total",
        ),
    ),
    (
        "KB-BIL-04",
        "Cancelling a subscription",
        ("cancel", "subscription", "plan", "renewal", "membership", "monthly", "renew"),
        (
            "Verify the account holder's identity",
            "Cancel the subscription from the plan settings page",
            "Confirm that no further renewals will be billed",
        ),
    ),
    (
        "KB-BIL-05",
        "Getting a copy of an invoice",
        ("invoice", "receipt", "copy", "vat", "pdf", "accounting", "download"),
        (
            "Open the billing history page in account settings",
            "Download the invoice PDF for the order",
            "Send the invoice copy to the account email if needed",
        ),
    ),
    # --- delivery ------------------------------------------------------------
    (
        "KB-DEL-01",
        "Tracking a delayed order",
        ("delivery", "late", "delayed", "arrived", "waiting", "overdue", "due"),
        (
            "Look up the tracking number with the carrier",
            "Confirm the new delivery date with the customer",
            "Offer a shipping credit for the delay",
        ),
    ),
    (
        "KB-DEL-02",
        "Lost package claims",
        ("lost", "package", "never", "missing", "delivered", "carrier", "parcel"),
        (
            "Open a carrier trace with the tracking number",
            "Confirm the shipping address on the order",
            "Ship a replacement or refund once the trace closes",
        ),
    ),
    (
        "KB-DEL-03",
        "Received the wrong item",
        ("wrong", "item", "ordered", "different", "mix", "mistake", "box"),
        (
            "Compare the packing slip with the original order",
            "Send the correct item by priority shipping",
            "Let the customer keep the incorrect item",
        ),
    ),
    (
        "KB-DEL-04",
        "Items that arrived damaged",
        ("damaged", "broken", "arrived", "cracked", "box", "smashed", "dented"),
        (
            "Ask for photos of the damage and the packaging",
            "File a damage claim with the carrier",
            "Replace the damaged item at no cost",
        ),
    ),
    (
        "KB-DEL-05",
        "Changing a delivery address",
        ("address", "change", "moved", "shipping", "deliver", "wrong", "street"),
        (
            "Verify the account holder's identity",
            "Update the shipping address before the order ships",
            "Ask the carrier to redirect the parcel if it has already left",
        ),
    ),
    # --- refund --------------------------------------------------------------
    (
        "KB-REF-01",
        "Requesting a refund",
        ("refund", "money", "back", "return", "unhappy", "full", "disappointed"),
        (
            "Confirm the order and the amount paid",
            "Check the amount against the refund cap for the customer's tier",
            "Issue the refund to the original payment method",
        ),
    ),
    (
        "KB-REF-02",
        "Checking on a refund",
        ("refund", "status", "still", "pending", "bank", "update", "approved"),
        (
            "Look up when the return was processed",
            "Explain the bank processing time of 5-10 business days",
            "Share the refund reference number with the customer",
        ),
    ),
    (
        "KB-REF-03",
        "Printing a return label",
        ("return", "label", "print", "send", "back", "postage", "returning"),
        (
            "Generate a prepaid return label from the returns portal",
            "Pack the item securely with all its accessories",
            "Take the parcel to any drop-off point within 30 days",
        ),
    ),
    # --- account -------------------------------------------------------------
    (
        "KB-ACC-01",
        "Unlocking a locked account",
        ("locked", "account", "login", "password", "sign", "access", "attempts", "blocked"),
        (
            "Verify the account email",
            "Send a password reset link to that address",
            "Unlock your account once the reset is complete",
        ),
    ),
    (
        "KB-ACC-02",
        "Changing your login email",
        ("email", "change", "update", "address", "login", "new", "account"),
        (
            "Verify the account holder's identity",
            "Update the login email in account settings",
            "Verify the new email by clicking the confirmation link",
        ),
    ),
    (
        "KB-SEC-01",
        "Securing a compromised account",
        ("hacked", "compromised", "unauthorized", "suspicious", "account", "someone", "somebody"),
        (
            "Sign out all sessions on every device",
            "Force a password reset and review recent activity",
            "Escalate the case to the security team",
        ),
    ),
    (
        "KB-SEC-02",
        "Lost access to two-factor authentication",
        ("authenticator", "code", "codes", "2fa", "verification", "phone", "login"),
        (
            "Try the backup recovery codes saved at setup",
            "Complete the identity verification form",
            "Have the security team reset two-factor authentication",
        ),
    ),
    (
        "KB-ACC-03",
        "Deleting your account and data",
        ("delete", "deleted", "account", "data", "erase", "gdpr", "personal", "remove"),
        (
            "Verify the account holder's identity",
            "Export your data first if you want a copy",
            "Submit a deletion request to the privacy team",
        ),
    ),
    # --- technical -----------------------------------------------------------
    (
        "KB-TEC-01",
        "Fixing 403 Forbidden errors",
        ("403", "forbidden", "error", "dashboard", "access", "denied", "permission"),
        (
            "Check the user's role permissions with the workspace admin",
            "Clear the browser cache and cookies",
            "Sign out and back in",
        ),
    ),
    (
        "KB-TEC-02",
        "App crashes on launch",
        ("crash", "crashes", "crashing", "app", "closes", "launch", "freezes", "quits"),
        (
            "Update the app to the latest version",
            "Reinstall the app if it still crashes",
            "Send the crash report from the settings menu",
        ),
    ),
    (
        "KB-TEC-03",
        "Service outages",
        ("down", "outage", "offline", "works", "nobody", "service", "site", "platform"),
        (
            "Check the status page for an active incident",
            "Tell the customer our engineers are investigating",
            "Offer to subscribe them to status updates",
        ),
    ),
    (
        "KB-TEC-04",
        "Speeding up a slow app or site",
        ("slow", "slowly", "lags", "sluggish", "forever", "takes", "performance"),
        (
            "Disable browser extensions and reload the page",
            "Switch to a wired connection or a stronger network",
            "Turn off background sync while you work",
        ),
    ),
    (
        "KB-TEC-05",
        "Troubleshooting integrations and the API",
        ("integration", "api", "webhook", "sync", "syncing", "connector"),
        (
            "Regenerate the API key in the developer settings",
            "Reauthorize the integration with an admin account",
            "Check the webhook URL and retry the failed events",
        ),
    ),
    # --- general -------------------------------------------------------------
    (
        "KB-GEN-02",
        "Suggesting a new feature",
        ("feature", "suggestion", "idea", "ideas", "add", "adding", "wish", "plans"),
        (
            "Thank the customer for the idea",
            "Post it on the product feedback board",
            "Point the customer to the public roadmap on the website",
        ),
    ),
    (
        "KB-GEN-03",
        "Shipping options and delivery times",
        ("shipping", "delivery", "long", "options", "cost", "policy", "express", "usually"),
        (
            "Explain that standard shipping takes 3-5 business days",
            "Mention free shipping over the order threshold",
            "Offer the express shipping option, priced at checkout",
        ),
    ),
    # --- everyday questions (KB-BIL-06 answers no issue: a distractor) -------
    (
        "KB-GEN-01",
        "Updating your profile details",
        ("profile", "name", "update", "details", "change", "account", "address"),
        (
            "Open the profile page in account settings",
            "Edit your name or contact number and save",
            "Add extra addresses in the address book",
        ),
    ),
    (
        "KB-GEN-04",
        "Redeeming a gift card",
        ("gift", "card", "balance", "redeem", "code", "voucher", "checkout"),
        (
            "Enter the gift card code at checkout",
            "Check the remaining balance on the gift card page",
            "Contact us if the code shows as already used",
        ),
    ),
    (
        "KB-GEN-05",
        "Earning and using loyalty points",
        ("points", "loyalty", "rewards", "balance", "earn", "account", "order"),
        (
            "Open the rewards section of your account",
            "Check which orders have earned points",
            "Apply your points at checkout for a discount",
        ),
    ),
    (
        "KB-SEC-03",
        "Password best practices",
        ("password", "strong", "secure", "login", "account", "reset", "security"),
        (
            "Use a unique password of at least twelve characters",
            "Keep it in a password manager",
            "Turn on two-factor authentication for extra protection",
        ),
    ),
    (
        "KB-BIL-06",
        "Updating payment details",
        ("card", "payment", "details", "expired", "billing", "update", "new"),
        (
            "Open the wallet section of your account settings",
            "Add the new card and set it as the default",
            "Remove the expired card from the wallet",
        ),
    ),
    (
        "KB-DEL-06",
        "International shipping",
        ("international", "shipping", "customs", "country", "duties", "abroad", "delivery"),
        (
            "Check that the destination country is supported",
            "Expect customs duties to be paid on arrival",
            "Allow 7-14 days for international delivery",
        ),
    ),
    (
        "KB-REF-04",
        "Price adjustments after a sale",
        ("price", "sale", "cheaper", "dropped", "adjustment", "refund", "discount"),
        (
            "Check whether the price dropped within 14 days of purchase",
            "Compare the order price with the current sale price",
            "Apply a one-time price adjustment as store credit",
        ),
    ),
    (
        "KB-ACC-04",
        "Managing email notifications",
        ("email", "emails", "notifications", "unsubscribe", "newsletter", "spam", "settings"),
        (
            "Open notification preferences in account settings",
            "Untick the newsletters you no longer want",
            "Allow 48 hours for the change to take effect",
        ),
    ),
)

ISSUES: tuple[IssueEntry, ...] = (
    # ========================= billing =========================
    {
        "issue_id": "payment_failure",
        "category": "billing",
        "title": "Payment failure",
        "required_facts": ("card_last_four", "amount"),
        "extra_facts": ("account_email", "charge_date"),
        "article": "KB-PAY-01",
        "department": "billing",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "retry the payment",
            "update the payment method",
            "check the card expiry",
            "add a new card",
            "new payment method",
            "try the payment again",
            "try the charge again",
            "pay again",
        ),
        "templates": (
            "My card keeps getting declined when I try to pay for my subscription.",
            "The payment failed at checkout and I have no idea why.",
            "Why won't your site take my card? It just says the transaction could not be completed.",
            "Tried to buy the {product} three times now and every single payment got rejected.",
            "My bank says there's nothing wrong with my card, but your checkout keeps refusing it.",
            "Payment declined. Again. What is going on with your checkout?",
            "Every time I press the buy button, an error pops up saying my card couldn't be charged.",
            "Can't complete my purchase of the {product}: the order won't go through and it blames my bank card.",
        ),
    },
    {
        "issue_id": "double_charge",
        "category": "billing",
        "title": "Double charge",
        "required_facts": ("order_id", "amount", "charge_date"),
        "extra_facts": ("card_last_four",),
        "article": "KB-BIL-02",
        "department": "billing",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "refund the duplicate charge",
            "reverse the duplicate charge",
            "void the second charge",
            "duplicate has been refunded",
            "duplicate charge refunded",
            "the extra back to your card",
            "duplicate charge back to the card",
            "refund the duplicate",
            "sent it back to the card",
        ),
        "templates": (
            "You charged me twice for the same order!",
            "My bank statement shows a double charge for one purchase.",
            "There are two identical charges on my card for a single order of the {product}.",
            "Why did the money come out of my account two times? There was only one order.",
            "Looks like a duplicate payment went through when I checked out yesterday.",
            "Somehow I've paid for my order twice. Please fix this.",
            "Checking my banking app this morning, I noticed the same purchase listed two separate times.",
            "One order, two payments taken. That can't be right, can it?",
        ),
    },
    {
        "issue_id": "wrong_amount",
        "category": "billing",
        "title": "Charged the wrong amount",
        "required_facts": ("order_id", "amount"),
        "extra_facts": ("charge_date", "invoice_number"),
        "article": "KB-BIL-03",
        "department": "billing",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "credit the price difference",
            "correct the overcharge",
            "reapply the discount code",
            "refund the price difference",
            "difference back on the card",
            "corrected receipt",
            "receipt with the corrected",
        ),
        "templates": (
            "My card was charged more than the price shown at checkout.",
            "The total on my bill doesn't match what the {product} was listed for.",
            "Your site said one price and then took a higher amount from my account.",
            "My discount wasn't applied, so I ended up paying full price.",
            "Why is the amount on my receipt higher than what I agreed to pay?",
            "Got overcharged on my last order.",
            "The figure that left my account is not the figure I saw in the basket before paying.",
            "Something's off with what you billed me for the {product}; it's noticeably more than advertised.",
        ),
    },
    {
        "issue_id": "subscription_cancel",
        "category": "billing",
        "title": "Cancel a subscription",
        "required_facts": ("account_email",),
        "extra_facts": ("card_last_four", "charge_date"),
        "article": "KB-BIL-04",
        "department": "billing",
        "escalation": "never",
        "identity_required": True,
        "solution_phrases": (
            "cancel the subscription",
            "turn off auto-renewal",
            "no further renewals",
            "will not renew",
        ),
        "templates": (
            "How do I cancel my subscription?",
            "Please stop my monthly plan, I don't want it to renew again.",
            "My membership is about to renew and I want out before I'm billed.",
            "Can't find any button to end my plan in the app. Help?",
            "Want to cancel my membership before it renews.",
            "Please make sure I'm not charged for another month; I'd like to close my subscription.",
            "There's no way to opt out of the recurring payments in my settings, and I'd like them stopped.",
            "Could you end my plan? Money's tight and I barely use it anymore.",
        ),
    },
    {
        "issue_id": "invoice_request",
        "category": "billing",
        "title": "Invoice request",
        "required_facts": ("order_id", "account_email"),
        "extra_facts": ("amount", "charge_date"),
        "article": "KB-BIL-05",
        "department": "billing",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "billing history page",
            "download the invoice pdf",
            "send the invoice copy",
            "send the pdf",
        ),
        "templates": (
            "Can I get an invoice for my last order?",
            "Our accounting team needs a proper VAT invoice for the {product} I bought.",
            "Where can I download a receipt for my purchase?",
            "Please send me a copy of the invoice, I can't find it anywhere.",
            "My employer will only reimburse me if I send them a PDF invoice.",
            "Need an invoice with my company name on it for an order I placed.",
            "For my expense claim I need official paperwork showing what I paid for the {product}.",
            "Lost the billing document for my recent purchase. Could you get me another one?",
        ),
    },
    # ========================= delivery =========================
    {
        "issue_id": "delayed_delivery",
        "category": "delivery",
        "title": "Delayed delivery",
        "required_facts": ("order_id", "tracking_number"),
        "extra_facts": ("account_email",),
        "article": "KB-DEL-01",
        "department": "logistics",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": ("new delivery date", "shipping credit", "expedite the shipment", "credit for shipping"),
        "templates": (
            "My order still hasn't arrived and it was supposed to be here last week.",
            "Where is my package? The delivery is very late.",
            "The {product} was due on Monday and there's still no sign of the parcel.",
            "Shipping is delayed again. When will my order actually arrive?",
            "Been waiting almost two weeks for something that said three to five days.",
            "The estimated delivery date has come and gone and nothing has shown up.",
            "How much longer do I have to wait for my {product}? The parcel should have been here days ago.",
            "Your courier seems to be taking its sweet time; my purchase is well overdue.",
        ),
    },
    {
        "issue_id": "lost_package",
        "category": "delivery",
        "title": "Lost package",
        "required_facts": ("order_id", "tracking_number"),
        "extra_facts": ("amount",),
        "article": "KB-DEL-02",
        "department": "logistics",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "open a carrier trace",
            "ship a replacement",
            "send a replacement",
            "trace with the carrier",
            "carrier to investigate",
            "carrier to trace",
            "replacement or refund",
        ),
        "templates": (
            "The tracking says delivered but the package never came.",
            "My parcel is missing. I think the carrier lost it.",
            "Apparently my {product} was delivered yesterday, but there's nothing at my door.",
            "It's been two weeks and my package seems to have vanished somewhere.",
            "The tracking hasn't updated in ten days. Is my parcel lost?",
            "Nothing arrived, even though the courier marked it as handed over.",
            "Neither my neighbours nor the mailroom in my building have seen the box that was supposedly dropped off.",
            "Where did my shipment go? The status says complete, yet it never reached me.",
        ),
    },
    {
        "issue_id": "wrong_item",
        "category": "delivery",
        "title": "Wrong item received",
        "required_facts": ("order_id",),
        "extra_facts": ("tracking_number",),
        "article": "KB-DEL-03",
        "department": "logistics",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "send the correct item",
            "keep the incorrect item",
            "exchange for the right item",
            "correct item is on its way",
            "keep the one you got",
            "right item by priority shipping",
            "correct item by priority shipping",
            "checked the order against what was packed",
            "yours to keep",
            "keep the one",
        ),
        "templates": (
            "You sent me the wrong item.",
            "My order was supposed to be the {product}, but something completely different came in the box.",
            "The box I got has someone else's order in it.",
            "Wrong size, wrong colour: this is not what I ordered.",
            "Got the wrong thing in the post. Can you sort it out?",
            "Opened my parcel and found an item I never ordered.",
            "There's been a mix-up at your warehouse: what turned up on my doorstep isn't the {product} I paid for.",
            "The parcel I got isn't my purchase at all. Looks like a picking error at your end.",
        ),
    },
    {
        "issue_id": "damaged_item",
        "category": "delivery",
        "title": "Damaged item",
        "required_facts": ("order_id",),
        "extra_facts": ("tracking_number", "amount"),
        "article": "KB-DEL-04",
        "department": "logistics",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "photos of the damage",
            "file a damage claim",
            "replace the damaged item",
            "replacement at no cost",
        ),
        "templates": (
            "The {product} arrived damaged.",
            "The box was crushed and everything inside is broken.",
            "Just unpacked my order and part of it is cracked.",
            "The item came smashed to pieces. Very disappointed.",
            "My order showed up dented and now it doesn't work.",
            "What I received is damaged; the packaging was clearly dropped in transit.",
            "Opened the parcel to find the {product} in pieces, with shards all over the packing paper.",
            "Unfortunately my delivery turned up in a sorry state: scratched, bent and unusable.",
        ),
    },
    {
        "issue_id": "address_change",
        "category": "delivery",
        "title": "Change delivery address",
        "required_facts": ("order_id", "account_email", "new_address"),
        "extra_facts": ("tracking_number",),
        "article": "KB-DEL-05",
        "department": "logistics",
        "escalation": "never",
        "identity_required": True,
        "solution_phrases": (
            "update the shipping address",
            "redirect the parcel",
            "address correction request",
            "update it to the new address",
            "carrier redirect",
            "redirect request",
            "shipping address has been changed",
            "delivery address has been changed",
        ),
        "templates": (
            "Can I change the delivery address on my order?",
            "We moved last week. Can you send my order to my new place instead?",
            "Oops, I put the wrong street on my order. Can that still be fixed?",
            "Please ship my {product} to my office rather than my home.",
            "Is it too late to change where my order is going?",
            "Typo in my shipping address. Could you correct it on my order?",
            "Would it be possible to reroute the {product} to my parents' house? I won't be home that week.",
            "The destination on my purchase is outdated; I've relocated and the old flat is empty now.",
        ),
    },
    # ========================= refund =========================
    {
        "issue_id": "refund_request",
        "category": "refund",
        "title": "Refund request",
        "required_facts": ("order_id", "amount", "account_email"),
        "extra_facts": ("card_last_four",),
        "article": "KB-REF-01",
        "department": "billing",
        "escalation": "over_refund_cap",
        "identity_required": True,
        "solution_phrases": (
            "issue the refund",
            "process the refund",
            "refunded to your card",
            "refund the full amount",
            "refund to your original payment method",
            "money back to your card",
            "refund is approved",
            "back to your original payment method",
            "back to the card",
            "issued the full amount back",
            "issued the full back",
        ),
        "templates": (
            "Please refund my last order, it's not what I expected.",
            "Please give me my money back for this order.",
            "The {product} was a disappointment and I'd like a refund.",
            "How do I get my money back? I'm really unhappy with this purchase.",
            "Not happy with my order at all. I want a full refund.",
            "Can I get reimbursed for the order I placed? It didn't meet my needs.",
            "Your product let me down, and rather than a replacement I'd prefer to be paid back in full.",
            "Return my cash, please; buying this was a mistake from start to finish.",
        ),
    },
    {
        "issue_id": "refund_status",
        "category": "refund",
        "title": "Refund status",
        "required_facts": ("order_id",),
        "extra_facts": ("amount", "charge_date"),
        "article": "KB-REF-02",
        "department": "billing",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "bank processing time",
            "refund reference number",
            "refund was issued on",
            "bank 5-10 business days",
            "5-10 business days",
        ),
        "templates": (
            "Returned the item two weeks ago and still no refund.",
            "Where is my refund? You said it was approved.",
            "My refund still hasn't shown up in my bank account.",
            "How long does a refund take? Mine has been pending for ages.",
            "You confirmed the return for the {product}, but the money hasn't come back yet.",
            "Any update on my refund? It's been over a week.",
            "Customer service promised me reimbursement last month and my balance still shows nothing.",
            "When can I expect to actually see the credit you approved for my returned purchase?",
        ),
    },
    {
        "issue_id": "return_label",
        "category": "refund",
        "title": "Return label",
        "required_facts": ("order_id",),
        "extra_facts": ("account_email",),
        "article": "KB-REF-03",
        "department": "logistics",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": ("prepaid return label", "returns portal", "any drop-off point"),
        "templates": (
            "How do I get a return label?",
            "Want to send the {product} back. Where's the shipping label?",
            "My return was approved but nobody sent me a label to print.",
            "Can you email me a label so I can post this item back?",
            "Do I have to pay postage to return my order?",
            "Need a return label please, my printer is ready.",
            "What's the process for mailing something back to you? There's no postage paperwork in the parcel.",
            "Sending the {product} back to you, so how do I get the sticker for the box?",
        ),
    },
    # ========================= account =========================
    {
        "issue_id": "account_locked",
        "category": "account",
        "title": "Locked account",
        "required_facts": ("account_email",),
        "extra_facts": ("device_model",),
        "article": "KB-ACC-01",
        "department": "accounts",
        "escalation": "never",
        "identity_required": True,
        "solution_phrases": (
            "password reset link",
            "unlock your account",
            "reset link to your email",
            "link to reset your password",
        ),
        "templates": (
            "My account is locked and I can't log in.",
            "Got locked out after too many password attempts.",
            "It says my account is locked. I need to get back in.",
            "After typing my password wrong a few times, nothing works and I'm stuck on the login page.",
            "Why is my account blocked? I haven't done anything wrong.",
            "Can't sign in. The screen says my account is temporarily disabled.",
            "The website refuses to let me in and says there have been too many failed tries.",
            "Help, I'm shut out of my profile and can't get past the sign-in screen.",
        ),
    },
    {
        "issue_id": "email_change",
        "category": "account",
        "title": "Change account email",
        "required_facts": ("account_email",),
        "extra_facts": ("order_id",),
        "article": "KB-ACC-02",
        "department": "accounts",
        "escalation": "never",
        "identity_required": True,
        "solution_phrases": (
            "update the login email",
            "verify the new email",
            "email change confirmation",
            "login email can be changed",
        ),
        "templates": (
            "How do I change the email on my account?",
            "Need to update my login email; I don't use the old one anymore.",
            "My old email address was shut down by my employer. Can I switch to a new one?",
            "Please change my account email to my personal address.",
            "Is it possible to move my account over to a different email?",
            "Can't find where to edit the email address tied to my account.",
            "Switching providers, so the inbox you have on file for me will stop working soon.",
            "All your messages go to an address I no longer check; could we swap it for my current one?",
        ),
    },
    {
        "issue_id": "account_takeover",
        "category": "account",
        "title": "Suspected account takeover",
        "required_facts": ("account_email",),
        "extra_facts": ("card_last_four", "order_id"),
        "article": "KB-SEC-01",
        "department": "security",
        "escalation": "always",
        "identity_required": False,
        "solution_phrases": (
            "sign out all sessions",
            "revoke active sessions",
            "lock down your account",
            "sign out everywhere",
            "signed you out of every device",
        ),
        "templates": (
            "Someone hacked my account and changed my settings!",
            "There are logins I don't recognise. I think my account is compromised.",
            "Orders I never placed are showing up on my account. Somebody got in.",
            "Got an email saying my password was changed, but it wasn't me!",
            "Suspicious activity on my account, please help.",
            "My account was accessed from another country overnight.",
            "A stranger seems to be using my profile: my saved addresses were altered and I can't explain it.",
            "Help! Somebody else has control of my login and is buying things with my stored card.",
        ),
    },
    {
        "issue_id": "two_factor_lost",
        "category": "account",
        "title": "Lost two-factor device",
        "required_facts": ("account_email",),
        "extra_facts": ("device_model",),
        "article": "KB-SEC-02",
        "department": "security",
        "escalation": "always",
        "identity_required": True,
        "solution_phrases": (
            "identity verification form",
            "reset two-factor authentication",
            "backup recovery codes",
            "recovery codes",
        ),
        "templates": (
            "Lost my phone and now I can't get the two-factor code to log in.",
            "My authenticator app was wiped and now I can't sign in.",
            "The verification code goes to an old number I don't have anymore.",
            "Got a new phone and my 2FA codes didn't transfer. How do I get back in?",
            "Can't get past the security code step because my authenticator is gone.",
            "My phone was stolen and it had my login codes on it.",
            "After a factory reset of my mobile, I can't produce the one-time code the sign-in screen demands.",
            "The second step of your sign-in wants a number from a device I no longer own.",
        ),
    },
    {
        "issue_id": "data_deletion",
        "category": "account",
        "title": "Account and data deletion",
        "required_facts": ("account_email",),
        "extra_facts": ("order_id",),
        "article": "KB-ACC-03",
        "department": "accounts",
        "escalation": "always",
        "identity_required": True,
        "solution_phrases": ("submit a deletion request", "export your data first", "erase your personal data"),
        "templates": (
            "Please delete my account and all my data.",
            "Under GDPR, I'm asking you to erase all my personal information.",
            "How do I permanently remove my account?",
            "Close my account and wipe everything you have on me.",
            "What data do you hold on me? I'd like all of it deleted.",
            "Want my profile gone for good, including my order history.",
            "Kindly make sure none of my details stay on your servers; I'm exercising my right to be forgotten.",
            "Stop storing my information and get rid of my customer record entirely.",
        ),
    },
    # ========================= technical =========================
    {
        "issue_id": "error_403",
        "category": "technical",
        "title": "403 Forbidden error",
        # The customer already says "403"; the article's checks need the account, not a code.
        "required_facts": ("account_email",),
        "extra_facts": ("error_code", "app_version"),
        "article": "KB-TEC-01",
        "department": "technical",
        "escalation": "enterprise",
        "identity_required": False,
        "solution_phrases": ("role permissions", "clear the browser cache", "sign out and back in"),
        "templates": (
            "Getting a 403 Forbidden error when I open the dashboard.",
            "Access denied on the dashboard; it says 403.",
            "Since this morning the dashboard only shows an error page saying forbidden.",
            "My reports page says I don't have permission, even though I'm an admin.",
            "Every time I click on settings I get kicked to an access denied screen.",
            "The admin panel blocks me with a forbidden message.",
            "Our workspace suddenly refuses to show me the analytics section, claiming I'm not allowed to view it.",
            "Why am I getting a not-authorised page when I try to open the team area that I used yesterday?",
        ),
    },
    {
        "issue_id": "app_crash",
        "category": "technical",
        "title": "App crash",
        "required_facts": ("device_model", "app_version"),
        "extra_facts": ("error_code",),
        "article": "KB-TEC-02",
        "department": "technical",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": ("update the app", "reinstall the app", "send the crash report", "clean reinstall"),
        "templates": (
            "The app crashes every time I open it.",
            "Your mobile app closes right after launch.",
            "The app freezes and then crashes. I can't use it at all.",
            "Ever since the latest update, the app just shuts down on the splash screen.",
            "Every time I tap checkout the app quits on me.",
            "App keeps crashing. So annoying.",
            "Whenever I start your application on my mobile, it flashes briefly and drops back to the home screen.",
            "The program on my tablet goes black and exits on its own within seconds of starting.",
        ),
    },
    {
        "issue_id": "service_outage",
        "category": "technical",
        "title": "Service outage",
        "required_facts": ("account_email",),
        "extra_facts": ("error_code", "device_model"),
        "article": "KB-TEC-03",
        "department": "technical",
        "escalation": "enterprise",
        "identity_required": False,
        "solution_phrases": ("check the status page", "engineers are investigating", "subscribe to status updates"),
        "templates": (
            "Is your service down? Nothing is loading.",
            "The whole site is offline for me and my team.",
            "Nothing works right now. Is there an outage?",
            "None of us can reach the platform this morning, it's completely down.",
            "Your service has been down for an hour and we're losing money.",
            "Is it just me or is everything broken right now? The site won't load at all.",
            "Our entire office is getting timeouts on every page of your platform since about lunchtime.",
            "Has something gone wrong on your end? Nobody in my company can get in and it's affecting our customers.",
        ),
    },
    {
        "issue_id": "slow_performance",
        "category": "technical",
        "title": "Slow performance",
        "required_facts": ("device_model",),
        "extra_facts": ("app_version", "account_email"),
        "article": "KB-TEC-04",
        "department": "technical",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "disable browser extensions",
            "switch to a wired connection",
            "turn off background sync",
            "turn off extensions",
        ),
        "templates": (
            "The app has been really slow lately.",
            "Pages take forever to load.",
            "Everything lags when I scroll through my dashboard.",
            "Why is the website so sluggish? It used to be fast.",
            "It takes almost a minute to open my orders page.",
            "The app works, just painfully slowly.",
            "Each click seems to hang for ages before anything happens on screen.",
            "Performance has got terrible: searching my history now crawls along like it's on dial-up.",
        ),
    },
    {
        "issue_id": "integration_failure",
        "category": "technical",
        "title": "Integration failure",
        "required_facts": ("error_code", "account_email"),
        "extra_facts": ("app_version",),
        "article": "KB-TEC-05",
        "department": "technical",
        "escalation": "enterprise",
        "identity_required": False,
        "solution_phrases": ("regenerate the api key", "reauthorize the integration", "check the webhook url"),
        "templates": (
            "Our integration stopped syncing data yesterday.",
            "The API keeps returning an error since we updated.",
            "Our webhook isn't receiving any events anymore.",
            "The connection between your platform and our CRM broke.",
            "Calls to your API are failing with an authentication error.",
            "Data from our store isn't flowing into your system any more.",
            "Our developers say requests to your endpoints are being rejected, so our nightly import has stopped.",
            "The connector we set up with our accounting software has gone quiet and nothing has transferred in days.",
        ),
    },
    # ========================= general =========================
    {
        "issue_id": "feature_request",
        "category": "general",
        "title": "Feature request",
        "required_facts": (),
        "extra_facts": ("account_email",),
        "article": "KB-GEN-02",
        "department": "technical",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "product feedback board",
            "public roadmap",
            "add your vote",
            "the roadmap",
            "passed it to the product team",
        ),
        "templates": (
            "It would be great if you added a dark mode.",
            "Could you add an option to export my order history to a spreadsheet?",
            "Please consider adding a wishlist feature.",
            "Any plans to support more languages? That would really help me.",
            "Suggestion: let us schedule orders in advance.",
            "Idea for you: a way to share shopping lists with family.",
            "Your product is nice, but it's missing something I really want: the ability to group items into folders.",
            "Do you take ideas from customers? Being able to split payments with friends would be brilliant.",
        ),
    },
    {
        "issue_id": "shipping_policy_question",
        "category": "general",
        "title": "Shipping policy question",
        "required_facts": (),
        "extra_facts": (),
        "article": "KB-GEN-03",
        "department": "logistics",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "standard shipping takes",
            "free shipping over",
            "express shipping option",
            "shipping is free",
            "standard shipping is",
        ),
        "templates": (
            "How long does shipping usually take?",
            "What are your shipping options and costs?",
            "Do you offer express delivery?",
            "How much is delivery if I order the {product}?",
            "Is there free delivery on larger orders?",
            "What's your shipping policy for orders placed at the weekend?",
            "Before I buy, roughly how many days should I expect between paying and the parcel reaching me?",
            "Could you explain the different postage speeds you have and what each one costs?",
        ),
    },
    # ===== everyday questions and requests (the articles once only distractors) =====
    {
        "issue_id": "price_adjustment",
        "category": "refund",
        "title": "Price adjustment after a sale",
        "required_facts": (),
        "extra_facts": ("order_id", "amount"),
        "article": "KB-REF-04",
        "department": "billing",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": ("one-time price adjustment", "as store credit", "within 14 days of purchase"),
        "templates": (
            "I bought the {product} last week and now it's cheaper. Can I get the difference?",
            "The price dropped a few days after I ordered. Is there anything you can do?",
            "Your sale started just after I paid for the {product}.",
            "Can you match the new sale price on something I ordered recently?",
            "The {product} I bought is now on sale for less. Do you offer price adjustments?",
            "I noticed the price went down on my recent order; could you adjust it?",
            "Three days after my order arrived, the same item was marked down in your sale. Can I have the difference?",
            "I'd hoped to pay the sale price: the {product} was reduced just after I bought it.",
        ),
    },
    {
        "issue_id": "international_shipping",
        "category": "delivery",
        "title": "International shipping question",
        "required_facts": (),
        "extra_facts": (),
        "article": "KB-DEL-06",
        "department": "logistics",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": ("customs duties", "7-14 days for international", "destination country"),
        "templates": (
            "Do you ship to other countries?",
            "Can I order from abroad?",
            "Will I have to pay customs fees if I order the {product} from overseas?",
            "How long does international delivery take?",
            "I live abroad; can you still send orders to my country?",
            "Are there extra duties on parcels sent to another country?",
            "My sister lives overseas; could I have a present sent straight to her country?",
            "Which countries outside this one do you deliver to, and what does customs add?",
        ),
    },
    {
        "issue_id": "password_advice",
        "category": "account",
        "title": "Password advice",
        "required_facts": (),
        "extra_facts": ("account_email",),
        "article": "KB-SEC-03",
        "department": "accounts",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": (
            "unique password",
            "keep it in a password manager",
            "use a password manager",
            "at least twelve characters",
        ),
        "templates": (
            "What makes a strong password for my account?",
            "Is it safe to use the same password I use on other sites?",
            "How long should my password be?",
            "Do you recommend using a password manager?",
            "I want to make my login more secure. Any tips?",
            "What's the best way to protect my account with a better password?",
            "Before I set up my account properly, what's your advice on choosing a good password?",
            "Is a short password with a few numbers good enough, or should I use something longer?",
        ),
    },
    {
        "issue_id": "notification_settings",
        "category": "account",
        "title": "Email notification settings",
        "required_facts": (),
        "extra_facts": ("account_email",),
        "article": "KB-ACC-04",
        "department": "accounts",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": ("notification preferences", "untick the newsletters", "email preferences"),
        "templates": (
            "You're sending me far too many marketing emails. How do I stop them?",
            "How do I turn off your newsletter?",
            "I only want order updates, not the promotional emails.",
            "Can I change which notifications I get from you?",
            "Please stop the daily offer emails landing in my inbox.",
            "Where do I manage my email notifications?",
            "My inbox is flooded with your promotional emails; I'd only like the essential ones.",
            "Which settings let me get fewer emails from you, just the important ones?",
        ),
    },
    {
        "issue_id": "profile_update",
        "category": "general",
        "title": "Updating profile details",
        "required_facts": (),
        "extra_facts": ("account_email",),
        "article": "KB-GEN-01",
        "department": "accounts",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": ("open the profile page", "edit your name", "from your profile page"),
        "templates": (
            "How do I change the name on my profile?",
            "I'd like to update the phone number on my account.",
            "My surname has changed since I got married; can I edit it on my profile?",
            "Where can I update my contact number?",
            "The name on my profile is misspelled and I can't see how to correct it.",
            "Can I change the display name people see on my reviews?",
            "I've got a new mobile number and want my details to show it.",
            "Is there a way to edit my own details, like my name and phone?",
        ),
    },
    {
        "issue_id": "gift_card",
        "category": "general",
        "title": "Gift card question",
        "required_facts": (),
        "extra_facts": (),
        "article": "KB-GEN-04",
        "department": "billing",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": ("enter the gift card code", "gift card page", "gift card code at checkout"),
        "templates": (
            "How do I use a gift card on your site?",
            "Where do I enter my gift card code?",
            "I got a gift card for my birthday; how do I check how much is left on it?",
            "Can I use a gift card to pay for the {product}?",
            "My friend gave me one of your gift vouchers. How does it work?",
            "Is there a way to see the balance on my gift card?",
            "I've a voucher code from a present and I'm not sure where it goes at checkout.",
            "Can a gift card be used together with another way of paying?",
        ),
    },
    {
        "issue_id": "loyalty_points",
        "category": "general",
        "title": "Loyalty points question",
        "required_facts": (),
        "extra_facts": ("account_email",),
        "article": "KB-GEN-05",
        "department": "billing",
        "escalation": "never",
        "identity_required": False,
        "solution_phrases": ("apply your points at checkout", "rewards section", "redeem your points"),
        "templates": (
            "How do I use my loyalty points?",
            "Where can I see how many reward points I have?",
            "Do I earn points on every order?",
            "Can I spend my points on the {product}?",
            "I've been collecting points for months; how do I turn them into a discount?",
            "Why didn't my last order earn any points?",
            "How does your rewards scheme work for people who shop with you often?",
            "I'd like to put my loyalty balance towards my next purchase. How is that done?",
        ),
    },
)

# What a customer brings, by issue (ISSUE_WORDS' third element): something gone wrong, something
# it wants done, a question, or an idea. Each persona line below names the kinds it fits, so
# that "Please fix." never closes a question nor "I've had enough:" opens one.
FAULT, REQUEST, QUESTION, IDEA = "fault", "request", "question", "idea"
ANY_KIND = (FAULT, REQUEST, QUESTION, IDEA)

# Persona lines: (text, the kinds of issue it fits, what it says besides: "thanks",
# "searched" (the customer looked through the help pages), "first_contact" (it never wrote in
# before), "pressing" (it presses for a fix or worries about it: never after it said how pressing
# the problem is), or "").
# A message never says the same thing twice nor contradicts itself, so its
# opener and closer (and a mention of an article or of a past ticket) differ in that.
# A line that says the problem has been going on a while (note "a_while"): never for a sudden one
# (world._compose_message).
A_WHILE = "a_while"
# Lines that speak of a long message ("I'll try to explain everything", "I just wanted to make
# sure you had all the information"): never around a one-line question (audit round 37).
LONG = "long"
# Openers that end so lead into the issue itself: no small talk may follow them.
LEADS_INTO_THE_ISSUE = (": ", "but ")
PERSONA_OPENERS = {
    "terse": (("", ANY_KIND, ""), ("", ANY_KIND, ""), ("", ANY_KIND, ""), ("Hi, ", ANY_KIND, "")),
    "verbose": (
        ("Hello there, I hope this message finds you well. ", ANY_KIND, ""),
        (
            "Hello there, I hope this message finds you well. This is the first time I've had to write in, "
            "so here is the situation: ",
            (FAULT, REQUEST),
            "first_contact",
        ),
        ("Good morning, I'll try to explain everything as clearly as I can: ", (FAULT, REQUEST), LONG),
        ("Hi, I want to give you the whole picture, so here goes: ", (FAULT,), LONG),
        ("Hello, I hope your day is going better than mine. Let me start from the beginning: ", (FAULT,), LONG),
        (
            "Hello there, I hope this message finds you well. I have a quick query that I couldn't find "
            "the answer to on your website: ",
            (QUESTION,),
            "searched",
        ),
        (
            "Good morning, I hope you're having a good week. I've been meaning to write in about this for a while: ",
            ANY_KIND,
            A_WHILE,
        ),
    ),
    "angry": (
        ("This is ridiculous: ", (FAULT,), ""),
        ("Unbelievable, ", (FAULT,), ""),
        ("I am absolutely fed up with this company: ", (FAULT,), ""),
        ("Seriously, ", (FAULT,), ""),
        ("Right, I've had enough: ", (FAULT,), ""),
        ("I'll keep this short: ", ANY_KIND, ""),
        ("Straight answer, please: ", (QUESTION,), ""),
    ),
    "polite": (
        ("Hi there, ", ANY_KIND, ""),
        ("Hello, and thank you in advance for your help: ", ANY_KIND, "thanks"),
        ("Dear support team, ", ANY_KIND, ""),
        ("Good afternoon, I wonder if you could help me with something: ", (FAULT, REQUEST, QUESTION), ""),
        ("Hello, I hope you're well; ", ANY_KIND, ""),
    ),
    # Confused about what to do or whom to ask, never about a plain fact it states next.
    "confused": (
        ("Um, I'm not sure if this is the right place, but ", ANY_KIND, ""),
        ("Sorry, I've never written to you before, so I hope I'm doing this right: ", ANY_KIND, "first_contact"),
        ("Hi, sorry, I'm a bit lost and not sure who to ask, but ", ANY_KIND, ""),
        ("Hello? Sorry, I hope this reaches the right person: ", ANY_KIND, ""),
        ("So, I'm not sure how to put this, but ", (FAULT, REQUEST, IDEA), ""),
        ("Hello, sorry to bother you. ", ANY_KIND, ""),
    ),
}

PERSONA_CLOSERS = {
    "terse": (
        ("", ANY_KIND, ""),
        (" Thanks.", ANY_KIND, "thanks"),
        (" Please fix.", (FAULT,), "pressing"),
        (" Need this sorted.", (FAULT, REQUEST), "pressing"),
    ),
    "verbose": (
        (
            " I've looked through your help pages already, so I'd really appreciate your help.",
            (FAULT, REQUEST, QUESTION),
            "searched",
        ),
        (" I just wanted to make sure you had all the information.", (FAULT, REQUEST), LONG),
        (
            " I know you must be busy, so I do appreciate you taking the time.",
            (FAULT, REQUEST),
            "",
        ),
        (" Let me know if you need anything else from me; I'm happy to answer any questions.", ANY_KIND, ""),
        (" I'd be grateful for any thoughts, and thank you for your time.", ANY_KIND, "thanks"),
    ),
    "angry": (
        (" Fix it.", (FAULT,), "pressing"),
        (" Sort this out or I'm leaving.", (FAULT, REQUEST), "pressing"),
        (" This is the worst experience I've ever had with a company.", (FAULT,), ""),
        ("", ANY_KIND, ""),
        (" And spare me the scripted answer.", (FAULT, REQUEST, QUESTION), ""),  # no idea is met with a script
        (" I want this dealt with properly this time.", (FAULT, REQUEST), ""),
        (" I shouldn't have to write in for something this basic.", (REQUEST, QUESTION), ""),
    ),
    "polite": (
        (" Thank you so much for your help.", ANY_KIND, "thanks"),
        (" Many thanks in advance.", ANY_KIND, "thanks"),
        (" I really appreciate your time.", ANY_KIND, "thanks"),
        (" Thanks, and have a lovely day.", ANY_KIND, "thanks"),
        (" I look forward to hearing from you.", ANY_KIND, ""),
    ),
    "confused": (
        (" Apologies if this should have gone to another department.", ANY_KIND, ""),
        (" I hope that makes sense.", ANY_KIND, ""),
        (" Can you help me with this?", (FAULT, REQUEST), ""),
        (" Sorry, I'm not sure what I'm supposed to do now.", (FAULT, REQUEST), "pressing"),
    ),
}

# How much the problem holds the customer up, when its words say so (a ticket of "normal" impact
# says nothing): it sets the priority (catalog.ticket_priority). Each line names one of its
# impact's cues and no other line of an opening names any cue (catalog checks it), so the words
# and the priority agree.
ALL_CATEGORIES = ("billing", "delivery", "refund", "account", "technical", "general")
IMPACT_CUES = {
    "blocking": ("sorted today", "i have a deadline", "holding up my work", "stopping me from working"),
    "soon": ("in the next day or two", "within a day or two", "by the end of the week"),
    "can_wait": ("no rush", "not urgent", "can wait", "no hurry", "take your time"),
}
# (text, the kinds of first issue it fits, the categories of first issue it fits).
# (line, the kinds of issue it fits, the categories it fits)
ImpactLine = tuple[str, tuple[str, ...], tuple[str, ...]]
IMPACT_LINES: dict[str, tuple[ImpactLine, ...]] = {
    "blocking": (
        ("I need this sorted today, please.", (FAULT, REQUEST, QUESTION), ALL_CATEGORIES),
        ("It has to be sorted today, I have a deadline.", (FAULT,), ("billing", "refund", "delivery")),
        ("This is holding up my work, so I need it sorted today.", (FAULT,), ("account", "technical")),
        ("I need an answer today, I have a deadline.", (QUESTION,), ("general",)),
        ("Without it I'm doing everything by hand, and it's holding up my work.", (IDEA,), ("general",)),
    ),
    "soon": (
        ("I'd like this sorted in the next day or two, please.", (FAULT, REQUEST), ALL_CATEGORIES),
        ("It needs to be sorted by the end of the week.", (FAULT, REQUEST), ALL_CATEGORIES),
        ("I can get by for now, but I need it fixed within a day or two.", (FAULT,), ("account", "technical")),
        ("I'd like an answer in the next day or two, please.", (QUESTION,), ALL_CATEGORIES),
        ("It would save me hours, so I'd love to hear back by the end of the week.", (IDEA,), ("general",)),
    ),
    "can_wait": (
        ("No rush on this.", ANY_KIND, ALL_CATEGORIES),
        ("It's not urgent, whenever you get a chance.", ANY_KIND, ALL_CATEGORIES),
        ("It can wait, there's no hurry.", ANY_KIND, ALL_CATEGORIES),
        ("Take your time, nothing depends on it.", (REQUEST, QUESTION, IDEA), ALL_CATEGORIES),
        ("I can manage without it for now, so no rush.", (FAULT,), ("account", "technical")),
    ),
}
# A message of several issues says it of them all ("...it would be great if you added a dark mode.
# It can wait." reads as of the dark mode only), or names the one that is pressing.
# What must be sorted soon is named ("{issue}": the first fault or request; "I need all of this
# sorted today" would take in a feature idea too).
IMPACT_LINES_FOR_SEVERAL: dict[str, tuple[str, ...]] = {
    "blocking": ("{issue} has to be sorted today, please.", "{issue} can't wait, I need it sorted today."),
    "soon": ("{issue} needs sorting in the next day or two.", "{issue} should be sorted by the end of the week."),
    "can_wait": ("No rush on any of this.", "All of this can wait, there's no hurry."),
}
# An issue whose words say that nothing works says it can wait a day or two only so: (alone, with
# other issues); "The outage needs sorting in the next day or two" is too calm for a site that is down.
OWN_SOON = {
    "service_outage": (
        "We can work around it for now, but we need it back within a day or two.",
        "We can work around the outage for now, but we need it back within a day or two.",
    ),
    # ("by the end of the week" is too calm for a hijacked account)
    "account_takeover": (
        "Nothing worse has happened yet, but I need it secured within a day or two.",
        "Nothing worse has happened yet, but I need my account secured within a day or two.",
    ),
}
# An angry customer who is not held up still says so angrily.
ANGRY_CAN_WAIT: tuple[ImpactLine, ...] = (
    ("It can wait, but I expect a real answer.", ANY_KIND, ALL_CATEGORIES),
    ("It's not urgent, but I expect better than this.", (FAULT,), ALL_CATEGORIES),
)
ANGRY_CAN_WAIT_FOR_SEVERAL: tuple[str, ...] = ("No rush on any of this, but I expect a real answer.",)
# Issues a customer always says are pressing (a hijacked account; an outage, whose words say a
# business is held up): never that they can wait, nor nothing of it.
ALWAYS_PRESSING = ("account_takeover", "service_outage")
# Issues that strike all at once (a hijacked account, a lost phone's codes, an outage, a lock-out):
# a customer with one makes no small talk, nor says it has meant to write for a while.
URGENT_ISSUES = frozenset(("account_takeover", "two_factor_lost", "service_outage", "account_locked"))

# Off-topic sentences a customer might tack on; they name none of the article keywords.
DISTRACTORS = (
    "First of all, I love the redesigned logo.",
    "I'm typing this on the train, so excuse any typos.",
    "My cat just walked across the keyboard, sorry if anything looks odd.",
    "It's been quite a week, honestly.",
    "The weather here has been awful all month.",
    "My sister recommended you to me, for what it's worth.",
    "Sorry for any typos, I'm on my phone.",
    "I'm on my lunch break, so I might take a while to reply.",
    "I really enjoyed your blog post about spring cleaning.",
    "I've been a fan of your brand for a while.",
    "English is not my first language, so please bear with me.",
    "My kids are shouting in the background, so forgive me if this rambles.",
    "I'll be travelling for a few days next month, just so you know.",
    "Your chat window keeps covering half my screen, which is a bit annoying.",
    "Funnily enough, my neighbour shops with you too.",
    "I'm not great with technology, as my grandson likes to remind me.",
    "The coffee shop I'm sitting in is playing terrible music.",
    "Happy holidays, if you celebrate.",
    "Your help pages have a lovely design.",
    "I tried calling earlier but gave up after ten minutes of hold music.",
    "A friend says your team is quick to respond, so fingers crossed.",
    "Apologies, my internet is a bit patchy at the moment.",
    "I run a small business myself, so I know how busy things can get.",
    "I'm writing from my partner's laptop, in case the name looks different.",
    "Just so you know, I'm free most evenings after six.",
    "Loving the fresh colours on your website.",
)

PRODUCTS = (
    "pair of wireless earbuds",
    "standing desk",
    "coffee grinder",
    "yoga mat",
    "desk lamp",
    "air fryer",
    "hiking backpack",
    "bluetooth speaker",
    "office chair",
    "electric kettle",
    "robot vacuum",
    "smartwatch",
    "pair of running shoes",
    "blender",
    "winter jacket",
    "mechanical keyboard",
    "baby monitor",
    "water bottle",
)

# Two issues that each need an order id are about one order on one ticket (the customer gives
# one), so only these pairs, which one order can have at once, share a ticket.
# An issue that ends the customer's account goes with nothing that looks ahead on it: no idea, no
# question, no change to its details ("delete my account... could you add an export option?").
ENDS_THE_ACCOUNT = ("data_deletion",)
CHANGES_TO_THE_ACCOUNT = ("profile_update", "notification_settings", "email_change", "address_change")
# A customer locked out of its account does not also report what it sees signed in ("My account is
# locked... getting a 403 when I open the dashboard").
LOCKED_OUT = ("account_locked", "two_factor_lost")
SEEN_SIGNED_IN = ("error_403", "slow_performance", "profile_update", "notification_settings", "loyalty_points")
ONE_ORDER_PAIRS = frozenset(
    frozenset(pair)
    for pair in (
        ("damaged_item", "refund_request"),
        ("damaged_item", "return_label"),
        ("wrong_item", "refund_request"),
        ("wrong_item", "return_label"),
        ("lost_package", "refund_request"),
    )
)

MULTI_ISSUE_JOINERS = (
    " Also, ",
    " On top of that, ",
    " And another thing: ",
    " While I'm here, ",
    " Separately, ",
    " Oh, and one other thing: ",
)

# To "which new email address would you like to use?" on a ticket that asks to change it: the
# customer names the address it wants (words only, no fact: the article needs the one on record).
NEW_EMAIL_REPLIES = ("The new one should be {}.", "Please switch it to {}.", "I'd like to use {} from now on.")
NEW_EMAIL_DOMAINS = ("newmail.test", "inbox.test", "post.test")
NEW_EMAIL_ISSUES = ("email_change",)

FACT_REPLIES = {
    "order_id": (
        "my order number is {}",
        "it's order {}",
        "the order id is {}",
        "the confirmation email says order {}",
    ),
    "amount": (
        "the amount was ${}",
        "it came to ${}",
        "the total was ${}",
        "it was ${} altogether",
    ),
    "card_last_four": (
        "the card ends in {}",
        "the last four digits are {}",
        "it's the card ending {}",
    ),
    "account_email": (
        "my account email is {}",
        "the email on the account is {}",
        "it's registered to {}",
        "you'll find me under {}",
    ),
    "error_code": (
        "the error code is {}",
        "it shows error {}",
        "the message says {}",
    ),
    "tracking_number": (
        "the tracking number is {}",
        "the tracking code is {}",
        "the shipping email gives tracking number {}",
    ),
    "device_model": (
        "it happens on my {}",
        "the device is my {}",
        "it's on my {}",
    ),
    "charge_date": (
        "the charge was on {}",
        "it was taken on {}",
        "the charge is dated {}",
        "my statement shows it on {}",
    ),
    "app_version": (
        "the app version is {}",
        "it says version {}",
        "the app store says I have version {}",
    ),
    "invoice_number": (
        "the invoice number is {}",
        "it's invoice {}",
        "the invoice reference is {}",
    ),
    "new_address": (
        "the new address is {}",
        "please send it to {} instead",
        "it should go to {}",
    ),
}

# Where a fact's usual words would be wrong for the issue it belongs to: a double charge has
# two charges, a declined payment none.
ISSUE_FACT_REPLIES: dict[str, dict[str, tuple[str, ...]]] = {
    "double_charge": {
        "amount": (
            "each of the two charges was ${}",
            "both charges were for ${}",
            "the same ${} was taken twice",
        ),
        "charge_date": (
            "both charges are dated {}",
            "both were taken on {}",
            "my statement shows both on {}",
        ),
    },
    # (what was taken, not what it expected to pay: "the total was $136.30" read as the price agreed; round 80)
    "wrong_amount": {
        "amount": (
            "I was charged ${}",
            "the charge on my card was ${}",
            "${} was taken from my card",
        ),
    },
    "payment_failure": {
        "amount": (
            "the checkout asked for ${}",
            "the payment was for ${}",
            "the total at checkout was ${}",
        ),
        "charge_date": (
            "my last attempt was on {}",
            "the payment failed on {}",
            "it was declined on {}",
        ),
    },
}

# The plans a subscription may be on: (name, price in cents). A customer who cancels one speaks of
# a monthly plan (MONTHLY_PLANS) about to renew.
PLANS = (("Basic monthly", 999), ("Plus monthly", 1999), ("Pro annual", 14900))
MONTHLY_PLANS = tuple(name for name, _ in PLANS if "monthly" in name)

# What a customer who will give the id of an earlier order of the same product says of the order it
# means (world.P_MIXUP): what it holds and that it is recent.
RECENT_ORDER_LINES = (
    "It's about the {product} I ordered recently.",
    "This is about my recent order, the {product}.",
    "It's the {product} I bought most recently.",
)
# What it says when asked for the order id again (the first id it gave was the earlier order's).
ORDER_CORRECTIONS = (
    "Oh, sorry, {given} must be an older order of mine, I've bought one before. The recent one is {meant}.",
    "Ah, my mistake: {given} is from an earlier order. The one I mean is {meant}.",
    "Sorry, I gave you the wrong number. {given} was an old order; the recent one is {meant}.",
)
# ... and where the first id it gave was its own order's, mistyped (world.P_MISTYPED).
TYPO_CORRECTIONS = (
    "Oh, sorry, I must have mistyped it. It's {meant}.",
    "Let me check... sorry, typo on my part: it's {meant}, not {given}.",
    "My mistake, I typed it wrong. The order is {meant}.",
)

# Where a judgement family's customer gives a fact in words of its own: the price of the one item
# it sends back is the price it remembers from the site, not what it paid after the order's discount.
FAMILY_FACT_REPLIES: dict[str, dict[str, tuple[str, ...]]] = {
    "item_of_several": {
        "amount": (
            "it was ${} on the site",
            "it was listed at ${}",
            "the price on the page was ${}",
        ),
    },
}

# What a judgement family's customer adds to its words about the issue ({product}: the product its
# records hold, or the plan): one item of several is what it sends back, one plan of two what it ends.
FAMILY_LINES: dict[str, tuple[str, ...]] = {
    "item_of_several": (
        "It's only the {product} I'm sending back; I'm keeping everything else from that order.",
        "Just the {product}, to be clear: the other things in that order are fine.",
        "I'm returning the {product} only; the rest of the order can stay.",
    ),
    "several_duplicates": (
        "And it isn't only that order: I think some of my other orders this month were charged twice as well. "
        "Please check them all and refund whatever was taken twice.",
        "I've a feeling it happened on a few of my other recent orders too, so could you go through all of them "
        "and refund anything taken twice?",
    ),
    # ({product}: the plan it names, one of two on the account)
    "two_subscriptions": (
        "It's the {product} plan I want to end; I'm keeping the other one.",
        "To be clear, it's only the {product} plan. Please leave my other subscription alone.",
        "Just the {product} plan, please: the other one I still use.",
    ),
}

# A fact the customer has not got, with why not ("I'm not sure what the new address is" from a
# customer who never moved reads as forgetfulness: audit round 47).
UNKNOWN_REPLIES = {
    "order_id": ("I don't have an order number for this, sorry.", "I can't find an order number for this."),
    "amount": ("I'm not sure of the exact amount, sorry.", "I don't have the amount to hand."),
    "card_last_four": ("I don't have the card to hand, sorry.", "I'm not sure which card it was, to be honest."),
    "account_email": (
        "You should have my email already: it's the address I'm writing from.",
        "It's the email address I'm writing from.",
    ),
    "error_code": ("I didn't see any error code.", "There wasn't an error code that I noticed."),
    "tracking_number": ("I don't have a tracking number for this.", "Nobody sent me a tracking number for this."),
    "device_model": ("I'm not sure of the exact model, sorry.", "I don't know the model, to be honest."),
    "charge_date": ("I can't remember the exact date, sorry.", "I'm not sure of the date, to be honest."),
    "app_version": ("I don't know which version I have.", "I'm not sure of the app version, sorry."),
    "invoice_number": ("I don't have an invoice number to hand.", "I can't find an invoice number, sorry."),
    "new_address": ("I haven't moved, so there's no new address.", "There's no new address; I'm not moving."),
}

# An impostor asked to check the order id or card it gave, which the account does not hold: the same again.
RECHECKED_REPLIES = (
    "I've checked, and it's {}.",
    "That's definitely right: {}.",
    "I just looked again. It's {}.",
    "Yes, it's {}, I'm sure.",
)
REPEAT_REPLIES = (
    "I already told you that!",
    "I gave you that already.",
    "Why are you asking again? It's right there in my earlier message.",
    "Please scroll up, I've already answered that.",
    "We've been over this already.",
)

# To "has anything changed on your side recently?": the customer knows of nothing but what it wrote.
# To a question in an ask that names no fact: how pressing the problem is, by the ticket's impact
# (what the opening said of it, or that it is neither), or that it knows no more than it wrote.
IMPACT_REPLIES = {
    "blocking": ("Yes, it's holding everything up, I really need it sorted today.",),
    "can_wait": ("No, it can wait, there's no rush.",),
    "soon": ("It isn't stopping me yet, but I need it sorted in the next day or two.",),
    "normal": ("It's not stopping me from doing anything, but I'd like it sorted.",),
}
# To "which country?" from a customer asking about shipping abroad: where it is.
ABROAD_ISSUES = ("international_shipping",)
COUNTRIES = ("Canada", "Australia", "Norway", "Japan", "Portugal", "Ireland")
COUNTRY_REPLIES = ("I'm in {}.", "It would be going to {}.")
TOLD_AGAIN_REPLIES = ("Like I said, {}", "As I wrote, {}")
CONFIRMED_REPLIES = ("Yes, that's the one.",)
NOT_THAT_I_KNOW_REPLIES = ("Not that I know of.", "I don't think so, no, not that I've seen.")
UNSURE_REPLIES = (
    "I'm not sure, to be honest. I've told you everything I know.",
    "I don't know, sorry. That's all I have.",
)

CHANGE_REPLIES = (
    "Not that I know of, apart from what I said in my message.",
    "Nothing I'm aware of, other than what I mentioned.",
)

VAGUE_REPLIES = (
    "I'm not sure what you need from me.",
    "Can you be more specific?",
    "What exactly do you need?",
    "Sorry, I don't follow. What information are you after?",
    "I'm not sure how to answer that.",
)

# How the customer names each issue in its own words (plain words that fit whichever template
# opened the ticket: no code or term only some of them say), what the right answer gives it, and
# what the customer brings (FAULT, REQUEST, QUESTION or IDEA, for the persona lines). What the
# answer gives, read from the article's steps: "fix" (steps to try that may or may not work),
# "steps" (a plain procedure, whoever carries it out), "photos" (the customer sends the photos
# the answer asks for, then gets a replacement; read as "promise" when it asks for none),
# "promise" (the company will put it right later), "done" (the change is made now), "noted" (a
# suggestion passed on) or "info" (an answer).
ISSUE_WORDS: dict[str, tuple[str, str, str]] = {
    "payment_failure": ("my declined payment", "fix", FAULT),
    "double_charge": ("the double charge", "promise", FAULT),
    "wrong_amount": ("the overcharge", "promise", FAULT),
    "subscription_cancel": ("cancelling my subscription", "steps", REQUEST),
    "invoice_request": ("the invoice", "steps", REQUEST),
    "delayed_delivery": ("my late parcel", "promise", FAULT),
    "lost_package": ("my missing parcel", "promise", FAULT),
    "wrong_item": ("the wrong item", "promise", FAULT),
    "damaged_item": ("the damaged item", "photos", FAULT),
    "address_change": ("changing my delivery address", "done", REQUEST),
    "refund_request": ("my refund", "promise", REQUEST),
    "refund_status": ("my refund", "info", FAULT),
    "return_label": ("sending my order back", "steps", REQUEST),
    "account_locked": ("getting back into my account", "fix", FAULT),
    "email_change": ("changing my account email", "steps", REQUEST),
    "account_takeover": ("the suspicious activity on my account", "promise", FAULT),
    "two_factor_lost": ("getting my login codes back", "fix", FAULT),
    "data_deletion": ("deleting my account", "promise", REQUEST),
    "error_403": ("the access error", "fix", FAULT),
    "app_crash": ("the app crashing", "fix", FAULT),
    "service_outage": ("the outage", "info", FAULT),
    "slow_performance": ("the slowness", "fix", FAULT),
    "integration_failure": ("our integration", "fix", FAULT),
    "feature_request": ("my feature idea", "noted", IDEA),
    "shipping_policy_question": ("my shipping question", "info", QUESTION),
    "price_adjustment": ("the price adjustment", "promise", REQUEST),
    "international_shipping": ("shipping abroad", "info", QUESTION),
    "password_advice": ("my password question", "info", QUESTION),
    "notification_settings": ("turning off the marketing emails", "steps", REQUEST),
    "profile_update": ("updating my profile", "steps", REQUEST),
    "gift_card": ("my gift card question", "steps", QUESTION),
    "loyalty_points": ("my loyalty points question", "steps", QUESTION),
}

# The customer's replies to what the agent did, by kind. Placeholders: {issue} and
# {remaining} are issue words (ISSUE_WORDS), {fact} a fact's name as people say it.
# "solved_*" answer the last of the customer's issues, by kind of answer, in three moods so
# that the words match the label shown after the reply: glad for a satisfied customer, "_plain"
# for a neutral one, "_grudging" for one still annoyed (angry or frustrated). The "solved_*_too"
# replies add to such a reply ({reply}) what else the answer gave: photos it asked for, an idea
# passed on.
REACTIONS = {
    # To one answer that solved several issues in different ways (one put right, one to try).
    "solved_mixed": (
        "Brilliant, that covers everything. Thank you!",
        "Perfect, thanks for going through all of that.",
    ),
    "solved_mixed_plain": (
        "Okay, thanks, that covers all of it.",
        "Thanks, that's everything I needed.",
    ),
    "solved_mixed_grudging": (
        "Fine, that covers it all, I suppose.",
        "Okay. That deals with all of it, then.",
    ),
    "solved_fix": (
        "Great, I'll do that right away. Thank you!",
        "Perfect, that's clear. I'll give it a go.",
        "Brilliant, thank you! I'll try that now.",
    ),
    "solved_fix_plain": (
        "Thanks, that makes sense. I'll do that now.",
        "Thank you, I know what to do now.",
        "Okay, I'll try that, thanks.",
    ),
    "solved_fix_grudging": (
        "Fine, I'll try that.",
        "Okay. I'll do that, and I hope it works this time.",
        "Right, I'll give it a go. It shouldn't have been this hard.",
    ),
    "solved_steps": (
        "Great, that's clear. Thank you!",
        "Perfect, thanks for walking me through it.",
        "Brilliant, that's all I needed. Thanks!",
    ),
    "solved_steps_plain": (
        "Okay, thanks, that's clear.",
        "Thanks, I know where I stand now.",
    ),
    "solved_steps_grudging": (
        "Fine. That's clear enough.",
        "Okay. That could have been easier to find out.",
    ),
    "solved_photos": (
        "Great, I'll send the photos over right away. Thank you!",
        "Perfect, I'll get the photos to you today. Thanks!",
    ),
    "solved_photos_plain": (
        "Okay, I'll send the photos over.",
        "Thanks, I'll take some photos and send them.",
    ),
    "solved_photos_grudging": (
        "Fine, I'll send the photos. Let's get this over with.",
        "Okay. Photos coming, but I shouldn't have to do all this.",
    ),
    "solved_promise": (
        "Great, thanks for sorting this out.",
        "Okay, good to know it's being put right. Thanks!",
        "Brilliant, thanks for taking care of it.",
    ),
    "solved_promise_plain": (
        "Thank you, I'll look out for it.",
        "Okay, thanks. I'll keep an eye out.",
    ),
    "solved_promise_grudging": (
        "Okay. I'll believe it when I see it.",
        "Fine. Please make sure it actually happens.",
        "Alright, I'll wait and see.",
    ),
    "solved_done": (
        "Great, thanks for taking care of that.",
        "Perfect, thank you for sorting it out.",
        "Thanks, that's exactly what I wanted!",
    ),
    "solved_done_plain": (
        "Okay, thanks for doing that.",
        "Alright, thanks for dealing with it.",
    ),
    "solved_done_grudging": (
        "Fine. Thanks, I suppose.",
        "Okay. About time.",
    ),
    "solved_noted": (
        "Great, thanks for passing it on!",
        "Brilliant, I'll keep an eye out for it. Thank you!",
    ),
    "solved_noted_plain": (
        "Okay, thanks for passing it on.",
        "Thanks, I'll look out for it.",
    ),
    "solved_noted_grudging": (
        "Okay. I hope someone actually reads it.",
        "Fine, we'll see if anything comes of it.",
    ),
    "solved_info": (
        "Great, that's what I needed to know. Thank you!",
        "Perfect, thanks for explaining.",
        "Brilliant, that answers my question. Thanks!",
    ),
    "solved_info_plain": (
        "Thanks, that answers my question.",
        "Okay, that answers it, thanks.",
        "Okay, thanks, that's what I wanted to know.",
    ),
    "solved_info_grudging": (
        "Okay, fine. That answers it, I suppose.",
        "Right. Could have told me that sooner.",
        "Fine. That's all I wanted to know, I suppose.",
    ),
    "solved_photos_too": (
        "{reply} I'll send the photos over shortly, too.",
        "{reply} And I'll get the photos to you today.",
    ),
    "solved_photos_too_plain": (
        "{reply} I'll send the photos you asked for, too.",
        "{reply} And I'll send you the photos now.",
    ),
    "solved_photos_too_grudging": (
        "{reply} I'll send the photos as well, I suppose.",
        "{reply} And I'll send the photos, since you need them.",
    ),
    "solved_idea_too": (
        "{reply} Lovely that my suggestion is passed on, too!",
        "{reply} I'm glad my suggestion is with the team, too.",
    ),
    "solved_idea_too_plain": (
        "{reply} Good to know my suggestion is passed on, too.",
        "{reply} And I'll look out for news of my suggestion.",
    ),
    "solved_idea_too_grudging": (
        "{reply} As for my suggestion, we'll see if anything comes of it.",
        "{reply} I hope someone reads my suggestion, too.",
    ),
    "partly_solved": (
        "Thanks, that covers {issue}, but what about {remaining}?",
        "Okay, that covers {issue}. What about {remaining}?",
        "Thanks, that helps with {issue}. You haven't got to {remaining} yet, though.",
    ),
    # ... of which what is left was answered without the facts it needs (the customer asks after them).
    "partly_solved_held_up": (
        "Thanks, that covers {issue}.",
        "Okay, that covers {issue}.",
        "Thanks, that helps with {issue}.",
    ),
    "partly_solved_held_up_photos": (
        "Thanks, that covers {issue}, and I'll send the photos you asked for.",
        "Okay, that covers {issue}, and the photos are on their way.",
    ),
    # The same, to an answer that asked for photos.
    "partly_solved_photos": (
        "Thanks, that covers {issue}, and I'll send the photos you asked for. But what about {remaining}?",
        "Okay, that covers {issue}, and the photos are on their way. What about {remaining}?",
        "Thanks, that helps with {issue}. I'll send the photos now, but you haven't got to {remaining} yet.",
    ),
    # The same, to an answer that asked for facts the customer gives with this reply (it says the
    # facts come before these words: no "go ahead", as nothing was offered, and no "ready when you
    # are", as the customer has just done its part).
    "partly_solved_facts_given": (
        "Thanks, that covers {issue}. I hope that's all you need for {remaining}.",
        "Okay, that covers {issue}, thanks. That should be everything for {remaining}.",
        "Thanks, that helps with {issue}. Let me know if you need anything else for {remaining}.",
    ),
    "partly_solved_facts_given_photos": (
        "Thanks, that covers {issue}, and I'll send the photos you asked for. I hope that's all you need for "
        "{remaining}.",
        "Okay, that covers {issue}, and the photos are on their way. Let me know if you need anything else for "
        "{remaining}.",
    ),
    # The same, to an answer that says it comes to what is left next (a proposal to go on with).
    "partly_solved_next": (
        "Thanks, that covers {issue}. Yes, please look into {remaining} next.",
        "Okay, that covers {issue}, thanks. So what can you do about {remaining}?",
        "Thanks, that helps with {issue}. What's next for {remaining}?",
    ),
    "partly_solved_next_photos": (
        "Thanks, that covers {issue}, and I'll send the photos you asked for. Yes, please look into {remaining} next.",
        "Okay, that covers {issue}, and the photos are on their way. So what can you do about {remaining}?",
    ),
    # The same, to an answer that also gave the first steps of what goes to the team.
    "partly_solved_first_steps": (
        "Thanks, that covers {issue}. I'll keep your advice on {remaining} in mind for now.",
        "Okay, that covers {issue}, thanks. And thanks for the tips on {remaining}.",
    ),
    "partly_solved_first_steps_photos": (
        "Thanks, that covers {issue}, and I'll send the photos you asked for. I'll keep your advice on "
        "{remaining} in mind for now.",
        "Okay, that covers {issue}, and the photos are on their way. And thanks for the tips on {remaining}.",
    ),
    # The same, to an answer whose first steps come with the word that a specialist takes the rest
    # over: the customer takes the steps up while it waits (the hand-over is no advice).
    # (Said of the steps, whatever they are: "I'll try what you said for deleting my account" read
    # as if the deletion were the customer's to try.)
    "partly_solved_first_steps_handover": (
        "Thanks, that covers {issue}. I'll do what you suggested in the meantime and wait for the team on {remaining}.",
        "Okay, that covers {issue}, thanks. I'll follow those steps until the specialists get in touch about "
        "{remaining}.",
    ),
    "partly_solved_first_steps_handover_photos": (
        "Thanks, that covers {issue}, and I'll send the photos you asked for. I'll do what you suggested in the "
        "meantime and wait for the team on {remaining}.",
        "Okay, that covers {issue}, and the photos are on their way. I'll follow those steps until the "
        "specialists get in touch about {remaining}.",
    ),
    # The same, when the agent had only sent an article about what is left.
    "partly_solved_after_article": (
        "Thanks, that covers {issue}. I had a look at the article about {remaining}, but I'm still not sure "
        "what to do.",
        "Okay, that sorts {issue}. The article on {remaining} didn't really tell me what to do, though.",
    ),
    "partly_solved_after_article_photos": (
        "Thanks, that covers {issue}, and I'll send the photos you asked for. I read the article about "
        "{remaining}, but I'm still not sure what to do.",
        "Okay, that covers {issue}, and the photos are on their way. The article on {remaining} didn't really "
        "tell me what to do, though.",
    ),
    "partly_solved_handover": (
        "Thanks, that covers {issue}. I'll wait to hear about {remaining}.",
        "Okay, that covers {issue}, thanks. I'll look out for news on {remaining}.",
        "Thanks, that helps with {issue}. I'll wait for the team to sort out {remaining}.",
    ),
    "partly_solved_handover_photos": (
        "Thanks, that covers {issue}, and I'll send the photos you asked for. I'll wait to hear about {remaining}.",
        "Okay, that covers {issue}, thanks. I'll send the photos now and look out for news on {remaining}.",
        "Thanks, that helps with {issue}. The photos are on their way, and I'll wait for the team to sort out "
        "{remaining}.",
    ),
    # (naming the issue it is held up on: "that" after another issue's answer would be that one)
    "missing_facts": (
        "Don't you need my {fact} to sort out {issue}?",
        "Do you need my {fact} for {issue}? I'm happy to give it.",
        "Should I send you my {fact} for {issue}?",
    ),
    # (expert task, a judgement family: told what the records show against the claim, the customer
    # pushes back once; the next explanation it accepts)
    "pushback_pending_authorisation": (
        "But my banking app shows two payments of the same amount. Are you sure I won't be charged twice?",
        "I can see both amounts on my statement, though. Are you certain the second one won't go through?",
    ),
    "pushback_left_in_safe_place": (
        "Really? Nobody told me it was left anywhere. Are you sure it was delivered?",
        "I had no note about that at all. Are you certain that's where it was left?",
    ),
    "pushback_refund_already_issued": (
        "I haven't seen any money come back, though. Are you sure the refund went through?",
        "Nothing has shown up on my card yet. Are you certain it was refunded?",
    ),
    "pushback_outside_return_window": (
        "Are you sure it was that long ago? It doesn't feel like it's been over a month.",
        "Really? I didn't realise there was a time limit. Is there nothing you can do?",
    ),
    "pushback_not_lost_yet": (
        "It feels like it's been ages though. Are you sure it's still on its way?",
        "Not lost? I've been refreshing the tracking for days. Are you certain it's still on its way?",
    ),
    "pushback_duplicate_already_refunded": (
        "I still see two payments on my statement, though. Are you sure the second one was refunded?",
        "Nothing has come back to my card that I can see. Are you certain it was refunded?",
    ),
    "pushback_shipping_not_overcharge": (
        "Shipping? I don't remember paying for shipping. Are you sure that's all it is?",
        "Really? I thought shipping was included. Are you sure I wasn't overcharged?",
    ),
    "pushback_already_delivered": (
        "Delivered? I haven't had any notice of that. Are you sure it's already been delivered?",
        "Already? Are you certain? I was sure it hadn't gone out yet.",
    ),
    "pushback_paid_on_retry": (
        "But the page told me it was declined. Are you sure the payment actually went through?",
        "Really? I got an error every time. Are you certain I've been charged?",
    ),
    "accepts_paid_on_retry": (
        "Oh, so it did go through in the end. Good, I won't try again then. Thanks for checking.",
        "Right, so the order is paid after all. That's a relief, thank you.",
    ),
    "accepts_duplicate_already_refunded": (
        "Oh, so the second payment has already been sent back. I'll keep an eye on my statement, thanks.",
        "Right, I'll check my card for the refund then. Thanks for looking into it.",
    ),
    "accepts_shipping_not_overcharge": (
        "Ah, so the difference was the shipping. I missed that on the receipt, thanks for explaining.",
        "Okay, that adds up then, it was the shipping fee. Thanks for checking.",
    ),
    "accepts_already_delivered": (
        "Oh no, so it's been delivered already. I'll see what I can do from my end, thanks for checking.",
        "Okay, so it's already been delivered. I'll sort it out from my end, thanks.",
    ),
    "accepts_outside_return_window": (
        "Okay, I hadn't realised it was past the return window. Thanks for explaining.",
        "Fair enough, I missed the window then. Thanks for checking the dates.",
    ),
    "accepts_not_lost_yet": (
        "Alright, I'll give it a few more days then. Thanks for checking the tracking.",
        "Okay, so it isn't lost yet. I'll wait a bit longer, thanks.",
    ),
    "accepts_pending_authorisation": (
        "Oh, I see, so only one payment was actually taken and the other is just a hold. Thanks for checking.",
        "Right, a hold rather than a second charge. That's a relief, thank you.",
    ),
    "accepts_left_in_safe_place": (
        "Ah, I hadn't thought to look there. I'll go and check now, thanks.",
        "Okay, I'll have a look there. Thanks for checking the tracking.",
    ),
    "accepts_refund_already_issued": (
        "Oh, so it has already gone back to my card. I'll keep an eye on my statement, thanks.",
        "Right, I'll check my card statement then. Thanks for looking into it.",
    ),
    # (expert task, a judgement family: an answer that goes along with a claim the records contradict)
    "claim_unchecked": (
        "Hold on, has anyone actually checked my account? I'd like to know what you can see about {issue}.",
        "Are you going by what I said, or have you looked at my account? What does it show about {issue}?",
    ),
    # (expert task: told that a change was made that the records do not show yet)
    "not_done_yet": (
        "You say that's done, but I don't see anything on my account for {issue} yet. Has it actually gone through?",
        "Has {issue} really been dealt with? Nothing has changed on my side.",
        "Is that actually done for {issue}? My account still looks the same.",
    ),
    # (To an answer off the topic or one that names it but says nothing: "it's all sorted now".)
    "unhelpful": (
        "That doesn't tell me what happens with {issue}.",
        "I'm not sure what that means for {issue}. What do I actually need to do?",
        "Sorry, but that doesn't really deal with {issue}.",
        "That doesn't solve anything.",
    ),
    "citation_only": (
        "Which steps do you mean? Can you tell me what to do?",
        "I'd rather you just told me what to do.",
        "Could you explain it here instead of pointing me to an article?",
    ),
    "follow_up": (
        "Great, thanks.",
        "Okay, noted, thank you.",
        "Thanks for confirming.",
    ),
    "follow_up_photos": (
        "Sure, I'll send the photos now.",
        "Okay, I'll get the photos over to you.",
    ),
    "repeated_answer": (
        "You already told me that.",
        "Yes, you said that before.",
        "I know, you mentioned that already.",
    ),
    "interim": (
        "Thanks, that's helpful.",
        "Alright, thanks. That's a relief.",
    ),
    "interim_plain": (
        "Okay, thank you.",
        "Okay, I'll start with that, thanks.",
    ),
    "interim_grudging": (
        "Fine, I'll do that for now.",
        "Okay. That's a start, I suppose.",
    ),
    # The same, while another issue still waits for an answer.
    "interim_open": (
        "Okay, I'll start with that. But what about {remaining}?",
        "Thanks, that's a start. What about {remaining}, though?",
    ),
    # The interim replies to first steps that come with the word of the hand-over ("... and I'm
    # passing this to our security team"): the customer acts on them and waits for the specialists.
    "interim_handover": (
        "Thanks, that helps. I'll do that and wait for the specialists.",
        "Alright, thanks. I'll do that while the team takes it over.",
    ),
    "interim_handover_plain": (
        "Okay, I'll do that while I wait for the team, thank you.",
        "Okay, I'll start with that and wait to hear from the specialists.",
    ),
    "interim_handover_grudging": (
        "Fine, I'll do that while I wait for the specialists.",
        "Okay. I'll do that, but I hope the team is quick.",
    ),
    "interim_open_handover": (
        "Okay, I'll start with that and wait for the team. But what about {remaining}?",
        "Thanks, I'll do that while the specialists take over. What about {remaining}, though?",
    ),
    # An answer that only says the case will go to a specialist, before it does.
    "handover_announced": (
        "Okay, thank you. So who will be in touch, and when?",
        "Alright. When will I hear from them?",
    ),
    "handover_announced_open": (
        "Okay, I'll wait for them. And what about {remaining}?",
        "Alright, thanks. What about {remaining} in the meantime?",
    ),
    # To a question in an answer that asks for no fact: a choice put to the customer ("Would you
    # prefer a replacement or a refund?"), the choice naming what the customer asked for (a refund),
    # a request to report back, and an open question it can answer only from what it wrote.
    "question_choice": (
        "I don't mind either way; whatever you think is best.",
        "Whichever is quickest is fine by me.",
        "Either is fine by me, as long as it gets sorted.",
    ),
    "question_choice_refund_request": (
        "A refund, please; that's what I asked for.",
        "I'd like the refund, please.",
    ),
    "question_choice_again": (
        "Either is fine, as I said.",
        "Whatever you think is best, really.",
    ),
    "question_report": (
        "I'll let you know how it goes.",
        "Will do, I'll tell you if it works.",
    ),
    "question_open": (
        "I'm not sure, to be honest; everything I know is in my message.",
        "I couldn't say, sorry, beyond what I've already written.",
    ),
    # To a check-in ("Is there anything else I can help you with?").
    "check_in_done": (
        "All good, thank you. That's everything for now.",
        "That's all clear, thanks. Nothing else for now.",
    ),
    # (after taking in what the records show of its claim, while other issues are still open)
    # (expert task: told of the refund of money taken wrongly for its order, which it had not noticed)
    "noticed_duplicate": (
        "Oh, I hadn't even noticed I'd been charged twice for that order. Good catch!",
        "Charged twice? I never spotted that, so I'm glad you caught it.",
    ),
    "noticed_overcharge": (
        "Oh, I hadn't noticed I'd paid more than the checkout price. Good catch!",
        "Overcharged? I never spotted that, so I'm glad you caught it.",
    ),
    # (expert task: asked whose the sign-in the account does not recognise was, or told of it; the
    # customer alone knows: its own, on another device while away, or someone else's)
    "sign_in_theirs": (
        "Yes, that was me: I signed in on my work {device} while I was in {place}.",
        "That one's mine, don't worry. I was in {place} and used my {device} there.",
    ),
    "sign_in_stranger": (
        "No, that wasn't me! I haven't been to {place}, and I don't own that {device}.",
        "That definitely wasn't me. I wasn't anywhere near {place}, and that {device} isn't mine.",
    ),
    # (expert task: told that the order id it gave is an earlier order's, and which order it meant)
    "mixup_acknowledged": (
        "Sorry, I must have given you the number of my old order.",
        "Ah, my mistake: that was the number of an earlier order.",
        "You're right, I gave you the wrong order number there, sorry.",
        "Oops, that's my old order's number. Sorry about that.",
        "My apologies, I mixed that up with an earlier order.",
    ),
    # (a refund told with its 3-5 business days, to a customer who said it needed the matter sorted today)
    "refund_slower_than_needed": (
        "I'd hoped to have the money back today, but I understand it takes a few days.",
        "It's slower than I needed, to be honest, but at least it's on its way.",
        "Not as quick as I'd hoped, given I needed it sorted today, but thanks.",
    ),
    # (an answer naming a card by an ending that is not the customer's: it knows its own card)
    "card_misquoted": (
        "Just to check: my card ends in {card}, not {told}.",
        "Hang on, my card ends in {card}, not {told}. Is that the right card?",
        "I don't have a card ending in {told}; mine ends in {card}.",
        "That's not my card: mine ends in {card}, not {told}.",
    ),
    "typo_acknowledged": (
        "Oh, I must have mistyped the order number, sorry.",
        "Ah, yes, that's the one: I typed the number wrong.",
        "Sorry, typo on my part with that order number.",
    ),
    "typo_acknowledged_curt": (
        "Typo. Yes, that one.",
        "Right, I mistyped it.",
    ),
    "mixup_acknowledged_curt": (
        "Fine, that was an older order's number.",
        "Right, wrong order number. The newer one, then.",
        "That was my old order's number, then.",
    ),
    # (asked whose "the latest sign-in" was, with nothing to say which: its device, place or day)
    "sign_in_which": (
        "Which sign-in do you mean? I sign in on my {device} most days.",
        "Sorry, which one? I usually sign in on my {device}.",
    ),
    "sign_in_again_theirs": ("As I said, that sign-in was mine.", "That was me, as I said."),
    "sign_in_again_stranger": ("As I said, that sign-in wasn't me.", "Like I said, that wasn't me."),
    # (a takeover the customer reported itself)
    "sign_in_reported": (
        "No, that wasn't me; that's the activity I wrote to you about.",
        "Not me, no. That's exactly what I'm worried about.",
    ),
    # (asked of an account whose sign-ins are all the customer's)
    "sign_in_all_theirs": (
        "As far as I know those are all mine; I sign in on my {device}.",
        "Yes, that's me; I only use my {device}.",
    ),
    "still_open": (
        "But what about {remaining}?",
        "There's still {remaining}, though.",
    ),
    "check_in_open": (
        "Yes, thanks. But what about {remaining}?",
        "That's fine, but there's still {remaining}.",
    ),
    "needs_approval": (
        "So can you actually approve that, or does someone else need to?",
        "Are you sure you can do that? Who signs this off?",
    ),
    "rude": (
        "Excuse me? That's very rude.",
        "I can't believe you'd talk to me like that.",
        "Wow. Unbelievable.",
        "There's no need to be so dismissive.",
        "I'd like to speak to someone who'll treat me with some respect.",
    ),
    # To a close after the agent only sent an issue's article: the customer read it, and it did not settle it.
    "premature_after_article": (
        "Hang on, I read the article, but could you answer {issue} here?",
        "Wait, I still need a proper answer about {issue}, not just the article.",
    ),
    "premature": (
        "Wait, you haven't sorted out {issue} yet!",
        "You can't just close this, we haven't dealt with {issue}.",
        "Hold on, we're not done with {issue}.",
        "Hang on, you haven't actually helped me with {issue} yet.",
    ),
    "escalated": (
        "Thank you, that's reassuring. I'll look out for the specialist's reply.",
        "Great, thanks for getting a specialist on it.",
        "Thanks a lot, I feel better knowing someone is on it.",
    ),
    "escalated_plain": (
        "Okay, I'll wait for the specialist.",
        "Thanks, I hope they can help quickly.",
        "Okay, thank you. I'll wait to hear from them.",
        "Alright, I'll keep an eye out for their reply.",
    ),
    "escalated_grudging": (
        "Fine. I just hope they're quicker than this.",
        "Okay. I'll wait, but I expect to hear from them soon.",
        "Right. Let's hope the specialist actually sorts it out.",
    ),
    "callback": (
        "A call would be great, thank you.",
        "Okay, I'll wait for your call.",
        "Sure, I'll look out for the call.",
        "Great, I'll keep my line free.",
    ),
    # The same, from a customer who wrote that their phone is gone.
    "callback_no_phone": (
        "A call would be great, but my phone is gone: please use the landline on my account.",
        "Okay, but not on my old mobile, I don't have it any more. The other number on my account works.",
    ),
    "no_callback": (
        "You said you'd call me? I thought that wasn't possible for my plan.",
        "A callback? I was told that isn't included with my account.",
        "Are you sure? I don't think my plan comes with phone support.",
        "A phone call? I didn't think that was something you offered me.",
    ),
    # The same, from a customer who wrote that it had looked through the help pages already.
    "article_again": (
        "I've been through the help pages already, but I'll have another look at that one.",
        "Okay, I'll give that one a closer read, though I did check your help pages before.",
    ),
    "article": (
        "I'll read that article.",
        "Thanks, I'll take a look at the article.",
        "Okay, let me check that help page.",
        "I'll have a read and see if it helps.",
    ),
    "wrong_article": (
        "That article is about something else.",
        "This article doesn't match my problem.",
        "I read it, but it's about a completely different issue.",
        "That help page isn't relevant to what I asked.",
    ),
    "closed_unhelped": (
        "Okay... so someone will get back to me about {issue}?",
        "Alright. I take it someone else will deal with {issue}, then?",
    ),
    # Goodbyes in the mood shown, as the solved replies.
    # (a thanks and a goodbye, each drawn: five lines heard on ticket after ticket read as canned; audit rounds
    # 69-71)
    "closed": tuple(
        f"{thanks} {goodbye}"
        for thanks in (
            "Thanks so much for your help.",
            "Brilliant, thanks again for all your help.",
            "Thank you, you've been really helpful.",
            "Lovely, thanks a lot.",
            "That's great, thank you.",
            "Much appreciated, thank you.",
            "Thanks for sorting all that out.",
        )
        for goodbye in ("Bye!", "Have a good day!", "Take care!", "Have a good one!", "All the best.")
    ),
    "closed_plain": tuple(
        f"{thanks} {goodbye}".strip()
        for thanks in ("Thanks.", "Alright, thank you.", "Thanks for your time.", "Okay, thanks for the help.")
        for goodbye in ("", "Bye.", "Goodbye.")
    ),
    # An impostor (world.P_IMPOSTOR): it has the account email, not the holder's order id or card. Told its
    # details do not match, it pushes once, then gives up; what the desk tells it of the records, it grabs at.
    "impostor_pushes": (
        "Look, it's my account, the email is mine. I don't have time for this, can't you just change the address?",
        "That's the number I've got. I'm in a hurry here, just update the address on the order, please.",
        "Seriously? I gave you my email. Just send it to the new address, I need it there.",
        "I don't have anything else to hand. Can't you make an exception and change it this once?",
        "Come on, it's definitely my order. Please just change where it's going.",
    ),
    "impostor_gives_up": (
        "Fine. Forget it then.",
        "Whatever. I'll sort it out some other way.",
        "Right. Never mind.",
        "Unbelievable. Forget it.",
    ),
    "impostor_unchecked": (
        "What do you mean? I've given you my details, so check them.",
        "How can you say that without even checking? Those are my details.",
    ),
    "impostor_waits": (
        "So can you change the address or not?",
        "I just need the delivery address changed. Can you do that?",
        "Okay, but is the address changed now?",
    ),
    "impostor_grabs": (
        "Yes, that's the one. So you can change the address now?",
        "Right, that one. Just send it to the new address, then.",
        "Yes, that order. Please update it now.",
    ),
    "impostor_escalated": (
        "Security? It's my own account. Whatever.",
        "This is ridiculous. Fine.",
        "I don't see why security needs to be involved, but fine.",
        "So my parcel just goes to the old address. Great.",
        "Unbelievable. I only wanted an address changed.",
        "Fine, have them look. I'll find another way.",
        "Security, for an address change? Whatever you say.",
    ),
    "impostor_closed": (
        "Fine. I'll go, then.",
        "Okay. Goodbye, then.",
        "Right. Bye.",
        "Whatever. Bye.",
        "Okay then.",
    ),
    "closed_grudging": (
        "Okay. Goodbye.",
        "Fine. Bye.",
        "Right, bye then.",
    ),
    "gave_up": (
        "I've had enough, I'm taking my business elsewhere.",
        "Forget it. I'm done talking to you.",
        "This is going nowhere. Goodbye.",
        "Never mind, I'll sort it out some other way.",
    ),
}
