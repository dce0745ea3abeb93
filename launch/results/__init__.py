"""A study's results: `rlrep sweep` runs every task x seed of one recipe into one result tree (`sweep.py`),
`rlrep compare` plots runs' evaluation returns beside reference curves (`compare.py`), and `rlrep report` aggregates
a tree per task and over tasks with bootstrap intervals (`report.py`).
"""
