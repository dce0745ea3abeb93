"""Replay on Reverb: frame-deduplicated n-step transitions, weights for actors, and safe connections."""

from rlrep.replay.adder import NStepFrameAdder, WritingStopped
from rlrep.replay.config import ReplayConfig
from rlrep.replay.connection import ServerUnavailableError, Watchdog, connect, describe_tables, held_bytes
from rlrep.replay.dataset import item_to_transition, make_dataset, make_input_fn, unwrap_batch, wrap_batches
from rlrep.replay.signature import StepLayout
from rlrep.replay.tables import REPLAY_TABLE, WEIGHTS_TABLE, replay_table, weights_table
from rlrep.replay.weights import WeightClient, WeightPublisher
