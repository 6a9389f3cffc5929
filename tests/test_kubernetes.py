"""deploy/kubernetes, checked without a cluster: every manifest against the Kubernetes schema,
then the structure a user relies on, then every container's command run as a local process with
its container's environment, rewriting only what must differ on one machine: the ports (free
loopback ports), the bind host (127.0.0.1), the Secret-mounted files (a temp folder filled as the
kubelet fills the volume) and the cluster's DNS names (the local processes standing in for the
pods they name)."""

from __future__ import annotations

import base64
import copy
import re
import secrets
import shlex
import signal
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import grpc
import kubernetes_validate
import pytest
import yaml

from env_service.token_keys import KEY_ENV, KEY_FILE_ENV, PREVIOUS_KEY_FILE_ENV
from supportenv import expert
from supportenv.actions import Action
from supportenv.episode import advance
from supportenv.replay import new_episode
from supportenv.v1 import convert, env_pb2, env_pb2_grpc
from supportenv.v1.client import CHANNEL_OPTIONS, EnvClient, GraderClient
from supportenv.v1.health_probe import check
from supportenv.v1.keys import WORLD_KEY_ENV
from supportenv.v1.limits import SHUTDOWN_GRACE_S
from tests.deployment import (
    ADDR_VARS,
    CPU_BUDGET,
    MEMORY_BUDGET,
    PORT_VARS,
    ROOT,
    WAIT_S,
    child_env,
    environment,
    free_ports,
    memory_bytes,
    processes_fixture,  # noqa: F401 (the `processes` fixture)
    run,
    start,
    wait_serving,
)
from tests.deployment import SERVICES as COMPOSE_SERVICES
from tests.deployment import command as compose_command

# The newest schema kubernetes-validate (pinned in requirements-dev.txt) bundles, and the oldest
# release the manifests are for: native gRPC probes are GA from 1.27 (autoscaling/v2 and
# policy/v1 are older).
KUBERNETES_VERSION = "1.37.0"
OLDEST_KUBERNETES_VERSION = "1.27.0"
DEPLOY = ROOT / "deploy" / "kubernetes"
README = (DEPLOY / "README.md").read_text()
KUSTOMIZATION = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())
NAMESPACE = KUSTOMIZATION["namespace"]
MANIFEST_FILES = sorted(path.name for path in DEPLOY.glob("*.y*ml") if path.name != "kustomization.yaml")
MANIFESTS = {name: [doc for doc in yaml.safe_load_all((DEPLOY / name).read_text()) if doc] for name in MANIFEST_FILES}
RESOURCES = [doc for docs in MANIFESTS.values() for doc in docs]
TOKEN_SECRET = "supportenv-token-key"
DOCKERFILE_USER = re.findall(r"^USER (\d+):(\d+)", (ROOT / "Dockerfile").read_text(), re.MULTILINE)[-1]


def of_kind(kind: str) -> dict[str, dict]:
    return {doc["metadata"]["name"]: doc for doc in RESOURCES if doc["kind"] == kind}


DEPLOYMENTS, JOBS, KUBE_SERVICES = of_kind("Deployment"), of_kind("Job"), of_kind("Service")
WORKLOADS = {**DEPLOYMENTS, **JOBS}
ENV = DEPLOYMENTS["supportenv-env"]


