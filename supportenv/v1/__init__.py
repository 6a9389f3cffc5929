"""The v1 wire contract's Python side: code generated from protos/supportenv/v1
(`make proto`; committed, never edited by hand) plus conversion and serving helpers
shared by the services and clients. The core library never imports this package.
(Nothing here imports grpc, so a process can read CLASSIC_IO before gRPC starts.)"""

# Initial metadata of ListTasks: which server worker answered ("host:pid"), so that a client
# can spread its connections over the workers (client.spread_clients).
WORKER_METADATA = "supportenv-worker"

# gRPC's newer EventEngine I/O costs 15-30% more CPU and latency per call than the classic
# polling engine on a small VM, on the server and on the client alike (measured on a 2-core
# VM: benchmarks/bench_grpc_floor.py). Set it as GRPC_EXPERIMENTS before grpc is imported.
CLASSIC_IO = "-event_engine_client,-event_engine_listener,-event_engine_for_all_other_endpoints"
