from django.apps import AppConfig


class FormatsConfig(AppConfig):
    name = "formats"
    verbose_name = "Dataset formats"
