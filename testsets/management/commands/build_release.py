"""``build_release``: an alias of ``build_testset`` (the test set used to be called a release)."""

from .build_testset import Command as BuildTestsetCommand


class Command(BuildTestsetCommand):
    help = f"Alias of build_testset. {BuildTestsetCommand.help}"
