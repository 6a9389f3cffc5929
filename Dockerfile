# One image for the env service, the grader service, the key generator and the baseline
# agent; docker-compose.yml picks the command per service. It ships the compiled build
# (supportenv/compiled.py): the build stage compiles the project's wheel with mypyc, and
# the image installs that wheel, with no compiler and no source of the compiled packages.

# The build stage: a C compiler, and the wheel (setup.py; mypy pinned in pyproject.toml).
FROM python:3.11-slim AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY supportenv/ supportenv/
COPY env_service/ env_service/
COPY grader_service/ grader_service/
COPY baseline_agent/ baseline_agent/
RUN pip wheel --no-cache-dir --no-deps --wheel-dir /wheels .

FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONPATH=/app

WORKDIR /app

# Runtime dependencies only, in their own layer so code edits do not reinstall them.
COPY requirements.txt ./
RUN pip install --no-cache-dir -r requirements.txt

# A fixed non-root uid shared by every service, so the key file keygen writes (mode 0600)
# is readable by env. /run/supportenv is the key volume's mount point: a new named volume
# copies this folder's owner, so the non-root keygen can write into it.
RUN useradd --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin app \
    && mkdir -p /run/supportenv \
    && chown app:app /run/supportenv \
    && chmod 0700 /run/supportenv

# The project's packages, compiled: installed from the build stage's wheel, after the
# dependencies, so that a code edit rebuilds only these layers.
COPY --from=build /wheels/ /tmp/wheels/
RUN pip install --no-cache-dir --no-deps /tmp/wheels/*.whl && rm -rf /tmp/wheels

COPY protos/ protos/
COPY inference.py openenv.yaml ./

# Numeric, so runtimes can verify "not root" without reading /etc/passwd.
USER 10001:10001

EXPOSE 50051 50052
CMD ["python", "-m", "env_service"]