def pod(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"]


def replicas(workload: dict) -> int:
    """Pods at the default count: a Deployment's replicas, a Job's parallelism."""
    return workload["spec"].get("replicas" if workload["kind"] == "Deployment" else "parallelism", 1)


def container(workload: dict) -> dict:
    """The workload's one container (init containers aside)."""
    (found,) = pod(workload)["containers"]
    return found


def plain_env(spec: dict) -> dict[str, str]:
    return {item["name"]: item["value"] for item in spec.get("env", []) if "value" in item}


def selects(selector: Mapping[str, str], workload: dict) -> bool:
    return selector.items() <= workload["spec"]["template"]["metadata"]["labels"].items()


def selected_workload(service: dict) -> dict:
    (found,) = [w for w in WORKLOADS.values() if selects(service["spec"]["selector"], w)]
    return found


# --- schema -----------------------------------------------------------------------------


def validate(resource: dict, version: str = KUBERNETES_VERSION) -> None:
    kubernetes_validate.validate(resource, version, strict=True)  # strict: an unknown field fails too


@pytest.mark.parametrize("version", [KUBERNETES_VERSION, OLDEST_KUBERNETES_VERSION])
@pytest.mark.parametrize("name", MANIFEST_FILES)
def test_manifest_is_valid_kubernetes(name, version):
    assert MANIFESTS[name], f"{name} holds no resource"
    for resource in MANIFESTS[name]:
        validate(resource, version)


@pytest.mark.parametrize(
    "break_it",
    [
        lambda c: c.update(readinessprobe=c.pop("readinessProbe")),  # misspelt: an unknown field
        lambda c: c["livenessProbe"]["grpc"].update(port="grpc"),  # a gRPC probe's port is a number
        lambda c: c["securityContext"].update(runAsNonroot=True),  # misspelt, deeper down
    ],
)
def test_validation_refuses_a_broken_manifest(break_it):
    broken = copy.deepcopy(ENV)
    break_it(container(broken))
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(broken)


# --- structure --------------------------------------------------------------------------


def test_kustomization_lists_every_manifest_and_no_secret():
    assert KUSTOMIZATION["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
    assert KUSTOMIZATION["kind"] == "Kustomization"
    # Nothing that could carry a key (secretGenerator, patches): the Secret is the operator's.
    assert set(KUSTOMIZATION) <= {"apiVersion", "kind", "namespace", "resources", "images"}
    listed = KUSTOMIZATION["resources"]
    assert sorted(listed) == MANIFEST_FILES and len(set(listed)) == len(listed), listed
    assert "Secret" not in {doc["kind"] for doc in RESOURCES}
    assert of_kind("Namespace").keys() == {NAMESPACE}
    for doc in RESOURCES:  # the kustomization sets the namespace; a manifest must not disagree
        assert doc["metadata"].get("namespace", NAMESPACE) == NAMESPACE, doc["metadata"]


def test_every_deployment_has_grpc_probes_on_its_port():
    for workload in DEPLOYMENTS.values():
        for spec in pod(workload)["containers"]:
            port = int(plain_env(spec)[PORT_VARS[spec["name"]]])
            assert [p["containerPort"] for p in spec["ports"]] == [port], spec["name"]
            for kind in ("readinessProbe", "livenessProbe"):
                probe = spec[kind]
                # Native gRPC: Health/Check for service "" (the whole server), which the server answers.
                assert probe["grpc"] == {"port": port}, (spec["name"], kind)
                assert probe["timeoutSeconds"] < probe["periodSeconds"], (spec["name"], kind)


def resources(spec: dict, which: str) -> tuple[float, int]:
    values = spec["resources"][which]
    return cpu(values["cpu"]), memory(values["memory"])


def cpu(quantity: str | int | float) -> float:
    text = str(quantity)
    return int(text[:-1]) / 1000 if text.endswith("m") else float(text)


def memory(quantity: str | int) -> int:
    match = re.fullmatch(r"(\d+)([KMGT])i", str(quantity))
    assert match, f"not a binary memory quantity (Ki, Mi, Gi, Ti): {quantity!r}"
    number, unit = match.groups()
    return int(number) * 1024 ** (1 + "KMGT".index(unit))


def pod_reservation(workload: dict, which: str) -> tuple[float, int]:
    """What the scheduler reserves for one pod: its containers together, or its largest init
    container if that is larger (init containers run before, not beside, the others)."""
    containers = [resources(c, which) for c in pod(workload)["containers"]]
    inits = [resources(c, which) for c in pod(workload).get("initContainers", [])]
    cpus = [sum(c for c, _ in containers), *(c for c, _ in inits)]
    memories = [sum(m for _, m in containers), *(m for _, m in inits)]
    return max(cpus), max(memories)


def test_resources_fit_the_budget_at_the_default_replica_count():
    for workload in WORKLOADS.values():
        for spec in pod(workload)["containers"] + pod(workload).get("initContainers", []):
            # Requests = limits: the scheduler reserves what the budget counts.
            assert resources(spec, "requests") == resources(spec, "limits"), spec["name"]
    total_cpu, total_memory = 0.0, 0
    for workload in WORKLOADS.values():
        pod_cpu, pod_memory = pod_reservation(workload, "limits")
        total_cpu, total_memory = (
            total_cpu + replicas(workload) * pod_cpu,
            total_memory + replicas(workload) * pod_memory,
        )
    assert total_cpu <= CPU_BUDGET and total_memory <= MEMORY_BUDGET, (total_cpu, total_memory)
    # The comment that states the arithmetic stays true.
    stated = f"= {total_cpu:g} CPU, {total_memory / 1024**3:g} GiB"
    assert stated in (DEPLOY / "env-deployment.yaml").read_text(), stated


def test_limits_match_docker_compose():
    for workload in WORKLOADS.values():
        for spec in pod(workload)["containers"]:
            limits = COMPOSE_SERVICES[spec["name"]]["deploy"]["resources"]["limits"]
            expected = (float(limits["cpus"]), memory_bytes(limits["memory"]))
            assert resources(spec, "limits") == expected, spec["name"]


def test_env_service_is_headless_and_selects_the_env_pods():
    service = KUBE_SERVICES["supportenv-env"]
    assert service["spec"]["clusterIP"] == "None", "round_robin needs every pod's address in DNS"
    assert selected_workload(service) is ENV
    assert not service["spec"].get("publishNotReadyAddresses"), "readiness must decide who gets calls"
    grader = KUBE_SERVICES["supportenv-grader"]
    assert "clusterIP" not in grader["spec"] and selected_workload(grader) is DEPLOYMENTS["supportenv-grader"]
    for service in KUBE_SERVICES.values():
        spec = container(selected_workload(service))
        (port,) = service["spec"]["ports"]
        (named,) = [p for p in spec["ports"] if p["name"] == port["targetPort"]]
        assert port["port"] == named["containerPort"], service["metadata"]["name"]
    for workload in DEPLOYMENTS.values():
        assert selects(workload["spec"]["selector"]["matchLabels"], workload)


def test_pdb_and_hpa_target_the_env_deployment():
    (pdb,) = of_kind("PodDisruptionBudget").values()
    assert pdb["spec"]["minAvailable"] == 1 and pdb["spec"]["selector"] == ENV["spec"]["selector"]
    (hpa,) = of_kind("HorizontalPodAutoscaler").values()
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["apiVersion"], target["kind"], target["name"]) == ("apps/v1", "Deployment", "supportenv-env")
    assert hpa["spec"]["minReplicas"] == replicas(ENV) == 2
    (metric,) = hpa["spec"]["metrics"]
    assert metric["resource"]["name"] == "cpu" and metric["resource"]["target"]["type"] == "Utilization"
    # The comment says what the top of the range costs, beyond the 2-vCPU budget.
    top, (env_cpu, env_memory) = hpa["spec"]["maxReplicas"], resources(container(ENV), "requests")
    stated = f"{top} x {env_cpu * 1000:g}m = {top * env_cpu:g} CPU and {top} x {env_memory // 1024**2}Mi"
    assert stated in (DEPLOY / "env-hpa.yaml").read_text(), stated
    assert replicas(ENV) < top <= 10


def test_images_commands_and_environment_match_docker_compose():
    for workload in WORKLOADS.values():
        for spec in pod(workload)["containers"]:
            service = spec["name"]  # each container is named after its compose service
            assert spec["image"] == COMPOSE_SERVICES[service]["image"] and spec["command"] == compose_command(service)
            compose_env, k8s_env = environment(service), {item["name"]: item for item in spec.get("env", [])}
            assert k8s_env.keys() == compose_env.keys(), service
            for name, item in k8s_env.items():
                if name in ADDR_VARS.values():  # the service's cluster DNS name, on the same port
                    compose_scheme, compose_port = re.fullmatch(r"(dns:///)?[\w-]+:(\d+)", compose_env[name]).groups()
                    assert item["value"].startswith(compose_scheme or "") and item["value"].endswith(f":{compose_port}")
                elif name == WORLD_KEY_ENV:  # compose's `${VAR:-}`: from the host if set, else nothing
                    assert item["valueFrom"]["secretKeyRef"]["optional"] is True, service
                else:
                    assert item["value"] == compose_env[name], (service, name)
    for init in pod(JOBS["supportenv-agent"])["initContainers"]:
        assert init["image"] == container(JOBS["supportenv-agent"])["image"]


def test_pods_run_as_the_image_user_without_privileges():
    uid, gid = map(int, DOCKERFILE_USER)
    for name, workload in WORKLOADS.items():
        spec = pod(workload)
        context = spec["securityContext"]
        assert context["runAsNonRoot"] and (context["runAsUser"], context["runAsGroup"]) == (uid, gid), name
        assert context["seccompProfile"] == {"type": "RuntimeDefault"}, name
        # Service links would set SUPPORTENV_<SERVICE>_PORT=tcp://..., the names the ports are read from.
        assert spec["enableServiceLinks"] is False and spec["automountServiceAccountToken"] is False, name
        for each in spec["containers"] + spec.get("initContainers", []):
            assert each["imagePullPolicy"] == "IfNotPresent", each["name"]
            assert each["securityContext"] == {
                "allowPrivilegeEscalation": False,
                "readOnlyRootFilesystem": True,
                "capabilities": {"drop": ["ALL"]},
            }, each["name"]
    assert of_kind("Namespace")[NAMESPACE]["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_servers_get_longer_than_their_drain_to_stop():
    for name, workload in DEPLOYMENTS.items():
        # The drain, and time to leave DNS and exit, before the kubelet's SIGKILL.
        assert pod(workload)["terminationGracePeriodSeconds"] >= 2 * SHUTDOWN_GRACE_S, name


def test_token_key_is_mounted_from_the_operators_secret():
    spec, volumes = container(ENV), {v["name"]: v for v in pod(ENV)["volumes"]}
    every_env = [item["name"] for w in WORKLOADS.values() for c in pod(w)["containers"] for item in c.get("env", [])]
    assert KEY_ENV not in every_env, "the key comes from a file, not the pod spec"
    (mount,) = spec["volumeMounts"]
    assert mount["readOnly"] and pod(ENV)["securityContext"]["fsGroup"] == int(DOCKERFILE_USER[1])
    sources = [source["secret"] for source in volumes[mount["name"]]["projected"]["sources"]]
    files = {
        item["path"]: (item["key"], source.get("optional", False))
        for source in sources
        for item in source["items"]
        if source["name"] == TOKEN_SECRET
    }
    env = plain_env(spec)
    assert files == {"token.key": ("token.key", False), "token.key.previous": ("token.key.previous", True)}
    assert env[KEY_FILE_ENV] == f"{mount['mountPath']}/token.key"
    assert env[PREVIOUS_KEY_FILE_ENV] == f"{mount['mountPath']}/token.key.previous"


def test_agent_job_runs_once_and_waits_for_the_services():
    job = JOBS["supportenv-agent"]
    assert pod(job)["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] <= 2
    assert job["spec"]["activeDeadlineSeconds"] > 300, "the init container waits up to 300 s"
    for spec in pod(job)["containers"] + pod(job)["initContainers"]:
        env = plain_env(spec)
        assert env[ADDR_VARS["env"]] == f"dns:///supportenv-env.{NAMESPACE}.svc.cluster.local:50051"
        assert env[ADDR_VARS["grader"]] == f"supportenv-grader.{NAMESPACE}.svc.cluster.local:50052"


# --- README.md's secret commands --------------------------------------------------------


def shell_commands(text: str) -> list[list[str]]:
    """Every line of the README's sh blocks as words, continuation lines joined."""
    blocks = re.findall(r"```sh\n(.*?)```", text, re.DOTALL)
    lines = re.sub(r"\\\n\s*", " ", "\n".join(blocks)).splitlines()
    return [shlex.split(line, comments=True) for line in lines if line.strip()]


class SecretCommand(NamedTuple):
    namespace: str
    name: str
    files: dict[str, str]  # key -> the file name it is read from
    replaces: bool  # `| kubectl replace -f -`: the Secret's new content, in full


def secret_commands() -> list[SecretCommand]:
    """Every `kubectl -n NS create secret generic NAME --from-file=KEY=FILE ...` in README.md."""
    found = []
    for words in shell_commands(README):
        if words[:1] == ["kubectl"] and words[3:6] == ["create", "secret", "generic"]:
            files = dict(w.removeprefix("--from-file=").split("=", 1) for w in words if w.startswith("--from-file="))
            replaces = "|" in words and words[words.index("|") + 1 :] == ["kubectl", "replace", "-f", "-"]
            found.append(SecretCommand(words[2], words[6], {k: Path(f).name for k, f in files.items()}, replaces))
    return found


def rotation_steps() -> list[dict[str, str]]:
    return [c.files for c in secret_commands() if c.name == TOKEN_SECRET and c.replaces]


def secrets_read() -> dict[str, dict[str, bool]]:
    """Secret -> {key: optional} for every Secret key a pod mounts or puts in its environment."""
    found: dict[str, dict[str, bool]] = {}
    for workload in WORKLOADS.values():
        for volume in pod(workload).get("volumes", []):
            for source in volume["projected"]["sources"]:
                for item in source["secret"]["items"]:
                    found.setdefault(source["secret"]["name"], {})[item["key"]] = source["secret"].get(
                        "optional", False
                    )
        for spec in pod(workload)["containers"]:
            for ref in [item["valueFrom"]["secretKeyRef"] for item in spec.get("env", []) if "valueFrom" in item]:
                found.setdefault(ref["name"], {})[ref["key"]] = ref.get("optional", False)
    return found


def test_readme_makes_every_secret_the_pods_read():
    made = {c.name: c for c in secret_commands() if not c.replaces}
    for name, keys in secrets_read().items():
        assert made[name].namespace == NAMESPACE, name
        required = {key for key, optional in keys.items() if not optional}
        assert required <= made[name].files.keys() <= keys.keys(), (name, made[name].files)
        validate(  # the Secret that command makes
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "namespace": NAMESPACE},
                "type": "Opaque",
                "data": {key: base64.b64encode(b"0" * 64).decode() for key in made[name].files},
            }
        )


def test_readme_rotation_has_three_steps_each_with_a_rollout():
    steps = rotation_steps()
    assert [sorted(files) for files in steps] == [["token.key", "token.key.previous"]] * 2 + [["token.key"]]
    restart = ["kubectl", "-n", NAMESPACE, "rollout", "restart", "deployment/supportenv-env", "&&"]
    assert sum(words[:7] == restart and "status" in words for words in shell_commands(README)) == len(steps)


# --- live: the containers as local processes --------------------------------------------

_CLUSTER_ADDRESS = re.compile(r"(dns:///)?([a-z0-9-]+)\.([a-z0-9-]+)\.svc\.cluster\.local:(\d+)")


def local_target(address: str, pod_ports: Mapping[str, list[int]]) -> str:
    """A cluster address -> what its DNS name answers here: every ready pod of a headless
    Service (gRPC's static `ipv4:` list), the one grader pod of a ClusterIP Service."""
    match = _CLUSTER_ADDRESS.fullmatch(address)
    assert match, f"{address} is not a Service's cluster DNS name"
    scheme, name, namespace, port = match.groups()
    service = KUBE_SERVICES[name]
    assert namespace == NAMESPACE and [int(port)] == [p["port"] for p in service["spec"]["ports"]], address
    ports = pod_ports[selected_workload(service)["metadata"]["name"]]
    if service["spec"].get("clusterIP") == "None":
        assert scheme, f"{address}: a headless Service's replicas need the dns:/// resolver"
        return "ipv4:" + ",".join(f"127.0.0.1:{p}" for p in ports)
    assert len(ports) == 1, "a cluster IP fronts one pod here"
    return f"127.0.0.1:{ports[0]}"


def mount(workload: dict, spec: dict, secret_data: Mapping[str, Mapping[str, str]], folder: Path) -> dict[str, Path]:
    """The container's volumes (projected Secrets, the one kind these manifests use) as folders,
    filled as the kubelet fills them: mount path -> folder. A required Secret or key that is
    missing fails, as the pod would wait for it."""
    volumes = {v["name"]: v for v in pod(workload).get("volumes", [])}
    mounts = {}
    for volume_mount in spec.get("volumeMounts", []):
        projected = volumes[volume_mount["name"]]["projected"]
        target = folder / volume_mount["name"]
        target.mkdir()
        for source in projected["sources"]:
            secret = source["secret"]
            for item in secret["items"]:
                data = secret_data.get(secret["name"], {})
                if item["key"] not in data:
                    assert secret.get("optional"), f"the pod waits for {secret['name']}/{item['key']}"
                    continue
                (target / item["path"]).write_text(data[item["key"]])
                (target / item["path"]).chmod(item.get("mode", projected["defaultMode"]))
        mounts[volume_mount["mountPath"]] = target
    return mounts


def local_env(
    workload: dict,
    spec: dict,
    folder: Path,
    secret_data: Mapping[str, Mapping[str, str]],
    port: int | None = None,
    pod_ports: Mapping[str, list[int]] | None = None,
) -> dict[str, str]:
    """The container's environment on this machine: Secret references resolved from
    `secret_data`, mounted paths under `folder`, its port `port` on 127.0.0.1, cluster
    addresses pointing at the local pods in `pod_ports` (workload name -> ports)."""
    mounts = mount(workload, spec, secret_data, folder)
    env = {}
    for item in spec.get("env", []):
        if "value" in item:
            env[item["name"]] = item["value"]
            continue
        ref = item["valueFrom"]["secretKeyRef"]
        if ref["key"] in secret_data.get(ref["name"], {}):
            env[item["name"]] = secret_data[ref["name"]][ref["key"]]
        else:
            assert ref.get("optional"), f"the pod waits for {ref['name']}/{ref['key']}"
    for name, value in env.items():
        for path, target in mounts.items():
            if value.startswith(path + "/"):
                env[name] = str(target) + value.removeprefix(path)
        if name in ADDR_VARS.values():
            env[name] = local_target(value, pod_ports or {})
    if port is not None:
        env.update({PORT_VARS[spec["name"]]: str(port), "SUPPORTENV_HOST": "127.0.0.1"})
    return child_env(env)


def keygen(path: Path) -> str:
    """The README's `python -m env_service.keygen PATH`."""
    done = run(["python", "-m", "env_service.keygen", str(path)], child_env({}))
    assert done.returncode == 0, done.stderr
    return path.read_text()


def start_pods(
    tmp_path: Path, processes: list[subprocess.Popen], workload: dict, secret_data: Mapping, count: int | None = None
) -> list[int]:
    """`count` (default: the workload's replicas) local pods of a Deployment, each on its own
    port, healthy by its probes' own checks; their ports."""
    spec, name = container(workload), workload["metadata"]["name"]
    ports = free_ports(count or replicas(workload))
    for index, port in enumerate(ports):
        folder = tmp_path / f"{name}-{index}"
        folder.mkdir(parents=True)
        env = local_env(workload, spec, folder, secret_data, port)
        start(processes, spec["command"], env, folder.with_suffix(".log"))
    for index, port in enumerate(ports):
        wait_serving(f"127.0.0.1:{port}", tmp_path / f"{name}-{index}.log")
        for kind in ("readinessProbe", "livenessProbe"):  # one Check each, as the kubelet makes it
            probe = spec[kind]
            assert check(f"127.0.0.1:{port}", probe["grpc"].get("service", ""), probe["timeoutSeconds"]) is None, kind
    return ports


def wait_for_replicas(client: EnvClient, count: int) -> set[str]:
    """The server workers ("host:pid") a round_robin channel reaches, once it reaches `count`."""
    seen: set[str] = set()
    deadline = time.monotonic() + WAIT_S / 2
    while len(seen) < count:
        assert time.monotonic() < deadline, f"round_robin reached only {seen}"
        seen.add(client.worker())
    return seen


def play_expert_episode(client: EnvClient, task: str, world_key: bytes) -> list[Action]:
    """The expert's actions, stepped on the service and on the library side by side."""
    scenario, state = new_episode(task, "test", 0, world_key=world_key)
    client.reset(task, "test", 0)
    while not state.done:
        action = expert.expert_action(scenario, state, task)
        _, _, terminated, truncated, _ = client.step(action)
        advance(scenario, state, action)
        assert (terminated or truncated) == state.done
    return state.actions


def test_containers_run_as_local_processes(tmp_path, processes):
    world_key = secrets.token_hex(32)  # sealed, as an evaluation runs it
    secret_data = {
        TOKEN_SECRET: {"token.key": keygen(tmp_path / "keys" / "token.key")},
        "supportenv-world-key": {"world.key": world_key},
    }
    pod_ports = {name: start_pods(tmp_path, processes, workload, secret_data) for name, workload in DEPLOYMENTS.items()}
    assert len(pod_ports["supportenv-env"]) == 2
    agent = JOBS["supportenv-agent"]
    env_target = local_target(plain_env(container(agent))[ADDR_VARS["env"]], pod_ports)
    grader_target = local_target(plain_env(container(agent))[ADDR_VARS["grader"]], pod_ports)

    # One episode over both replicas: round_robin sends each call to the next one.
    assert ("grpc.lb_policy_name", "round_robin") in CHANNEL_OPTIONS
    with EnvClient(env_target) as client, GraderClient(grader_target) as grader:
        assert len(wait_for_replicas(client, 2)) == 2
        actions = play_expert_episode(client, "end_to_end_resolution", world_key.encode())
        assert grader.grade("end_to_end_resolution", "test", 0, actions).score >= 0.9
        assert len(wait_for_replicas(client, 2)) == 2, "both replicas still serve"

    # The Job: its init container returns once both services answer, then the agent plays.
    for spec in pod(agent)["initContainers"] + pod(agent)["containers"]:
        done = run(spec["command"], local_env(agent, spec, tmp_path / spec["name"], secret_data, pod_ports=pod_ports))
        assert done.returncode == 0, (spec["name"], done.stdout[-2000:] + done.stderr[-2000:])
    assert "weighted score" in done.stdout

    # SIGTERM, as the kubelet sends it: every server drains and exits 0 within its grace period.
    for process in processes:
        process.send_signal(signal.SIGTERM)
    grace = min(pod(workload)["terminationGracePeriodSeconds"] for workload in DEPLOYMENTS.values())
    deadline = time.monotonic() + grace
    for process in processes:
        assert process.wait(timeout=max(deadline - time.monotonic(), 0.1)) == 0


def test_readme_rotation_keeps_every_rollout_serving(tmp_path, processes):
    """The README's rotation on local replicas: a pod of each step (the Secret as that step's
    command leaves it) beside one of the step before, as during a rolling restart."""
    steps = rotation_steps()
    keys = {file: keygen(tmp_path / "keys" / file) for file in sorted({f for files in steps for f in files.values()})}
    before = {"token.key": steps[0]["token.key"]}  # the key step 1 keeps signing with
    states = [{key: keys[file] for key, file in files.items()} for files in [before, *steps]]
    ports = [
        start_pods(tmp_path / f"step-{index}", processes, ENV, {TOKEN_SECRET: state}, count=1)[0]
        for index, state in enumerate(states)
    ]
    channels = [grpc.insecure_channel(f"127.0.0.1:{port}") for port in ports]
    try:
        stubs = [env_pb2_grpc.EnvServiceStub(channel) for channel in channels]
        reset = env_pb2.ResetRequest(task_id="end_to_end_resolution", split=convert.SPLIT_TO_PB["test"])
        tokens = [stub.Reset(reset, timeout=10).state_token for stub in stubs]
        for newer in range(1, len(states)):
            older = newer - 1
            assert accepts(stubs[newer], tokens[older]), f"step {newer} refuses step {older}'s tokens"
            assert accepts(stubs[older], tokens[newer]), f"step {older} refuses step {newer}'s tokens"
        assert not accepts(stubs[-1], tokens[0]), "after step 3 the old key is retired"
    finally:
        for channel in channels:
            channel.close()


def accepts(stub: env_pb2_grpc.EnvServiceStub, token: bytes) -> bool:
    try:
        stub.State(env_pb2.StateRequest(state_token=token), timeout=10)
    except grpc.RpcError as exc:
        assert exc.code() == grpc.StatusCode.INVALID_ARGUMENT, exc  # type: ignore[attr-defined]
        return False
    return True
