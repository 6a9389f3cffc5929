"""The baseline agent: policies and an episode runner that is a client of both services."""
