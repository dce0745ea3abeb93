"""The project's modules import each other without a cycle.

Every `import` and `from ... import` statement counts, at module level or inside a function (a function-level
import only postpones a cycle to the first call that takes it), and so does every package `__init__.py`: importing
`a.b.c` runs `a/__init__.py` and `a/b/__init__.py` first, so a module depends on the packages above what it imports
too (but not on its own packages, which Python has started importing before it).
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("rlrep", "agents", "environments", "launch", "benchmarks")


def project_modules(root: pathlib.Path, packages: tuple[str, ...]) -> dict[str, pathlib.Path]:
  """Module name -> file, for every Python file under the `packages` directories of `root`."""
  modules = {}
  for package in packages:
    for path in sorted((root / package).rglob("*.py")):
      modules[".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")] = path
  return modules


def _ancestors(module: str) -> list[str]:
  parts = module.split(".")
  return [".".join(parts[:end]) for end in range(1, len(parts))]


def imported_modules(module: str, path: pathlib.Path, modules: dict[str, pathlib.Path]) -> set[str]:
  """The project modules that importing `module` (or calling its functions) imports."""
  package = module if path.name == "__init__.py" else module.rpartition(".")[0]
  targets = set()
  for node in ast.walk(ast.parse(path.read_text(), str(path))):
    if isinstance(node, ast.Import):
      targets.update(alias.name for alias in node.names)
    elif isinstance(node, ast.ImportFrom):
      base = node.module or ""
      if node.level:  # relative: `from . import x` in package a.b is a.b's x, `from .. import x` is a's
        base = ".".join(filter(None, [package.rsplit(".", node.level - 1)[0], base]))
      # `from a.b import c` imports the module a.b.c if there is one, else takes the name c from a.b
      targets.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names)
  named = {target for target in targets if target in modules}
  packages_above = {parent for target in named for parent in _ancestors(target) if parent in modules}
  return (named | packages_above - set(_ancestors(module))) - {module}


def import_graph(root: pathlib.Path, packages: tuple[str, ...]) -> dict[str, set[str]]:
  """Module -> the project modules it imports."""
  modules = project_modules(root, packages)
  return {module: imported_modules(module, path, modules) for module, path in modules.items()}


def import_groups(graph: dict[str, set[str]]) -> list[set[str]]:
  """The groups of modules that import each other, directly or through others (Tarjan's strongly connected
  components of more than one module)."""
  index, low, stack, on_stack, groups = {}, {}, [], set(), []

  def visit(module: str) -> None:
    index[module] = low[module] = len(index)
    stack.append(module)
    on_stack.add(module)
    for target in sorted(graph.get(module, ())):
      if target not in index:
        visit(target)
        low[module] = min(low[module], low[target])
      elif target in on_stack:
        low[module] = min(low[module], index[target])
    if low[module] == index[module]:
      group = set()
      while module not in group:
        group.add(stack.pop())
      on_stack.difference_update(group)
      if len(group) > 1:
        groups.append(group)

  for module in sorted(graph):
    if module not in index:
      visit(module)
  return groups


def shortest_cycle(group: set[str], graph: dict[str, set[str]]) -> list[str]:
  """A shortest import path from the group's first module back to it, inside the group."""
  start = min(group)
  paths, frontier = {start: [start]}, [start]
  while frontier:
    module = frontier.pop(0)
    for target in sorted(graph[module] & group):
      if target == start:
        return paths[module] + [start]
      if target not in paths:
        paths[target] = paths[module] + [target]
        frontier.append(target)
  raise AssertionError(f"no cycle through {start} in {sorted(group)}")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
  """One cycle for each group of modules that import each other."""
  return [shortest_cycle(group, graph) for group in import_groups(graph)]


def test_the_project_has_no_import_cycle():
  graph = import_graph(ROOT, PACKAGES)
  found = [f"{' -> '.join(shortest_cycle(group, graph))} (modules importing each other: {', '.join(sorted(group))})"
           for group in import_groups(graph)]
  assert not found, ("import cycles; break each by moving what both sides need into a module of its own:\n"
                     + "\n".join(found))


def _write(root: pathlib.Path, files: dict[str, str]) -> None:
  for name, text in files.items():
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)


def test_a_function_level_import_that_closes_a_cycle_is_found(tmp_path):
  _write(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from pkg import b\n",
                    "pkg/b.py": "def later():\n  from pkg.c import f\n", "pkg/c.py": "import pkg.a\n"})
  assert cycles(import_graph(tmp_path, ("pkg",))) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]


def test_a_package_init_counts_as_what_it_imports(tmp_path):
  """`pkg.x` takes a name from `pkg`, whose `__init__` imports `pkg.x`: a cycle. A module importing its siblings
  (`pkg.y`) depends on no package above them that it is inside of; another package's module does (`other.z`)."""
  _write(tmp_path, {"pkg/__init__.py": "from pkg.x import X\n", "pkg/x.py": "from pkg import Y\n",
                    "pkg/y.py": "from pkg import x\nfrom . import sub\n", "pkg/sub/__init__.py": "",
                    "pkg/sub/w.py": "from .. import y\n",
                    "other/__init__.py": "", "other/z.py": "from pkg.sub import thing\n"})
  graph = import_graph(tmp_path, ("pkg", "other"))
  assert graph["pkg.y"] == {"pkg.x", "pkg.sub"}
  assert graph["other.z"] == {"pkg", "pkg.sub"} and graph["pkg.sub.w"] == {"pkg.y"}
  assert cycles(graph) == [["pkg", "pkg.x", "pkg"]]


def test_the_walk_sees_the_packages_modules():
  graph = import_graph(ROOT, PACKAGES)
  assert {"launch.cli", "launch.cluster.driver", "launch.modes.local"} <= set(graph)
  assert "launch.modes.local" in graph["launch.cluster.driver"]  # the driver is local mode's, attached to a cluster
