"""Pre-training throughput over a grid of batch sizes and sequence lengths, one process per configuration.

    .venv/bin/python bench/pretrain_scaling.py --steps=10 --output=scaling.json
    .venv/bin/python bench/pretrain_scaling.py --include_base_512          # + ELECTRA-Base, batch 8, seq 512
    .venv/bin/python bench/pretrain_scaling.py --preset=tiny --grid=2x32,4x32 --steps=1 --warmup_steps=1   # smoke

Runs `bench/pretrain_throughput.py` in a fresh interpreter for each configuration (default: `--preset` small,
float32, (batch, seq) = (8, 128), (32, 128), (128, 128), (32, 512)), so each row's peak RSS is that configuration's
own. `--include_base_512` adds ELECTRA-Base at batch 8, seq 512, the memory target (it must fit 24 GB).
`--peer` is passed through (default off). Prints a Markdown table (batch, seq, seq/s, tokens/s, s/step, model FLOP/s,
MFU, MFU of the matmul-only count, peak RSS, tokens/s relative to the (32, 128) row of the same preset (`--reference`),
which makes the non-linearity of scaling visible) and, with `--output`, writes the table and the raw JSON lines to a
JSON file. A configuration that fails (e.g. out of memory) is a "failed" row and the exit code is 1.
The last line is one JSON object (the rows).
"""

import argparse
import json
import os
import subprocess
import sys

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
THROUGHPUT = os.path.join(BENCH_DIR, "pretrain_throughput.py")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", default="small")
    parser.add_argument(
        "--grid", default="8x128,32x128,128x128,32x512", help="Comma-separated BATCHxSEQ configurations of --preset."
    )
    parser.add_argument(
        "--include_base_512", action="store_true", help="Add preset base, batch 8, seq 512 (the 24 GB memory target)."
    )
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup_steps", type=int, default=3)
    parser.add_argument("--mixed_precision", default="float32", choices=["float32", "mixed_bfloat16"])
    parser.add_argument("--jit_compile", action="store_true")
    parser.add_argument("--matmul_peak_size", type=int, default=2048)
    parser.add_argument("--peer", default="off", choices=["auto", "on", "off"], help="Passed to each run.")
    parser.add_argument("--peer_python", default=None, help="Passed to each run when given.")
    parser.add_argument(
        "--reference", default="32x128", help="BATCHxSEQ row the tokens/s of the others are divided by (per preset)."
    )
    parser.add_argument("--output", default=None, help="JSON file for the table and the raw result lines.")
    parser.add_argument("--timeout", type=float, default=7200, help="Seconds per configuration.")
    args = parser.parse_args(argv)
    try:
        args.configurations = [
            (args.preset, int(b), int(s))
            for b, s in (item.lower().split("x") for item in args.grid.split(",") if item.strip())
        ]
    except ValueError:
        parser.error(f"--grid={args.grid!r}: expected BATCHxSEQ items, e.g. 8x128,32x512")
    try:
        args.reference_shape = tuple(int(v) for v in args.reference.lower().split("x"))
    except ValueError:
        parser.error(f"--reference={args.reference!r}: expected BATCHxSEQ, e.g. 32x128")
    if args.include_base_512:
        args.configurations.append(("base", 8, 512))
    return args


def run_configuration(args, preset, batch, seq_len):
    command = [
        sys.executable,
        THROUGHPUT,
        f"--preset={preset}",
        f"--batch={batch}",
        f"--seq_len={seq_len}",
        f"--steps={args.steps}",
        f"--warmup_steps={args.warmup_steps}",
        f"--mixed_precision={args.mixed_precision}",
        f"--matmul_peak_size={args.matmul_peak_size}",
        f"--peer={args.peer}",
    ]
    if args.jit_compile:
        command.append("--jit_compile")
    if args.peer_python:
        command.append(f"--peer_python={args.peer_python}")
    print(f"running {' '.join(command[1:])}", file=sys.stderr, flush=True)
    result = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    lines = result.stdout.strip().splitlines()
    if result.returncode or not lines:
        tail = "\n".join(result.stderr.strip().splitlines()[-5:])
        return {"preset": preset, "batch": batch, "seq_len": seq_len, "error": f"exit {result.returncode}: {tail}"}
    return json.loads(lines[-1])


def add_relative_throughput(rows, reference_shape=(32, 128)):
    """`tokens_per_s_relative`: tokens_per_s of each row divided by that of the `reference_shape` (batch, seq) row of
    the same preset (None when there is no such row, e.g. for base at 8 x 512 in the default grid)."""
    reference = {
        row["preset"]: row["tokens_per_s"]
        for row in rows
        if (row.get("batch"), row.get("seq_len")) == tuple(reference_shape) and "tokens_per_s" in row
    }
    for row in rows:
        base = reference.get(row["preset"])
        row["tokens_per_s_relative"] = row["tokens_per_s"] / base if base and "tokens_per_s" in row else None
        row["relative_to"] = "x".join(map(str, reference_shape))
    return rows


def markdown_table(rows, reference="32x128"):
    header = (
        "| preset | batch | seq | seq/s | tokens/s | s/step | model FLOP/s | MFU | MFU (matmul only) | "
        f"peak RSS (MB) | tokens/s vs {reference} |"
    )
    columns = header.count("|") - 1
    lines = [header, "|" + "---|" * columns]
    for row in rows:
        if "error" in row:
            lines.append(
                f"| {row['preset']} | {row['batch']} | {row['seq_len']} | failed: "
                f"{row['error'].splitlines()[-1][:80]} |" + " |" * (columns - 4)
            )
            continue
        relative = row.get("tokens_per_s_relative")
        lines.append(
            f"| {row['preset']} | {row['batch']} | {row['seq_len']} | {row['seq_per_s']:.1f} | "
            f"{row['tokens_per_s']:,.0f} | {row['seconds_per_step']:.3f} | {row['model_flops_per_s']:.3g} | "
            f"{row['mfu']:.3f} | {row['mfu_matmul_only']:.3f} | {row['peak_rss_mb']:,.0f} | "
            f"{'-' if relative is None else f'{relative:.2f}'} |"
        )
    return "\n".join(lines)


def main(argv=None):
    args = parse_args(argv)
    rows = [run_configuration(args, *configuration) for configuration in args.configurations]
    rows = add_relative_throughput(rows, args.reference_shape)
    table = markdown_table(rows, args.reference)
    print(table)
    if args.output:
        settings = {
            name: getattr(args, name)
            for name in (
                "preset",
                "grid",
                "include_base_512",
                "steps",
                "warmup_steps",
                "mixed_precision",
                "jit_compile",
                "peer",
                "reference",
            )
        }
        with open(args.output, "w", encoding="utf-8") as handle:
            json.dump(
                {"settings": settings, "table_markdown": table, "results": rows}, handle, indent=2, sort_keys=True
            )
            handle.write("\n")
    print(json.dumps({"results": rows}, sort_keys=True))
    if any("error" in row for row in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
