"""The agent registry, and the layout it relies on: sibling agents share agents/actor_critic and never import one
another."""

import ast
import pathlib

import pytest

import agents

AGENTS_DIR = pathlib.Path(agents.__file__).parent


def _imported_modules(path: pathlib.Path) -> set[str]:
  modules = set()
  for node in ast.walk(ast.parse(path.read_text())):
    if isinstance(node, ast.Import):
      modules |= {alias.name for alias in node.names}
    elif isinstance(node, ast.ImportFrom) and node.module:
      modules |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
  return modules


@pytest.mark.parametrize("agent", sorted(agents.AGENTS))
def test_an_agent_imports_no_other_agent(agent):
  others = [f"agents.{other}" for other in agents.AGENTS if other != agent]
  for path in sorted((AGENTS_DIR / agent).rglob("*.py")):
    crossing = sorted(module for module in _imported_modules(path)
                      if any(module == other or module.startswith(other + ".") for other in others))
    assert not crossing, f"{path.relative_to(AGENTS_DIR.parent)} imports {crossing}: share it in agents/actor_critic"


def test_the_shared_package_imports_no_agent():
  for path in sorted((AGENTS_DIR / "actor_critic").rglob("*.py")):
    assert not {module for module in _imported_modules(path) for agent in agents.AGENTS
                if module == f"agents.{agent}" or module.startswith(f"agents.{agent}.")}, path


def test_every_agent_is_registered_with_its_own_config_builder_and_presets():
  for name, agent in agents.AGENTS.items():
    assert agent.config.__module__ == f"agents.{name}.config" and agent.builder.__module__ == f"agents.{name}.builder"
    assert agent.preset("cartpole-swingup", {}) and agent.state_features().pixels is False
  with pytest.raises(ValueError, match="registered agents: d4pg, ddpg"):
    agents.get("dqn")
