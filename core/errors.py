"""Errors a user can act on. Their text is shown as is (command line, admin, job page)."""

from pathlib import Path


class UserError(Exception):
    """Bad input or a request that cannot be carried out; never a bug."""


class ImportFileError(UserError):
    """Bad content in an imported file, located by file, line and field."""

    def __init__(self, path: Path | str, line: int | None, field: str | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        super().__init__(str(self))

    def __reduce__(self):
        # pickled as built (an import parsed in a child process sends its error to the parent)
        return type(self), (self.path, self.line, self.field, self.message)

    def __str__(self) -> str:
        where = [Path(self.path).name]
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.field:
            where.append(f"field {self.field}")
        return f"{', '.join(where)}: {self.message} ({self.path})"


class JobCancelled(Exception):
    """Raised inside a job when a researcher asked for it to stop; its transaction rolls back."""
