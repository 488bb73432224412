from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="WorkerPing",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("token", models.CharField(max_length=64, unique=True)),
                ("requested_at", models.DateTimeField()),
                ("answered_at", models.DateTimeField()),
                ("worker_hostname", models.CharField(blank=True, max_length=255)),
            ],
            options={"ordering": ["-answered_at"]},
        ),
    ]
