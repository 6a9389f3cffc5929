"""Play episodes against the env service and grade each one with the grader service.

Prints every episode in the second source design's log format:
    [START] task=<task> env=supportenv model=<policy>
    [STEP] step=<n> action=<action> reward=<0.00> done=<true|false> error=<msg|null>
    [END] success=<true|false> steps=<n> score=<0.00> rewards=<r1,r2,...>
then a per-task table and the weighted score.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

import grpc

from baseline_agent.policies import Policy
from supportenv.tasks import EXTENDED_WEIGHTS
from supportenv.v1 import codec, convert
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.client import EnvClient, GraderClient

if TYPE_CHECKING:
    from baseline_agent.story import Narrator

ENV_NAME = "supportenv"
# How often a stochastic policy plays each seed unless told otherwise: enough runs for pass^1..4.
STOCHASTIC_TRIALS = 4


def default_trials(policy: Policy) -> int:
    return STOCHASTIC_TRIALS if policy.stochastic else 1


@dataclass
class EpisodeRecord:
    task_id: str
    seed: int
    trial: int = 0
    steps: int = 0
    rewards: list[float] = field(default_factory=list)
    score: float = 0.0
    passed: bool = False
    terminated: bool = False
    truncated: bool = False
    components: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    # Every action the env accepted, as Action.to_dict(): with task, split and seed, the trajectory.
    actions: list[dict[str, object]] = field(default_factory=list)


@dataclass
class TaskSummary:
    task_id: str
    weight: float
    episodes: int
    mean_score: float
    pass_rate: float
    mean_reward: float
    trials: int = 1
    # pass^k: the chance that k independent runs on the same seed all pass, k = 1..4.
    pass_hat_k: dict[int, float] = field(default_factory=dict)


def _fmt_bool(value: bool) -> str:
    return "true" if value else "false"


def _one_line(text: str) -> str:
    return " ".join(text.split())


class Runner:
    def __init__(
        self,
        env_addr: str,
        grader_addr: str,
        policy: Policy,
        split: str = "test",
        out: IO[str] | None = None,
        quiet: bool = False,
    ) -> None:
        if split not in convert.SPLIT_TO_PB:  # fail here, not in every episode
            raise ValueError(f"unknown split {split!r}; expected one of {', '.join(convert.SPLIT_TO_PB)}")
        self.env = EnvClient(env_addr)
        self.grader = GraderClient(grader_addr)
        self.policy = policy
        self.split = split
        self.out = out or sys.stdout
        self.quiet = quiet

    def close(self) -> None:
        self.env.close()
        self.grader.close()

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _log(self, line: str) -> None:
        if not self.quiet:
            print(line, file=self.out, flush=True)

    def tasks(self) -> list[pb.TaskInfo]:
        return self.env.list_tasks()

    def play(self, task_id: str, seed: int, trial: int = 0, narrator: Narrator | None = None) -> EpisodeRecord:
        """One episode, graded; `narrator` (baseline_agent.story) also tells it for a person."""
        record = EpisodeRecord(task_id, seed, trial)
        actions: list[pb.Action] = []
        grade = None
        self._log(f"[START] task={task_id} env={ENV_NAME} model={self.policy.name}")
        try:
            observation = self.env.reset_reply(task_id, self.split, seed).observation
            self.policy.begin(task_id, self.split, seed, trial)
            if narrator is not None:
                narrator.begin(self.split, seed, codec.observation_from_pb(observation))
            done = False
            while not done:
                action = self.policy.act(codec.observation_from_pb(observation))
                action_pb = convert.action_to_pb(action)
                try:
                    result = self.env.step_reply(action_pb)
                except grpc.RpcError as exc:
                    record.error = f"{exc.code().name}: {exc.details()}"
                    self._log(
                        f"[STEP] step={record.steps + 1} action={action.label()} reward=0.00 done=true "
                        f"error={_one_line(record.error)}"
                    )
                    break
                actions.append(action_pb)
                record.actions.append(action.to_dict())
                observation = result.observation
                done = result.terminated or result.truncated
                record.steps += 1
                record.rewards.append(result.reward)
                record.terminated, record.truncated = result.terminated, result.truncated
                self._log(
                    f"[STEP] step={record.steps} action={action.label()} reward={result.reward:.2f} "
                    f"done={_fmt_bool(done)} error={_one_line(action.error) if action.error else 'null'}"
                )
                if narrator is not None:
                    narrator.step(action, codec.observation_from_pb(observation))
            grade = self.grader.grade(task_id, self.split, seed, actions)
            record.score, record.passed = grade.score, grade.passed
            record.components = {c.name: c.score for c in grade.components}
        except grpc.RpcError as exc:
            record.error = f"{exc.code().name}: {exc.details()}"
        except Exception as exc:  # e.g. the policy's model API failed: the episode fails, the run goes on
            record.error = _one_line(f"{type(exc).__name__}: {exc}")
        finally:
            rewards = ",".join(f"{r:.2f}" for r in record.rewards)
            self._log(
                f"[END] success={_fmt_bool(record.passed)} steps={record.steps} "
                f"score={record.score:.2f} rewards={rewards}"
            )
            if narrator is not None:
                narrator.end(grade, record.error)
        return record

    def run(
        self,
        task_ids: Sequence[str],
        episodes: int,
        seed_start: int = 0,
        trials: int = 1,
        on_episode: Callable[[EpisodeRecord], None] | None = None,
    ) -> tuple[list[TaskSummary], list[EpisodeRecord]]:
        """Play `episodes` seeds x `trials` of every task; `on_episode` sees each record as it
        finishes (progress bars, streaming the trajectories to a file)."""
        infos = {t.task_id: t for t in self.tasks()}
        unknown = [t for t in task_ids if t not in infos]
        if unknown:
            raise SystemExit(f"unknown task(s) {', '.join(unknown)}; available: {', '.join(infos)}")
        summaries, records = [], []
        for task_id in task_ids:
            batch = []
            for i in range(episodes):
                for trial in range(trials):
                    record = self.play(task_id, seed_start + i, trial)
                    batch.append(record)
                    if on_episode is not None:
                        on_episode(record)
            records.extend(batch)
            n = max(len(batch), 1)
            summaries.append(
                TaskSummary(
                    task_id=task_id,
                    weight=infos[task_id].weight,
                    episodes=episodes,
                    mean_score=round(sum(r.score for r in batch) / n, 4),
                    pass_rate=round(sum(r.passed for r in batch) / n, 4),
                    mean_reward=round(sum(sum(r.rewards) for r in batch) / n, 4),
                    trials=trials,
                    pass_hat_k=pass_hat_k(batch, trials),
                )
            )
        return summaries, records


def pass_hat_k(records: Sequence[EpisodeRecord], trials: int, k_max: int = 4) -> dict[int, float]:
    """The unbiased pass^k estimate (as in tau-bench): per seed, C(c, k) / C(n, k) for c
    passes in n trials, averaged over seeds. One trial means a deterministic policy,
    whose repeated runs are identical, so pass^k equals pass^1."""
    by_seed: dict[int, int] = {}
    for record in records:
        by_seed[record.seed] = by_seed.get(record.seed, 0) + record.passed
    if not by_seed:
        return {}
    out = {}
    for k in range(1, k_max + 1):
        if trials == 1:
            out[k] = sum(by_seed.values()) / len(by_seed)
        elif k <= trials:
            out[k] = sum(math.comb(c, k) / math.comb(trials, k) for c in by_seed.values()) / len(by_seed)
    return {k: round(v, 4) for k, v in out.items()}


def weighted_score(summaries: Sequence[TaskSummary]) -> float:
    total_weight = sum(s.weight for s in summaries)
    return round(sum(s.weight * s.mean_score for s in summaries) / total_weight, 4) if total_weight else 0.0


def extended_score(summaries: Sequence[TaskSummary]) -> float | None:
    """The source designs' three tasks and the expert task, by `tasks.EXTENDED_WEIGHTS`; None
    unless every one of them was played."""
    by_task = {s.task_id: s.mean_score for s in summaries}
    if not set(EXTENDED_WEIGHTS) <= set(by_task):
        return None
    return round(sum(w * by_task[t] for t, w in EXTENDED_WEIGHTS.items()), 4)


def render_table(policy: str, split: str, summaries: Sequence[TaskSummary]) -> str:
    # pass^k only when seeds were played more than once: for one trial it equals the pass rate.
    repeated = any(s.trials > 1 for s in summaries)
    lines = [
        f"policy={policy} split={split}",
        f"{'task':<24}{'weight':>8}{'episodes':>10}{'mean score':>12}{'pass rate':>11}{'mean reward':>13}"
        + ("   pass^1..4" if repeated else ""),
    ]
    for s in summaries:
        hats = "/".join(f"{v:.2f}" for v in s.pass_hat_k.values())
        lines.append(
            f"{s.task_id:<24}{s.weight:>8.2f}{s.episodes:>10}{s.mean_score:>12.3f}{s.pass_rate:>11.2f}"
            f"{s.mean_reward:>13.3f}" + (f"   {hats}" if repeated else "")
        )
    lines.append(f"{'weighted score':<24}{'':>8}{'':>10}{weighted_score(summaries):>12.3f}")
    extended = extended_score(summaries)
    if extended is not None:
        lines.append(f"{'extended score':<24}{'':>8}{'':>10}{extended:>12.3f}   (with the expert task)")
    return "\n".join(lines)


def write_json(
    path: Path, policy: str, split: str, summaries: Sequence[TaskSummary], records: Sequence[EpisodeRecord]
) -> None:
    data = {
        "policy": policy,
        "split": split,
        "tasks": {
            s.task_id: {
                "mean_score": s.mean_score,
                "pass_rate": s.pass_rate,
                "episodes": s.episodes,
                "mean_reward": s.mean_reward,
                "weight": s.weight,
                "trials": s.trials,
                "pass_hat_k": {str(k): v for k, v in s.pass_hat_k.items()},
            }
            for s in summaries
        },
        "weighted_score": weighted_score(summaries),
        # The actions live in the --trajectories JSONL; this summary keeps its shape.
        "episodes": [{k: v for k, v in asdict(r).items() if k != "actions"} for r in records],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")


def trajectory_json(record: EpisodeRecord, policy: str, split: str, model: str = "") -> dict[str, object]:
    """One episode as a replayable trajectory: `python -m baseline_agent.rescore` sends
    (task_id, split, seed, actions) to the grader and compares its score with `score`.
    `model` is the policy's log name (the model name for `llm`); `error` is null unless the
    episode failed, in which case actions, rewards and score are what it got to."""
    return {
        "task_id": record.task_id,
        "split": split,
        "seed": record.seed,
        "trial": record.trial,
        "policy": policy,
        "model": model or policy,
        "actions": record.actions,
        "rewards": record.rewards,
        "score": record.score,
        "passed": record.passed,
        "error": record.error,
    }


class TrajectoryWriter:
    """Streams one JSON object per episode to a .jsonl file, flushed after every line, so a
    long run that is interrupted still leaves every finished episode on disk."""

    def __init__(self, path: Path, policy: str, split: str, model: str = "") -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.policy, self.split, self.model = path, policy, split, model
        self.count = 0
        self._file = path.open("w", encoding="utf-8")

    def write(self, record: EpisodeRecord) -> None:
        self._file.write(json.dumps(trajectory_json(record, self.policy, self.split, self.model)) + "\n")
        self._file.flush()
        self.count += 1

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> TrajectoryWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
