"""Deterministic judging of the agent's free text: politeness, rudeness, relevance
and keyword stuffing. No model, no randomness: patterns and counts.

Tone is judged the way a supervisor reads it: words in context, matched as words and phrases,
never inside another word. An insult aimed at the customer, blame, a dismissal or a
condescending order is rude ("you're an idiot", "it's your own fault", "whatever.", "calm
down"); the same words in a benign sense are not ("we'll do whatever it takes", "a dumb
terminal", "it's not your fault", "once the rush calms down"). An answer is polite when it
carries a courtesy marker (thanks, an apology, please, I understand, happy to help, of course,
let me know, kind regards, ...) and is not rude.

An answer is credited with an issue when it says that issue's solution (supportenv.solutions
reads it tolerant of word forms); citing the issue's knowledge-base article alone is not an
answer. Naming other issues' solutions (or citing a wrong article) costs, and naming two or
more of them, or repeating one phrase over and over, is stuffing and earns nothing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from supportenv.memo import cached_by_text
from supportenv.records import picklable
from supportenv.solutions import (
    PHRASE_OWNER,
    phrases_said,
    puts_a_choice,
    sentences_of,
    steps_said,
    steps_said_in_a_sentence,
    without_announcements,
)

# ---- tone ----
# Rules over the lower-cased text (curly quotes made straight, runs of spaces made one). Each rule is
# (phrases, pattern): every match of the pattern contains one of the phrases as whole words, so a text
# is searched only by the rules whose phrases it has (a handful, not all of them: this runs on every step).

# Where an order to the customer can begin: the start of a clause, or after words that make one.
_CLAUSE_START = r"(?:^|[.!?,;:()\"…–—]|\s-|\bbut\b)\s*"
_ORDER_START = (
    rf"(?:{_CLAUSE_START}|\b(?:just|please|now|so|ok|okay|then|first|maybe|you|why don't you|try to|learn to"
    r"|(?:can|could|would|will) you|you (?:need|have|ought|got|must|should|gotta|better)(?: to)?"
    r"|you(?:'ll| will)(?: just)? (?:have|need) to)\s+)(?:(?:just|please|simply|kindly|go|and|maybe|really)\s+)*"
)
# For orders that are also plain statements after "you" ("before you get lost in the menus").
_STRICT_ORDER_START = rf"(?:{_CLAUSE_START}|\b(?:just|please|now|so|then)\s+)(?:(?:just|please|now)\s+)*"
# Calling the customer one of these is an insult (a comma-separated list, like the rules' phrases).
_INSULTS = (
    "idiot, idiotic, moron, moronic, imbecile, fool, foolish, clown, muppet, dummy, stupid, dumb, dense, thick, dim,"
    " slow, clueless, useless, hopeless, incompetent, ignorant, lazy, pathetic, ridiculous, annoying, unbearable,"
    " delusional, crazy, insane, nuts, childish, dramatic, hysterical, overreacting, exaggerating, lying, liar,"
    " difficult, unreasonable, rude, joke, pain, nightmare, paranoid"
)
_YOU_ARE = (
    r"(?:you(?:'re|re| are)|u r|ur|are you|you must be|you seem|you sound|you look|you(?:'ve| have) been|you were)"
    r"(?:\s+(?:such|so|really|just|clearly|obviously|too|very|being|completely|totally|utterly|absolutely"
    r"|incredibly|truly|a|an|the|this|that|most|bit|little|pretty|plain|simply|rather|quite|honestly|acting|like))*"
)
# Said of the customer's question or request, these belittle it.
_BELITTLING = (
    "stupid, dumb, silly, idiotic, ridiculous, pointless, useless, absurd, pathetic, lame, moronic, childish, petty,"
    " inane"
)
_RUDE_SPECS = (
    # insults aimed at the customer, profanity, contempt
    (_INSULTS, rf"\b{_YOU_ARE}\s+(?:an?\s+)?(?:{_INSULTS.replace(', ', '|')})\b"),
    (
        "idiot, idiots, moron, morons, fool, fools, clown, clowns, imbecile, imbeciles, muppet, muppets, loser,"
        " losers, you people, people like you",
        r"\byou (?:\w+ )?(?:idiot|moron|fool|clown|imbecile|muppet|loser)s?\b|\byou people\b|\bpeople like you\b",
    ),
    (
        "idiot, idiots, idiotic, moron, morons, moronic, imbecile, imbeciles, dimwit, halfwit, nitwit, numpty,"
        " dumbass, jackass, loser, retard, retarded",
        r"\b(?:idiots?|idiotic|morons?|moronic|imbeciles?|dimwit|halfwit|nitwit|numpty|dumbass|jackass|loser"
        r"|retard(?:ed)?)\b",
    ),
    (
        "fuck, fucking, fucked, fucker, shit, shitty, bullshit, crap, crappy, bitch, bastard, bastards, asshole,"
        " arsehole, dickhead",
        r"\b(?:fuck(?:ing|ed|er)?|shit(?:ty)?|bullshit|crap|crappy|bitch|bastards?|asshole|arsehole|dickhead)\b",
    ),
    (
        "wtf, stfu, rtfm, lol, lmao, rofl, smh, ugh, sigh, duh, meh, pfft, facepalm, the hell, damn it, damn you,"
        " screw you",
        r"\b(?:wtf|stfu|rtfm|lol|lmao|rofl|smh|ugh|sigh|duh|meh|pfft|facepalm|the hell|damn (?:it|you)|screw you)\b",
    ),
    (
        "piss off, bugger off, sod off, buzz off, shut up, shut it, leave me alone, leave us alone, get a life,"
        " get a clue, get a grip",
        r"\b(?:piss|bugger|sod|buzz) off\b|\bshut up\b|\bshut it\s*[.!]|\bleave (?:me|us) alone\b"
        r"|\bget a (?:life|clue|grip)\b",
    ),
    (
        "grow up, man up, sweetie, sweetheart, darling, hun, listen here, are you blind, are you deaf",
        r"\bgrow up\b|\bman up\b|\b(?:sweetie|sweetheart|darling|hun)\b|\blisten here\b|\bare you (?:blind|deaf)\b",
    ),
    (
        "honey, buddy, pal, sunshine, missy, sonny, champ",
        r"\b(?:listen|look|ok|okay|oh),? (?:honey|buddy|pal|sunshine|missy|sonny|champ)\b",
    ),
    # the customer's question or request belittled; "no such thing as a stupid question" is kind
    (
        _BELITTLING,
        rf"(?<!no )(?<!not a )(?<!n't a )(?<!as a )(?<!never a )\b(?:{_BELITTLING.replace(', ', '|')})(?: \w+)?"
        r" (?:question|request|complaint|demand|idea|excuse|claim|ticket|email|message|story)s?\b",
    ),
    (
        "your stupid, your dumb, your silly, your pathetic, your ridiculous, your idiotic, your pointless,"
        " your useless, your so-called, your alleged",
        r"\byour (?:stupid|dumb|silly|pathetic|ridiculous|idiotic|pointless|useless|so-called|alleged)\b",
    ),
    (
        '"urgent, "emergency, "important, "problem, "issue, "complaint, "broken, "missing, "damaged, "lost, "faulty',
        r"\byour\s*\"(?:urgent|emergency|important|problem|issue|complaint|broken|missing|damaged|lost|faulty)",
    ),
    (
        "stupid, dumb, idiotic, ridiculous, absurd, pathetic, laughable, nonsense, rubbish",
        r"\b(?:that|this)(?:'s| is| was)(?: (?:a|an|so|really|just|pretty|totally|completely|absolutely|very"
        r"|utterly))* (?:stupid|dumb|idiotic|ridiculous|absurd|pathetic|laughable|nonsense|rubbish)"
        r"(?=\s*(?:[.!?,;:]|$)|\s+(?:and|but|of you)\b)",
    ),
    (
        "how stupid, how dumb, how idiotic, so stupid, so dumb, so idiotic, stupid of, dumb of, stupid enough,"
        " dumb enough",
        r"\b(?:how|so) (?:stupid|dumb|idiotic)\b|\b(?:stupid|dumb) (?:of|enough)\b",
    ),
    (
        "don't be",
        r"\bdon't be (?:so |such )?(?:an? )?(?:stupid|dumb|ridiculous|childish|dramatic|difficult|rude|idiot|baby"
        r"|pain)\b",
    ),
    # blame: "you should have read the terms", "you messed up"
    (
        "you should have, you should've",
        r"\byou should(?:'ve| have) (?:known|read|checked|listened|thought|looked|been more careful|paid attention"
        r"|asked)\b",
    ),
    (
        "if you'd, if you had",
        r"\bif you(?:'d| had)(?: \w+ly| just| even)? (?:read|listened|paid attention|bothered|followed|checked"
        r"|looked)\b",
    ),
    (
        "yourself to blame, on yourself, not my fault",
        r"\byou (?:only )?have yourself to blame\b|\byou brought (?:this|it) on yourself\b|\bnot my fault\b",
    ),
    (
        "messed, screwed, mucked, cocked",
        r"\byou (?:really |totally |completely )?(?:messed|screwed|mucked|cocked) (?:\w+ )*?up\b",
    ),
    (
        "bother, bothered",
        r"\b(?:if you(?:'d| had)?|you (?:didn't|did not|never|couldn't|could not|can't|cannot|won't)) (?:even |just )?"
        r"bother(?:ed)?\b|\bdidn't even bother\b|\bcan(?:'t|not) be bothered\b"
        r"|\bdon't bother (?:me|us|calling|writing|emailing|contacting|asking|complaining|replying)\b",
    ),
    # dismissal
    ("whatever", r"\bwhatever(?:\s*[.!?,;:…–—]|\s+-|\s*$)|\bwhatever you say\b|\bwhatever floats your boat\b"),
    (
        "not my, not our, your problem, do your own",
        r"\bnot (?:my|our) (?:problem|job|concern|headache)\b|\byour problem,? not (?:mine|ours)\b"
        r"|(?:^|[.!?,;]\s*)your problem\s*(?:[.!]|$)|\bdo your own (?:research|homework)\b",
    ),
    (
        "your problem, your own problem, your headache, your own headache, your lookout, your own lookout",
        r"\b(?:that|it|this)(?:'s| is| was| sounds like| seems like)(?: \w+ly| all)? your (?:own )?(?:problem"
        r"|headache|lookout)\b",
    ),
    (
        "go away, get lost, relax, chill, figure it out, work it out",
        rf"{_STRICT_ORDER_START}(?:go away|get lost|relax|chill|figure it out|work it out)\b",
    ),
    (
        "relax, chill out, chill pill, calm yourself",
        r"\b(?:just|you need to|you have to|try to) relax\b|\bchill out\b|\btake a chill pill\b|\bcalm yourself\b",
    ),
    (
        "figure it out, work it out, sort it out, google it, look it up yourself",
        r"\b(?:figure|work|sort) it out (?:yourself|on your own)\b|\bgoogle it\b|\blook it up yourself\b",
    ),
    (
        "the manual, the faq, the docs, the documentation, the instructions, the website",
        r"\b(?:it's|it is|everything is|that's|that is) (?:all |clearly |right there |literally )?(?:in|on) the "
        r"(?:manual|faq|docs|documentation|instructions|website)(?=\s*(?:[.!?]|$))",
    ),
    ("tough, too bad", r"\btough luck\b|(?:^|[.!?]\s*)tough[,.!]|(?:^|[.!?,;]\s*)too bad\b|\btoo bad for you\b"),
    (
        "over it, suck it up, boo hoo, boohoo, cry me a river, take it or leave it",
        r"\b(?:get|got) over it\b|\bsuck it up\b|\bboo ?hoo\b|\bcry me a river\b|\btake it or leave it\b",
    ),
    (
        "don't like it, elsewhere, somewhere else",
        r"\bif you don't like it\b|\btake your business (?:elsewhere|somewhere else)\b"
        r"|\bshop (?:elsewhere|somewhere else)\b",
    ),
    (
        "care, cares",
        r"\b(?:i|we)(?: really| honestly| just)? (?:don't|do not|couldn't|could not) care\b|\bwho cares\b"
        r"|\b(?:nobody|no one|no-one) cares\b|\bwhy should (?:i|we) care\b",
    ),
    (
        "have time for, better things to do",
        r"\b(?:i|we) (?:don't|do not) have time for (?:this|you|that)\b|\bi have better things to do\b",
    ),
    (
        "wasting my time, wasting our time, waste of my time, waste of our time, done here, done with you,"
        " done talking",
        r"\b(?:wasting|waste of) (?:my|our) time\b|\b(?:we're|we are|i'm|i am) done (?:here|with you|talking)\b",
    ),
    (
        "this conversation, this discussion, this chat",
        r"\bthis (?:conversation|discussion|chat) is (?:over|pointless|useless|going nowhere)\b",
    ),
    ("so what", r"\bso what(?:\s*[?!,.]|\s*$)"),
    ("not sorry, have your, take your", r"\bsorry,? not sorry\b|\bfine,? (?:have|take) your\b"),
    ("big deal", r"(?:^|[.!?,;]\s*)(?:oh,? |so,? )?big deal\b|\bwhat'?s the big deal\b"),
    (
        "me to do, us to do, were you thinking, did you expect",
        r"\bwhat do you (?:want|expect) (?:me|us) to do\b|\bwhat were you thinking\b"
        r"|\bwhat did you expect(?=\s*[?!.,]|\s+(?:from|when|for|with|at|if)\b)",
    ),
    (
        "help you if you, your lesson, be a lesson",
        r"\b(?:i|we) can(?:'t|not) help you if you\b|\blearn(?:ed|t)? your lesson\b|\blet (?:that|this) be a lesson\b",
    ),
    (
        "mother, mom, mum, babysitter, nanny, servant, slave, mind reader, magician",
        r"\bnot (?:your|a) (?:mother|mom|mum|babysitter|nanny|servant|slave|mind reader|magician)\b",
    ),
    (
        "complaining, whining, whinging, moaning, nagging",
        r"\b(?:your|all this|enough|constant|always|keep|instead of) (?:complaining|whining|whinging|moaning|nagging)\b"
        r"|\b(?:whining|whinging|moaning) about\b",
    ),
    # condescension
    (
        "already told you, already explained, already said",
        r"\bi(?:'ve| have)? already (?:told you|explained (?:this|that|it)(?: to you)?(?=\s*(?:[.!?,;]|$)|\s+(?:twice"
        r"|before|three|several|many|\d))|said (?:this|that)(?=\s*(?:[.!?,;]|$)|\s+(?:twice|before)))",
    ),
    ("told you, already said", r"\bas i (?:already |just )?told you\b|\blike i (?:already said|told you)\b"),
    (
        "last time, second time, third time, fourth time, fifth time, tenth time, hundredth time, umpteenth time,"
        " millionth time, nth time, how many times, how many more times",
        r"(?:^|[.!?,;:]\s*)for the (?:\w+ )?(?:last|second|third|fourth|fifth|tenth|hundredth|umpteenth|millionth"
        r"|nth) time\b|\bhow many (?:more )?times (?:do|must|have|will|should) (?:i|we)\b",
    ),
    (
        "rocket science, brain surgery, even my, even your, even a, any child, any kid, any toddler, any idiot,"
        " any fool, any monkey",
        r"\bnot (?:rocket science|brain surgery)\b|\beven (?:my|your) (?:grandma|grandmother|granny|gran|nan|mum|mom"
        r"|kid|dog)\b|\b(?:even a|any) (?:child|kid|toddler|idiot|fool|monkey) (?:could|can|would|knows)\b",
    ),
    (
        "can't you, cannot you, can you not",
        r"\bcan(?:'t|not) you (?:read|see|understand|follow|hear)\b|\bcan you not (?:read|see|understand)\b",
    ),
    (
        "you even, you actually",
        r"\b(?:did|do|were|are|have|can) you even\b|\bdid you actually (?:read|look|check|listen|try)\b",
    ),
    (
        "listening, listen",
        r"\b(?:are|were) you (?:even )?listening\b|\byou(?:'re| are)(?: not|n't) listening\b"
        r"|\byou (?:never|don't) listen\b",
    ),
    (
        "spell it out, spell this out, slowly, keep up, words for you",
        r"\bspell (?:it|this) out for you\b|\b(?:explain|say|type|repeat) (?:it|this|that)(?: \w+)? (?:very )?slowly"
        r"(?=\s*[.!]| for you| so you)|\bso you can keep up\b|\bin (?:small|simple|plain) words for you\b",
    ),
    (
        "obviously, clearly, surely",
        r"\b(?:(?:obviously|clearly),? you|you (?:obviously|clearly)) (?:didn't|did not|don't|do not|can't|cannot"
        r"|haven't|have not|never|weren't|aren't)\b|\bsurely you (?:know|knew|can|could|must|understand|realise"
        r"|realize|read|saw|see)\b",
    ),
    (
        "next time",
        r"\b(?:try )?(?:reading|paying attention|listening|looking|checking)(?: \w+){0,3} next time\b"
        r"|\bnext time,? (?:try )?(?:reading|paying attention|listening|to read)\b",
    ),
    (
        "your brain, your brains, your head, your eyes, common sense",
        r"\b(?:turn|turning|switch|switching) (?:on )?your brain\b|\buse your (?:head|brain|brains|common sense|eyes)\b"
        r"|\b(?:it's|it is|that's|that is|just) common sense\b",
    ),
    (
        "know better, know by now, learn to, learn how to",
        r"\byou (?:should|ought to) know (?:better|by now)\b|\blearn (?:how )?to (?:read|type|spell|use (?:a |the "
        r"|your )?(?:computer|phone|browser|mouse|keyboard|internet|app))\b",
    ),
    # sarcasm
    (
        "oh, just what i needed, here we go again",
        r"\boh,? (?:great|wonderful|brilliant|fantastic|perfect|lovely|super)\b[,.!]?\s*(?:another|now|just what"
        r"|more of)\b|\boh joy\b|\bjust what i needed\b|\bhere we go again\b",
    ),
    (
        "heard of, a new one, because",
        r"(?:^|[.!?]\s*)(?:have you )?ever heard of\b|\bthat's a new one\b|\b(?:sure|yeah),? because\b",
    ),
    (
        "what a genius, what a surprise, what a shock, what a shocker, einstein, sherlock, nice try,"
        " good luck with that",
        r"\bwhat a (?:genius|surprise|shock|shocker)\b|\b(?:einstein|sherlock)\b|\bnice try\b|\bgood luck with that\b",
    ),
    (
        "thanks for nothing, congratulations, sure you did",
        r"\bthanks for nothing\b|\bcongratulations,? you (?:managed|somehow|actually|really)\b|\bsure you did\b",
    ),
    ("yeah", r"\byeah,? right(?=\s*[,.!?]|$)"),
    ("oh, come on", r"\boh,? (?:please|come on)(?=\s*[,.!?]|$)|(?:^|[.!?]\s*)come on[,.!]"),
    (
        "give me a break, seriously?, seriously!, really?, really!",
        r"\bgive me a break\b|\b(?:seriously|really)[?!]+\s*you\b",
    ),
    (
        "are you serious, are you kidding, are you joking, are you for real, are you insane, are you out of,"
        " can't be serious, be kidding, be joking",
        r"\bare you (?:serious|kidding|joking|for real|insane|out of your mind)\b|\byou can't be serious\b"
        r"|\byou(?:'ve| have)? (?:got|gotta) (?:to )?be (?:kidding|joking)\b|\byou must be (?:kidding|joking)\b",
    ),
)
# Orders that dismiss the customer: rude unless regretted in the same clause ("I'm sorry you have to deal with it").
_RUDE_ORDER_SPECS = (
    (
        "calm down, settle down, deal with it, live with it",
        rf"{_ORDER_START}(?:calm down|settle down|deal with it|live with it)\b",
    ),
    (
        "complaining, whining, whinging, moaning, crying, shouting, yelling, nagging, ranting, bothering, wasting,"
        " emailing us, calling us, stop being, quit being",
        rf"{_ORDER_START}(?:stop|quit) (?:complaining|whining|whinging|moaning|crying|shouting|yelling|nagging"
        r"|ranting|bothering (?:me|us)|wasting (?:my|our) time|emailing us|calling us|being (?:so |such )?(?:an? )?"
        r"(?:difficult|dramatic|rude|childish|unreasonable|annoying|pain|stubborn|impatient|demanding|ridiculous"
        r"|negative))\b",
    ),
    # "read the manual" as the whole answer; "you can read the manual online" is an offer
    (
        "read the",
        rf"{_ORDER_START}read the (?:\w+ )?(?:manual|faq|docs|documentation|instructions|fine print)"
        r"(?=\s*(?:[.!?;]|$)|\s+(?:next time|first|before|yourself|properly|again|like everyone))",
    ),
)
# Blame: rude unless denied just before it ("it's not your fault", "please don't blame yourself").
_BLAME_SPECS = (
    (
        "your fault, your own fault, your mistake, your own mistake, your doing, your own doing",
        r"\byour (?:own )?(?:fault|mistake|doing)\b(?! (?:code|light|report|log|message|number|indicator)s?\b)",
    ),
    (
        "on you",
        r"\b(?:that's|that is|this is|it's|it is|that was|it was)(?: all| entirely| totally)? on you(?=\s*[.!,;]|$)",
    ),
    ("at fault, to blame", r"\byou(?:'re| are)(?: \w+ly)? (?:at fault|to blame)\b"),
    ("blame you, blame yourself", r"\bblame (?:you|yourself)\b"),
)
# Courtesy markers: a polite answer has one and is not rude.
_POLITE_SPECS = (
    (
        "thank, thanks, thankyou, thanking, thankful, thx, cheers, appreciate, appreciated, appreciates,"
        " appreciating, appreciation",
        r"\bthank(?:s|you|ing|ful)?\b|\bthx\b|\bcheers\b|\bappreciat(?:e|ed|es|ing|ion)\b",
    ),
    (
        "sorry, apology, apologies, apologise, apologize, apologised, apologized, apologising, apologizing,"
        " apologetic, regret, pardon",
        r"\bsorry\b|\bapolog(?:y|ies|ise|ize|ised|ized|ising|izing|etic)\b|\bregret\b|\bpardon\b",
    ),
    ("please, kindly", r"\bplease\b|\bkindly\b"),
    # a greeting, and good news told as such
    ("hi, hello, dear, good news, great news", r"^(?:hi|hello|dear)\b|\b(?:good|great) news\b"),
    (
        "happy to, glad to, pleased to, delighted to, glad, gladly, pleasure",
        r"\b(?:happy|glad|pleased|delighted) to\b|\bglad\b|\bgladly\b|\b(?:my|with) pleasure\b",
    ),
    (
        "understand, imagine, understandable, understandably, i know how, i know it's, i know it is, i know this",
        r"\b(?:i|we)(?: \w+)? (?:understand|imagine)\b|\bunderstandabl[ey]\b|\bi know (?:how|it's|it is|this)\b",
    ),
    # sympathy for what the customer is going through ("that sounds really frustrating")
    (
        "frustrating, stressful, worrying, annoying, disappointing, inconvenient",
        r"\b(?:(?:must|can|would) be|sounds?|that's|that is) (?:so |very |really |incredibly )?"
        r"(?:frustrating|stressful|worrying|annoying|disappointing|inconvenient)\b",
    ),
    # understanding and help offered in so many words ("I hear you", "completely understand",
    # "I can see why", "I'm here to help", "let me help")
    (
        "hear you, understand, understandable, see why, see how, here to help, let me help, let us help",
        r"\b(?:i|we) hear you\b|(?:^|[.!?,;] )(?:completely|totally|fully|perfectly) understand(?:able)?\b"
        r"|\b(?:i|we) can (?:\w+ )?see (?:why|how)\b|\b(?:i'm|i am|we're|we are) (?:always |just )?here to help\b"
        r"|\blet (?:me|us) help\b",
    ),
    (
        "certainly, of course, absolutely, welcome",
        r"\bcertainly\b|\bof course\b|\babsolutely\b|\byou(?:'re| are) (?:very |most |so )?welcome\b|\bwelcome back\b",
    ),
    (
        "no problem, no worries, no trouble, rest assured, worry",
        r"\bno (?:problem|worries|trouble)\b(?! with)|\brest assured\b|\b(?:don't|do not|no need to) worry\b"
        r"|\bnothing to worry about\b",
    ),
    (
        "hope, hopefully, let me know, let us know, feel free, hesitate, anything else",
        r"\bhope(?:fully)?\b|\blet (?:me|us) know\b|\bfeel free\b|\b(?:don't|do not) hesitate\b"
        r"|\banything else (?:i|we) can\b",
    ),
    (
        "could you, would you, if you, a moment, a chance, a minute",
        r"\b(?:could|would) you\b|\bif you (?:could|would|don't mind|wouldn't mind|like)\b|\bif you'd like\b"
        r"|\bwhen(?:ever)? you (?:have|get) a (?:moment|chance|minute)\b",
    ),
    # reassurance that the customer is not to blame
    (
        "your fault, your own fault, blame you",
        r"(?:\bnot|n't|\bnever)(?: \w+)? your (?:own )?fault\b|\bnone of (?:this|it|that) (?:is|was) your fault\b"
        r"|\b(?:don't|do not|can't|cannot|wouldn't) blame you\b",
    ),
    (
        "right, question, point, catch, idea, suggestion, afraid",
        r"\byou(?:'re| are| were) (?:absolutely |completely |quite |totally |so )?right\b"
        r"|\b(?:good|great|fair) (?:question|point|catch|idea|suggestion)\b|\bi(?:'m| am) afraid\b",
    ),
    (
        "regards, best wishes, all the best, take care, sincerely, enjoy, have a, good morning, good afternoon,"
        " good evening",
        r"\bregards\b|\bbest wishes\b|\ball the best\b|\btake care\b|\bsincerely\b|\benjoy\b"
        r"|\bhave a (?:\w+ )?(?:day|evening|weekend|week|afternoon|morning|night)\b"
        r"|\bgood (?:morning|afternoon|evening)\b",
    ),
)
# Saying one solution phrase more often than this is stuffing, not an answer.
MAX_PHRASE_REPEATS = 2
MAX_WRONG_SOLUTIONS = 2
# Other issues' fixes a sentence that says the ticket's own may name by their words, and in all.
NEIGHBOUR_FIXES = 2
MAX_OTHER_FIXES = 4


@dataclass(frozen=True)
class TextJudgement:
    rude: bool
    polite: bool
    solves: tuple[str, ...]  # ticket intents whose solution the text names (empty when stuffed)
    wrong_solutions: int  # other issues' solutions (or a wrong article) named
    stuffed: bool
    personalised: bool  # mentions one of the customer's own facts


_WORD_RE = re.compile(r"[a-z]+")


class ToneRule(NamedTuple):
    phrases: tuple[str, ...]  # every match of the pattern contains one of these, as whole words
    pattern: re.Pattern[str]


class ToneRules(NamedTuple):
    rules: tuple[ToneRule, ...]
    # Each phrase under its longest word: a text can only set a rule off if it has one of the rule's phrases.
    by_word: dict[str, tuple[tuple[ToneRule, str], ...]]

    @classmethod
    def of(cls, specs: Sequence[tuple[str, str]]) -> ToneRules:
        """Rules from (phrases separated by commas, pattern) pairs."""
        rules = tuple(
            ToneRule(tuple(p.strip() for p in phrases.split(",")), re.compile(pattern, re.MULTILINE))
            for phrases, pattern in specs
        )
        by_word: dict[str, list[tuple[ToneRule, str]]] = {}
        for rule in rules:
            for phrase in rule.phrases:
                by_word.setdefault(max(_WORD_RE.findall(phrase), key=len), []).append((rule, phrase))
        return cls(rules, {word: tuple(entries) for word, entries in by_word.items()})

    def found(self, tone: str, words: set[str], softener: re.Pattern[str] | None = None) -> bool:
        """Does a rule match `tone` (of `words`) somewhere `softener`, if given, does not match just before?"""
        candidates = {
            rule for word in words & self.by_word.keys() for rule, phrase in self.by_word[word] if phrase in tone
        }
        for rule in candidates:
            for match in rule.pattern.finditer(tone):
                if softener is None or softener.search(tone, 0, match.start()) is None:
                    return True
        return False


RUDE_RULES = ToneRules.of(_RUDE_SPECS)
RUDE_ORDER_RULES = ToneRules.of(_RUDE_ORDER_SPECS)
BLAME_RULES = ToneRules.of(_BLAME_SPECS)
POLITE_RULES = ToneRules.of(_POLITE_SPECS)
# What takes the sting out, looked for before a match in its own clause: a denial within the
# last few words ("it's not your fault"), or the agent's regret ("I'm sorry you have to deal with it").
_DENIED_RE = re.compile(
    r"(?:\b(?:not|no|never|none|nobody|nothing|neither|nor|without|hardly)\b|n't)(?: [\w']+){0,3} ?$"
)
_REGRETTED_RE = re.compile(r"\b(?:sorry|apologi[sz]e)\b(?:(?!\bbut\b)[^.!?;:,\n])*$")
_STRAIGHT_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_SPACES_RE = re.compile(r"[^\S\n]+")


def tone_text(text: str) -> str:
    """The form the tone rules read: lower case, straight quotes, single spaces."""
    tone = text.lower() if text.isascii() else text.lower().translate(_STRAIGHT_QUOTES)
    return _SPACES_RE.sub(" ", tone) if "  " in tone or not tone.isprintable() else tone


def _tone(text: str) -> tuple[bool, bool]:
    """(rude, polite)."""
    tone = tone_text(text)
    words = set(_WORD_RE.findall(tone))
    rude = (
        RUDE_RULES.found(tone, words)
        or RUDE_ORDER_RULES.found(tone, words, _REGRETTED_RE)
        or BLAME_RULES.found(tone, words, _DENIED_RE)
    )
    return rude, not rude and POLITE_RULES.found(tone, words)


class _Analysis(NamedTuple):
    lower: str
    rude: bool
    polite: bool
    named: frozenset[str]  # issues whose solution phrases or article steps the text says
    # the same, of each sentence on its own (see below), and whether it puts a choice to the customer
    by_sentence: tuple[tuple[frozenset[str], bool], ...]
    owner_counts: tuple[tuple[str, int], ...]  # (issue, occurrences of one of its phrases)


@cached_by_text
def _analyse(text: str) -> _Analysis:
    """Everything about a text that does not depend on the ticket."""
    lower = text.lower()
    said = without_announcements(text)  # "I'll come to your refund next" says no refund yet
    counts = phrases_said(said)
    rude, polite = _tone(lower)
    phrased = frozenset(PHRASE_OWNER[p] for p in counts)
    by_sentence = tuple(
        (frozenset(PHRASE_OWNER[p] for p in phrases_said(sentence)) | steps_said_in_a_sentence(sentence), sentence)
        for sentence in sentences_of(said)
    )
    return _Analysis(
        lower,
        rude,
        polite,
        phrased | steps_said(said),
        tuple((owners, puts_a_choice(sentence)) for owners, sentence in by_sentence if owners),
        tuple((PHRASE_OWNER[p], n) for p, n in counts.items()),
    )


def is_rude(text: str) -> bool:
    return _analyse(text).rude


def is_polite(text: str) -> bool:
    return _analyse(text).polite


class Verdict(NamedTuple):
    """The part of a judgement that does not depend on the customer's facts."""

    lower: str
    rude: bool
    polite: bool
    solves: tuple[str, ...]
    wrong_solutions: int
    stuffed: bool


