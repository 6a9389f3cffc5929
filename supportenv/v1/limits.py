"""Every limit a client can run into, in one place (the README's table lists them).
Requests over a limit get RESOURCE_EXHAUSTED (size) or INVALID_ARGUMENT (shape)."""

from supportenv.actions import MAX_TEXT_CHARS

# Largest gRPC message either way: a ResetBatch of MAX_BATCH fresh episodes fits with room to
# spare (256 expert tickets, whose observations each carry the desk rules, take about 2.2 MB), and
# no larger than what a gRPC client receives by default (4 MiB), so no client needs a setting.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
# Items in one ResetBatch or StepBatch.
MAX_BATCH = 256
# Longest state token accepted.
MAX_TOKEN_BYTES = 256 * 1024
# Longest caller-chosen episode_id.
MAX_EPISODE_ID_CHARS = 128
# Longest free text in an action (message, question, reason, ...).
MAX_ACTION_TEXT_CHARS = MAX_TEXT_CHARS
# Seconds in-flight calls get to finish after SIGTERM.
SHUTDOWN_GRACE_S = 5.0


class LimitExceededError(ValueError):
    """A request is larger than a documented limit (RESOURCE_EXHAUSTED)."""
