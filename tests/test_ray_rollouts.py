"""Rollout workers as Ray actors (baseline_agent.ray_rollouts) against two env replicas on one
token key and a grader, all on loopback: every episode the actors return is the library's,
reward for reward and grade for grade, and every client is built inside an actor's process.
One local Ray for the module, kept small (2 CPUs, no dashboard, a minimal object store)."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray")

from baseline_agent.embedded import ROOT, EmbeddedServices  # noqa: E402
from baseline_agent.ray_rollouts import (  # noqa: E402
    RolloutWorker,
    init_ray,
    refuse_to_serialize_clients,
    run_rollouts,
)
from baseline_agent.runner import EpisodeRecord  # noqa: E402
from supportenv.actions import Action  # noqa: E402
from supportenv.episode import advance  # noqa: E402
from supportenv.graders import grade_state  # noqa: E402
from supportenv.replay import new_episode  # noqa: E402
from supportenv.v1 import client as client_module  # noqa: E402
from supportenv.v1 import convert  # noqa: E402
from supportenv.v1.client import GraderClient  # noqa: E402
from tests.test_contract import _imports  # noqa: E402

pytestmark = pytest.mark.timeout(240)
SPLIT = "train"


@pytest.fixture(scope="module")
def cluster():
    """Two env replicas and a grader (one worker each), and a local Ray; all stopped at the end."""
    settings = {"SUPPORTENV_WORKERS": "1", "SUPPORTENV_LOG_LEVEL": "WARNING"}
    # Ray waits 30 s for its control store to come up; on a 2-core machine busy with other work
    # that ran out once (a start-up error, not a test failure): give it Ray's own longer wait.
    os.environ.setdefault("RAY_gcs_server_port_wait_time_s", "120")
    with EmbeddedServices(settings, env_replicas=2) as services:
        init_ray(
            num_cpus=2,
            include_dashboard=False,
            object_store_memory=80 * 2**20,  # about Ray's minimum; the records are small
            log_to_driver=False,
        )
        try:
            yield services
        finally:
            ray.shutdown()


def assert_librarys(task_id: str, record: EpisodeRecord) -> None:
    """The record's actions replayed by the library give its rewards, its end and its grade."""
    scenario, state = new_episode(task_id, SPLIT, record.seed)
    rewards = [advance(scenario, state, Action.from_dict(action))[0] for action in record.actions]
    where = f"{task_id} seed {record.seed}"
    assert state.done, where
    assert record.steps == len(record.actions) == len(record.rewards), where
    assert record.rewards == rewards, where  # doubles on the wire: compared exactly
    assert record.score == convert.grade_to_pb(grade_state(scenario, state)).score, where


@pytest.mark.parametrize(
    ("policy", "tasks", "seeds"),
    [
        ("oracle", ["expert_resolution", "end_to_end_resolution"], range(9)),
        ("rule", ["expert_resolution", "issue_classification"], range(100, 109)),
    ],
)
def test_every_episode_is_the_librarys(cluster, policy, tasks, seeds):
    """3 actors x 2 envs each, the seeds in batches of 2 (so an actor plays several, and a
    batch of 1 fills its second env), every call round_robin over both replicas."""
    results = run_rollouts(
        cluster.env_target, cluster.grader.address, tasks, SPLIT, seeds, workers=3, num_envs=2, policy=policy
    )
    assert [r.task_id for r in results] == tasks
    for rollouts in results:
        assert [r.seed for r in rollouts.records] == list(seeds)  # each once, no filler episode
        for record in rollouts.records:
            assert_librarys(rollouts.task_id, record)
        assert rollouts.steps > 0 and rollouts.steps_per_s > 0
    if policy == "oracle":
        assert all(r.score == 1.0 and r.passed for rollouts in results for r in rollouts.records)


def test_clients_are_built_in_the_actors_never_in_the_driver(cluster, monkeypatch):
    def no_client_here(*args, **kwargs):
        raise AssertionError("the driver built a client")

    # In this (the driver's) process only: the actors import the SDK afresh.
    monkeypatch.setattr(client_module._Client, "__init__", no_client_here)
    monkeypatch.setattr(client_module.VectorEnvClient, "__init__", no_client_here)
    (rollouts,) = run_rollouts(
        cluster.env_target, cluster.grader.address, "issue_classification", SPLIT, range(4), workers=2, num_envs=2
    )
    assert len(rollouts.records) == 4

    worker = RolloutWorker.remote(cluster.env_target, cluster.grader.address)
    try:
        records = ray.get(worker.run.remote("expert_resolution", SPLIT, [3, 3, 5], 2, "oracle"))
        where = ray.get(worker.where.remote())
    finally:
        ray.kill(worker)
    assert sorted(r.seed for r in records) == [3, 3, 5]  # a seed twice is played twice
    for record in records:
        assert_librarys("expert_resolution", record)
    assert where["pid"] != os.getpid()
    assert where["client_pids"] == [where["pid"]]


def test_a_client_is_never_sent_to_an_actor(cluster):
    refuse_to_serialize_clients()
    with GraderClient(cluster.grader.address) as client:
        with pytest.raises(TypeError, match="holds a gRPC channel"):
            ray.put(client)
        with pytest.raises(TypeError, match="holds a gRPC channel"):
            RolloutWorker.remote(client, client)
        with pytest.raises(TypeError, match="must be an address string"):
            run_rollouts(cluster.env_target, client, "issue_classification")


def test_only_the_ray_module_imports_ray():
    """Ray stays at the edge: the library, the services and the other agents never import it."""
    allowed = ROOT / "baseline_agent" / "ray_rollouts.py"
    sources = [*ROOT.glob("*.py")] + [
        path
        for top in ROOT.iterdir()
        if top.is_dir() and not top.name.startswith(".") and top.name != "tests"
        for path in top.rglob("*.py")
    ]
    assert allowed in sources
    for path in sources:
        if path != allowed:
            assert not any(m == "ray" or m.startswith("ray.") for m in _imports(path)), path
