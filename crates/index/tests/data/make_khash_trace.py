#!/usr/bin/env python3
"""Writes khash_trace.txt: random puts and deletes of bin-like keys, each batch followed by the
bucket order htslib 1.16's khash gives (from khash_oracle.c, built against htslib's khash.h).

    python3 make_khash_trace.py /path/to/htslib-1.16-source
"""
import random, subprocess, sys, os, tempfile

src = sys.argv[1]
here = os.path.dirname(os.path.abspath(__file__))
exe = os.path.join(tempfile.mkdtemp(), "oracle")
subprocess.run(["gcc", "-O1", "-I", src, os.path.join(here, "khash_oracle.c"), "-o", exe], check=True)
rng = random.Random(11)
ops = []
present = []
for batch in range(40):
    for _ in range(rng.randint(1, 60)):
        if present and rng.random() < 0.25:
            k = rng.choice(present)
            present.remove(k)
            ops.append(f"d {k}")
        else:
            k = rng.choice([rng.randint(0, 9), rng.randint(4681, 4800), rng.randint(0, 37450),
                            37450, rng.randint(585, 700)])
            if k not in present:
                present.append(k)
            ops.append(f"p {k}")
    ops.append("=")
out = subprocess.run([exe], input="\n".join(ops) + "\n", capture_output=True, text=True, check=True).stdout
lines = iter(out.splitlines())
with open(os.path.join(here, "khash_trace.txt"), "w") as f:
    for op in ops:
        if op == "=":
            f.write("= " + next(lines).strip() + "\n")
        else:
            f.write(op + "\n")
