"""The replay role: a Reverb server holding the agent's tables (replay and weights).

Given a checkpoint directory, the server starts from the newest replay checkpoint there (if any) and writes
new ones there when a client asks (the learner does, beside its own checkpoints: `--checkpoint-replay`).
Without one, Reverb keeps its checkpoints in a temporary directory and a resumed run refills replay.

Reverb listens on every interface without authentication: see the README's Security section.
"""

from __future__ import annotations

import pathlib

import reverb

from rlrep import core


def make_replay_server(builder: core.Builder, port: int = 0,
                       checkpoint_dir: pathlib.Path | None = None) -> reverb.Server:
  """The replay server, restored from `checkpoint_dir`'s newest checkpoint when there is one."""
  if checkpoint_dir is None:
    return reverb.Server(builder.make_tables(), port=port or None)
  checkpoint_dir.mkdir(parents=True, exist_ok=True)
  return reverb.Server(builder.make_tables(), port=port or None,
                       checkpointer=reverb.checkpointers.DefaultCheckpointer(str(checkpoint_dir)))
