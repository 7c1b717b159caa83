from django.apps import AppConfig


class PairsConfig(AppConfig):
    name = "pairs"
    verbose_name = "Contrastive response pairs"
