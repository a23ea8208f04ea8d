from django.apps import AppConfig


class EnvironmentsConfig(AppConfig):
    name = "environments"
    verbose_name = "Generated environments"
    default_auto_field = "django.db.models.BigAutoField"
