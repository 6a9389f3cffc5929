"""The stateless environment service: Reset / Step / State over signed state tokens."""
