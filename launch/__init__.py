"""Launching rlrep programs: the `rlrep` command line and the run modes."""
