"""Library errors. Each maps to one gRPC status code in the service layer."""


class SupportEnvError(Exception):
    """Base class for every error the library raises on bad input."""


class InvalidActionError(SupportEnvError, ValueError):
    """The action is malformed (INVALID_ARGUMENT)."""


class InvalidRequestError(SupportEnvError, ValueError):
    """A request parameter other than the action is malformed (INVALID_ARGUMENT)."""


class UnknownTaskError(SupportEnvError, LookupError):
    """No task has this id (NOT_FOUND)."""


class EpisodeFinishedError(SupportEnvError):
    """The episode already terminated or was truncated (FAILED_PRECONDITION)."""
