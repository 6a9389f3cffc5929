"""The throughput benchmark runs end to end and reports every figure the issue names.
(Speeds are not asserted: they belong to `make bench`, not to tests.)"""

from __future__ import annotations

import json
import math

import pytest

from benchmarks import bench_grpc_floor, bench_handler, bench_throughput

KEYS = {
    "inprocess_steps_per_s",
    "unary_steps_per_s_1",
    "unary_p50_ms_1",
    "unary_p99_ms_1",
    "unary_steps_per_s_64",
    "stream_steps_per_s_1",
    "stream_p50_ms_1",
    "stream_steps_per_s_64",
    "batch64_steps_per_s",
    "vector_client64_steps_per_s",
    "openenv_ws_steps_per_s_1",
    "openenv_ws_steps_per_s_64",
    "server_rss_growth_mb_10k_episodes",
    "server_rss_growth_mb_10k_expert_episodes",
    "inprocess_expert_steps_per_s",
}


@pytest.mark.timeout(600)
def test_throughput_benchmark_reports_every_figure(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert (
        bench_throughput.main(["--seconds", "0.3", "--repeat", "1", "--memory-episodes", "400", "--json", str(out)])
        == 0
    )
    figures = json.loads(out.read_text())
    assert set(figures) == KEYS
    for key, value in figures.items():
        assert math.isfinite(value), key
        if key.endswith("_per_s") or "_per_s_" in key or key.endswith("_ms_1"):
            assert value > 0, key
    printed = capsys.readouterr().out
    assert "median of 1 run)" in printed and all(key in printed for key in KEYS)


def test_grpc_floor_benchmark_runs(capsys):
    assert bench_grpc_floor.main(["--calls", "50"]) == 0
    printed = capsys.readouterr().out
    assert "unary call" in printed and "stream message" in printed


def test_handler_benchmark_runs(capsys):
    assert bench_handler.main(["--seconds", "0.3"]) == 0
    printed = capsys.readouterr().out
    assert "StepBatch of 64" in printed and "Session stream" in printed
