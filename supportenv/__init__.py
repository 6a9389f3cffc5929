"""supportenv: the pure, deterministic simulation library of the Customer Support AI
Training Environment. No network, no threads, no global random state; the gRPC
services, agents and adapters are thin layers over it.

The wire contract's generated code lives in `supportenv.v1` and is not imported here.
"""

from supportenv.actions import ACTION_KINDS, Action
from supportenv.compiled import build
from supportenv.env import SupportEnv
from supportenv.errors import (
    EpisodeFinishedError,
    InvalidActionError,
    InvalidRequestError,
    SupportEnvError,
    UnknownTaskError,
)
from supportenv.graders import Grade, grade_trajectory
from supportenv.tasks import TASKS, get_task

__all__ = [
    "ACTION_KINDS",
    "TASKS",
    "Action",
    "EpisodeFinishedError",
    "Grade",
    "InvalidActionError",
    "InvalidRequestError",
    "SupportEnv",
    "SupportEnvError",
    "UnknownTaskError",
    "build",
    "get_task",
    "grade_trajectory",
]
