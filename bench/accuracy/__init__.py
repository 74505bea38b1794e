"""Accuracy of the runtime models on the traced corpus, and shipping the default model."""
