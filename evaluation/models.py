"""Systems and evaluation campaigns arrive with the evaluation issue."""
