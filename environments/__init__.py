"""Environments for rlrep: DeepMind Control Suite tasks with pixel observations (`environments.dmc`)."""
