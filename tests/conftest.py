"""Shared fixtures: real env and grader services on loopback ports, real gRPC."""

from __future__ import annotations

import grpc
import pytest

from baseline_agent.embedded import EmbeddedServices
from supportenv.v1 import env_pb2_grpc, grader_pb2_grpc


@pytest.fixture(scope="session")
def services():
    with EmbeddedServices() as running:
        yield running


@pytest.fixture(scope="session")
def env_channel(services):
    with grpc.insecure_channel(services.env.address) as channel:
        yield channel


@pytest.fixture(scope="session")
def env(env_channel):
    return env_pb2_grpc.EnvServiceStub(env_channel)


@pytest.fixture(scope="session")
def grader(services):
    with grpc.insecure_channel(services.grader.address) as channel:
        yield grader_pb2_grpc.GraderServiceStub(channel)
