# One image for the env service, the grader service, the key generator and the baseline
# agent; docker-compose.yml picks the command per service.
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

COPY protos/ protos/
COPY supportenv/ supportenv/
COPY env_service/ env_service/
COPY grader_service/ grader_service/
COPY baseline_agent/ baseline_agent/
COPY inference.py openenv.yaml ./

# Numeric, so runtimes can verify "not root" without reading /etc/passwd.
USER 10001:10001

EXPOSE 50051 50052
CMD ["python", "-m", "env_service"]
