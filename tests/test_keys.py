"""The token key: where it comes from, what a bad one does, and rotating it without
breaking the episodes in flight. Real env_service processes on loopback ports."""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
import yaml

from baseline_agent.embedded import ROOT, ServiceProcess, start_service
from env_service.token_keys import (
    KEY_ENV,
    KEY_FILE_ENV,
    KEY_ID_BYTES,
    PREVIOUS_KEY_ENV,
    PREVIOUS_KEY_FILE_ENV,
    PREVIOUS_UNTIL_ENV,
    TokenKey,
    TokenKeyError,
    key_id,
    read_keys,
)
from env_service.tokens import TOKEN_VERSION, InvalidTokenError, TokenCodec
from supportenv import expert
from supportenv.actions import Action
from supportenv.episode import advance
from supportenv.replay import new_episode
from supportenv.tasks import TASKS
from supportenv.v1 import env_pb2, env_pb2_grpc
from supportenv.v1 import types_pb2 as pb
from supportenv.v1.keys import MIN_KEY_BYTES

TASK = "end_to_end_resolution"
KEY_VARS = (KEY_ENV, KEY_FILE_ENV, PREVIOUS_KEY_ENV, PREVIOUS_KEY_FILE_ENV, PREVIOUS_UNTIL_ENV)
WAIT_S = 30


def new_key() -> str:
    return secrets.token_hex(32)


def kid(key: str) -> bytes:
    return key_id(key.encode())


def token_key_id(token: bytes) -> bytes:
    return token[1 : 1 + KEY_ID_BYTES]


def settings(**values: str) -> dict[str, str]:
    """A child environment with exactly these key settings (none inherited from ours)."""
    env = {name: "" for name in KEY_VARS}
    env.update(values)
    env["SUPPORTENV_WORKERS"] = env.get("SUPPORTENV_WORKERS", "1")
    return env


def classify() -> pb.Action:
    return pb.Action(classify_issue=pb.ClassifyIssue(category=pb.ISSUE_CATEGORY_BILLING, priority=pb.PRIORITY_HIGH))


def ask() -> pb.Action:
    return pb.Action(ask_for_more_info=pb.AskForMoreInfo(fields=["order_id"]))


class Replica:
    """One env_service process and a stub on its own channel."""

    def __init__(self, **key_settings: str) -> None:
        self.service: ServiceProcess = start_service("env_service", settings(**key_settings))
        self.channel = grpc.insecure_channel(self.service.address)
        self.stub = env_pb2_grpc.EnvServiceStub(self.channel)

    def reset(self, seed: int) -> env_pb2.ResetResponse:
        request = env_pb2.ResetRequest(task_id=TASK, split=pb.SPLIT_TRAIN, seed=seed)
        return self.stub.Reset(request, timeout=5)

    def step(self, token: bytes, action: pb.Action) -> env_pb2.StepResponse:
        return self.stub.Step(env_pb2.StepRequest(state_token=token, action=action), timeout=5)

    def refuses(self, token: bytes) -> str:
        with pytest.raises(grpc.RpcError) as info:
            self.step(token, ask())
        assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT, info.value.details()
        return info.value.details()

    def close(self) -> int:
        self.channel.close()
        return self.service.stop()


@pytest.fixture
def replicas():
    """Start replicas with `replicas(**settings)`; all are stopped (and checked) at the end."""
    started: list[Replica] = []

    def start(**key_settings: str) -> Replica:
        started.append(Replica(**key_settings))
        return started[-1]

    yield start
    codes = [replica.close() for replica in started]
    assert codes == [0] * len(started), "every replica stops cleanly on SIGTERM"


# --- rotation over real services ----------------------------------------------------------


