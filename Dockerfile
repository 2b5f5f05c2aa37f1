# Xuezhan bot image: `docker build -t xuezhan .` then
# `docker run -d --name xuezhan --env-file .env -v xuezhan-data:/data xuezhan` (see docs/setup.md).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    XUEZHAN_DB=/data/xuezhan.db

WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY engine engine
COPY rendering rendering
COPY storage storage
COPY vision vision
COPY bot bot
COPY cli cli
COPY web web
RUN pip install . && rm -rf /src

RUN useradd --system --create-home --home-dir /data xuezhan
USER xuezhan
WORKDIR /data
# The database (and its WAL files) live here; keep it on a volume.
VOLUME ["/data"]
# Only used in webhook mode (XUEZHAN_WEBHOOK_URL set).
EXPOSE 8443

# `xuezhan run` stops cleanly on SIGTERM (docker stop).
CMD ["xuezhan", "run"]
