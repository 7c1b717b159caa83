"""CSV for people who open it in a spreadsheet (OWASP, "CSV Injection").

A spreadsheet reads a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or carriage
return before one) as a formula: ``=HYPERLINK("http://evil.example/x","click here")`` in an
utterance becomes a live link, and worse formulas can run commands. Every text cell that starts
with one of those characters gets a leading single quote, which spreadsheets take as "this is
text" and show, so the quote is visible and the text is never evaluated.

Only text is escaped: a cell written from a number (int, float, Decimal) is our own number and is
written as it is, so a negative score stays a number. Files for tools (TSV, JSONL) keep the exact
text and never go through here. Every CSV the project writes comes from ``csv_writer``.
"""

import csv
from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(text: str) -> str:
    """``text``, with a leading single quote when a spreadsheet would read it as a formula."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class CsvWriter:
    """``csv.writer`` whose text cells are escaped for spreadsheets (numbers are written as they are)."""

    def __init__(self, stream, *, escape_formulas: bool, **options: Any) -> None:
        self._writer = csv.writer(stream, **options)
        self._escape = escape_formulas

    def writerow(self, row) -> None:
        if self._escape:
            row = [spreadsheet_text(cell) if isinstance(cell, str) else cell for cell in row]
        self._writer.writerow(row)


def csv_writer(stream, *, escape_formulas: bool = True, **options: Any) -> CsvWriter:
    """The writer of every CSV we produce. ``escape_formulas=False`` only re-creates files whose
    bytes were fixed before this rule (a frozen test set's CSV of format version 1)."""
    return CsvWriter(stream, escape_formulas=escape_formulas, **options)
