"""The pair rules, one class per pair type behind :class:`pairs.edits.EditRule`."""
