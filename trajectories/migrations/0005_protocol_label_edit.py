"""The undo stack (``LabelEdit``) moves from annotate to the edit protocol in trajectories.

The table stays where it is (``annotate_labeledit``): only Django's idea of which app owns
the model changes, so no row is copied.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("trajectories", "0004_screens_evidence_screen_index"),
        ("annotate", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="LabelEdit",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                            ),
                        ),
                        ("undone", models.BooleanField(default=False)),
                        (
                            "event",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="trajectories.auditevent",
                            ),
                        ),
                        (
                            "trajectory",
                            models.ForeignKey(
                                on_delete=django.db.models.deletion.CASCADE,
                                related_name="+",
                                to="trajectories.trajectory",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "annotate_labeledit",
                        "ordering": ["trajectory", "id"],
                        "indexes": [
                            models.Index(
                                fields=["trajectory", "undone", "id"],
                                name="annotate_la_traject_924fd8_idx",
                            )
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
    ]
