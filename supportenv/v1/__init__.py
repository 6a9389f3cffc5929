"""The v1 wire contract's Python side: code generated from protos/supportenv/v1
(`make proto`; committed, never edited by hand) plus conversion and serving helpers
shared by the services and clients. The core library never imports this package."""

# Initial metadata of ListTasks: which server worker answered ("host:pid"), so that a client
# can spread its connections over the workers (client.spread_clients).
WORKER_METADATA = "supportenv-worker"
