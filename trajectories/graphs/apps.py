from django.apps import AppConfig


class GraphsConfig(AppConfig):
    name = "trajectories.graphs"
    label = "graphs"
    verbose_name = "Memory graphs"
    default_auto_field = "django.db.models.BigAutoField"
