from django.apps import AppConfig


class NegativesConfig(AppConfig):
    name = "negatives"
    verbose_name = "Generated negatives"
