"""How a run executes: `rlrep train`'s checks (`checks.py`) and dispatch (`train.py`), and the modes that run the
roles on this machine or an existing Ray cluster: in-process (`inprocess.py`, a thread per role) and local
(`local.py`, a Ray process per role). Cluster mode has a package of its own (launch/cluster/), whose driver is local
mode's. Also here, for the modes' drivers: stopping a run from outside (`interrupts.py`) and keeping third-party
chatter off an in-process run's terminal (`quiet.py`).
"""
