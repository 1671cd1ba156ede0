import * as tf from "@tensorflow/tfjs-core";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEmbedder, type Embedder } from "../../src/embed/index.js";

// Loading the encoder sets the wasm backend and registers the heap-to-heap kernels.
let use: Embedder;
beforeAll(async () => {
  use = (await createEmbedder({ kind: "embedded" }))!;
});
afterAll(async () => {
  await use.close?.();
});

/** The box `begin` + `size` of a row-major array of `shape`, read element by element. */
function reference(values: number[], shape: number[], begin: number[], size: number[]): number[] {
  const out: number[] = [];
  const total = size.reduce((a, b) => a * b, 1);
  for (let flat = 0; flat < total; flat++) {
    let rest = flat;
    let from = 0;
    let stride = 1;
    for (let d = shape.length - 1; d >= 0; d--) {
      const i = rest % size[d]!;
      rest = Math.floor(rest / size[d]!);
      from += (begin[d]! + i) * stride;
      stride *= shape[d]!;
    }
    out.push(values[from]!);
  }
  return out;
}

/** A shape of rank 1–4 with its values, and a box inside it. */
const boxed = fc
  .array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 })
  .chain((shape) =>
    fc.record({
      shape: fc.constant(shape),
      begin: fc.tuple(...shape.map((n) => fc.nat(n - 1))),
      cut: fc.tuple(...shape.map((n) => fc.nat(n))),
      int: fc.boolean(),
    }),
  )
  .map(({ shape, begin, cut, int }) => ({
    shape,
    begin,
    size: shape.map((n, d) => Math.min(cut[d]!, n - begin[d]!)),
    int,
  }));

describe("the wasm backend's Slice and SplitV (heap to heap)", () => {
  it("runs on the wasm backend", () => {
    expect(tf.getBackend()).toBe("wasm");
  });

  it("slices any box of any rank, float or int, as element-by-element reading does", () => {
    fc.assert(
      fc.property(boxed, ({ shape, begin, size, int }) => {
        const n = shape.reduce((a, b) => a * b, 1);
        const values = Array.from({ length: n }, (_, i) => (int ? i - 7 : i * 0.5 + 0.25));
        const x = tf.tensor(values, shape, int ? "int32" : "float32");
        const y = tf.slice(x, begin, size);
        expect(y.shape).toEqual(size);
        expect(Array.from(y.dataSync())).toEqual(reference(values, shape, begin, size));
        tf.dispose([x, y]);
      }),
    );
  });

  it("splits along any axis into parts that tile the input", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }),
        fc.nat(3),
        fc.array(fc.nat(3), { minLength: 1, maxLength: 4 }),
        (shape, axisSeed, parts) => {
          const axis = axisSeed % shape.length;
          const sizes = parts.map((p) => p + 1);
          shape[axis] = sizes.reduce((a, b) => a + b, 0);
          const n = shape.reduce((a, b) => a * b, 1);
          const values = Array.from({ length: n }, (_, i) => i);
          const x = tf.tensor(values, shape);
          const ys = tf.split(x, sizes, axis);
          let at = 0;
          ys.forEach((y, k) => {
            const begin = shape.map((_, d) => (d === axis ? at : 0));
            const size = shape.map((s, d) => (d === axis ? sizes[k]! : s));
            expect(Array.from(y.dataSync())).toEqual(reference(values, shape, begin, size));
            at += sizes[k]!;
          });
          tf.dispose([x, ...ys]);
        },
      ),
    );
  });

  it("still slices string tensors (tfjs's own kernel)", () => {
    const x = tf.tensor(["a", "b", "c", "d"], [2, 2], "string");
    const y = tf.slice(x, [1, 0], [1, 2]);
    expect(y.arraySync()).toEqual([["c", "d"]]);
    tf.dispose([x, y]);
  });

  it("gives an empty output for an empty box", () => {
    const x = tf.tensor([1, 2, 3, 4], [2, 2]);
    const y = tf.slice(x, [1, 0], [0, 2]);
    expect(y.shape).toEqual([0, 2]);
    tf.dispose([x, y]);
  });
});
