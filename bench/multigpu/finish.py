# Gathers one recording after its job: flattens torchrun's per-rank logs, writes kmsg.log, workers.json and
# meta.json. usage: finish.py REC_DIR TMP_DIR NAME FLIGHT_RECORDER(0|1) RC_FILE... -- COMMAND...
import glob, json, os, re, shutil, sys
rec, tmp, name, fr = sys.argv[1:5]
rest = sys.argv[5:]; cut = rest.index("--"); rcs, command = rest[:cut], rest[cut + 1:]
meta = json.load(open(os.path.join(tmp, "meta.partial.json"))) if os.path.exists(os.path.join(tmp, "meta.partial.json")) else {}
# torchrun --log-dir D writes D/<run id>/attempt_<n>/<local rank>/{stdout,stderr}.log; a node's global rank is
# node_rank * nproc + local rank (the two-node recording has logs-node0, logs-node1)
files = []
for logs in sorted(glob.glob(os.path.join(tmp, "logs*"))):
    m = re.search(r"logs-node(\d+)$", logs); node = int(m.group(1)) if m else 0
    nproc = meta.get("nproc_per_node", 4)
    for f in sorted(glob.glob(os.path.join(logs, "*", "attempt_*", "*", "*.json"))) + sorted(glob.glob(os.path.join(logs, "*", "attempt_*", "*", "std*.log"))):
        parts = f.split(os.sep); local = int(parts[-2]); attempt = parts[-3]
        g = node * nproc + local
        if f.endswith(".json") and not os.path.basename(f) == "error.json":
            continue
        dst = f"rank{g}.{os.path.basename(f)}" if attempt == "attempt_0" else f"rank{g}.{attempt}.{os.path.basename(f)}"
        shutil.copyfile(f, os.path.join(rec, dst)); files.append((dst, os.path.relpath(f, tmp)))
workers = []
for f in sorted(glob.glob(os.path.join(tmp, "info", "rank*.json"))):
    workers.append(json.load(open(f)))
workers.sort(key=lambda w: w["rank"])
json.dump(workers, open(os.path.join(rec, "workers.json"), "w"), indent=1)
# what torchrun's summaries said (every console of the recording)
reported = []
for c in sorted(glob.glob(os.path.join(rec, "console*.log"))):
    text = open(c, errors="replace").read()
    for blk in re.finditer(r"(\[\d+\]|Root Cause[^\n]*\n\[\d+\]):\n((?:  [^\n]*\n)+)", text):
        fields = dict(re.findall(r"  (\w+)\s*: ([^\n]*)", blk.group(2)))
        m = re.match(r"(-?\d+) \(pid: (\d+)\)", fields.get("exitcode", ""))
        r = re.match(r"(\d+) \(local_rank: (\d+)\)", fields.get("rank", ""))
        reported.append({"console": os.path.basename(c), "root_cause": blk.group(1).startswith("Root"),
                         "rank": int(r.group(1)) if r else None, "local_rank": int(r.group(2)) if r else None,
                         "exitcode": int(m.group(1)) if m else None, "pid": int(m.group(2)) if m else None,
                         "host": fields.get("host"), "time": fields.get("time"), "traceback": fields.get("traceback")})
    for m in re.finditer(r"failed \(exitcode: (-?\d+)\) local_rank: (\d+) \(pid: (\d+)\)", text):
        reported.append({"console": os.path.basename(c), "first_failure_line": True, "exitcode": int(m.group(1)),
                         "local_rank": int(m.group(2)), "pid": int(m.group(3))})
frs = sorted(glob.glob(os.path.join(tmp, "fr", "*")))
if frs:
    os.makedirs(os.path.join(rec, "flight_recorder"), exist_ok=True)
    for f in frs:
        shutil.copyfile(f, os.path.join(rec, "flight_recorder", os.path.basename(f)))
rcv = []
for r in rcs:
    try: rcv.append(int(open(r).read().strip()))
    except Exception: rcv.append(None)
meta.update({"recording": name, "command": command, "flight_recorder": fr == "1",
             "exit_codes": rcv, "per_rank_logs": files, "torchrun_reported": reported,
             "flight_recorder_dumps": [os.path.basename(f) for f in frs]})
json.dump(meta, open(os.path.join(rec, "meta.json"), "w"), indent=1)
print(f"== {name}: rc={rcv} pids torchrun reported: " + ", ".join(
    f"rank {x.get('rank')} pid {x.get('pid')} exit {x.get('exitcode')}{' (root cause)' if x.get('root_cause') else ''}"
    for x in reported if not x.get("first_failure_line")) + "; workers: " + ", ".join(
    f"rank {w['rank']} pid {w['pid']} gpu {w['gpu_index']}" for w in workers), flush=True)
