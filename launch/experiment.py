"""One experiment description, consumed unchanged by every launch mode.

An `Experiment` names the agent and task, the agent's own config, the scale (actors, replicas), the budget
and logging cadence, and cluster mode's own settings (`ClusterConfig`). It is saved as `experiment.json` in the
output directory, which is how `--resume` knows what it continues and how a directory holding another experiment
is recognised.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import shutil
from typing import TYPE_CHECKING, Any

import agents
from launch.cluster.config import ClusterConfig

if TYPE_CHECKING:
  from rlrep.core import AgentConfig


class RunFailed(RuntimeError):
  """A run stopped on a failure the user can act on; its message says what happened and what to do."""


MODES = ("inprocess", "local", "cluster")


@dataclasses.dataclass(frozen=True)
class Experiment:
  """Attributes:
    agent: the learning agent, a name registered in agents/__init__.py.
    task: Control Suite task, "domain-task".
    mode: inprocess (threads, one process), local (Ray processes), cluster (KubeRay).
    actors: number of acting processes (threads in inprocess mode).
    envs_per_actor: environments each actor steps in lockstep with one batched policy call per round; on
      CPUs a small conv policy costs about as much per call as a fast render, so batching raises frames/s.
    replicas: learner devices as an rlrep replicator spec: auto, cpu, cpu:N, gpu[:N], tpu[:ADDR], multi_worker.
    learner_hosts: hosts the learner spans (local and cluster mode): one learner process per host, each sampling
      its own share of the batch from replay and updating in lockstep with the others (MultiWorkerMirroredStrategy,
      its TF_CONFIG built from where the processes run), over each host's devices as --replicas says (cpu, gpu,
      gpu:N or auto). On an existing Ray cluster each goes to its own node advertising rlrep_learner_host.
    frames: environment frames (agent steps x action repeat) to train for, summed over actors.
    out: output directory.
    seed: the run's one seed: the learner's randomness (network initialisation, augmentation, target noise)
      starts from it; actor i's environment j uses seed + 1 + i + 100_000 j, the evaluator seed + 10_000.
    eval_every_frames: evaluate the deterministic policy every this many frames (and at the end).
    eval_episodes: episodes per evaluation.
    video_format: mp4 or gif for evaluation videos.
    video_size: height and width in pixels of evaluation videos, rendered from the evaluated episode itself
      (the agent still sees its own image size); a caption band above shows frames and the running return.
    log_every_s: seconds between progress lines and metric rows.
    wandb: also log every metric row and evaluation video to a Weights & Biases run in this project (like
      CleanRL's --track), with the experiment as its config; a --resume continues that W&B run. Needs
      `pip install 'rlrep[wandb]'` and `wandb login` (or WANDB_MODE=offline); W&B's environment variables
      apply, and its files go to <out>/wandb unless WANDB_DIR is set.
    verbose: show on the terminal what third-party libraries write to stderr (Reverb's server, absl, gRPC,
      TensorFlow: informational lines and deprecation notices); by default an in-process run keeps them in
      <out>/logs/third_party.log and shows only the rest (launch/modes/quiet.py).
    checkpoint_every_s: seconds between learner checkpoints (and one at the end).
    checkpoint_replay: with every learner checkpoint also save the replay server's tables (newest only, in
      <out>/checkpoints/replay), so --resume continues with the replay it had instead of refilling an empty
      one; costs disk and a pause of the run while it is written (84x84 pixels: about 3.5 kB per agent step
      held, ~350 MB and ~20 s per 100,000).
    publish_every_steps: learner steps between weight publications to actors.
    replay_port: Reverb port; 0 picks a free one.
    ray_address: with --mode local, attach to the running Ray cluster whose head is at this HOST:PORT (as `ray
      start --head` prints it) instead of starting a private one; run from a node of that cluster, with --out on
      storage every node mounts at the same path. Roles go by the nodes' custom resources (`ray start
      --resources`): the learner to the node with rlrep_learner_host (without one, wherever its GPUs are), the
      actors and the evaluator to nodes with rlrep_worker, replay to the node with rlrep_replay_host if one has it,
      else with the actors.
    cluster: cluster mode's image, namespace, accelerators and output volume (launch/cluster/config.py).
    agent_config: the agent's settings (see agents/<agent>/config.py; what launchers read of them:
      `rlrep.core.AgentConfig`).
  """
  agent: str = agents.DEFAULT_AGENT
  task: str = "walker-walk"
  mode: str = "inprocess"
  actors: int = 1
  envs_per_actor: int = 1
  replicas: str = "cpu:1"
  learner_hosts: int = 1
  frames: int = 100_000
  out: str = "runs/experiment"
  seed: int = 0
  eval_every_frames: int = 20_000
  eval_episodes: int = 1
  video_format: str = "mp4"
  video_size: int = 256
  log_every_s: float = 10.0
  wandb: str | None = None
  verbose: bool = False
  checkpoint_every_s: float = 600.0
  checkpoint_replay: bool = False
  publish_every_steps: int = 10
  replay_port: int = 0
  ray_address: str | None = None
  cluster: ClusterConfig = dataclasses.field(default_factory=ClusterConfig)
  agent_config: AgentConfig = dataclasses.field(default_factory=lambda: agents.get(agents.DEFAULT_AGENT).config())

  OPTION_GROUPS = {
      "run": ("agent", "task", "frames", "out", "seed"),
      "scale and processes": ("mode", "actors", "envs_per_actor", "replicas", "learner_hosts", "publish_every_steps",
                              "replay_port", "ray_address"),
      "evaluation, logs and checkpoints": ("eval_every_frames", "eval_episodes", "video_format", "video_size",
                                           "log_every_s", "wandb", "verbose", "checkpoint_every_s",
                                           "checkpoint_replay"),
  }

  def __post_init__(self):
    problems = []
    if self.agent not in agents.AGENTS:
      problems.append(f"unknown agent {self.agent!r}; registered agents: {', '.join(sorted(agents.AGENTS))}")
    elif not isinstance(self.agent_config, agents.get(self.agent).config):
      problems.append(f"agent_config is a {type(self.agent_config).__name__}, but agent {self.agent!r} takes a "
                      f"{agents.get(self.agent).config.__name__}")
    if self.mode not in MODES:
      problems.append(f"unknown mode {self.mode!r}; use one of {', '.join(MODES)}")
    if self.actors < 1:
      problems.append(f"actors must be >= 1, got {self.actors}")
    if self.envs_per_actor < 1:
      problems.append(f"envs_per_actor must be >= 1, got {self.envs_per_actor}")
    if self.frames < 1:
      problems.append(f"frames must be >= 1, got {self.frames}")
    if self.eval_every_frames < 1 or self.eval_episodes < 1:
      problems.append("eval_every_frames and eval_episodes must be >= 1")
    if self.video_format not in ("mp4", "gif"):
      problems.append(f"video_format must be mp4 or gif, got {self.video_format!r}")
    if not 32 <= self.video_size <= 1024:
      problems.append(f"video_size must be between 32 and 1024 pixels, got {self.video_size}")
    if self.log_every_s <= 0 or self.checkpoint_every_s <= 0:
      problems.append("log_every_s and checkpoint_every_s must be > 0")
    if not 0 <= self.replay_port <= 65535:
      problems.append(f"replay_port must be in 0..65535 (0 picks a free port), got {self.replay_port}")
    if self.seed < 0:
      problems.append(f"seed must be >= 0, got {self.seed}")
    if self.publish_every_steps < 1:
      problems.append(f"publish_every_steps must be >= 1, got {self.publish_every_steps}")
    if self.learner_hosts < 1:
      problems.append(f"learner_hosts must be >= 1, got {self.learner_hosts}")
    elif self.learner_hosts > 1:
      problems += learner_hosts_problems(self)
    if self.ray_address is not None and self.mode != "local":
      problems.append(f"--ray-address attaches local mode's roles to a Ray cluster: use it with --mode local, not "
                      f"--mode {self.mode}")
    if problems:
      raise ValueError("invalid experiment:\n  - " + "\n  - ".join(problems))

  @property
  def out_dir(self) -> pathlib.Path:
    return pathlib.Path(self.out)

  @property
  def replay_checkpoint_dir(self) -> pathlib.Path | None:
    """Where the replay server keeps its tables between runs, or None when the experiment does not."""
    return self.out_dir / "checkpoints" / "replay" if self.checkpoint_replay else None

  def make_builder(self):
    return agents.get(self.agent).builder(self.task, self.agent_config)

  def defining_settings(self) -> dict[str, Any]:
    """The settings that decide what this run computes, by name: agent, task, seed and the agent's settings (as
    `agent_config.NAME`) but its `EFFICIENCY_SETTINGS`, which change how fast it computes or how much memory replay
    takes, not what it learns. Two runs with equal ones are the same run, whatever their budget, scale, placement,
    evaluation or logging: resuming on a cluster's volume, a sweep's cells and `rlrep compare`'s groups ask this.

    >>> from agents.d4pg import D4PGConfig
    >>> run = Experiment(task="cartpole-swingup", seed=1)
    >>> faster = dataclasses.replace(run, frames=10**6, actors=4, agent_config=D4PGConfig(precision="bfloat16"))
    >>> run.defining_settings() == faster.defining_settings(), run.defining_settings()["agent_config.n_step"]
    (True, 3)
    """
    agent = {f"agent_config.{name}": value for name, value in dataclasses.asdict(self.agent_config).items()
             if name not in self.agent_config.EFFICIENCY_SETTINGS}
    return {"agent": self.agent, "task": self.task, "seed": self.seed, **agent}

  def to_json(self) -> dict:
    return dataclasses.asdict(self)

  @classmethod
  def from_json(cls, data: dict) -> "Experiment":
    config_class = agents.get(data["agent"]).config
    agent_config = dict(data["agent_config"])
    # Older files hold the agent's own copy of the seed, which the learner used; a run whose copy differs
    # computed what no experiment now describes.
    seed, agent_seed = data.get("seed", cls.seed), agent_config.pop("seed", data.get("seed", cls.seed))
    if agent_seed != seed:
      raise ValueError(f"this experiment.json seeds the learner with agent_config.seed {agent_seed} and the "
                       f"environments with seed {seed}; an experiment has one seed now, so this run cannot be resumed, "
                       "swept or compared: start it again (another --out, or --overwrite).")
    for field in dataclasses.fields(config_class):  # JSON has lists where the config has tuples
      if isinstance(agent_config.get(field.name), list):
        agent_config[field.name] = tuple(agent_config[field.name])
    cluster_fields = {field.name for field in dataclasses.fields(ClusterConfig)}  # at the top level in older files
    rest = {key: value for key, value in data.items() if key not in cluster_fields}
    return cls(**{**rest, "cluster": ClusterConfig.from_experiment_json(data),
                  "agent_config": config_class(**agent_config)})


def learner_hosts_problems(experiment: Experiment) -> list[str]:
  """Why `experiment` cannot span `learner_hosts` > 1 hosts, if it cannot."""
  kind, _, count = experiment.replicas.partition(":")
  if experiment.mode == "inprocess":
    return [f"--learner-hosts {experiment.learner_hosts} runs a learner process per host: use --mode local (this "
            "machine, or an existing Ray cluster with --ray-address) or --mode cluster"]
  if kind == "tpu":
    return ["--learner-hosts > 1 with --replicas tpu would need a multi-host TPU slice, which rlrep does not run: use "
            "one TPU host (a single-host topology such as 2x2 or 2x4), or GPU hosts"]
  if kind == "multi_worker" or (kind == "cpu" and count not in ("", "1")):
    return [f"--learner-hosts takes --replicas cpu, gpu, gpu:N or auto (each host's devices), not "
            f"{experiment.replicas!r}: rlrep builds the hosts' TF_CONFIG itself, and a host computes on one CPU device"]
  return []


EXPERIMENT_FILE = "experiment.json"


def prepare_output_dir(experiment: Experiment, *, resume: bool, overwrite: bool) -> None:
  """Creates the output directory, refusing to mix two experiments in one directory."""
  out = experiment.out_dir
  if out.exists() and not out.is_dir():
    raise ValueError(f"--out {out} is a file, not a directory: choose another --out.")
  saved = out / EXPERIMENT_FILE
  if not resume and (saved.exists() or (out.exists() and any(out.iterdir()))):
    if not overwrite:
      raise ValueError(f"{out} already holds files (an earlier experiment?). Use --resume {out} to continue it, "
                       "--overwrite to replace it, or choose another --out.")
    shutil.rmtree(out)
  try:
    out.mkdir(parents=True, exist_ok=True)
    saved.write_text(json.dumps(experiment.to_json(), indent=2) + "\n")
  except OSError as error:
    raise ValueError(f"--out {out} cannot be written ({error.strerror}): choose a directory you can write to.")


def load_experiment(out: str | pathlib.Path) -> Experiment:
  path = pathlib.Path(out) / EXPERIMENT_FILE
  if not path.exists():
    raise ValueError(f"--resume {out}: no {EXPERIMENT_FILE} there, so there is nothing to resume.")
  return Experiment.from_json(json.loads(path.read_text()))
