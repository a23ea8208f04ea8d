from django.apps import AppConfig


class TrajectoriesConfig(AppConfig):
    name = "trajectories"
    default_auto_field = "django.db.models.BigAutoField"
