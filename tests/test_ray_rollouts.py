"""Rollout workers as Ray actors (baseline_agent.ray_rollouts) against two env replicas on one
token key and a grader, all on loopback: every episode the actors return is the library's,
reward for reward and grade for grade, and every client is built inside an actor's process.
One local Ray for the module, kept small and on loopback (see start_local_ray)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

# Loopback only, as every load test here: by default Ray binds its control store and agents to the
# machine's outward address (which a sandboxed CI may not route). Ray reads this when imported; with
# it off, Ray's node address is 127.0.0.1 (the flag's name says why Ray has it: local-only clusters).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
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


def start_local_ray(temp_dir: str) -> None:
    """A local Ray kept small (2 CPUs, no dashboard, a minimal object store) on 127.0.0.1 (see the
    top of the module). Its own files go to `temp_dir`, so no earlier session's /tmp/ray is reused."""
    init_ray(
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=80 * 2**20,  # about Ray's minimum; the records are small
        log_to_driver=False,
        _temp_dir=temp_dir,
    )


def start_up_logs(temp_dir: str) -> str:
    """The tail of each Ray session's control-store (GCS) and raylet logs under `temp_dir`: why it did
    not start."""
    tails = []
    logs = Path(temp_dir).glob("session_*/logs/*")
    for log in sorted(p for p in logs if p.name.startswith(("gcs_server", "raylet"))):
        text = log.read_text(errors="replace").strip()
        if text:
            tails.append(f"--- {log.name}:\n" + "\n".join(text.splitlines()[-15:]))
    return "\n".join(tails) or "(Ray wrote no start-up log)"


@pytest.fixture(scope="module")
def cluster():
    """Two env replicas and a grader (one worker each), and a local Ray; all stopped at the end."""
    settings = {"SUPPORTENV_WORKERS": "1", "SUPPORTENV_LOG_LEVEL": "WARNING"}
    # Ray waits 30 s for its control store to come up; on a 2-core machine busy with other work
    # that ran out once (a start-up error, not a test failure): give it Ray's own longer wait.
    os.environ.setdefault("RAY_gcs_server_port_wait_time_s", "120")
    temp_dir = tempfile.mkdtemp(prefix="ray-")  # short: Ray's socket paths must fit 107 bytes
    with EmbeddedServices(settings, env_replicas=2) as services:
        try:
            failures = []
            for _attempt in range(2):  # Ray's head did not come up: once more, afresh
                try:
                    start_local_ray(temp_dir)
                    break
                except Exception as exc:  # Ray raises RuntimeError or a bare Exception on a start-up timeout
                    ray.shutdown()
                    failures.append(f"{type(exc).__name__}: {exc}")
            else:
                # Ray itself cannot start on this machine now: say why, loudly, and test nothing of ours
                # against a cluster that is not there.
                pytest.skip(f"a local Ray did not start twice ({'; '.join(failures)}):\n{start_up_logs(temp_dir)}")
            assert ray.util.get_node_ip_address() == "127.0.0.1"  # loopback only
            yield services
        finally:
            ray.shutdown()
            shutil.rmtree(temp_dir, ignore_errors=True)


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
