"""A policy-gradient learner for `SupportEnvFeatures-v0`: REINFORCE with a learned baseline, in numpy.

The policy
----------
A two-level linear softmax over the 85 macro-actions, one policy for all three tasks (the features
carry a task one-hot):

    pi(a | x) = pi(kind | x) * pi(a | kind, x)

The kind (classify, ask, answer, assign, escalate, callback, resolve, gather) comes from logits ``K x``; the
macro-action within its kind from logits ``W x + sum_k theta_k R_k(x)``. ``x`` is the env's feature
vector (its hashed words left out) plus derived blocks (`Featuriser`). ``R_k`` are sixteen
*relational* features that tie each macro-action to the feature about the same thing, through the
public catalog: classify or answer issue i <- the knowledge-base match score of issue i's article,
over the whole opening and over its first part; answer issue i <- the same over the later parts,
among the issues still unanswered and in the latest customer message, "the agent classified the
ticket as i" and "i was answered"; ask for field f <- "f is still missing", "an article in view
needs f", "f was given" and "an issue read in the message needs f"; assign department d <- "d is
the classified issue's department", "the ticket is with d already" and "d is the department of an
issue read in the message that policy says to escalate". Each has one weight per task (plus a shared one), so what is
learned about one issue or field carries over to the others. Nothing here reads the hidden scenario.

The learning signal
-------------------
The environment's step rewards, discounted (gamma), with generalised advantage estimates (lambda)
against a linear value baseline fitted to the lambda-returns; advantages are normalised per batch.
The grader's end-of-episode score is *not* used unless `Config.terminal_score` is set (it is 0 by
default, and in `make train`). Each update plays a batch of episodes on fresh `train` tickets, the
tasks in turn, and takes a few Adam steps on it (a PPO-style clipped surrogate, so a batch can be
reused safely); an entropy bonus and an exploration rate decay over training.

Exploration: while training, the kind of action is drawn from the policy mixed with a uniform choice
(probability epsilon), the action within the kind from the policy itself. The surrogate's ratio is
taken against that behaviour policy, factored into the kind's ratio pi(kind)/mu(kind) and the
within-kind ratio. Without the mixture the policy gives up on answering long before it has learned
which answer fits which ticket (a wrong answer is penalised), and never finds out.

Every random draw comes from one `numpy.random.Generator` seeded by the training seed, and the
environment is deterministic, so a run is reproducible given its seed and `Config`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from supportenv.catalog import ARTICLE_NEEDS, ARTICLES, DEPARTMENTS, ISSUE_TYPES, REQUESTABLE_FIELDS
from supportenv.gym import MACRO_ACTIONS, N_MACRO_ACTIONS, FeatureEncoder, SupportFeatureEnv, macro_index
from supportenv.tasks import TASK_IDS

SEED_RANGE = 2**31


@dataclass(frozen=True)
class Config:
    episodes: int = 30000  # training episodes, all tasks together
    batch: int = 48  # episodes per update
    epochs: int = 4  # passes over each batch
    minibatches: int = 4  # Adam steps per pass
    clip: float = 0.2  # the surrogate's clipping range
    lr: float = 0.02  # Adam step size of the policy ...
    lr_end: float = 0.2  # ... decaying linearly to this fraction of it
    value_lr: float = 0.02  # Adam step size of the value baseline
    gamma: float = 0.9  # discount of the step rewards
    lam: float = 0.6  # GAE lambda
    entropy_start: float = 0.02  # entropy bonus, decaying linearly ...
    entropy_end: float = 0.001
    explore_start: float = 0.3  # chance of a uniformly random kind of action, decaying linearly ...
    explore_end: float = 0.05
    terminal_score: float = 0.0  # weight of the grader's score added to an episode's last reward (0: rewards only)
    tasks: tuple[str, ...] = TASK_IDS  # the tasks trained on, in turn
    eval_every: int = 1000  # training episodes between evaluations of the greedy policy


class Adam:
    def __init__(self, shape: tuple[int, ...], lr: float, beta1: float = 0.9, beta2: float = 0.999) -> None:
        self.m, self.v = np.zeros(shape), np.zeros(shape)
        self.lr, self.beta1, self.beta2, self.t = lr, beta1, beta2, 0

    def ascend(self, param: np.ndarray, grad: np.ndarray) -> None:
        """One step up the gradient, in place."""
        self.t += 1
        self.m = self.beta1 * self.m + (1 - self.beta1) * grad
        self.v = self.beta2 * self.v + (1 - self.beta2) * grad * grad
        m_hat = self.m / (1 - self.beta1**self.t)
        v_hat = self.v / (1 - self.beta2**self.t)
        param += self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


# The kinds of macro-action ("classify", "ask", ...) in MACRO_ACTIONS order; each is a contiguous block.
KINDS = tuple(dict.fromkeys(label.split(":")[0] for label in MACRO_ACTIONS))
KIND_OF = np.array([KINDS.index(label.split(":")[0]) for label in MACRO_ACTIONS])
KIND_START = np.flatnonzero(np.diff(KIND_OF, prepend=-1))
KIND_MEMBERS = [np.flatnonzero(np.equal(KIND_OF, k)) for k in range(len(KINDS))]
assert len(KIND_START) == len(KINDS), "every kind of macro-action must be one contiguous block"


def _relative(scores: np.ndarray) -> np.ndarray:
    """Scores divided by the best one (1 for the top match; all 0 when none matched)."""
    scores = scores.astype(np.float64)
    top = scores.max()
    return scores / top if top > 0 else scores


class Featuriser:
    """The env's feature vector (as float64, its hashed words zeroed) plus derived blocks: ``kb_rel``,
    each knowledge-base match score divided by the best one (1 for the top match); ``kb_open``, the same over the
    articles of issues not answered yet, so that after one answer the next issue the customer raised
    stands out; ``open_needs``, the fields the articles in view (``kb_open`` at least 0.5) need and
    the customer has not given; and ``kb_latest_rel``, ``kb_first_rel`` and ``kb_rest_rel``, the
    searches over the latest customer message, over the part of the opening that raises its first
    issue and over the parts after it, each relative to its best match. The raw scores are small
    (about 0.1-0.4) and close together; the ratios show the ranking at a scale a linear policy picks
    up quickly. A function of the public features only."""

    def __init__(self, encoder: FeatureEncoder) -> None:
        self.kb = encoder.slices["kb"]
        self.revealed = encoder.slices["revealed"]
        self.words = encoder.slices["words"]
        n_kb = self.kb.stop - self.kb.start
        n_fields = len(REQUESTABLE_FIELDS)
        answered = encoder.slices["answered_issue"]
        articles = [a.article_id for a in ARTICLES]
        # For each article, the index in the features of "its issue was answered" (-1: no issue),
        # and the fields it needs (ARTICLE_NEEDS, as the prompt states them).
        self._answered_of = np.full(n_kb, -1)
        for n, issue in enumerate(ISSUE_TYPES):
            self._answered_of[articles.index(issue.article_id)] = answered.start + n
        self._needs = np.array([[f in ARTICLE_NEEDS[a] for f in REQUESTABLE_FIELDS] for a in articles], dtype=float)
        start = encoder.size
        self.slices = {
            **encoder.slices,
            "kb_rel": slice(start, start + n_kb),
            "kb_open": slice(start + n_kb, start + 2 * n_kb),
            "open_needs": slice(start + 2 * n_kb, start + 2 * n_kb + n_fields),
            "kb_latest_rel": slice(start + 2 * n_kb + n_fields, start + 3 * n_kb + n_fields),
            "kb_first_rel": slice(start + 3 * n_kb + n_fields, start + 4 * n_kb + n_fields),
            "kb_rest_rel": slice(start + 4 * n_kb + n_fields, start + 5 * n_kb + n_fields),
        }
        self.latest, self.first, self.rest = (encoder.slices[b] for b in ("kb_latest", "kb_first", "kb_rest"))
        self.size = start + 5 * n_kb + n_fields

    def __call__(self, x: np.ndarray) -> np.ndarray:
        kb = x[self.kb].astype(np.float64)
        answered = np.where(self._answered_of >= 0, x[np.maximum(self._answered_of, 0)], 0.0)
        open_rel = _relative(kb * (answered == 0))
        # The fields that the articles still in view (at least half the best open match) need and
        # the customer has not given.
        in_view = open_rel >= 0.5
        needs = (self._needs[in_view].max(axis=0) if in_view.any() else np.zeros(self._needs.shape[1])) * (
            x[self.revealed] == 0
        )
        kb_rel = _relative(kb)
        # The hashed words are left out: with them a linear policy memorises the training
        # paraphrases (0.52 on test against 0.56 without, 2 seeds); the searches carry over.
        plain = x.astype(np.float64)
        plain[self.words] = 0.0
        return np.concatenate(
            [
                plain,
                kb_rel,
                open_rel,
                needs,
                *(_relative(x[b]) for b in (self.latest, self.first, self.rest)),
            ]
        )


def relations(slices: dict[str, slice]) -> list[tuple[np.ndarray, np.ndarray]]:
    """The relational features as (macro-action indices, feature indices): relation k gives
    macro-action act[j] the value of feature src[j]."""
    articles = [a.article_id for a in ARTICLES]
    issue_article = np.array([slices["kb_rel"].start + articles.index(i.article_id) for i in ISSUE_TYPES])
    open_article = np.array([slices["kb_open"].start + articles.index(i.article_id) for i in ISSUE_TYPES])
    latest_article = np.array([slices["kb_latest_rel"].start + articles.index(i.article_id) for i in ISSUE_TYPES])
    first_article = np.array([slices["kb_first_rel"].start + articles.index(i.article_id) for i in ISSUE_TYPES])
    rest_article = np.array([slices["kb_rest_rel"].start + articles.index(i.article_id) for i in ISSUE_TYPES])
    classify = np.array([macro_index(f"classify:{i.issue_id}") for i in ISSUE_TYPES])
    answer = np.array([macro_index(f"answer:{i.issue_id}") for i in ISSUE_TYPES])
    ask = np.array([macro_index(f"ask:{f}") for f in REQUESTABLE_FIELDS])
    assign = np.array([macro_index(f"assign:{d}") for d in DEPARTMENTS])
    issues, fields, depts = np.arange(len(ISSUE_TYPES)), np.arange(len(REQUESTABLE_FIELDS)), np.arange(len(DEPARTMENTS))
    return [
        (classify, issue_article),
        (classify, first_article),
        (answer, issue_article),
        (answer, open_article),
        (answer, latest_article),
        (answer, first_article),
        (answer, rest_article),
        (answer, slices["issue_type"].start + issues),
        (answer, slices["answered_issue"].start + issues),
        (ask, slices["checklist_missing"].start + fields),
        (ask, slices["open_needs"].start + fields),
        (ask, slices["revealed"].start + fields),
        (ask, slices["raised_needs"].start + fields),
        (assign, slices["issue_department"].start + depts),
        (assign, slices["department"].start + depts),
        (assign, slices["escalation_department"].start + depts),
    ]


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _kind_softmax(z: np.ndarray) -> np.ndarray:
    """The softmax of each kind's block of action logits, within the block (rows are states)."""
    e = np.exp(z - np.maximum.reduceat(z, KIND_START, axis=1)[:, KIND_OF])
    return e / np.add.reduceat(e, KIND_START, axis=1)[:, KIND_OF]


