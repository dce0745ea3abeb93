"""Agents: each a package split by role (config, networks, learning, acting, builder), with no launch code."""
