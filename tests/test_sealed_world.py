"""Nothing graded leaks: ticket ids are opaque, and a world key seals the world.

Without a world key, anyone holding the public library regenerates a ticket from its public
(task, split, seed), hidden facts and expected handling included, and a policy that does so
plays the oracle: that is why a sealed evaluation sets a world key. With the same world key on
the env and the grader service, that policy gains nothing over an honest one. The services
are real processes on loopback ports, spoken to over real gRPC."""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
from collections import Counter
from itertools import pairwise

import grpc
import pytest

from baseline_agent.embedded import ROOT, EmbeddedServices, ServiceProcess, start_service
from baseline_agent.policies import make_policy
from baseline_agent.runner import Runner
from env_service.token_keys import KEY_ENV
from env_service.tokens import InvalidTokenError, TokenCodec
from supportenv import expert
from supportenv.actions import Action
from supportenv.episode import EpisodeState, Observation, advance, step
from supportenv.replay import new_episode
from supportenv.tasks import TASK_IDS
from supportenv.v1 import convert, env_pb2, env_pb2_grpc
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.keys import MIN_KEY_BYTES, WORLD_KEY_ENV, WORLD_KEY_FILE_ENV, KeySettingError, read_world_key
from supportenv.world import PUBLIC_WORLD, SPLITS, TICKET_ID_CHARS, Scenario, generate, ticket_id, world_id

HARD = "end_to_end_resolution"
KEY = b"the world key of a sealed evaluation"  # fixed, so that every run plays the same tickets
OTHER_KEY = b"the world key of another evaluation"
EPISODES = 30  # test seeds per task, for every policy compared
SEARCH_SEEDS = 1_000  # how many seeds of each split the leak-reading policy tries per ticket id
TICKET_ID = re.compile(rf"TKT-[A-Z2-7]{{{TICKET_ID_CHARS}}}")
WAIT_S = 30


# --- ticket ids -------------------------------------------------------------------------


def largest_shared_field(ids: list[str], width: int = 3) -> float:
    """The largest share of `ids` that agree on `width` characters at one place: 1.0 for a
    field the ids carry (the old `-BIL` of every billing ticket), near 0 for hash output."""
    body = [i[len("TKT-") :] for i in ids]
    return max(
        Counter(b[start : start + width] for b in body).most_common(1)[0][1] / len(ids)
        for start in range(TICKET_ID_CHARS - width + 1)
    )


def test_ticket_ids_name_no_category_split_or_seed():
    scenarios = [generate(HARD, split, seed) for split in SPLITS for seed in range(1_000)]
    assert all(TICKET_ID.fullmatch(s.ticket_id) for s in scenarios), scenarios[0].ticket_id
    for field in ("split", "issue"):
        groups: dict[str, list[str]] = {}
        for s in scenarios:
            groups.setdefault(s.split if field == "split" else s.issue.category, []).append(s.ticket_id)
        for name, ids in groups.items():
            assert len(ids) > 200 and largest_shared_field(ids) < 0.02, (field, name)
    # Nor the seed: the ids of consecutive seeds are in no order.
    ordered = [generate(HARD, "test", seed).ticket_id for seed in range(1_000)]
    rising = sum(a < b for a, b in pairwise(ordered)) / (len(ordered) - 1)
    assert 0.45 < rising < 0.55


# That they are the same in every process: tests/test_determinism.py (public and sealed worlds).


def test_ticket_ids_do_not_collide():
    ids = [ticket_id(task, split, seed) for task in TASK_IDS for split in SPLITS for seed in range(20_000)]
    assert len(set(ids)) == len(ids) == 180_000
    sealed = [ticket_id(HARD, "test", seed, KEY) for seed in range(20_000)]
    assert len(set(sealed)) == len(sealed) and not set(sealed) & set(ids)


# --- the world key ----------------------------------------------------------------------


