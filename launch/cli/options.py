"""Command-line options generated from config dataclasses, so every field is settable and documented once.

Each field becomes `--field-name` with the field's default and the help text from the class docstring's
`Attributes:` section. Booleans get `--x/--no-x`; tuples take comma-separated values; `none` sets an
optional field to None; numbers must be finite (NaN and inf are refused as they are parsed; ranges are the
config's own `__post_init__` checks). A class's `OPTION_GROUPS` (title -> field names) lays `--help` out by
purpose: every field in one section.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from typing import Any, Callable


def attribute_docs(cls: type) -> dict[str, str]:
  """Field name -> help text, read from the `Attributes:` sections of the docstrings of `cls` and its bases (a
  subclass's text for a field wins over its base's)."""
  docs = {}
  for klass in reversed(cls.__mro__):
    docs.update(_own_attribute_docs(klass.__dict__.get("__doc__") or ""))
  return docs


def _own_attribute_docs(docstring: str) -> dict[str, str]:
  if "Attributes:" not in docstring:
    return {}
  docs, names, text = {}, [], []
  for line in docstring.split("Attributes:", 1)[1].splitlines():
    match = re.match(r"^\s{2,6}([a-z_][a-z0-9_, ]*):\s*(.*)$", line)
    if match:
      for name in names:
        docs[name] = " ".join(text)
      names, text = [n.strip() for n in match.group(1).split(",")], [match.group(2)]
    elif line.strip():
      text.append(line.strip())
  for name in names:
    docs[name] = " ".join(text)
  return docs


def _annotation(field: dataclasses.Field) -> str:
  """The field's type as written ("bool", "float | None"), with or without postponed annotations."""
  if isinstance(field.type, str):
    return field.type
  if isinstance(field.type, type):  # bool, int, float, str (and tuple[...], whose __name__ is "tuple")
    return field.type.__name__
  return str(field.type)  # e.g. "float | None"


def finite_float(text: str) -> float:
  """A float option's parser: refuses NaN and infinities, which no setting means.

  >>> finite_float("3e-4")
  0.0003
  >>> finite_float("nan")
  Traceback (most recent call last):
  argparse.ArgumentTypeError: expected a finite number, got 'nan'
  """
  try:
    value = float(text)
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
  if not math.isfinite(value):
    raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
  return value


def whole_number(text: str) -> int:
  """An int option's parser; also takes whole numbers written as 1e6 or 200_000.

  >>> whole_number("1e6"), whole_number("200_000")
  (1000000, 200000)
  """
  try:
    return int(text)
  except ValueError:
    pass
  try:
    value = float(text)
  except ValueError:
    value = math.nan
  if not value.is_integer():
    raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
  return int(value)


def _int_tuple(text: str) -> tuple[int, ...]:
  try:
    return tuple(int(part) for part in text.split(",") if part.strip())
  except ValueError:
    raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, e.g. 256,256; got {text!r}") from None


def _parser_for(field: dataclasses.Field) -> Callable[[str], Any]:
  annotation = _annotation(field)
  if annotation.startswith("tuple"):
    return _int_tuple
  base = finite_float if "float" in annotation else whole_number if annotation.startswith("int") else str
  if "None" in annotation:
    return lambda text: None if text.lower() == "none" else base(text)
  return base


def add_dataclass_options(parser: argparse.ArgumentParser, cls: type, defaults: Any | None = None,
                          skip: tuple[str, ...] = (), title_prefix: str = "") -> dict[str, argparse._ArgumentGroup]:
  """Adds one option per field of `cls`; only options given on the command line are set (`given_values`).

  Options go into one argument group per entry of `cls.OPTION_GROUPS` (titled `title_prefix + title`). Returns
  the groups by title, to add related options to.
  """
  docs = attribute_docs(cls)
  values = dataclasses.asdict(defaults if defaults is not None else cls())
  _check_groups(cls, skip)
  groups = {title: parser.add_argument_group(title_prefix + title) for title in cls.OPTION_GROUPS}
  group_of = {name: groups[title] for title, names in cls.OPTION_GROUPS.items() for name in names}
  for field in dataclasses.fields(cls):
    if field.name in skip:
      continue
    container = group_of[field.name]
    default = values[field.name]
    shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
    # argparse formats help with %: a literal one in a field's doc (e.g. "10% of ...") must be doubled.
    help_text = f"{docs.get(field.name, '')} (default: {shown})".strip().replace("%", "%%")
    flag = "--" + field.name.replace("_", "-")
    # SUPPRESS: an option not given leaves no attribute, so `none` (an optional field set to None) differs
    # from "not given".
    if _annotation(field) == "bool":
      container.add_argument(flag, dest=field.name, action=argparse.BooleanOptionalAction,
                             default=argparse.SUPPRESS, help=help_text)
    else:
      container.add_argument(flag, dest=field.name, type=_parser_for(field), default=argparse.SUPPRESS,
                             metavar=field.name.upper(), help=help_text)
  return groups



def _check_groups(cls: type, skip: tuple[str, ...]) -> None:
  """A field left out of `OPTION_GROUPS` would vanish from `--help`'s layout: refuse it at start-up."""
  placed = [name for names in cls.OPTION_GROUPS.values() for name in names]
  fields = {f.name for f in dataclasses.fields(cls)} - set(skip)
  twice = sorted({name for name in placed if placed.count(name) > 1})
  if twice or set(placed) != fields:
    raise TypeError(f"{cls.__name__}.OPTION_GROUPS must place every option once: placed twice {twice}, "
                    f"missing {sorted(fields - set(placed))}, unknown {sorted(set(placed) - fields)}")


def given_values(args: argparse.Namespace, cls: type) -> dict[str, Any]:
  """The fields of `cls` the user set on the command line."""
  given = vars(args)
  return {f.name: given[f.name] for f in dataclasses.fields(cls) if f.name in given}
