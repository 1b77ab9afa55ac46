#!/usr/bin/env python3
"""Hot-method tables from JFR recordings: top frames (self) and inclusive, summed over every file.

  bench/jfr-hot.py [--top N] [--thread-prefix P] FILE.jfr...

Prints markdown tables of jdk.ExecutionSample (self and inclusive share), and the allocation
(jdk.ObjectAllocationSample weight by top frame and class) and GC totals. Needs `jfr` (the JDK's).
"""
import collections, json, subprocess, sys

args = sys.argv[1:]
top = 20
if args and args[0] == "--top":
    top = int(args[1]); args = args[2:]

def events(path, kind):
    out = subprocess.run(["jfr", "print", "--json", "--stack-depth", "64", "--events", kind, path],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["recording"]["events"]

def name(f):
    m = f["method"]
    return m["type"]["name"].split(".")[-1] + "." + m["name"]

self_c, incl_c, thread_c = collections.Counter(), collections.Counter(), collections.Counter()
alloc_site, alloc_cls = collections.Counter(), collections.Counter()
gc_n, gc_ms, samples, files = 0, 0.0, 0, 0
for path in args:
    files += 1
    for e in events(path, "jdk.ExecutionSample"):
        v = e["values"]
        frames = v["stackTrace"]["frames"] if v.get("stackTrace") else []
        if not frames:
            continue
        samples += 1
        thread_c[(v["sampledThread"] or {}).get("javaName") or "?"] += 1
        self_c[name(frames[0])] += 1
        for n in {name(f) for f in frames}:
            incl_c[n] += 1
    for e in events(path, "jdk.ObjectAllocationSample"):
        v = e["values"]
        frames = v["stackTrace"]["frames"] if v.get("stackTrace") else []
        w = v["weight"]
        alloc_cls[v["objectClass"]["name"]] += w
        alloc_site[name(frames[0]) if frames else "?"] += w
    for e in events(path, "jdk.GarbageCollection"):
        gc_n += 1
        d = e["values"]["sumOfPauses"]
        # JFR prints durations as ISO-8601 (PT0.0123S)
        gc_ms += float(d.strip("PTS")) * 1000 if isinstance(d, str) and d.endswith("S") and "M" not in d else 0

def table(title, c, total, unit="samples"):
    print(f"\n{title} ({total:,} {unit} over {files} run(s))\n")
    print("| method | share |\n|---|---:|")
    for k, n in c.most_common(top):
        print(f"| `{k}` | {100 * n / total:.1f} % |")

table("Top frames (self time)", self_c, samples)
table("Inclusive (on the stack)", incl_c, samples)
print("\n| thread | samples |\n|---|---:|")
for k, n in thread_c.most_common(8):
    print(f"| {k} | {n} |")
ta = sum(alloc_cls.values()) or 1
print(f"\nAllocation (sampled weight {ta / 1e6 / files:,.0f} MB per run)\n\n| top frame | share |\n|---|---:|")
for k, n in alloc_site.most_common(10):
    print(f"| `{k}` | {100 * n / ta:.1f} % |")
print("\n| class | share |\n|---|---:|")
for k, n in alloc_cls.most_common(8):
    print(f"| `{k}` | {100 * n / ta:.1f} % |")
print(f"\nGC: {gc_n / files:.1f} collections per run, {gc_ms / files:.0f} ms of pauses per run")