def test_another_world_key_gives_other_ids_and_other_tickets():
    seeds = range(300)
    worlds = {key: [generate(HARD, "test", seed, key) for seed in seeds] for key in (None, KEY, OTHER_KEY)}
    for seed in seeds:
        assert len({worlds[key][seed].ticket_id for key in worlds}) == 3, seed
    same = sum(
        p.hidden_facts == s.hidden_facts or p.expected == s.expected
        for p, s in zip(worlds[None], worlds[KEY], strict=True)
    )
    assert same < 0.1 * len(seeds), "a world key must change the hidden facts and the expected handling"
    # One key, one world: the same tickets in every call, the cache keeping the worlds apart.
    generate.cache_clear()
    assert [generate(HARD, "test", seed, KEY) for seed in seeds] == worlds[KEY]
    assert generate(HARD, "test", 1) == worlds[None][1] != generate(HARD, "test", 1, KEY)
    assert {s.world for s in worlds[None]} == {PUBLIC_WORLD}
    assert {s.world for s in worlds[KEY]} == {world_id(KEY)} != {world_id(OTHER_KEY)}
    assert re.fullmatch(r"sealed-[0-9a-f]{8}", world_id(KEY))
    shown = repr(worlds[KEY][0]) + json.dumps(worlds[KEY][0].to_dict())
    assert KEY.decode() not in shown and KEY.decode()[:16] not in shown, "a scenario never shows the key"


def test_the_public_world_is_pinned():
    """Without a key the public world is one fixed world (the README's example ticket); a change
    to it is a new WORLD_VERSION, which also retires the tokens of the old one."""
    scenario = generate(HARD, "test", 25)
    assert (scenario.tier, scenario.persona, scenario.template_ids) == (
        "enterprise",
        "angry",
        ("slow_performance/0", "lost_package/4"),
    )
    assert scenario.hidden_facts[:2] == (("device_model", "OnePlus 12"), ("app_version", "5.3.7"))


def test_world_key_settings(tmp_path):
    assert read_world_key({}) is None and read_world_key({WORLD_KEY_ENV: ""}) is None
    assert read_world_key({WORLD_KEY_ENV: "w" * MIN_KEY_BYTES}) == b"w" * MIN_KEY_BYTES
    (tmp_path / "world.key").write_text("f" * 64 + "\n")
    assert read_world_key({WORLD_KEY_FILE_ENV: str(tmp_path / "world.key")}) == b"f" * 64
    with pytest.raises(KeySettingError, match=f"{WORLD_KEY_ENV}: the world key is 5 bytes"):
        read_world_key({WORLD_KEY_ENV: "short"})
    with pytest.raises(KeySettingError, match="no such file"):
        read_world_key({WORLD_KEY_FILE_ENV: str(tmp_path / "missing.key")})


