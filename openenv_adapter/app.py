"""The ASGI app: openenv's own server (create_app) over SupportEnvironment.

`uvicorn openenv_adapter.app:app` serves it as is (openenv.yaml's `app:`); `python -m
openenv_adapter` adds the port conventions of the gRPC services.
"""

from __future__ import annotations

import os

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from openenv.core.env_server.http_server import create_app

from openenv_adapter.environment import NAME, SupportEnvironment
from openenv_adapter.models import SupportAction, SupportObservation, SupportState
from supportenv.errors import EpisodeFinishedError, InvalidRequestError, SupportEnvError, UnknownTaskError

MAX_SESSIONS_ENV = "SUPPORTENV_OPENENV_MAX_SESSIONS"
DEFAULT_MAX_SESSIONS = 32

# The same meaning as the gRPC status codes env_service returns for these errors.
_HTTP_STATUS = {InvalidRequestError: 400, UnknownTaskError: 404, EpisodeFinishedError: 409}


async def _library_error(request: Request, exc: Exception) -> JSONResponse:
    # Without this, a bad reset option over plain HTTP would surface as a bare 500.
    status = next((code for cls, code in _HTTP_STATUS.items() if isinstance(exc, cls)), 400)
    return JSONResponse(status_code=status, content={"detail": str(exc)})


def build_app(max_sessions: int | None = None) -> FastAPI:
    sessions = max_sessions or int(os.environ.get(MAX_SESSIONS_ENV, DEFAULT_MAX_SESSIONS))
    app = create_app(
        SupportEnvironment,
        SupportAction,
        SupportObservation,
        env_name=NAME,
        max_concurrent_envs=sessions,
        state_cls=SupportState,
    )
    app.add_exception_handler(SupportEnvError, _library_error)
    return app


app = build_app()
