# Waypoint's web and worker image: `docker compose up` runs it (see docker-compose.yml).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    STATIC_ROOT=/app/static \
    WAYPOINT_VAR_DIR=/app/var

WORKDIR /app

# Dependencies first, so a code change does not reinstall them. The extras production needs:
# blobs in S3-compatible storage (s3) and Parquet exports (parquet); not the virtual device,
# whose Chromium this image does not carry.
ARG EXTRAS=s3,parquet
COPY pyproject.toml README.md ./
RUN mkdir -p config core trajectories graphs formats evaluation frontend annotate devices fixtures agents \
    && pip install ".[${EXTRAS}]" \
    && pip uninstall -y waypoint

COPY . .
RUN pip install --no-deps . \
    && SECRET_KEY=collectstatic-only python manage.py collectstatic --noinput \
    && useradd --system --create-home --uid 10001 waypoint \
    && mkdir -p /app/var \
    && chown -R waypoint /app/var /app/static

USER waypoint
EXPOSE 8000

# Binds port 8000; its access log leaves query strings out (gunicorn.conf.py).
CMD ["gunicorn", "--config", "gunicorn.conf.py", "config.wsgi:application"]
