"""``export_release``: an alias of ``export_testset`` (the test set used to be called a release)."""

from .export_testset import Command as ExportTestsetCommand


class Command(ExportTestsetCommand):
    help = f"Alias of export_testset. {ExportTestsetCommand.help}"
