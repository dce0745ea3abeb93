"""RSS of a process sampling batches over gRPC from a Reverb table in another process that a third process keeps
inserting into (a full FIFO table), as local mode's learner does.

Usage: python benchmarks/probes/grpc_sampling.py BATCHES"""
import multiprocessing as mp, sys, time
import numpy as np, psutil

SHAPE = (32, 32, 9)

def table():
  import reverb, tensorflow as tf
  return reverb.Table("replay", reverb.selectors.Uniform(), reverb.selectors.Fifo(), max_size=15000,
                      rate_limiter=reverb.rate_limiters.MinSize(500),
                      signature={"obs": tf.TensorSpec(SHAPE, tf.uint8), "reward": tf.TensorSpec((), tf.float32)})

def serve(port_q):
  import reverb
  server = reverb.Server([table()], port=None)
  port_q.put(server.port)
  server.wait()

def insert(port):
  import reverb
  client = reverb.Client(f"localhost:{port}")
  with client.trajectory_writer(num_keep_alive_refs=1) as writer:
    while True:
      writer.append({"obs": np.random.randint(0, 255, SHAPE, np.uint8), "reward": np.float32(1)})
      writer.create_item("replay", 1.0, {"obs": writer.history["obs"][-1], "reward": writer.history["reward"][-1]})
      writer.flush(block_until_num_items=50)
      time.sleep(0.01)

if __name__ == "__main__":
  ctx = mp.get_context("spawn")
  q = ctx.Queue()
  ctx.Process(target=serve, args=(q,), daemon=True).start()
  port = q.get()
  ctx.Process(target=insert, args=(port,), daemon=True).start()
  import reverb, tensorflow as tf
  dataset = reverb.TrajectoryDataset.from_table_signature(f"localhost:{port}", "replay", max_in_flight_samples_per_worker=64)
  dataset = dataset.batch(32).prefetch(1)
  proc = psutil.Process()
  n = int(sys.argv[1])
  t = time.time()
  for i, _ in enumerate(dataset):
    if i % (n // 10) == 0:
      print(i, round(proc.memory_info().rss / 1e6, 1), f"{time.time() - t:.0f}s", flush=True)
    if i == n:
      break