@cached_by_text
def verdict(text: str, intents: tuple[tuple[str, str], ...], article_id: str) -> Verdict:
    """Judge `text` for a ticket whose intents are (issue_id, article_id) pairs (see
    Scenario.intent_keys)."""
    lower, rude, polite, named, by_sentence, owner_counts = _analyse(text)
    own = {issue_id for issue_id, _ in intents}
    # Credit is generous (a step said anywhere in the answer), a charge needs clear evidence (another
    # issue's fix said in one sentence), so that a long, careful answer is not taken for a stuffed one.
    # A sentence that says a fix of the ticket may use a neighbouring fix's words or two ("ship you a
    # free replacement" says "ship a replacement" and "shipping is free"); a sentence of other fixes only,
    # or with many of them, is someone else's answer.
    wrong_citation = bool(article_id) and article_id not in {article for _, article in intents}
    # A question putting a choice to the customer ("Would you prefer a replacement or a refund?")
    # names options, not someone else's answer: it may name a neighbouring fix or two on its own.
    others = frozenset().union(*(owners for owners, _ in by_sentence)) - own
    untolerated = frozenset().union(
        *(
            owners - own
            for owners, choice in by_sentence
            if (not (owners & own or choice) or len(owners - own) > NEIGHBOUR_FIXES)
        )
    )
    wrong = len(untolerated) + wrong_citation
    repeated = max([n for owner, n in owner_counts if owner in own], default=0)
    stuffed = wrong > MAX_WRONG_SOLUTIONS or len(others) > MAX_OTHER_FIXES or repeated > MAX_PHRASE_REPEATS
    # An article id is a citation, not an answer: an issue is solved by saying its solution.
    solves = () if stuffed else tuple([i for i, _ in intents if i in named])
    if solves and not stuffed:
        # A right answer that also uses a neighbouring fix's words ("send you a replacement"
        # for a damaged item) is not charged for them; answering something else is, and so is
        # citing an article of no issue on the ticket (the prompt asks for one of theirs).
        wrong = int(wrong_citation)
    return Verdict(lower, rude, polite, solves, wrong, stuffed)