def test_rotation_keeps_episodes_alive_and_a_replica_without_the_old_key_refuses(replicas):
    old, new = new_key(), new_key()
    before = replicas(**{KEY_ENV: old})  # a replica from before the rotation
    # After it: signs with the new key, accepts the old one for an hour. Two workers, so the
    # rotation settings must reach spawned worker processes too.
    after = replicas(
        **{KEY_ENV: new, PREVIOUS_KEY_ENV: old, PREVIOUS_UNTIL_ENV: str(time.time() + 3600), "SUPPORTENV_WORKERS": "2"}
    )
    retired = replicas(**{KEY_ENV: new})  # the old key retired

    start = before.reset(seed=5)
    assert start.state_token[:1] == TOKEN_VERSION and token_key_id(start.state_token) == kid(old)
    first = before.step(start.state_token, classify())

    # The episode continues on the rotated replica, exactly as on the old one ...
    on_after = after.step(first.state_token, ask())
    on_before = before.step(first.state_token, ask())
    on_after.state_token, on_before.state_token = b"", b""
    assert on_after == on_before
    # ... and what the rotated replica hands back is signed with the new key.
    continued = after.step(first.state_token, ask())
    assert token_key_id(continued.state_token) == kid(new)
    assert continued.observation.step == 2
    assert token_key_id(after.reset(seed=6).state_token) == kid(new)

    # A replica that no longer holds the old key refuses the old token, clearly ...
    message = retired.refuses(first.state_token)
    assert "signed with an unknown key" in message and kid(old).hex() in message
    # ... but takes the rotated replica's token: the episode goes on under the new key alone.
    finished = retired.step(continued.state_token, pb.Action(mark_resolved=pb.MarkResolved(summary="done")))
    assert finished.terminated and finished.observation.step == 3


def test_grace_period_over_refuses_the_previous_key(replicas):
    old, new = new_key(), new_key()
    token = replicas(**{KEY_ENV: old}).reset(seed=1).state_token
    expired = replicas(**{KEY_ENV: new, PREVIOUS_KEY_ENV: old, PREVIOUS_UNTIL_ENV: str(time.time() - 1)})
    message = expired.refuses(token)
    assert "grace period" in message and "ended" in message
    assert any("grace period" in line for line in expired.service.output), "the operator is told at startup"
    assert token_key_id(expired.reset(seed=1).state_token) == kid(new)


def test_rolling_rotation_in_two_phases(replicas):
    """Replicas restarted one by one: first every replica learns the new key as its previous
    key (still signing with the old one), then the keys swap. At every point, any token in
    circulation is accepted by every replica running."""
    old, new = new_key(), new_key()
    phase0 = replicas(**{KEY_ENV: old})
    phase1 = replicas(**{KEY_ENV: old, PREVIOUS_KEY_ENV: new})
    phase2 = replicas(**{KEY_ENV: new, PREVIOUS_KEY_ENV: old})
    t0 = phase0.reset(seed=3).state_token
    t1 = phase1.step(t0, classify()).state_token
    assert token_key_id(t1) == kid(old)
    t2 = phase2.step(t1, ask()).state_token
    assert token_key_id(t2) == kid(new)
    phase1.step(t2, ask())  # a phase-1 replica accepts the new key's tokens
    phase0.refuses(t2)  # which is why phase 1 comes first


# --- where the key comes from ------------------------------------------------------------


def test_key_from_file_interoperates_with_the_same_key_from_the_environment(tmp_path, replicas):
    key = new_key()
    key_file = tmp_path / "token.key"
    key_file.write_text(key + "\n")  # as keygen writes it: the newline is not part of the key
    from_file = replicas(**{KEY_FILE_ENV: str(key_file)})
    from_env = replicas(**{KEY_ENV: key})
    token = from_file.reset(seed=2).state_token
    assert token_key_id(token) == kid(key)
    assert from_env.step(token, classify()).observation.step == 1


