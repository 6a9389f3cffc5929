"""OpenEnv adapter: supportenv served through the `openenv` package's own server
(HTTP + WebSocket sessions), as an optional install next to the gRPC services.

    python -m openenv_adapter --port 8000        # the server
    openenv_adapter.client.SupportEnvClient     # openenv's EnvClient for it
    openenv_adapter.models                      # the action, observation and state models

Nothing is imported here, so the health probe stays light.
"""