def judge(
    text: str, intents: tuple[tuple[str, str], ...], article_id: str, fact_values: Sequence[str]
) -> TextJudgement:
    """Judge an answer `text` for a ticket whose intents are (issue_id, article_id) pairs
    (Scenario.intent_keys), given the facts the customer has revealed."""
    lower, rude, polite, solves, wrong, stuffed = verdict(text, intents, article_id)
    return TextJudgement(
        rude=rude,
        polite=polite,
        solves=solves,
        wrong_solutions=wrong,
        stuffed=stuffed,
        personalised=mentions_a_fact(lower, fact_values),
    )


_AMOUNT_RE = re.compile(r"\d[\d,]*(?:\.\d+)?")


def mentions_a_fact(lower: str, fact_values: Sequence[str]) -> bool:
    """Whether a (lower-case) text names one of the customer's facts: its words, or for an
    amount its value however written ("$90", "90.00", "1,400")."""
    if any(v and v.lower() in lower for v in fact_values):
        return True
    amounts = {float(v) for v in fact_values if _AMOUNT_RE.fullmatch(v) and "." in v}
    return bool(amounts) and any(float(n.replace(",", "")) in amounts for n in _AMOUNT_RE.findall(lower))


# Where a customer turns to another issue ("Also, ...", "Separately, ..."), and sentences about the
# past or an article read, which raise nothing to handle now.
_NEXT_ISSUE_RE = re.compile(
    r"\b(?:also|on top of that|another thing|while i'm here|separately|one other thing)\b[,:]?", re.IGNORECASE
)
_NOT_CURRENT_RE = re.compile(
    r"[^.!?]*\b(?:last month|help pages|on your site|your article|faq page)\b[^.!?]*[.!?]?", re.IGNORECASE
)


def message_parts(text: str) -> list[str]:
    """A customer's message cut where it turns to another issue, without the sentences about the
    past or about articles read: a reader's first guess at the issues it raises, in order."""
    return [part for part in _NEXT_ISSUE_RE.split(_NOT_CURRENT_RE.sub(" ", text)) if part.strip()]


picklable(TextJudgement)  # pickle and copy alike on both builds
