"""What each role of a run does, whatever runs it: a thread, a local Ray process or a pod; one role per file.

Roles receive the experiment, the replay server's address and a counter (the `Counter` itself in-process,
a handle with the same methods otherwise). They never start processes or know the launch mode.

* replay (`replay_server.py`): a Reverb server with the agent's tables.
* actors (`actor.py`): step the environment with the exploring policy, write to replay, report to the counter.
* learner (`learner.py`): replicated updates from replay, weight publication, progress line, logs and checkpoints.
* evaluator (`evaluator.py`): the deterministic policy every `eval_every_frames`: return, video, learning curve.
* counter (`counter.py`): run-wide counts, the stop signal every role watches and the lines for the user's terminal.

`devices.py` is no role: it sets up which GPUs a role's process uses, for the launchers that start them.
"""

from launch.roles.actor import run_actor
from launch.roles.evaluator import Evaluator, run_evaluator
from launch.roles.learner import LearnerRole, NonFiniteLearnerError, check_agent_contract
from launch.roles.replay_server import make_replay_server

__all__ = ["Evaluator", "LearnerRole", "NonFiniteLearnerError", "check_agent_contract", "make_replay_server",
           "run_actor", "run_evaluator"]
