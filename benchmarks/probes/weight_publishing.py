"""RSS of a process that publishes weights (as the learner does every 10 steps) to a Reverb server in another process.
MODE `publish` publishes COUNT times; `info` asks the server for its info COUNT times instead (the calls alone).

Usage: python benchmarks/probes/weight_publishing.py publish|info COUNT"""
import multiprocessing as mp, pathlib, sys, time
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))  # the repository
import numpy as np, psutil, tensorflow as tf

SHAPES = {"encoder/00/kernel": (3, 3, 9, 32), "encoder/01/kernel": (3, 3, 32, 32), "trunk/kernel": (39 * 39 * 32, 50),
          "head/kernel": (50, 256), "out/kernel": (256, 1)}

def serve(port_q):
  import reverb
  from rlrep.replay import tables
  specs = {k: tf.TensorSpec(v, tf.float32) for k, v in SHAPES.items()}
  server = reverb.Server([tables.weights_table(specs)], port=None)
  port_q.put(server.port)
  server.wait()

if __name__ == "__main__":
  mode = sys.argv[1]
  q = mp.get_context("spawn").Queue()
  p = mp.get_context("spawn").Process(target=serve, args=(q,), daemon=True); p.start()
  port = q.get()
  from rlrep import replay
  client = replay.connect(f"localhost:{port}")
  publisher = replay.WeightPublisher(client)
  params = {k: np.random.rand(*v).astype(np.float32) for k, v in SHAPES.items()}
  proc = psutil.Process()
  n = int(sys.argv[2])
  t = time.time()
  for i in range(n + 1):
    if mode == "publish":
      publisher.publish(i, params)
    elif mode == "info":
      client.server_info(timeout=5)
    if i % (n // 10) == 0:
      print(i, round(proc.memory_info().rss / 1e6, 1), f"{time.time() - t:.0f}s", flush=True)
  p.terminate()
