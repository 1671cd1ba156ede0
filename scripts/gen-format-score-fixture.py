#!/usr/bin/env python3
"""Writes test/text/fixtures/format-score-python.json: doubles and Python's
format(x, ".6f") for each, so the TypeScript tests can check formatScore exactly
(half to even on the exact binary value) without Python at run time.

Doubles are stored as their shortest repr, which JSON.parse reads back to the same
double. Run once from the repo root (needs node_modules for the Biome formatting step);
the JSON is committed.
"""
import json
import pathlib
import random
import struct
import subprocess
import sys

rng = random.Random(20260817)
values = [
    0.0, -0.0, 1.0, -1.0, 0.5, 0.5078125, 0.123456789, 0.0078125, 0.0000005, 2.5e-7,
    5e-7, 4.999999e-7, 1.5e-6, 2.5e-6, 0.1, 0.2, 0.3, 0.7, 0.9999995, 0.99999949,
    0.9999994999999999, 1e-6, 1e-7, 5e-324, 2.2250738585072014e-308, 1e15, 1e16,
    123456789.123456789, 2.0 ** 53, 2.0 ** 70, 1e20, 1e22, 1e300, 1.7976931348623157e308,
    -0.5078125, -0.0078125, -1e-9, -2.5e-7, -123.4567895,
]
# Exact ties: k / 2^n with n >= 7 has a 5 in some decimal place; pick those landing on
# the 7th decimal (n = 7..20) and random others.
for n in range(7, 21):
    for _ in range(60):
        k = rng.randrange(1, 2 ** n)
        values.append(k / 2 ** n)
        values.append(-k / 2 ** n)
for n in range(1, 7):
    for k in range(1, 2 ** n, 2):
        values.append(k / 2 ** n)
# Decimal half-way literals (not exact in binary: rounding decided by the binary value).
for _ in range(400):
    v = rng.randrange(0, 10 ** 6) / 10 ** 6 + 5e-7
    values.append(v)
    values.append(float("%d.%06d5" % (rng.randrange(0, 1000), rng.randrange(0, 10 ** 6))))
# Uniform scores and wider ranges.
for _ in range(800):
    values.append(rng.random())
for _ in range(300):
    values.append(rng.uniform(-1000, 1000))
for _ in range(200):
    values.append(rng.random() * 10 ** rng.randint(-12, 25))
# Random bit patterns (finite only).
while len(values) < 4000:
    bits = rng.getrandbits(64)
    v = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if v != v or v in (float("inf"), float("-inf")):
        continue
    if abs(v) > 1e40:  # keep the file small; huge values are covered above
        continue
    values.append(v)

seen = set()
rows = []
for v in values:
    k = struct.pack("<d", v)
    if k in seen:
        continue
    seen.add(k)
    rows.append([v, format(v, ".6f")])

out = {
    "generator": "scripts/gen-format-score-fixture.py",
    "python": sys.version.split()[0],
    "cases": rows,
}
path = pathlib.Path(__file__).resolve().parent.parent / "test/text/fixtures/format-score-python.json"
path.write_text(json.dumps(out, indent=2) + "\n")
# Lay the file out the way the repo's formatter does, so `biome check .` passes as is.
subprocess.run(["npx", "biome", "format", "--write", str(path)], cwd=path.parents[3], check=True,
               stdout=subprocess.DEVNULL)
print(len(rows), "cases ->", path)
