"""Play one ticket from the terminal, as a person or as a model, seeing exactly what a model sees.

    python -m supportenv.play --task end_to_end_resolution --split validation --seed 3
    python -m supportenv.play --seed 3 --replies replies.txt [--system] [--json]
    python -m supportenv.play --task expert_resolution --seed 3
    python -m supportenv.play --list-tasks

Every decision shows the chat prompt `supportenv.llm.render_prompt` builds for the current
observation (the messages the LLM policy sends), every reply is read with
`supportenv.llm.parse_action` as the LLM policy reads a model's reply (an unreadable one is a
penalised invalid step), and every step shows the parsed action, the step reward and its named
parts, the feedback and the conversation it added. At the end: the grader's grade of the
trajectory, component by component.

Tasks: the three of the source designs and expert_resolution (see --list-tasks). The header names
the actions the task takes; an action it does not take is read as a penalised invalid step.

The expert task (expert_resolution) also takes use_tool: a call of one of the help desk's tools on
the customer's system of record, written as JSON like every other reply:
    {"action": "use_tool", "tool": "look_up_order", "arguments": {"order_id": "ORD-123456"}}
    {"action": "use_tool", "tool": "issue_refund", "arguments": {"order_id": "ORD-123456", "amount": "12.50"}}
    {"action": "use_tool", "tool": "verify_identity", "arguments": {}}
Argument values are strings (numbers are accepted). After a tool call the step shows the tool's
result (status ok / not_found / refused, a message, and the data it found), and the next prompt
shows it once. The tools, with their arguments (* = needs the customer verified first; what each
does is in the system prompt):
{tools}
Verify the customer (verify_identity) once they have given, in the conversation, their account
email and an order id or their card's last four digits (ask_for_more_info with fields
account_email, order_id or card_last_four).

Interactive (default): a reply is one or more lines of text ended by an empty line; Ctrl-D stops.

--replies FILE (stateless, for models): FILE holds the replies given so far, one per line (blank
lines ignored; `-` reads stdin). The episode is replayed from the start, then comes the prompt for
the next decision (the system message only when FILE has no replies yet, or with --system) or,
if the episode ended, its grade. Append the next reply as one line and run again. With --json the
same comes as one JSON object whose "messages" is the full chat prompt for the next decision.

Exit status: 0 done; 1 interactive input ended before the episode did (or the output was closed);
2 bad input.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TextIO

from supportenv.actions import INVALID_KIND, Action
from supportenv.catalog import TOOL_KIND
from supportenv.cli import run_cli
from supportenv.episode import StepResult, observe, step
from supportenv.errors import InvalidRequestError, SupportEnvError
from supportenv.graders import Grade, gate_rules, grade_trajectory
from supportenv.llm import EXAMPLE_REPLY, TOOL_EXAMPLE_REPLY, parse_action, render_prompt
from supportenv.replay import new_episode
from supportenv.rewards import REWARD_TABLE
from supportenv.tasks import ALL_TASK_IDS, ALL_TASKS, get_task
from supportenv.tools import TOOLS, ToolResult
from supportenv.world import SPLITS

PROG = "python -m supportenv.play"
RULE = "=" * 12


@dataclass(frozen=True)
class StepReport:
    """One reply and what the library made of it."""

    reply: str
    action: Action  # as parse_action read the reply
    result: StepResult  # the reward, its named parts, and the next observation (which carries the feedback)
    conversation: tuple[tuple[str, str], ...]  # (speaker, text) turns this step added

    @property
    def number(self) -> int:
        return self.result.observation.step

    @property
    def feedback(self) -> str:
        return self.result.observation.last_action_feedback

    @property
    def tool_result(self) -> ToolResult | None:
        return self.result.observation.tool_result

    def to_dict(self) -> dict[str, Any]:
        result = self.result
        tool_result = self.tool_result
        return {
            "step": self.number,
            "reply": self.reply,
            "action": self.action.to_dict(),
            "reward": result.reward,
            "breakdown": [{"name": name, "value": value} for name, value in result.breakdown],
            "feedback": self.feedback,
            "tool_result": dataclasses.asdict(tool_result) if tool_result is not None else None,
            "conversation": [{"speaker": speaker, "text": text} for speaker, text in self.conversation],
            "terminated": result.terminated,
            "truncated": result.truncated,
        }


class Session:
    """One episode of the in-process library, played reply by reply as the LLM policy plays it."""

    def __init__(self, task_id: str, split: str, seed: int) -> None:
        self.scenario, self.state = new_episode(task_id, split, seed)
        self.allowed_actions = get_task(task_id).allowed_actions

    @property
    def takes_tools(self) -> bool:
        return TOOL_KIND in self.allowed_actions

    @property
    def done(self) -> bool:
        return self.state.done

    def messages(self) -> list[dict[str, str]]:
        """The chat prompt for the next decision, exactly as the LLM policy builds it."""
        return render_prompt(observe(self.scenario, self.state))

    def take(self, reply: str) -> StepReport:
        action = parse_action(reply, self.allowed_actions)  # another kind is an invalid step, not an error
        shown = len(self.state.history)
        result = step(self.scenario, self.state, action)
        added = tuple((speaker, text) for speaker, text, _ in self.state.history[shown:])
        return StepReport(reply, action, result, added)

    def ending(self) -> str:
        state = self.state
        if state.terminated:
            return "terminated: the ticket was marked resolved"
        if state.customer_left:
            return "truncated: the customer ran out of patience and left"
        return f"truncated: the step budget of {self.scenario.briefing.max_steps} is used up"

    def grade(self) -> Grade:
        """The grader's verdict, from the trajectory alone (what the grader service computes)."""
        state = self.state
        return grade_trajectory(state.task_id, state.split, state.seed, state.actions)

    def try_grade(self) -> tuple[Grade | None, str]:
        """The grade, or None and why it could not be computed (a task whose grader is missing)."""
        try:
            return self.grade(), ""
        except Exception as exc:  # the episode was played; say why it has no grade rather than crash
            return None, f"the grader could not grade task {self.state.task_id}: {type(exc).__name__}: {exc}"


