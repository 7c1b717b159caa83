"""Framework-free evaluation metrics: reference-based scores of generated responses and correlations."""
