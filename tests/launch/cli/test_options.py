"""Options generated from config dataclasses: every field settable, documented from the docstring once."""

import argparse
import dataclasses

from launch.cli import options


@dataclasses.dataclass(frozen=True)
class _Config:
  """Attributes:
    rate: the learning rate; a long sentence that
      continues on the next line.
    sizes, depth: widths and depth of the network.
    clip: clip gradients.
    limit: an optional cap, e.g. 10% of the rate.
  """
  rate: float = 0.1
  sizes: tuple[int, ...] = (8, 8)
  depth: int = 2
  clip: bool = True
  limit: float | None = None

  OPTION_GROUPS = {"optimiser": ("rate", "clip", "limit"), "network": ("sizes", "depth")}


def _parse(*argv):
  parser = argparse.ArgumentParser()
  options.add_dataclass_options(parser, _Config)
  return parser, options.given_values(parser.parse_args(list(argv)), _Config)


def test_attribute_docs_join_continuation_lines_and_share_text_between_listed_names():
  docs = options.attribute_docs(_Config)
  assert docs["rate"] == "the learning rate; a long sentence that continues on the next line."
  assert docs["sizes"] == docs["depth"] == "widths and depth of the network."


def test_only_given_values_are_returned_parsed_to_the_field_types():
  _, given = _parse("--rate", "0.5", "--sizes", "64,32", "--no-clip", "--limit", "none")
  assert given == {"rate": 0.5, "sizes": (64, 32), "clip": False, "limit": None}  # `none` is not "not given"
  assert _parse()[1] == {}


def test_help_shows_each_default():
  help_text = " ".join(_parse()[0].format_help().split())
  assert "--rate RATE the learning rate; a long sentence that continues on the next line. (default: 0.1)" in help_text
  assert "(default: 8,8)" in help_text and "--clip, --no-clip" in help_text
  assert "an optional cap, e.g. 10% of the rate. (default: None)" in help_text  # a literal % in a doc


@dataclasses.dataclass(frozen=True)
class _Subclass(_Config):
  """Attributes:
    rate: this class's own words for the rate.
    momentum: a field of its own.
  """
  momentum: float = 0.9

  OPTION_GROUPS = {"optimiser": ("rate", "momentum", "clip", "limit"), "network": ("sizes", "depth")}


def test_docs_are_read_along_the_class_hierarchy_and_a_subclass_says_what_it_says_differently():
  docs = options.attribute_docs(_Subclass)
  assert docs["rate"] == "this class's own words for the rate." and docs["momentum"] == "a field of its own."
  assert docs["sizes"] == options.attribute_docs(_Config)["sizes"]  # documented once, in the base
