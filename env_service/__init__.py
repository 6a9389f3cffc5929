"""The stateless environment service: Reset / Step / State over signed state tokens."""

# gRPC's newer EventEngine I/O costs this service 15-30% more CPU and latency per call than
# the classic polling engine (measured on a 2-core VM: benchmarks/bench_grpc_floor.py), so
# `python -m env_service` sets this as GRPC_EXPERIMENTS unless the operator set it already.
# (No imports here: it must be read before anything imports grpc.)
CLASSIC_IO = "-event_engine_client,-event_engine_listener,-event_engine_for_all_other_endpoints"
