"""The v1 wire contract's Python side: code generated from protos/supportenv/v1
(`make proto`; committed, never edited by hand) plus conversion and serving helpers
shared by the services and clients. The core library never imports this package."""
