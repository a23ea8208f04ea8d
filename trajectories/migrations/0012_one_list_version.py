from django.db import migrations, models


class Migration(migrations.Migration):
    """One version per project for its lists (page_version went into it)."""

    dependencies = [("trajectories", "0011_project_list_versions")]

    operations = [
        migrations.RemoveField(model_name="project", name="page_version"),
        migrations.RenameField(model_name="project", old_name="data_version", new_name="list_version"),
        migrations.AlterField(
            model_name="project",
            name="list_version",
            field=models.PositiveBigIntegerField(
                default=0,
                editable=False,
                help_text="Raised after each committed change that the project's lists show "
                "(trajectories/list_cache.py).",
            ),
        ),
    ]
