"""Training: models fine-tuned on a task, cached as plain transformers folders."""