def test_previous_key_from_file_and_a_missing_previous_file_means_none(tmp_path, replicas):
    old, new = new_key(), new_key()
    (tmp_path / "token.key").write_text(new + "\n")
    (tmp_path / "token.key.previous").write_text(old + "\n")
    token = replicas(**{KEY_ENV: old}).reset(seed=4).state_token
    rotated = replicas(
        **{KEY_FILE_ENV: str(tmp_path / "token.key"), PREVIOUS_KEY_FILE_ENV: str(tmp_path / "token.key.previous")}
    )
    assert rotated.step(token, classify()).observation.step == 1
    # Outside a rotation the previous-key file does not exist: only the current key is accepted.
    steady = replicas(
        **{KEY_FILE_ENV: str(tmp_path / "token.key"), PREVIOUS_KEY_FILE_ENV: str(tmp_path / "no-such-file")}
    )
    assert "unknown key" in steady.refuses(token)


def run_service(env: dict[str, str], workers: int) -> subprocess.CompletedProcess[str]:
    child = {**os.environ, **env, "PYTHONPATH": str(ROOT), "SUPPORTENV_WORKERS": str(workers)}
    return subprocess.run(
        [sys.executable, "-m", "env_service", "--host", "127.0.0.1", "--port", "0"],
        env=child,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_a_short_key_is_refused_at_startup_with_a_clear_message(workers):
    done = run_service(settings(**{KEY_ENV: "x" * (MIN_KEY_BYTES - 1)}), workers)
    assert done.returncode != 0
    assert "listening" not in done.stdout, "it must not serve with a weak key"
    assert f"{KEY_ENV}: the token key is {MIN_KEY_BYTES - 1} bytes; it must be at least {MIN_KEY_BYTES}" in done.stderr
    assert "Traceback" not in done.stderr, "a setting error is one line, not a stack trace"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({KEY_FILE_ENV: "{tmp}/missing.key"}, "no such file"),
        ({KEY_FILE_ENV: "{tmp}/empty.key"}, "the file is empty"),
        ({KEY_FILE_ENV: "{tmp}/short.key"}, "the token key is 5 bytes"),
        ({KEY_ENV: "k" * 32, PREVIOUS_KEY_ENV: "short"}, f"{PREVIOUS_KEY_ENV}: the token key is 5 bytes"),
        ({PREVIOUS_KEY_ENV: "p" * 32}, "set the new key too"),
        ({KEY_ENV: "k" * 32, PREVIOUS_UNTIL_ENV: "tomorrow"}, "is not a Unix time"),
        ({KEY_ENV: "k" * 32, PREVIOUS_UNTIL_ENV: "nan"}, "is not a Unix time"),
    ],
    ids=["missing-file", "empty-file", "short-file", "short-previous", "previous-alone", "bad-deadline", "nan"],
)
def test_bad_key_settings_are_refused_at_startup(tmp_path, values, expected):
    (tmp_path / "empty.key").write_text("\n")
    (tmp_path / "short.key").write_text("short\n")
    env = settings(**{name: value.format(tmp=tmp_path) for name, value in values.items()})
    done = run_service(env, workers=1)
    assert done.returncode != 0 and "listening" not in done.stdout
    assert expected in done.stderr and "Traceback" not in done.stderr, done.stderr


# --- the codec itself ---------------------------------------------------------------------


def test_token_layout_and_key_ids():
    _, state = new_episode(TASK, "train", 7)
    codec = TokenCodec(b"k" * 32)
    token = codec.encode(state)
    assert token[:1] == TOKEN_VERSION == b"\x05"
    assert token_key_id(token) == key_id(b"k" * 32)
    assert codec.decode(token) == state
    forged = bytearray(token)
    forged[1] ^= 0xFF  # another key id: looked up, not found
    with pytest.raises(InvalidTokenError, match="signed with an unknown key"):
        codec.decode(bytes(forged))
    older = b"\x04" + token[1:]
    with pytest.raises(InvalidTokenError, match="format version 4"):
        codec.decode(older)


