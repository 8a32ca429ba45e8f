# syntax=docker/dockerfile:1
# hwadvisor: server and CPU agent in one image. GPU agents: see docs/DEPLOY.md.

FROM python:3.11-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH
# The CPU build of torch; PyPI's default torch wheel for Linux is the multi-GB CUDA build.
RUN pip install "torch==2.13.0" --index-url https://download.pytorch.org/whl/cpu
WORKDIR /opt/hwadvisor
COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY migrations ./migrations
# Editable, so that migrations/ (beside the package) is found at run time.
RUN pip install -e .

FROM python:3.11-slim
# util-linux (lscpu for the CPU probe) from the base image's Debian release: its security updates are
# wanted, so no version pin.
# hadolint ignore=DL3008
RUN useradd --system --uid 10001 --create-home --home-dir /var/lib/hwadvisor --shell /usr/sbin/nologin hwadvisor \
    && apt-get update && apt-get install -y --no-install-recommends util-linux && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/venv /opt/venv
COPY --from=build /opt/hwadvisor /opt/hwadvisor
COPY deploy/agent-entrypoint.sh /usr/local/bin/hwadvisor-agent-entrypoint
ENV PATH=/opt/venv/bin:$PATH \
    HWADVISOR_DATA_DIR=/var/lib/hwadvisor \
    HWADVISOR_HOST=0.0.0.0 \
    HWADVISOR_PORT=8321 \
    PYTHONUNBUFFERED=1
USER 10001
WORKDIR /var/lib/hwadvisor
EXPOSE 8321
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8321/healthz', timeout=4)"]
CMD ["hwadvisor", "server"]
