"""A window into the world.

    python -m supportenv.world --task end_to_end_resolution --split test --seeds 0:5 --jsonl
    python -m supportenv.world --task end_to_end_resolution --split test --seeds 7
    python -m supportenv.world --task end_to_end_resolution --split test --seeds 7 --play
    python -m supportenv.world --task end_to_end_resolution --split test --seeds 7 --records

With --jsonl: one JSON object per scenario (hidden parts included). Without it: the
first scenario of the range, laid out for a person to read; with --play, also the
whole conversation as the expert handles it, with every step's reward; with --records,
also the ticket's system of record (account, orders, payments, refunds, subscriptions,
incidents), as one more key of each JSON object with --jsonl."""

from __future__ import annotations

import argparse
import json
import sys

from supportenv.cli import run_cli
from supportenv.tasks import TASK_IDS
from supportenv.world import SPLITS, Scenario, generate

PROG = "python -m supportenv.world"


def parse_seeds(text: str) -> range:
    try:
        if ":" in text:
            start, stop = (int(part) for part in text.split(":", 1))
            if stop <= start:
                raise ValueError
            return range(start, stop)
        return range(int(text), int(text) + 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"seeds must be N or A:B with A < B, got {text!r}") from None


def describe(scenario: Scenario) -> str:
    expected = scenario.expected.to_dict()
    lines = [f"{scenario.ticket_id}  ({scenario.task_id}, {scenario.split}, seed {scenario.seed})", ""]
    lines.append(
        f"  customer: {scenario.tier}, {scenario.persona}, {scenario.tenure_days} days, ${scenario.total_revenue:,.2f}"
    )
    lines.append(f"  says:     {scenario.opening_message}")
    lines.append(
        f"  intents:  {', '.join(i.issue_id for i in scenario.intents)}   templates: {', '.join(scenario.template_ids)}"
    )
    lines.append(f"  policy:   {scenario.policy.name}")
    lines.append("  hidden facts:")
    lines.extend(f"    {name}: {value}" for name, value in scenario.hidden_facts)
    lines.append("  knowledge-base suggestions, by the category the agent sets (the issue type's article first):")
    lines.extend(
        f"    {category}: " + (", ".join(f"{a} {score:.3f}" for a, _, score in matches) or "none")
        for category, matches in scenario.kb_suggestions.items()
    )
    lines.append("  expected handling:")
    lines.extend(f"    {key}: {value}" for key, value in expected.items())
    return "\n".join(lines)


def records(scenario: Scenario) -> str:
    r = scenario.records
    a = r.account
    lines = ["", "  system of record:"]
    lines.append(f"    account {a.customer_id}: {a.name} <{a.email}>, {a.tier}, since {a.created}, {a.status}")
    lines.append(f"      two-factor {a.two_factor}, address {a.address}, {a.failed_sign_ins} failed sign-ins")
    lines.extend(f"      device {d.model} {d.app_version or '(browser)'}, last seen {d.last_seen}" for d in a.devices)
    lines.extend(
        f"      sign-in {s.when} on {s.device} from {s.place}{'' if s.recognised else ' (not recognised)'}"
        for s in a.sign_ins
    )
    for o in r.orders:
        items = ", ".join(f"{i.quantity} x {i.product} at ${i.unit_price:,.2f}" for i in o.items)
        lines.append(f"    order {o.order_id} placed {o.placed}: {items}; total ${o.total:,.2f}; {o.status}")
        if o.tracking_number:
            lines.append(
                f"      {o.carrier} {o.tracking_number}: " + "; ".join(f"{e.when} {e.detail}" for e in o.events)
            )
    for p in r.payments:
        why = f" ({p.decline_reason})" if p.decline_reason else ""
        lines.append(
            f"    payment {p.payment_id} {p.date} ${p.amount:,.2f} card {p.card_last_four} {p.status}{why}"
            + (f" for {p.order_id}" if p.order_id else " (subscription)")
        )
    lines.extend(
        f"    refund {f.refund_id} ${f.amount:,.2f} for {f.order_id}, {f.status} (asked {f.requested})"
        for f in r.refunds
    )
    lines.extend(
        f"    subscription {s.subscription_id} {s.plan} ${s.price:,.2f}, renews {s.renews}" for s in r.subscriptions
    )
    lines.extend(
        f"    incident {i.incident_id} {i.service}: {i.summary}, {i.status} since {i.started}" for i in r.incidents
    )
    return "\n".join(lines)


def transcript(scenario: Scenario) -> str:
    from supportenv import expert
    from supportenv.episode import step
    from supportenv.replay import new_episode

    _, state = new_episode(scenario.task_id, scenario.split, scenario.seed)
    lines = ["", "  conversation (played by the expert, which knows the hidden scenario):"]
    shown = 0
    while not state.done:
        action = expert.expert_action(scenario, state, scenario.task_id)
        result = step(scenario, state, action)
        parts = ", ".join(f"{name} {value:+.2f}" for name, value in result.breakdown)
        for speaker, text, _ in state.history[shown:]:
            lines.append(f"    {speaker:>8}: {text}")
        shown = len(state.history)
        lines.append(f"    {'':>8}  [{action.label()}] reward {result.reward:+.2f} ({parts})")
    ending = "terminated" if state.terminated else "truncated"
    lines.append(f"  ended: {ending} after {state.step} steps, return {state.cumulative_reward:+.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--task", choices=TASK_IDS, default="end_to_end_resolution")
    parser.add_argument("--split", choices=SPLITS, default="train")
    parser.add_argument("--seeds", type=parse_seeds, default=range(0, 1), help="N or A:B (B excluded)")
    parser.add_argument("--jsonl", action="store_true", help="one JSON object per scenario")
    parser.add_argument("--play", action="store_true", help="also show the expert's whole conversation")
    parser.add_argument("--records", action="store_true", help="also show the ticket's system of record")
    args = parser.parse_args(argv)
    if args.jsonl:
        for seed in args.seeds:
            scenario = generate(args.task, args.split, seed)
            data = scenario.to_dict() | ({"records": scenario.records.to_dict()} if args.records else {})
            sys.stdout.write(json.dumps(data, ensure_ascii=False) + "\n")
    else:
        scenario = generate(args.task, args.split, args.seeds[0])
        shown = describe(scenario) + (records(scenario) if args.records else "")
        print(shown + (transcript(scenario) if args.play else ""))
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
