"""What every actor-critic agent here shares (as Acme's agents share their common modules), split by role:
`config` (the shared settings), `networks` (pixel encoder and deterministic policy), `acting` (the actors'
policy and exploration), `learning` (learner state, augmentation, target updates and the learner loop),
`builder` (what launchers call) and `presets` (per-task starting settings). An agent (agents/d4pg, agents/ddpg)
adds its critic, its update and their settings; agents never import one another.
"""
