"""Learnability (training/): a small budget learns from the reward, runs are reproducible, and the
committed docs/learning_curve.json has its schema and meets the acceptance criteria."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from supportenv.gym import SupportFeatureEnv
from training.evaluate import reference_scores, weighted
from training.experiment import Budget, interval, run_seed
from training.reinforce import KIND_OF, Config, Featuriser, Model, advantages, train

ROOT = Path(__file__).resolve().parent.parent
CURVE_JSON = ROOT / "docs" / "learning_curve.json"
CURVE_PNG = ROOT / "docs" / "learning_curve.png"
SPLITS = ("train", "validation", "test")


def test_a_small_budget_learns_from_the_reward():
    """1500 episodes of issue classification: the greedy policy's validation score must rise well above
    its first evaluation and above the random policy. Could fail: an untrained policy scores ~0."""
    task = "issue_classification"
    config = Config(episodes=1500, eval_every=500, batch=24, tasks=(task,))
    run = run_seed(0, config, Budget(curve_seeds=50, final_seeds=50), verbose=False)
    curve = run["curve"]["validation"]
    assert run["curve"]["episodes"] == [0, 500, 1000, 1500]
    random_score = weighted(reference_scores("random", "validation", 50, (task,)))
    assert curve[-1] >= curve[0] + 0.3, curve
    assert curve[-1] >= random_score + 0.3, (curve, random_score)
    # ... and it carries over to the held-out test tickets.
    assert run["test"] >= weighted(reference_scores("random", "test", 50, (task,))) + 0.2, run


def test_training_is_deterministic_given_the_seed():
    config = Config(episodes=96, batch=48, tasks=("end_to_end_resolution", "action_selection"))
    first, again, other = train(config, 7).model, train(config, 7).model, train(config, 8).model
    for name in ("k", "w", "theta", "value"):
        assert np.array_equal(getattr(first, name), getattr(again, name)), name
    assert not np.array_equal(first.w, other.w)


def test_the_policy_is_a_distribution_and_advantages_are_gae():
    env = SupportFeatureEnv(task_id="action_selection", split="validation")
    model = Model(Featuriser(env.encoder))
    rng = np.random.default_rng(0)
    model.w[:] = rng.normal(size=model.w.shape)
    model.k[:] = rng.normal(size=model.k.shape)
    model.theta[:] = rng.normal(size=model.theta.shape)
    obs, _ = env.reset(seed=3)
    x = model.featuriser(obs)
    pk, pa = model.probs(x[None])
    joint = pk[0][KIND_OF] * pa[0]
    assert math.isclose(joint.sum(), 1.0, rel_tol=1e-9)
    fast_pk, fast_pa = model.step_probs(x)
    assert np.allclose(fast_pk, pk[0]) and np.allclose(fast_pa, pa[0])
    # lambda = 1: the discounted return minus the baseline.
    rewards, values = [0.5, 0.1, 0.3], np.array([0.2, 0.1, 0.0])
    expected = [0.5 + 0.9 * 0.1 + 0.81 * 0.3 - 0.2, 0.1 + 0.9 * 0.3 - 0.1, 0.3]
    assert np.allclose(advantages(rewards, values, 0.9, 1.0), expected)
    assert np.allclose(advantages(rewards, values, 0.9, 0.0), [0.5 + 0.09 - 0.2, 0.1 - 0.1, 0.3])


def test_interval_is_the_t_interval_of_the_mean():
    mean, low, high = interval([0.6, 0.7, 0.8, 0.65, 0.75])
    assert math.isclose(mean, 0.7) and math.isclose(mean - low, high - mean)
    assert math.isclose(high - mean, 2.776 * np.std([0.6, 0.7, 0.8, 0.65, 0.75], ddof=1) / math.sqrt(5))
    assert interval([0.5]) == (0.5, 0.5, 0.5)


@pytest.fixture(scope="module")
def committed():
    return json.loads(CURVE_JSON.read_text())


def test_committed_curve_has_the_schema(committed):
    for key in ("trained", "random", "rule", "oracle", "seeds", "episodes"):
        assert key in committed, key
    assert set(committed["trained"]) == set(SPLITS)
    for value in (*committed["trained"].values(), committed["random"], committed["rule"], committed["oracle"]):
        assert isinstance(value, float) and 0.0 <= value <= 1.0
    assert committed["seeds"] == [0, 1, 2, 3, 4]
    assert isinstance(committed["episodes"], int) and committed["episodes"] > 0
    curve = committed["curve"]
    n = len(curve["episodes"])
    assert n >= 10 and curve["episodes"][0] == 0 and curve["episodes"][-1] == committed["episodes"]
    assert len(curve["mean"]) == len(curve["low95"]) == len(curve["high95"]) == n
    assert all(lo <= m <= hi for lo, m, hi in zip(curve["low95"], curve["mean"], curve["high95"], strict=True))
    assert sorted(curve["per_seed"]) == [str(s) for s in committed["seeds"]]
    # The summary agrees with its detail.
    runs = committed["per_seed"]
    assert [r["seed"] for r in runs] == committed["seeds"]
    for split in SPLITS:
        assert math.isclose(committed["trained"][split], np.mean([r[split] for r in runs]), abs_tol=1e-3)
    for i in range(n):
        assert math.isclose(curve["mean"][i], np.mean([s[i] for s in curve["per_seed"].values()]), abs_tol=1e-3)
    for name in ("random", "rule", "oracle"):
        assert committed[name] == committed["references"][name]["test"]
    assert committed["config"]["terminal_score"] == 0.0, "the committed run learns from the step rewards only"
    assert CURVE_PNG.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_committed_numbers_meet_the_acceptance_criteria(committed):
    test = committed["trained"]["test"]
    assert test >= committed["random"] + 0.4, "at least 0.4 above random on test"
    # The fidelity issue's bar (the learnability issue asked for 0.1).
    assert test >= committed["rule"] - 0.05, "within 0.05 of the rule baseline on test (or above it)"
    assert committed["final_validation"] >= committed["first_validation"] + 0.3, "the validation curve rises"
    assert committed["curve"]["mean"][-1] == committed["final_validation"]
    assert committed["curve"]["mean"][0] == committed["first_validation"]
