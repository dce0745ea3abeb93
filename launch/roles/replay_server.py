"""The replay role: a Reverb server holding the agent's tables (replay and weights).

Reverb listens on every interface without authentication: see the README's Security section.
"""

from __future__ import annotations

import reverb

from rlrep import core


def make_replay_server(builder: core.Builder, port: int = 0) -> reverb.Server:
  """The replay server. Reverb listens on every interface without authentication: see README, Security."""
  return reverb.Server(builder.make_tables(), port=port or None)
