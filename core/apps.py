from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Background jobs"

    def ready(self):
        from core.lookups import integer_lookups_register

        integer_lookups_register()
