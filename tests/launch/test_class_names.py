"""Each class name in launch/ means one thing: no two classes share a name (say, a role and the Ray process
running it), so a traceback, a Ray process title or a search names one class."""

import ast
import collections
import pathlib

LAUNCH = pathlib.Path(__file__).resolve().parents[2] / "launch"


def classes_defined_twice(root: pathlib.Path) -> dict[str, list[str]]:
  """Class name -> where each of its definitions is (file:line), for names defined more than once under `root`."""
  where = collections.defaultdict(list)
  for path in sorted(root.rglob("*.py")):
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
      if isinstance(node, ast.ClassDef):
        where[node.name].append(f"{path.relative_to(root.parent)}:{node.lineno}")
  return {name: places for name, places in where.items() if len(places) > 1}


def test_no_class_name_is_defined_twice_in_launch():
  twice = classes_defined_twice(LAUNCH)
  assert not twice, f"classes sharing a name; give each a name that says what it is: {twice}"


def test_a_name_defined_twice_is_found(tmp_path):
  (tmp_path / "pkg" / "sub").mkdir(parents=True)
  (tmp_path / "pkg" / "a.py").write_text("class LearnerRole:\n  pass\n")
  (tmp_path / "pkg" / "sub" / "b.py").write_text("def make():\n  class LearnerRole:\n    pass\n")
  assert classes_defined_twice(tmp_path / "pkg") == {"LearnerRole": ["pkg/a.py:1", "pkg/sub/b.py:2"]}