class Model:
    """The two-level linear softmax policy and the linear value baseline (see the module docstring)."""

    def __init__(self, featuriser: Featuriser) -> None:
        self.featuriser = featuriser
        self.task = np.arange(featuriser.slices["task"].start, featuriser.slices["task"].stop)
        self.relations = relations(featuriser.slices)
        self.k = np.zeros((len(KINDS), featuriser.size))
        self.w = np.zeros((N_MACRO_ACTIONS, featuriser.size))
        self.theta = np.zeros((len(self.relations), 1 + len(self.task)))  # shared + one per task
        self.value = np.zeros(featuriser.size)

    def _gates(self, x: np.ndarray) -> np.ndarray:
        return np.concatenate([np.ones((len(x), 1)), x[:, self.task]], axis=1)

    def probs(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """pi(kind | x) (N x kinds) and pi(a | kind of a, x) (N x actions) for feature rows x (N x D)."""
        z = x @ self.w.T
        coef = self._gates(x) @ self.theta.T
        for k, (act, src) in enumerate(self.relations):
            z[:, act] += coef[:, k : k + 1] * x[:, src]
        return _softmax(x @ self.k.T), _kind_softmax(z)

    def step_probs(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`probs` of one feature vector, using its sparsity (the fast path while acting)."""
        nz = np.flatnonzero(x)
        xs = x[nz]
        z = self.w[:, nz] @ xs
        coef = self.theta @ np.concatenate([[1.0], x[self.task]])
        for k, (act, src) in enumerate(self.relations):
            z[act] += coef[k] * x[src]
        return _softmax((self.k[:, nz] @ xs)[None])[0], _kind_softmax(z[None])[0]

    def grads(self, x: np.ndarray, dzk: np.ndarray, dza: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Gradients w.r.t. K, W and theta of sum(dzk * kind logits) + sum(dza * action logits)."""
        gates = self._gates(x)
        dtheta = np.stack([gates.T @ (dza[:, act] * x[:, src]).sum(axis=1) for act, src in self.relations])
        return dzk.T @ x, dza.T @ x, dtheta

    def act(self, observation: np.ndarray) -> int:
        """The greedy macro-action for an env observation (the most probable one)."""
        pk, pa = self.step_probs(self.featuriser(observation))
        return int(np.argmax(pk[KIND_OF] * pa))


@dataclass
class Episode:
    task_id: str
    x: list[np.ndarray] = field(default_factory=list)
    actions: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    score: float = 0.0  # the grader's


def play(
    env: SupportFeatureEnv,
    task_id: str,
    split: str,
    seed: int,
    choose: Callable[[np.ndarray], int],
    featurise: Callable[[np.ndarray], np.ndarray] = np.asarray,
) -> Episode:
    """One episode of ticket `seed`: `choose` maps the featurised observation to a macro-action index."""
    obs, _ = env.reset(seed=seed, options={"task_id": task_id, "split": split})
    episode = Episode(task_id)
    done = False
    info: dict = {}
    while not done:
        x = featurise(obs)
        action = choose(x)
        obs, reward, terminated, truncated, info = env.step(action)
        episode.x.append(x)
        episode.actions.append(action)
        episode.rewards.append(float(reward))
        done = terminated or truncated
    episode.score = float(info["score"])
    return episode


def advantages(rewards: Sequence[float], values: np.ndarray, gamma: float, lam: float) -> np.ndarray:
    """Generalised advantage estimates of one episode (the value after its last step is 0)."""
    out = np.zeros(len(rewards))
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        following = values[t + 1] if t + 1 < len(rewards) else 0.0
        running = rewards[t] + gamma * following - values[t] + gamma * lam * running
        out[t] = running
    return out


def _surrogate(log_ratio: np.ndarray, adv: np.ndarray, clip: float) -> np.ndarray:
    """Each sample's weight on grad log pi in the clipped surrogate: ratio * advantage (ratio = pi over
    the behaviour policy), or 0 once the ratio has left [1 - clip, 1 + clip] in the advantage's direction."""
    ratio = np.exp(np.minimum(log_ratio, 20.0))
    clipped = ((adv > 0) & (ratio > 1 + clip)) | ((adv < 0) & (ratio < 1 - clip))
    return ratio * adv * ~clipped


def _pick(p: np.ndarray, u: float) -> int:
    return int(min(np.searchsorted(np.cumsum(p), u * p.sum()), len(p) - 1))


@dataclass
class TrainResult:
    model: Model
    curve: list[tuple[int, float]]  # (training episodes so far, evaluate(policy)) at every evaluation
    seconds: float


def train(
    config: Config,
    seed: int,
    evaluate: Callable[[Callable[[np.ndarray], int]], float] | None = None,
    log: Callable[[str], None] | None = None,
) -> TrainResult:
    """Train a policy from scratch on `train` tickets. `evaluate(act)` (act: observation -> macro-action,
    the greedy policy) runs before training and every `config.eval_every` episodes; its result makes
    the curve, and `log` (if given) gets one line per evaluation."""
    rng = np.random.default_rng(seed)
    env = SupportFeatureEnv(split="train")
    model = Model(Featuriser(env.encoder))
    params = (model.k, model.w, model.theta)
    optimisers = [Adam(p.shape, config.lr) for p in params]
    value_opt = Adam(model.value.shape, config.value_lr)
    behaviour: list[tuple[float, float]] = []  # per step: log mu(kind), log pi_old(action | kind)
    epsilon = config.explore_start

    def sample(x: np.ndarray) -> int:
        pk, pa = model.step_probs(x)
        mu = (1 - epsilon) * pk + epsilon / len(KINDS)
        kind = _pick(mu, rng.random())
        members = KIND_MEMBERS[kind]
        action = int(members[_pick(pa[members], rng.random())])
        behaviour.append((float(np.log(mu[kind])), float(np.log(pa[action] + 1e-12))))
        return action

    start = time.perf_counter()
    curve: list[tuple[int, float]] = []
    if evaluate:
        curve.append((0, evaluate(model.act)))
        if log:
            log(f"seed {seed}: episodes {0:>6}/{config.episodes}  validation {curve[-1][1]:.3f}")
    done, next_eval, scores = 0, config.eval_every, []
    while done < config.episodes:
        frac = done / config.episodes
        epsilon = config.explore_start + (config.explore_end - config.explore_start) * frac
        beta = config.entropy_start + (config.entropy_end - config.entropy_start) * frac
        for opt in optimisers:
            opt.lr = config.lr * (1 - (1 - config.lr_end) * frac)

        behaviour.clear()
        size = min(config.batch, config.episodes - done, (next_eval - done) if evaluate else config.batch)
        batch = []
        for i in range(size):
            task, ticket = config.tasks[(done + i) % len(config.tasks)], int(rng.integers(SEED_RANGE))
            batch.append(play(env, task, "train", ticket, sample, model.featuriser))
        done += size
        scores.extend(ep.score for ep in batch)

        feats = np.array([x for ep in batch for x in ep.x])
        acts = np.array([a for ep in batch for a in ep.actions])
        log_mu, log_pa_old = np.array(behaviour).T
        baseline = feats @ model.value
        bounds = np.cumsum([0, *(len(ep.actions) for ep in batch)])
        adv = np.concatenate(
            [
                advantages(
                    [*ep.rewards[:-1], ep.rewards[-1] + config.terminal_score * ep.score],
                    baseline[lo:hi],
                    config.gamma,
                    config.lam,
                )
                for ep, lo, hi in zip(batch, bounds[:-1], bounds[1:], strict=True)
            ]
        )
        targets = adv + baseline  # lambda-returns, the value's regression targets
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)

        for _ in range(config.epochs):
            for idx in np.array_split(rng.permutation(len(acts)), config.minibatches):
                x, a, ad, rows = feats[idx], acts[idx], adv[idx], np.arange(len(idx))
                pk, pa = model.probs(x)
                kind = KIND_OF[a]
                ck = _surrogate(np.log(pk[rows, kind] + 1e-12) - log_mu[idx], ad, config.clip)
                ca = _surrogate(np.log(pa[rows, a] + 1e-12) - log_pa_old[idx], ad, config.clip)
                # d/dlogits of ck * log pi(kind) + ca * log pi(a | kind)
                dzk = -pk * ck[:, None]
                dzk[rows, kind] += ck
                dza = -pa * (KIND_OF[None, :] == kind[:, None]) * ca[:, None]
                dza[rows, a] += ca
                # + beta * d/dlogits of the entropy of pi: H(kind) + sum_k pi(k) H(action | k)
                log_pk, log_pa = np.log(pk + 1e-12), np.log(pa + 1e-12)
                h_within = -np.add.reduceat(pa * log_pa, KIND_START, axis=1)
                h_kind = -(pk * log_pk).sum(axis=1, keepdims=True)
                h_mixed = (pk * h_within).sum(axis=1, keepdims=True)
                dzk += beta * (-pk * (log_pk + h_kind) + pk * (h_within - h_mixed))
                dza += beta * pk[:, KIND_OF] * (-pa * (log_pa + h_within[:, KIND_OF]))
                for opt, param, grad in zip(optimisers, params, model.grads(x, dzk, dza), strict=True):
                    opt.ascend(param, grad / len(idx))
                value_opt.ascend(model.value, x.T @ (targets[idx] - x @ model.value) / len(idx))

        if evaluate and done in (next_eval, config.episodes):
            next_eval += config.eval_every
            curve.append((done, evaluate(model.act)))
            if log:
                log(
                    f"seed {seed}: episodes {done:>6}/{config.episodes}  validation {curve[-1][1]:.3f}  "
                    f"training-episode score {np.mean(scores):.3f}  {time.perf_counter() - start:.0f}s"
                )
            scores = []
    return TrainResult(model, curve, time.perf_counter() - start)
