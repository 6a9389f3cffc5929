"""One episode told for a person: the ticket, each action with its reward and what the customer
said back, then the grade component by component. `make run` shows one before the run, so a
newcomer sees what an episode is before reading a table of scores.

The narrator is fed by `Runner.play` (the same episode the services play, over the same calls);
it only formats what the env and the grader answered.
"""

from __future__ import annotations

import textwrap
from typing import IO

from supportenv.actions import Action
from supportenv.episode import Observation
from supportenv.play import format_grade, heading
from supportenv.rewards import REWARD_TABLE
from supportenv.v1 import convert, grader_pb2

WIDTH = 100
INDENT = " " * 8

# One line per column of the per-task table, printed under it (render_table).
TABLE_COLUMNS = (
    ("mean score", "the grader's score of each episode (0 to 1), averaged: the figure the README's scoreboard gives"),
    ("pass rate", "the share of episodes that passed: score at least the task's pass mark and every gate held"),
    ("mean reward", "the step rewards summed over each episode, averaged: the shaped RL signal, not the grade"),
    ("weighted score", "0.2 x easy + 0.3 x medium + 0.5 x hard mean score: the source design's one figure"),
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
        self._print(format_grade(convert.grade_from_pb(grade)))
        self._print(
            "Step rewards are the shaped signal a learner gets at every step (the README's reward table names "
            f"all {len(REWARD_TABLE)} parts); the grade is the episode's verdict."
        )


def explain_table(episodes: int, split: str, readme_episodes: int = 200) -> str:
    """The lines under the per-task table: what each column means, and how the run relates to
    the README's scoreboard."""
    width = max(len(name) for name, _ in TABLE_COLUMNS)
    lines = [f"  {name:<{width}}  {meaning}" for name, meaning in TABLE_COLUMNS]
    if episodes != readme_episodes or split != "test":
        lines.append(
            f"This run played {episodes} `{split}` seeds per task; the README's scoreboard plays {readme_episodes} "
            f"`test` seeds (0-{readme_episodes - 1}), so its figures differ by which tickets were drawn: "
            f"`make run EPISODES={readme_episodes}` gives them exactly."
        )
    else:
        lines.append("These are the README scoreboard's seeds: its figures for this policy are these.")
    return "\n".join(lines)