# ---- text for people ----


def _meaning(name: str, value: float) -> str:
    """What a reward part pays for, from the reward table; a part that counts several of what it
    pays per (facts, issues) says how many: "3 x +0.10: ask_for_more_info, per needed fact revealed"."""
    if name not in REWARD_TABLE:
        return ""
    rate, when = REWARD_TABLE[name]
    times = value / rate if rate else 1.0
    if abs(times - 1.0) < 1e-9:
        return when
    if times > 0 and abs(times - round(times)) < 1e-6:
        return f"{round(times)} x {_signed(rate)}: {when}"
    return f"{_signed(rate)} each: {when}"


def _signed(value: float) -> str:
    text = f"{value:+.2f}"
    return text if float(text) == round(value, 6) else f"{value:+g}"


def heading(title: str) -> str:
    return f"{RULE} {title} {RULE}"


def format_header(session: Session) -> str:
    state, brief = session.state, session.scenario.briefing
    return (
        f"Ticket {brief.ticket_id}: task {state.task_id}, split {state.split}, seed {state.seed}, "
        f"at most {brief.max_steps} steps\n"
        f"Actions this task takes: {', '.join(session.allowed_actions)}"
        + (f"\nTools (use_tool): {', '.join(_tool_signature(spec) for spec in TOOLS)}" if session.takes_tools else "")
    )


def _tool_signature(spec: Any) -> str:
    return f"{spec.name}({', '.join(spec.arguments)}){'*' if spec.needs_verification else ''}"


def format_tool_list() -> str:
    return "\n".join(f"    {_tool_signature(spec):<44} {spec.kind}, ${spec.cost:.2f}" for spec in TOOLS)


def format_tool_result(result: ToolResult) -> list[str]:
    """A tool call's result for a reader: the tool, status and message, then its data as indented JSON."""
    lines = [f"Tool result: {result.tool}: {result.status}: {result.message}"]
    if result.data:
        data = json.dumps(result.data, ensure_ascii=False, indent=2, default=str)
        lines.extend(f"  {line}" for line in data.splitlines())
    else:
        lines.append("  (no data)")
    return lines


def format_prompt(messages: list[dict[str, str]], step: int, with_system: bool) -> str:
    """The chat messages verbatim, each under a heading naming its role."""
    blocks = []
    for message in messages:
        if message["role"] == "system" and not with_system:
            continue
        title = "SYSTEM PROMPT" if message["role"] == "system" else f"USER PROMPT (decision for step {step + 1})"
        blocks.append(f"{heading(title)}\n{message['content']}")
    return "\n\n".join(blocks)


