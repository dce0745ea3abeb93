"""Environments for rlrep: DeepMind Control Suite tasks with pixel observations (`environments.dmc`).

Importing the package chooses MuJoCo's GL backend (`environments.rendering`), because dm_control reads
MUJOCO_GL once, at its first import, and every module here imports dm_control.
"""

from environments import rendering

GL_BACKEND = rendering.configure_gl_backend()
