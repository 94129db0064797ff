"""Parity: run the original and the converted model on the same weights and inputs."""
