"""Command-line options generated from config dataclasses, so every field is settable and documented once.

Each field becomes `--field-name` with the field's default and the help text from the class docstring's
`Attributes:` section. Booleans get `--x/--no-x`; tuples take comma-separated values; `none` sets an
optional field to None.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
from typing import Any


def attribute_docs(cls: type) -> dict[str, str]:
  """Field name -> help text, read from the `Attributes:` section of `cls`'s docstring."""
  docs, names, text = {}, [], []
  section = (cls.__doc__ or "").split("Attributes:", 1)[-1]
  for line in section.splitlines():
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


def _parser_for(field: dataclasses.Field, default: Any):
  annotation = _annotation(field)
  if annotation.startswith("tuple"):
    return lambda text: tuple(int(part) for part in text.split(",") if part.strip())
  base = float if "float" in annotation else int if annotation.startswith("int") else str
  if "None" in annotation:
    return lambda text: None if text.lower() == "none" else base(text)
  return base


def add_dataclass_options(parser: argparse._ActionsContainer, cls: type, defaults: Any | None = None,
                          skip: tuple[str, ...] = ()) -> None:
  """Adds one option per field of `cls`; only options given on the command line are set (`given_values`)."""
  docs = attribute_docs(cls)
  defaults = defaults if defaults is not None else cls()
  for field in dataclasses.fields(cls):
    if field.name in skip:
      continue
    default = getattr(defaults, field.name)
    shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
    help_text = f"{docs.get(field.name, '')} (default: {shown})".strip()
    flag = "--" + field.name.replace("_", "-")
    # SUPPRESS: an option not given leaves no attribute, so `none` (an optional field set to None) differs
    # from "not given".
    if _annotation(field) == "bool":
      parser.add_argument(flag, dest=field.name, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS,
                          help=help_text)
    else:
      parser.add_argument(flag, dest=field.name, type=_parser_for(field, default), default=argparse.SUPPRESS,
                          metavar=field.name.upper(), help=help_text)


def given_values(args: argparse.Namespace, cls: type) -> dict[str, Any]:
  """The fields of `cls` the user set on the command line."""
  given = vars(args)
  return {f.name: given[f.name] for f in dataclasses.fields(cls) if f.name in given}
