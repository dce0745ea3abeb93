"""Launching rlrep programs, in rooms:

* `cli/`: the `rlrep` command line;
* `modes/`: `rlrep train`'s checks and dispatch, and the in-process and local modes;
* `cluster/`: cluster mode, a KubeRay job on GKE;
* `roles/`: what each role of a run does (replay, learner, actors, evaluator, counter), whatever runs it;
* `results/`: sweeps of tasks x seeds, and the comparisons and reports of their results.

At the top, what the rooms share about a run: the experiment (`experiment.py`), its roles and what each needs
(`program.py`), and its outputs: checkpoints (`checkpoints.py`), metric rows written (`metrics_log.py`), read back
and drawn (`metrics.py`), and their W&B mirror (`wandb_log.py`).
"""
