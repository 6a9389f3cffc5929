"""One episode told for a person: the ticket, each action with its reward and what the customer
said back, then the grade component by component. `make run` shows one before the run, so a
newcomer sees what an episode is before reading a table of scores.

The narrator is fed by `Runner.play` (the same episode the services play, over the same calls);
it only formats what the env and the grader answered.
"""

from __future__ import annotations

import re
import textwrap
from typing import IO

from supportenv.actions import Action
from supportenv.episode import Observation
from supportenv.graders import Grade
from supportenv.play import heading
from supportenv.rewards import REWARD_TABLE
from supportenv.v1 import convert, grader_pb2

WIDTH = 100
INDENT = " " * 8

# One line per column of the per-task table, printed under it (render_table).
TABLE_COLUMNS = (
    ("weight", "the task's share of the weighted score (fixed by the task, not measured)"),
    ("episodes", "tickets played: seeds 0, 1, 2, ... of the split"),
    ("mean score", "the grader's score of each episode (0 to 1), averaged: the figure the README's scoreboard gives"),
    ("pass rate", "the share of episodes that passed: score at least the task's pass mark and every gate held"),
    ("mean reward", "the step rewards summed over each episode, averaged: the shaped RL signal, not the grade"),
    ("weighted score", "each task's mean score times its weight, summed: the project's one headline figure"),
)


def _wrap(text: str, indent: str = INDENT) -> str:
    return textwrap.fill(" ".join(text.split()), WIDTH, initial_indent=indent, subsequent_indent=indent)


def _signed(value: float) -> str:
    return f"{value:+.2f}"


class Narrator:
    """Prints one episode as it is played: `begin` with the first observation, `step` after
    every action, `end` with the grader's answer."""

    def __init__(self, out: IO[str], policy: str) -> None:
        self.out, self.policy = out, policy
        self._seen_turns = 0

    def _print(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def begin(self, split: str, seed: int, observation: Observation) -> None:
        self._print(heading(f"One episode, in full: {observation.task_id}, {split} seed {seed}, policy {self.policy}"))
        self._print(
            f"Ticket {observation.ticket_id}: customer tier {observation.customer_tier}, "
            f"{observation.customer_tenure_days} days with us; at most {observation.max_steps} steps."
        )
        self._print("The customer writes:")
        self._print(_wrap(observation.customer_message))
        self._seen_turns = len(observation.history)

    def step(self, action: Action, observation: Observation) -> None:
        self._print()
        parts = ", ".join(f"{name} {_signed(value)}" for name, value in observation.last_reward_breakdown)
        reward = f"reward {_signed(observation.last_reward)}" + (f" ({parts})" if parts else "")
        self._print(f"Step {observation.step}: {action.label()}   {reward}")
        text = " ".join(action.text.split())
        if text:  # at most two lines of it: the customer's reply tells whether it worked
            short = textwrap.shorten(text, 2 * (WIDTH - len(INDENT)) - 20, placeholder=" ...")
            self._print(_wrap(f'agent: "{short}"'))
        if observation.tool_result is not None:
            result = observation.tool_result
            self._print(_wrap(f"tool {result.tool}: {result.status}: {result.message}"))
        for speaker, said, _ in observation.history[self._seen_turns :]:
            if speaker == "customer":
                self._print(_wrap(f'customer: "{said}"'))
        self._seen_turns = len(observation.history)
        if observation.last_action_feedback:
            self._print(_wrap(f"feedback: {observation.last_action_feedback}"))

    def end(self, grade: grader_pb2.GradeResponse | None, error: str | None) -> None:
        self._print()
        if grade is None:
            self._print(f"The episode failed before it was graded: {error}")
            return
        self._print(format_story_grade(convert.grade_from_pb(grade)))
        self._print(
            _wrap(
                "Step rewards are the shaped signal a learner gets at every step (the README's reward table "
                f"names all {len(REWARD_TABLE)} parts); the grade is the episode's verdict.",
                "",
            )
        )


def format_story_grade(grade: Grade) -> str:
    """The grade as play's format_grade gives it, with each component's detail wrapped under its
    row, so the told episode fits a terminal's width."""
    verdict = "passed" if grade.passed else "not passed"
    version = f"grader version {grade.grader_version}"
    lines = [heading("GRADE"), f"Score {grade.score:.3f}: {verdict} (pass mark {grade.pass_threshold:.2f}; {version})"]
    width = max(len("component"), *(len(c.name) for c in grade.components))
    lines.append(f"  {'component':<{width}}  score  weight  weighted")
    scaled = False
    for c in grade.components:
        share = _SHARE_RE.search(c.detail)  # the same long note on most rows: a mark on the row instead
        mark = f"  x{share.group(1)}*" if share else ""
        scaled = scaled or bool(share)
        lines.append(f"  {c.name:<{width}}  {c.score:.3f}  {c.weight:6.2f}  {c.score * c.weight:8.3f}{mark}")
        lines.append(_wrap(_SHARE_RE.sub("", c.detail)))
    if scaled:
        lines.append("  * credited for the share of the case handled")
    if grade.failed_gates:
        lines.append(_wrap("Failed gates (each fails the grade): " + "; ".join(grade.failed_gates), ""))
    else:
        lines.append("Gates: all held")
    return "\n".join(lines)


# "(x0.50: credited for the share of the case handled)", which most components of a partly handled case end with.
_SHARE_RE = re.compile(r"\s*\(x(\d+\.\d+): credited for the share of the case handled\)")


def explain_table(episodes: int, split: str, readme_episodes: int = 200) -> str:
    """The lines under the per-task table: what each column means, and how the run relates to
    the README's scoreboard."""
    width = max(len(name) for name, _ in TABLE_COLUMNS)
    lines = [f"  {name:<{width}}  {meaning}" for name, meaning in TABLE_COLUMNS]
    if episodes != readme_episodes or split != "test":
        lines.append(
            _wrap(
                f"This run played {episodes} `{split}` seeds per task; the README's scoreboard plays "
                f"{readme_episodes} `test` seeds (0-{readme_episodes - 1}), so its figures differ by which "
                f"tickets were drawn: `make run EPISODES={readme_episodes}` gives them exactly.",
                "",
            )
        )
    else:
        lines.append("These are the README scoreboard's seeds: its figures for this policy are these.")
    return "\n".join(lines)
