"""A release as a Hugging Face dataset folder: records (JSONL, Parquet), card, croissant.json, lm-eval task."""