@pytest.mark.parametrize("module", ["env_service", "grader_service"])
def test_a_bad_world_key_stops_a_service_at_start_with_one_clear_line(module):
    child = {**os.environ, "PYTHONPATH": str(ROOT), "SUPPORTENV_WORKERS": "1", WORLD_KEY_ENV: "short"}
    done = subprocess.run(
        [sys.executable, "-m", module, "--host", "127.0.0.1", "--port", "0"],
        env=child,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert done.returncode != 0 and "listening" not in done.stdout
    expected = f"{module}: bad world key setting: {WORLD_KEY_ENV}: the world key is 5 bytes; it must be at least 16"
    assert expected in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_a_token_replays_in_its_own_world_and_is_refused_in_another():
    scenario, state = new_episode(HARD, "train", 5, world_key=KEY)
    advance(scenario, state, expert.expert_action(scenario, state, HARD))
    sealed = TokenCodec(b"t" * 32, world_key=KEY)
    token = sealed.encode(state)
    assert sealed.decode(token) == state
    for other in (TokenCodec(b"t" * 32), TokenCodec(b"t" * 32, world_key=OTHER_KEY)):
        with pytest.raises(InvalidTokenError, match=f"episode of world '{world_id(KEY)}'.*{WORLD_KEY_ENV}"):
            other.decode(token)
    with pytest.raises(InvalidTokenError, match=f"episode of world '{PUBLIC_WORLD}'"):
        sealed.decode(TokenCodec(b"t" * 32).encode(new_episode(HARD, "train", 5)[1]))


def test_replicas_of_another_world_refuse_each_others_tokens():
    """Two env services sharing a token key but not a world key (the sealed one with two
    workers): the sealed one deals the keyed world's tickets, the other refuses them."""
    token_key = secrets.token_hex(32)
    replicas: list[ServiceProcess] = []
    try:
        replicas.append(
            start_service("env_service", {KEY_ENV: token_key, WORLD_KEY_ENV: KEY.decode(), "SUPPORTENV_WORKERS": "2"})
        )
        replicas.append(
            start_service("env_service", {KEY_ENV: token_key, WORLD_KEY_ENV: "", "SUPPORTENV_WORKERS": "1"})
        )
        sealed, public = (grpc.insecure_channel(r.address) for r in replicas)
        with sealed, public:
            request = env_pb2.ResetRequest(task_id=HARD, split=convert.SPLIT_TO_PB["test"], seed=3)
            reset = env_pb2_grpc.EnvServiceStub(sealed).Reset(request, timeout=10)
            assert reset.observation.ticket_id == ticket_id(HARD, "test", 3, KEY) != ticket_id(HARD, "test", 3)
            assert reset.observation.customer_message == generate(HARD, "test", 3, KEY).opening_message
            step = env_pb2.StepRequest(
                state_token=reset.state_token, action=pb.Action(mark_resolved=pb.MarkResolved(summary="done"))
            )
            with pytest.raises(grpc.RpcError) as refused:
                env_pb2_grpc.EnvServiceStub(public).Step(step, timeout=10)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert f"episode of world '{world_id(KEY)}'" in refused.value.details()
            assert env_pb2_grpc.EnvServiceStub(sealed).Step(step, timeout=10).terminated
    finally:
        for replica in replicas:
            replica.stop()


# --- the exploit ------------------------------------------------------------------------


class LeakReadingPolicy:
    """Plays the oracle on the scenario the library regenerates for the ticket: its
    (split, seed) recovered from the ticket id by hashing candidate seeds, else the (task,
    split, seed) the evaluation told every agent. It holds the public library, and a world
    key if one is given (with the evaluation's key it *is* the oracle)."""

    name = "leak_reader"
    stochastic = False

    def __init__(self, world_key: bytes | None = None) -> None:
        self.world_key = world_key
        self.recovered = 0  # episodes whose key the ticket id gave away
        self._index: dict[tuple[str, str], tuple[str, int]] = {}  # (task, ticket id) -> (split, seed)
        self._indexed: set[str] = set()

    def recover(self, task_id: str, ticket: str) -> tuple[str, int] | None:
        if task_id not in self._indexed:
            self._indexed.add(task_id)
            for split in SPLITS:
                for seed in range(SEARCH_SEEDS):
                    self._index[task_id, ticket_id(task_id, split, seed, self.world_key)] = (split, seed)
        return self._index.get((task_id, ticket))

    def begin(self, task_id: str, split: str, seed: int, trial: int = 0) -> None:
        self._told = (task_id, split, seed)
        self._episode: tuple[Scenario, EpisodeState] | None = None

    def act(self, obs: Observation) -> Action:
        if self._episode is None:
            task_id, split, seed = self._told
            found = self.recover(obs.task_id, obs.ticket_id)
            if found is not None:
                self.recovered += 1
                split, seed = found
            self._episode = new_episode(task_id, split, seed, world_key=self.world_key)
        scenario, state = self._episode
        action = expert.expert_action(scenario, state, state.task_id)
        step(scenario, state, action)
        return action


def mean_scores(services: EmbeddedServices, policy: object) -> dict[str, float]:
    """The grader's mean score per task over the first EPISODES test seeds, played through both services."""
    assert services.env is not None and services.grader is not None
    runner = Runner(services.env.address, services.grader.address, policy, split="test", quiet=True)  # type: ignore[arg-type]
    try:
        summaries, records = runner.run(TASK_IDS, EPISODES)
    finally:
        runner.close()
    assert not [r.error for r in records if r.error]
    return {s.task_id: s.mean_score for s in summaries}


@pytest.fixture(scope="module")
def sealed_services():
    """Both services holding one world key, as a sealed evaluation runs them."""
    with EmbeddedServices({WORLD_KEY_ENV: KEY.decode()}) as running:
        yield running


def test_without_a_world_key_the_leak_scores_like_the_oracle(services):
    leak = LeakReadingPolicy()
    leaked, oracle = mean_scores(services, leak), mean_scores(services, make_policy("oracle"))
    assert leak.recovered == EPISODES * len(TASK_IDS), "every public ticket id gives its seed away"
    for task in TASK_IDS:
        assert leaked[task] >= 0.95 and abs(leaked[task] - oracle[task]) <= 0.02, (task, leaked, oracle)


def test_with_a_world_key_the_leak_gains_nothing(sealed_services):
    leak = LeakReadingPolicy()
    leaked = mean_scores(sealed_services, leak)
    rule = mean_scores(sealed_services, make_policy("rule"))
    oracle = mean_scores(sealed_services, LeakReadingPolicy(KEY))  # holds the key: the grader's own world
    assert leak.recovered == 0, "a sealed ticket id is none of the public ones"
    for task in TASK_IDS:
        assert oracle[task] >= 0.95, (task, oracle)
        assert leaked[task] <= rule[task] and leaked[task] <= oracle[task] - 0.5, (task, leaked, rule, oracle)
