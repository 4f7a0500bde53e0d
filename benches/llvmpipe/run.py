#!/usr/bin/env python3
"""ctm against Mesa's llvmpipe on the same kernels, alternated in one session.

Run from the repository's root:

    python3 benches/llvmpipe/run.py [--rounds N] [--ctm PATH] [KERNEL ...]

KERNEL: chains8 chains4 chains2 chains1 mandelbrot tiny (all by default).
Each is the bundled kernel (benches/kernels/, examples/mandelbrot.s) with
the constants of `ctm bench suite`, and, for Mesa, the same work as a GLSL
fragment shader (benches/llvmpipe/llvmpipe.c). Every round measures each
kernel with `ctm bench --json` and with llvmpipe at one and two threads
(its native vector width), in an order reversed every other round. Every
llvmpipe frame's result and ctm's JIT output are checked bit for bit
against ctm's interpreter. Prints a Markdown table (also written to
target/llvmpipe/table.md); the raw results go to target/llvmpipe/*.jsonl.

Needs a C compiler and Mesa's EGL and OpenGL with their headers; on Debian:
    apt-get install gcc libegl-dev libgl-dev libopengl-dev libegl-mesa0 libgl1-mesa-dri
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

OUT = "target/llvmpipe"
DEFAULT_CTM = "target/release/ctm"
KERNELS = ["chains8", "chains4", "chains2", "chains1", "mandelbrot", "tiny"]

# The suite's constants (tools/src/bench/suite.rs, chain_job and
# mandelbrot_job); llvmpipe.c sets the same, and the bit-for-bit check of
# its output against ctm's says whether they agree.
CHAIN_ARGS = [
    "--domain", "512x512",
    "--const", "0=0.999,0.998,0.997,0.996",
    "--const", "1=0.001,0.002,0.003,0.004",
]
for k in range(3, 11):
    CHAIN_ARGS += ["--const", f"{k}=0.001,0.001,0.001,0.001",
                   "--const", f"{k + 8}=0.001,0.002,0.003,0.004"]
MANDELBROT_ARGS = [
    "--domain", "768x512",
    "--const", "0=0.00390625,0.0048828125,0,0",
    "--const", "1=-2.25,-1.25,0,0",
    "--const", "2=0.031,0.047,0.071,0",
    "--const-int", "0=255,0,0",
]


def job(kernel):
    """The kernel's program, its ctm arguments, its pixels, and the frames
    llvmpipe draws per measurement (about a second's worth)."""
    if kernel.startswith("chains"):
        return f"benches/kernels/{kernel}.s", CHAIN_ARGS, 512 * 512, 60
    if kernel == "mandelbrot":
        return "examples/mandelbrot.s", MANDELBROT_ARGS, 768 * 512, 30
    if kernel == "tiny":
        return "benches/kernels/tiny.s", ["--domain", "512x512"], 512 * 512, 300
    sys.exit(f"run.py: unknown kernel {kernel} (known: {' '.join(KERNELS)})")


def spawn(cmd, env=None):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, env=env)
    except OSError as e:
        sys.exit(f"run.py: cannot run {cmd[0]}: {e.strerror}")


def run(cmd, env=None):
    r = spawn(cmd, env)
    if r.returncode != 0:
        sys.exit(f"run.py: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}{r.stdout}")
    return r.stdout


def build(ctm):
    os.makedirs(OUT, exist_ok=True)
    peer = f"{OUT}/llvmpipe"
    cc = os.environ.get("CC", "cc")
    try:
        r = subprocess.run(
            [cc, "-O2", "-Wall", "-o", peer, "benches/llvmpipe/llvmpipe.c", "-lEGL", "-lOpenGL"],
            capture_output=True, text=True)
    except OSError as e:
        r = subprocess.CompletedProcess([], 1, "", f"{cc}: {e.strerror}\n")
    if r.returncode != 0:
        sys.exit("run.py: cannot build benches/llvmpipe/llvmpipe.c:\n" + r.stderr +
                 "It needs a C compiler and Mesa's EGL and OpenGL with headers; on Debian:\n"
                 "  apt-get install gcc libegl-dev libgl-dev libopengl-dev libegl-mesa0 libgl1-mesa-dri")
    if not os.path.exists(ctm):
        if ctm != DEFAULT_CTM:
            sys.exit(f"run.py: no ctm at {ctm}")
        run(["cargo", "build", "--release"])
    return peer


def mesa_env(threads):
    env = dict(os.environ)
    env.update(GALLIUM_DRIVER="llvmpipe", LP_NUM_THREADS=str(threads), LIBGL_ALWAYS_SOFTWARE="1",
               MESA_SHADER_CACHE_DISABLE="true", EGL_LOG_LEVEL="fatal")
    return env


