import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "impactbench_site.settings.local")
application = get_asgi_application()
