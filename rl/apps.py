from django.apps import AppConfig


class RlConfig(AppConfig):
    name = "rl"
    verbose_name = "Reinforcement learning environments"
    default_auto_field = "django.db.models.BigAutoField"