def measure_llvmpipe(peer, kernel, threads, log):
    _, _, pixels, frames = job(kernel)
    r = json.loads(run([peer, kernel, str(frames), f"{OUT}/ref_{kernel}.f32"], mesa_env(threads)))
    r["threads"] = threads
    log.write(json.dumps(r) + "\n")
    return r["min_ms"] * 1e6 / pixels


def measure_ctm(ctm, kernel, log):
    program, args, pixels, _ = job(kernel)
    out = f"{OUT}/ctm_{kernel}.f32"
    r = json.loads(run([ctm, "bench", program, *args, "--output", f"0={out}:float32_4",
                        "--json", "--repeat", "3", "-q"]))
    log.write(json.dumps({"kernel": kernel, "bench": r}) + "\n")
    with open(out, "rb") as a, open(f"{OUT}/ref_{kernel}.f32", "rb") as b:
        if a.read() != b.read():
            sys.exit(f"run.py: ctm's JIT output of {kernel} differs from its interpreter's")
    per_pixel = r["pixel_instructions"] / pixels  # executed instructions per pixel
    rate = {s["threads"]: s["jit_pixinst_per_s"] for s in r["scaling"]}
    return {
        "one": per_pixel * 1e9 / rate[1],
        "two": per_pixel * 1e9 / rate[2] if 2 in rate else None,
        "rerun": r["prepared_rerun_ns_per_pixel"],
    }


def span(values):
    """Best (least) over the rounds, and the median in brackets."""
    values = [v for v in values if v is not None]
    if not values:
        return "–", None
    return f"{min(values):.2f} ({statistics.median(values):.2f})", min(values)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3, help="rounds of every measurement (default 3)")
    ap.add_argument("--ctm", default=DEFAULT_CTM, help="the ctm binary (built if the default is missing)")
    ap.add_argument("kernels", nargs="*", default=KERNELS, metavar="KERNEL",
                    help="kernels to compare (default: all)")
    a = ap.parse_args()
    if a.rounds < 1:
        sys.exit("run.py: --rounds must be at least 1")
    if not os.path.exists("benches/llvmpipe/llvmpipe.c"):
        sys.exit("run.py: run it from the repository's root")
    for k in a.kernels:
        job(k)
    peer = build(a.ctm)

    # The reference: ctm's interpreter on one thread.
    for k in a.kernels:
        program, args, _, _ = job(k)
        run([a.ctm, "run", program, *args, "--output", f"0={OUT}/ref_{k}.f32:float32_4",
             "--engine", "interp", "--threads", "1", "-q"])

    got = {k: {"lp1": [], "lp2": [], "one": [], "two": [], "rerun": []} for k in a.kernels}
    with open(f"{OUT}/llvmpipe.jsonl", "w") as lp_log, open(f"{OUT}/ctm.jsonl", "w") as ctm_log:
        for rnd in range(a.rounds):
            for k in a.kernels:
                def mesa():
                    for t in (1, 2):
                        got[k][f"lp{t}"].append(measure_llvmpipe(peer, k, t, lp_log))

                def ours():
                    for key, v in measure_ctm(a.ctm, k, ctm_log).items():
                        got[k][key].append(v)

                first, second = (mesa, ours) if rnd % 2 == 0 else (ours, mesa)
                first()
                second()
                print(f"round {rnd + 1}/{a.rounds}: {k}", file=sys.stderr)

    lines = [
        f"ns per pixel, best of {a.rounds} round{'s' if a.rounds > 1 else ''} (median in brackets); "
        "llvmpipe: frames into "
        "its framebuffer; ctm: whole runs (output read back) and a prepared job's re-runs.",
        "",
        "| kernel | llvmpipe, 1 thread | ctm JIT, 1 thread | speed, ctm / llvmpipe | ctm re-runs, "
        "1 thread | speed, re-runs / llvmpipe | llvmpipe, 2 threads | ctm JIT, 2 threads | "
        "speed, ctm / llvmpipe |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k in a.kernels:
        g = got[k]
        lp1, lp1_best = span(g["lp1"])
        one, one_best = span(g["one"])
        rerun, rerun_best = span(g["rerun"])
        lp2, lp2_best = span(g["lp2"])
        two, two_best = span(g["two"])
        r1 = f"{lp1_best / one_best:.2f}×"
        rr = f"{lp1_best / rerun_best:.2f}×"
        r2 = f"{lp2_best / two_best:.2f}×" if two_best else "–"
        lines.append(f"| {k} | {lp1} | {one} | {r1} | {rerun} | {rr} | {lp2} | {two} | {r2} |")
    with open(f"{OUT}/llvmpipe.jsonl") as f:
        renderer = json.loads(f.readline())["renderer"]
    lines += ["", f"Mesa: {renderer}; every result bit for bit as ctm's interpreter's."]
    table = "\n".join(lines) + "\n"
    with open(f"{OUT}/table.md", "w") as f:
        f.write(table)
    print(table)


if __name__ == "__main__":
    main()
