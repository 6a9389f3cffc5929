"""Re-score saved trajectories with the grader service and check the recorded scores.

    python -m baseline_agent.rescore PATH.jsonl [--grader-addr HOST:PORT] [--quiet]

PATH.jsonl is what `python -m baseline_agent --trajectories PATH.jsonl` writes: one JSON object
per episode with task_id, split, seed, trial, policy, actions (Action.to_dict()), rewards, score
and passed. Every trajectory is sent to the grader, which replays (task, split, seed, actions)
from scratch; the per-task mean scores are printed, and every trajectory whose re-score (score,
passed or step rewards) differs from the recorded one, or that the grader refuses to replay
(say, an action after the episode ended), is listed with its line number. A trajectory recorded
with an "error" (the episode failed, so its score is not a grade) is listed but not compared.

Without --grader-addr (or SUPPORTENV_GRADER_ADDR) a grader service is started on a free loopback
port for the run and stopped at the end.

Exit status: 0 every re-score matches; 1 at least one differs or was refused by the grader;
2 nothing could be checked (an unreadable file, malformed lines, no grader reachable).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

from baseline_agent.embedded import start_service
from baseline_agent.progress import Progress, wants_bar
from supportenv.actions import ACTION_KINDS, INVALID_KIND, TOOL_KIND, Action
from supportenv.catalog import CATEGORIES, DEPARTMENTS, PRIORITIES
from supportenv.cli import run_cli
from supportenv.v1 import convert, grader_pb2
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.client import GraderClient
from supportenv.world import SPLITS

PROG = "python -m baseline_agent.rescore"

# The same tolerance for score and rewards: every value is a double end to end, and JSON keeps
# doubles exactly, so a faithful file matches to the last bit; this only absorbs hand-edited zeros.
TOLERANCE = 1e-9
MAX_ERRORS_SHOWN = 20
REQUIRED = ("task_id", "split", "seed", "trial", "policy", "actions", "rewards", "score", "passed")
_TEXT_KEYS = ("category", "priority", "issue_type", "text", "article_id", "department", "error")
_ACTION_KEYS = frozenset(("kind", "fields", "tool", "arguments", *_TEXT_KEYS))
_GRADER_REJECTS = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION)


class FormatError(ValueError):
    """A line that is not a trajectory; the message says which field and why."""


@dataclass(frozen=True)
class SavedTrajectory:
    line: int
    task_id: str
    split: str
    seed: int
    trial: int
    policy: str
    actions: tuple[pb.Action, ...]
    rewards: tuple[float, ...]
    score: float
    passed: bool
    error: str | None = None

    def describe(self) -> str:
        return f"{self.task_id} seed={self.seed} trial={self.trial} policy={self.policy} split={self.split}"


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)) and math.isfinite(value)


def _action(data: Any, where: str) -> pb.Action:
    """One action dict -> wire message, refusing anything the runner could not have written
    (a typo in a key or an enum must not be replayed as some other action)."""
    if not isinstance(data, dict):
        raise FormatError(f"{where} must be an object like {{'kind': 'mark_resolved'}}, got {type(data).__name__}")
    kinds = (*ACTION_KINDS, TOOL_KIND, INVALID_KIND)
    if data.get("kind") not in kinds:
        raise FormatError(f"{where}.kind is {data.get('kind')!r}; expected one of {', '.join(kinds)}")
    unknown = sorted(set(data) - _ACTION_KEYS)
    if unknown:
        raise FormatError(f"{where} has unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_ACTION_KEYS))}")
    for key in _TEXT_KEYS:
        if not isinstance(data.get(key, ""), str):
            raise FormatError(f"{where}.{key} must be a string")
    fields = data.get("fields", [])
    if not (isinstance(fields, list) and all(isinstance(f, str) for f in fields)):
        raise FormatError(f"{where}.fields must be a list of strings")
    if not isinstance(data.get("tool", ""), str):
        raise FormatError(f"{where}.tool must be a string")
    arguments = data.get("arguments", {})
    if not (isinstance(arguments, dict) and all(isinstance(v, str) for v in arguments.values())):
        raise FormatError(f"{where}.arguments must be an object of strings, like {{'order_id': 'ORD-123456'}}")
    action = Action.from_dict(data)
    if action.kind == "classify_issue" and action.category not in CATEGORIES:
        raise FormatError(f"{where}.category is {action.category!r}; expected one of {', '.join(CATEGORIES)}")
    if action.priority and action.priority not in PRIORITIES:
        raise FormatError(f"{where}.priority is {action.priority!r}; expected one of {', '.join(PRIORITIES)}")
    if action.kind == "assign_department" and action.department not in DEPARTMENTS:
        raise FormatError(f"{where}.department is {action.department!r}; expected one of {', '.join(DEPARTMENTS)}")
    return convert.action_to_pb(action)


def parse_line(text: str, line: int) -> SavedTrajectory:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(f"not valid JSON: {exc.msg} at column {exc.colno}") from None
    if not isinstance(data, dict):
        raise FormatError(f"expected a JSON object, got {type(data).__name__}")
    missing = [key for key in REQUIRED if key not in data]
    if missing:
        raise FormatError(f"missing field(s) {', '.join(missing)}")
    if not (isinstance(data["task_id"], str) and data["task_id"]):
        raise FormatError("task_id must be a non-empty string")
    if data["split"] not in SPLITS:
        raise FormatError(f"split is {data['split']!r}; expected one of {', '.join(SPLITS)}")
    for key in ("seed", "trial"):
        if not (_is_int(data[key]) and data[key] >= 0):
            raise FormatError(f"{key} must be a non-negative integer, got {data[key]!r}")
    if not isinstance(data["policy"], str):
        raise FormatError("policy must be a string")
    if not isinstance(data["actions"], list):
        raise FormatError("actions must be a list of action objects")
    actions = tuple(_action(a, f"actions[{i}]") for i, a in enumerate(data["actions"]))
    rewards = data["rewards"]
    if not (isinstance(rewards, list) and all(_is_number(r) for r in rewards)):
        raise FormatError("rewards must be a list of numbers")
    if not (_is_number(data["score"]) and 0.0 <= data["score"] <= 1.0):
        raise FormatError(f"score must be a number in [0, 1], got {data['score']!r}")
    if not isinstance(data["passed"], bool):
        raise FormatError(f"passed must be true or false, got {data['passed']!r}")
    if not isinstance(data.get("error"), (str, type(None))):
        raise FormatError("error must be null or a string")
    return SavedTrajectory(
        line=line,
        task_id=data["task_id"],
        split=data["split"],
        seed=data["seed"],
        trial=data["trial"],
        policy=data["policy"],
        actions=actions,
        rewards=tuple(float(r) for r in rewards),
        score=float(data["score"]),
        passed=data["passed"],
        error=data.get("error"),
    )


def read_trajectories(path: Path) -> tuple[list[SavedTrajectory], list[str]]:
    """Every trajectory in the file, and one "PATH:LINE: message" per line that is not one."""
    trajectories, errors = [], []
    with path.open(encoding="utf-8") as lines:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                trajectories.append(parse_line(text, number))
            except FormatError as exc:
                errors.append(f"{path}:{number}: {exc}")
    return trajectories, errors


def differences(saved: SavedTrajectory, grade: grader_pb2.GradeResponse) -> list[str]:
    out = []
    if not math.isclose(saved.score, grade.score, rel_tol=0.0, abs_tol=TOLERANCE):
        out.append(f"score recorded {saved.score:.4f}, re-scored {grade.score:.4f}")
    if saved.passed != grade.passed:
        out.append(f"passed recorded {str(saved.passed).lower()}, re-scored {str(grade.passed).lower()}")
    rewards = tuple(grade.rewards)
    if len(rewards) != len(saved.rewards) or any(
        not math.isclose(a, b, rel_tol=0.0, abs_tol=TOLERANCE) for a, b in zip(saved.rewards, rewards, strict=True)
    ):
        recorded, replayed = (",".join(f"{r:.2f}" for r in rs) for rs in (saved.rewards, rewards))
        out.append(f"rewards recorded {recorded}, replayed {replayed}")
    return out


def render_means(rows: Sequence[tuple[SavedTrajectory, float]]) -> str:
    """Mean re-scored and recorded score per (policy, split, task), in order of appearance."""
    groups: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    for saved, score in rows:
        groups.setdefault((saved.policy, saved.split, saved.task_id), []).append((score, saved.score))
    lines = [f"{'policy':<16}{'split':<12}{'task':<24}{'trajectories':>13}{'mean score':>12}{'recorded':>10}"]
    for (policy, split, task), scores in groups.items():
        n = len(scores)
        rescored, recorded = sum(s for s, _ in scores) / n, sum(r for _, r in scores) / n
        lines.append(f"{policy:<16}{split:<12}{task:<24}{n:>13}{rescored:>12.3f}{recorded:>10.3f}")
    return "\n".join(lines)


def rescore(
    trajectories: Sequence[SavedTrajectory], grader_addr: str, progress: Progress
) -> tuple[list[tuple[SavedTrajectory, float]], list[str], list[str]]:
    """Grade each trajectory; returns the (trajectory, re-score) rows, one report per line whose
    re-score differs or that the grader refused to replay, and one per failed episode skipped."""
    rows, mismatches, skipped = [], [], []
    with GraderClient(grader_addr) as grader:
        for saved in trajectories:
            if saved.error:
                skipped.append(f"line {saved.line} ({saved.describe()}): {saved.error}")
                progress.advance()
                continue
            try:
                grade = grader.grade(saved.task_id, saved.split, saved.seed, saved.actions)
            except grpc.RpcError as exc:
                if exc.code() not in _GRADER_REJECTS:
                    raise
                mismatches.append(f"line {saved.line} ({saved.describe()}): the grader refused it: {exc.details()}")
                progress.advance()
                continue
            rows.append((saved, grade.score))
            diff = differences(saved, grade)
            if diff:
                mismatches.append(f"line {saved.line} ({saved.describe()}): {'; '.join(diff)}")
            progress.advance()
    return rows, mismatches, skipped


def _print_errors(errors: Sequence[str]) -> None:
    for error in errors[:MAX_ERRORS_SHOWN]:
        print(error, file=sys.stderr)
    if len(errors) > MAX_ERRORS_SHOWN:
        print(f"... and {len(errors) - MAX_ERRORS_SHOWN} more", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", type=Path, metavar="PATH.jsonl", help="trajectories written by --trajectories")
    parser.add_argument(
        "--grader-addr",
        default=os.environ.get("SUPPORTENV_GRADER_ADDR"),
        help="grader service HOST:PORT (env SUPPORTENV_GRADER_ADDR); default: start one for the run",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        trajectories, errors = read_trajectories(args.path)
    except (OSError, UnicodeDecodeError) as exc:
        print(f"cannot read {args.path}: {exc}", file=sys.stderr)
        return 2
    if errors:
        print(f"{len(errors)} line(s) of {args.path} are not trajectories; nothing was re-scored:", file=sys.stderr)
        _print_errors(errors)
        return 2
    if not trajectories:
        print(f"{args.path} holds no trajectories", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        grader_addr = args.grader_addr
        if not grader_addr:
            grader = start_service("grader_service")
            stack.callback(grader.stop)
            grader_addr = grader.address
            print(f"started embedded grader: {grader_addr}", file=sys.stderr)
        progress = stack.enter_context(Progress(len(trajectories), wants_bar(sys.stderr, args.quiet), unit="traj"))
        try:
            rows, mismatches, skipped = rescore(trajectories, grader_addr, progress)
        except grpc.RpcError as exc:
            progress.close()
            print(f"grader at {grader_addr} failed: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return 2
    print(f"re-scored {len(rows)} of {len(trajectories)} trajectories in {args.path} (grader {grader_addr})")
    if rows:
        print(render_means(rows))
    if skipped:
        print(f"{len(skipped)} trajectory(ies) not compared: the episode failed when it was recorded:")
        for line in skipped:
            print(f"  {line}")
    if mismatches:
        print(f"{len(mismatches)} of {len(trajectories)} trajectories do not re-score as recorded:")
        for mismatch in mismatches:
            print(f"  {mismatch}")
        return 1
    if not rows:
        print("nothing to compare: every trajectory in the file is of a failed episode", file=sys.stderr)
        return 2
    print(f"all {len(rows)} re-scores match the recorded scores")
    return 0


if __name__ == "__main__":
    sys.exit(run_cli(main, PROG))
