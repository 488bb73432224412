# The one image every service of compose.yaml runs: web (gunicorn), workers, beat, migrate.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    DJANGO_SETTINGS_MODULE=impactbench_site.settings.production \
    IMPACTBENCH_VAR_DIR=/app/var \
    STATIC_ROOT=/app/staticfiles

WORKDIR /app
# Exactly the versions CI tested, verified by hash; the installer first, so the lock resolves
# the same way whatever pip the base image bundles.
COPY requirements-bootstrap.lock requirements.lock ./
RUN pip install --require-hashes --no-deps -r requirements-bootstrap.lock \
    && pip install --require-hashes --no-deps -r requirements.lock

COPY . .
# Static files are collected at build time and served by WhiteNoise from the web process.
RUN DJANGO_SECRET_KEY=build-only-collectstatic-key-not-used-at-run-time \
    DATABASE_URL=sqlite:////tmp/build.sqlite3 CELERY_BROKER_URL=redis://build:6379/0 \
    DJANGO_ALLOWED_HOSTS=localhost \
    python manage.py collectstatic --noinput --verbosity 0 \
    && useradd --create-home --uid 1000 impactbench \
    && mkdir -p /app/var && chown -R impactbench /app/var

USER impactbench
# The bootstrap's compiled kernels (numba), cached in the user's cache directory now rather than
# compiled on each new container's first refresh (seconds).
RUN python -c "from stats import load_kernels; load_kernels()"
EXPOSE 8000
CMD ["gunicorn", "--config", "impactbench_site/gunicorn.conf.py", "impactbench_site.wsgi"]