def format_step(report: StepReport) -> str:
    action = report.action
    reply = report.reply.replace("\n", "\n          ")  # a multi-line reply stays in its column
    lines = [heading(f"Step {report.number}"), f"Reply:    {reply}"]
    if action.kind == INVALID_KIND:
        lines.append(f"Parsed:   invalid ({action.error})")
    else:
        lines.append(f"Parsed:   {json.dumps(action.to_dict(), ensure_ascii=False)}")
    breakdown = report.result.breakdown
    lines.append(f"Reward:   {_signed(report.result.reward)}")
    width = max((len(name) for name, _ in breakdown), default=0)
    for name, value in breakdown:
        lines.append(f"  {name:<{width}}  {_signed(value):>6}  {_meaning(name, value)}".rstrip())
    if not breakdown:
        lines.append("  (no reward parts)")
    lines.append(f"Feedback: {report.feedback or '(none)'}")
    if report.tool_result is not None:
        lines.extend(format_tool_result(report.tool_result))
    lines.append("Conversation added:")
    lines.extend(f"  {speaker}: {text}" for speaker, text in report.conversation)
    if not any(speaker == "customer" for speaker, _ in report.conversation):
        lines.append("  (the customer did not reply)")
    return "\n".join(lines)


def format_grade(grade: Grade) -> str:
    verdict = "passed" if grade.passed else "not passed"
    lines = [
        heading("GRADE"),
        f"Score {grade.score:.3f}: {verdict} (pass mark {grade.pass_threshold:.2f}; grader {grade.grader_version})",
    ]
    width = max(len("component"), *(len(c.name) for c in grade.components))
    lines.append(f"  {'component':<{width}}  score  weight  weighted  detail")
    for c in grade.components:
        lines.append(f"  {c.name:<{width}}  {c.score:.3f}  {c.weight:6.2f}  {c.score * c.weight:8.3f}  {c.detail}")
    if grade.failed_gates:
        lines.append("Failed gates (each fails the grade):")
        lines.extend(f"  {gate}" for gate in grade.failed_gates)
    else:
        lines.append(f"Gates: all held ({', '.join(gate_rules(grade.task_id))})")
    return "\n".join(lines)


def format_end(session: Session) -> str:
    state = session.state
    summary = f"{session.ending()}, after {state.step} steps; return {_signed(state.cumulative_reward)}"
    grade, why = session.try_grade()
    graded = format_grade(grade) if grade is not None else f"{heading('GRADE')}\nNo grade: {why}"
    return f"{heading('EPISODE ENDED')}\n{summary}\n\n{graded}"


def format_tasks() -> str:
    lines = ["Tasks (--task):"]
    width = max(len(t.task_id) for t in ALL_TASKS)
    for t in ALL_TASKS:
        lines.append(
            f"  {t.task_id:<{width}}  {t.difficulty:<6}  at most {t.max_steps:>2} steps, "
            f"pass mark {t.pass_threshold:.2f}: {t.description}"
        )
        if TOOL_KIND in t.allowed_actions:
            lines.append(f"  {'':<{width}}  also takes {TOOL_KIND}, with the tools (* = needs verification):")
            lines.extend(f"  {'':<{width}}  {line}" for line in format_tool_list().splitlines())
    lines.append(f"Splits (--split): {', '.join(SPLITS)}")
    return "\n".join(lines)


# ---- the two modes ----


def read_reply(stream: TextIO) -> str | None:
    """One interactive reply: its lines up to an empty line (leading empty lines are skipped).
    None when the input ends before any text."""
    lines: list[str] = []
    for line in iter(stream.readline, ""):
        if line.strip():
            lines.append(line.rstrip("\r\n"))
        elif lines:
            break
    return "\n".join(lines) if lines else None


