import os

from django.conf import settings
from django.core.wsgi import get_wsgi_application

from core.dbwait import statement_timeout_apply
from core.staticcheck import static_manifest_require

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.local")
application = get_wsgi_application()

# Web requests wait on the database at most this long (commands such as migrate are unbounded).
statement_timeout_apply(settings.DATABASE_STATEMENT_TIMEOUT_SECONDS)
# Pages need their static files: refuse to serve without them, saying what to run.
static_manifest_require()
