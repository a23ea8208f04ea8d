"""``LabelEdit`` now belongs to trajectories (see its 0005_protocol_label_edit); its table stays."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0001_initial"),
        ("trajectories", "0005_protocol_label_edit"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="LabelEdit")],
            database_operations=[],
        ),
    ]