def play_interactive(session: Session, stdin: TextIO, out: TextIO) -> int:
    messages = session.messages()
    print(format_header(session), file=out)
    print(
        "You are the agent. Each decision shows the prompt a language model gets (the system prompt below comes "
        "before every user prompt); reply with one action as JSON, e.g.\n"
        f"{EXAMPLE_REPLY}\n"
        + (f"or, to call a tool,\n{TOOL_EXAMPLE_REPLY}\n" if session.takes_tools else "")
        + f"\n{format_prompt(messages, session.state.step, with_system=True)}",
        file=out,
    )
    while True:
        print(f"\n{heading('YOUR REPLY (one or more lines, then an empty line; Ctrl-D stops)')}", file=out, flush=True)
        reply = read_reply(stdin)
        if reply is None:
            print(f"Input ended at step {session.state.step}, before the episode did; nothing was graded.", file=out)
            return 1
        print(f"\n{format_step(session.take(reply))}", file=out)
        if session.done:
            print(f"\n{format_end(session)}", file=out)
            return 0
        print(f"\n{format_prompt(session.messages(), session.state.step, with_system=False)}", file=out)


def read_replies(source: str, stdin: TextIO) -> list[tuple[int, str]]:
    """The non-blank lines of FILE (or stdin for '-'), with their line numbers."""
    cannot = f"cannot read the replies file {source}"
    try:
        text = stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidRequestError(f"{cannot}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InvalidRequestError(f"{cannot}: it is not UTF-8 text ({exc.reason})") from None
    return [(number, line) for number, line in enumerate(text.splitlines(), 1) if line.strip()]


def replay_replies(session: Session, replies: list[tuple[int, str]], source: str) -> Iterator[StepReport]:
    where = "stdin" if source == "-" else source
    for number, reply in replies:
        if session.done:
            raise InvalidRequestError(
                f"{where}:{number}: a reply after the episode ended at step {session.state.step} "
                f"({session.ending()}); remove it and any after it"
            )
        yield session.take(reply)


def play_replies(session: Session, source: str, stdin: TextIO, out: TextIO, with_system: bool, as_json: bool) -> int:
    replies = read_replies(source, stdin)
    reports = list(replay_replies(session, replies, source))  # all checked before anything is printed
    if as_json:
        state = session.state
        grade, why = session.try_grade() if session.done else (None, "")
        document = {
            "task_id": state.task_id,
            "split": state.split,
            "seed": state.seed,
            "ticket_id": session.scenario.briefing.ticket_id,
            "steps": [report.to_dict() for report in reports],
            "done": session.done,
            "ending": session.ending() if session.done else "",
            "messages": None if session.done else session.messages(),
            "grade": dataclasses.asdict(grade) if grade is not None else None,
            **({"grade_error": why} if why else {}),
        }
        print(json.dumps(document, ensure_ascii=False, indent=2), file=out)
        return 0
    blocks = [format_header(session), *(format_step(report) for report in reports)]
    if session.done:
        blocks.append(format_end(session))
    else:
        first = not replies
        blocks.append(format_prompt(session.messages(), session.state.step, with_system=with_system or first))
        where = "the replies file" if source != "-" else "the replies"
        blocks.append(f"{heading('NEXT')}\nAppend your reply to {where} as one line and run this command again.")
    print("\n\n".join(blocks), file=out)
    return 0


# ---- command line ----


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, no usage block
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    description = (__doc__ or "").replace("{tools}", format_tool_list())
    parser = _Parser(prog=PROG, description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="end_to_end_resolution", help=f"one of {', '.join(ALL_TASK_IDS)}")
    parser.add_argument("--split", default="validation", help=f"one of {', '.join(SPLITS)}")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--replies", metavar="FILE", help="stateless mode: the replies so far, one per line; - = stdin")
    parser.add_argument("--system", action="store_true", help="with --replies: always show the system prompt")
    parser.add_argument("--json", action="store_true", help="with --replies: one JSON object instead of text")
    parser.add_argument("--list-tasks", action="store_true", help="list the tasks and splits, then exit")
    args = parser.parse_args(argv)
    if (args.system or args.json) and args.replies is None:
        parser.error("--system and --json go with --replies FILE")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.list_tasks:
        print(format_tasks())
        return 0
    try:
        session = Session(args.task, args.split, args.seed)
        if args.replies is None:
            return play_interactive(session, sys.stdin, sys.stdout)
        return play_replies(session, args.replies, sys.stdin, sys.stdout, args.system, args.json)
    except SupportEnvError as exc:  # bad input: one line, no traceback
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # a reader that leaves (`| head`) or Ctrl-C: one line at most, no traceback
    sys.exit(run_cli(main, PROG))
