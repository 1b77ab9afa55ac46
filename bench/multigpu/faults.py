# A small DDP training job (embedding + linear on random tokens) where one rank misbehaves at one step.
# usage: torchrun ... faults.py MODE FAULT_RANK FAULT_STEP [--steps N] [--gather] [--record]
#   MODE: none | hang | hang_before_gather | sigkill | exception | slow | oom | assert | assert_linger
#   assert_linger: as assert, but the rank waits for its forward at once, catches the CUDA error and lives on
#     LINGER_S seconds (default 20) before it re-raises (so that its pid still exists when the Xid is read)
#   --gather: every step also all_gathers the loss explicitly (a metrics gather), after backward
#   --record: wrap main in torch.distributed.elastic's @record (torchrun then shows the traceback)
# The NCCL timeout is 30 s. If CAPTURE_INFO_DIR is set, each rank writes who it is (pid, host, GPU) to
# $CAPTURE_INFO_DIR/rank<N>.json, beside the console and never on it, so that the truth can name the culprit.
import datetime, json, os, signal, socket, sys, time
import torch, torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record

args = [a for i, a in enumerate(sys.argv[1:], 1) if not a.startswith("--") and sys.argv[i - 1] != "--steps"]
mode, fault_rank, fault_step = args[0], int(args[1]), int(args[2])
steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 30
gather = "--gather" in sys.argv
VOCAB = 1000


def who(rank, local):
    d = os.environ.get("CAPTURE_INFO_DIR")
    if not d:
        return
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    gpu = int(vis.split(",")[local]) if vis else local
    p = torch.cuda.get_device_properties(local)
    info = {"rank": rank, "local_rank": local, "pid": os.getpid(), "ppid": os.getppid(),
            "host": socket.gethostname(), "CUDA_VISIBLE_DEVICES": vis, "gpu_index": gpu,
            "gpu_uuid": "GPU-" + str(p.uuid) if hasattr(p, "uuid") else None, "gpu_name": p.name,
            "group_rank": os.environ.get("GROUP_RANK"), "world_size": dist.get_world_size()}
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"rank{rank}.json"), "w") as f:
        json.dump(info, f)


def main():
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=30))
    rank = dist.get_rank(); local = int(os.environ.get("LOCAL_RANK", rank)); torch.cuda.set_device(local)
    who(rank, local)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Sequential(torch.nn.Embedding(VOCAB, 512), torch.nn.Linear(512, VOCAB)).cuda(), device_ids=[local])
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    world = dist.get_world_size()
    for step in range(steps):
        seq = 32
        tok = torch.randint(0, VOCAB, (64, seq), device="cuda")
        if rank == fault_rank and step == fault_step:
            if mode == "hang":
                time.sleep(300)              # a stuck data loader, a deadlock, a filesystem hang
            elif mode == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)   # as the kernel's OOM killer does
            elif mode == "exception":
                raise ValueError(f"bad batch at step {step}: sample 17 has no labels")
            elif mode == "oom":
                tok = torch.randint(0, VOCAB, (64, 32_000_000), device="cuda")  # a batch with a runaway sequence length
            elif mode in ("assert", "assert_linger"):
                tok[0, 0] = VOCAB + 5        # a token id past the embedding table (a tokenizer/vocab mismatch)
        if mode == "slow" and rank == fault_rank and fault_step <= step <= fault_step + 5:
            time.sleep(3)                    # a slow rank: throttled, a slow disk, a noisy neighbour
        out = model(tok)
        if mode == "assert_linger" and rank == fault_rank and step == fault_step:
            try:
                torch.cuda.synchronize()     # the error surfaces here, before any NCCL work of this step
            except RuntimeError as e:
                linger = float(os.environ.get("LINGER_S", "20"))
                print(f"[rank{rank}] {type(e).__name__} at step {step}; lingering {linger:.0f} s (pid {os.getpid()})", file=sys.stderr, flush=True)
                time.sleep(linger)
                raise
        loss = torch.nn.functional.cross_entropy(out.view(-1, VOCAB), tok.view(-1))
        loss.backward(); opt.step(); opt.zero_grad()
        if gather:
            if mode == "hang_before_gather" and rank == fault_rank and step == fault_step:
                time.sleep(300)              # stuck in host code right before the metrics gather
            losses = [torch.zeros_like(loss) for _ in range(world)]
            dist.all_gather(losses, loss.detach())
            if step % 5 == 0:
                print(f"[rank{rank}] step {step} loss {loss.item():.4f} mean {torch.stack(losses).mean().item():.4f}", flush=True)
        elif step % 5 == 0:
            print(f"[rank{rank}] step {step} loss {loss.item():.4f}", flush=True)
    torch.cuda.synchronize()
    print(f"[rank{rank}] done {steps} steps", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    (record(main) if "--record" in sys.argv else main)()