def test_extending_a_token_equals_encoding_the_state():
    """The service signs each step's token by extending the last one (TokenCodec.extend):
    byte for byte what encode gives, for actions of every kind and texts that need escaping,
    and from a token signed with the previous key too."""
    codec = TokenCodec(TokenKey(b"n" * 32, previous=b"o" * 32))
    old = TokenCodec(b"o" * 32)
    texts = ("", 'quote " backslash \\ newline \n', "émoji 🎫 ünïcode", "[],{}")
    for task in TASKS:
        for seed in range(12):
            scenario, state = new_episode(task.task_id, "validation", seed, episode_id=texts[seed % 4])
            token = (old if seed % 3 == 0 else codec).encode(state)
            step_index = 0
            while not state.done:
                action = expert.expert_action(scenario, state, task.task_id)
                if step_index % 3 == 1:
                    action = Action("ask_for_more_info", text=texts[(seed + step_index) % 4] or "and?")
                advance(scenario, state, action)
                step_index += 1
                extended = codec.extend(token, state)
                assert extended == codec.encode(state)
                assert codec.decode(extended) == state
                token = extended


def test_the_grace_deadline_reads_the_injected_clock():
    _, state = new_episode(TASK, "train", 8)
    old, new = b"o" * 32, b"n" * 32
    token = TokenCodec(old).encode(state)
    now = [1000.0]
    codec = TokenCodec(TokenKey(new, old, previous_until=1500.0), clock=lambda: now[0])
    assert codec.decode(token) == state
    assert token_key_id(codec.encode(state)) == key_id(new)
    now[0] = 1500.0
    with pytest.raises(InvalidTokenError, match="grace period ended at 1970-01-01T00:25:00Z"):
        codec.decode(token)
    assert codec.decode(codec.encode(state)) == state, "the current key has no deadline"


def test_read_keys_from_a_mapping():
    assert read_keys({}) is None
    keys = read_keys({KEY_ENV: "c" * 20, PREVIOUS_KEY_ENV: "p" * 20, PREVIOUS_UNTIL_ENV: "12.5"})
    assert keys == b"c" * 20 and keys.previous == b"p" * 20 and keys.previous_until == 12.5
    assert "c" * 20 not in repr(keys) and "p" * 20 not in repr(keys), "the repr never shows a secret"
    same = read_keys({KEY_ENV: "c" * 20, PREVIOUS_KEY_ENV: "c" * 20})
    assert same is not None and same.previous is None
    with pytest.raises(TokenKeyError, match="at least 16"):
        read_keys({KEY_ENV: "c" * 15})


# --- the compose file carries no secret ---------------------------------------------------


def test_compose_carries_no_plain_text_secret():
    text = (ROOT / "docker-compose.yml").read_text()
    compose = yaml.safe_load(text)
    for name, service in compose["services"].items():
        assert "env_file" not in service, f"{name}: settings from a file the repository does not show"
        env = service.get("environment") or {}
        if isinstance(env, list):
            env = dict(item.split("=", 1) for item in env)
        for variable in (KEY_ENV, PREVIOUS_KEY_ENV):
            assert variable not in env, f"{name} sets {variable}: a key in plain text"
        for variable, value in env.items():
            if "KEY" in variable:  # a file in the key volume, or the host's own setting passed through
                from_file = variable.endswith("_FILE") and str(value).startswith("/run/")
                assert from_file or value == f"${{{variable}:-}}", (name, variable, value)
    # Nothing that looks like a key anywhere, comments included.
    assert not re.search(r"\b[0-9a-fA-F]{32,}\b", text), "a hex secret in docker-compose.yml"
    assert not re.search(r"[A-Za-z0-9+/]{40,}={0,2}", text), "a base64 secret in docker-compose.yml"
    # The key files live in the volume keygen writes and env mounts read-only.
    env = compose["services"]["env"]["environment"]
    for variable in (KEY_FILE_ENV, PREVIOUS_KEY_FILE_ENV):
        if variable in env:
            assert Path(env[variable]).parent == Path("/run/supportenv"), (variable, env[variable])
    assert "token-key:/run/supportenv:ro" in compose["services"]["env"]["volumes"]
