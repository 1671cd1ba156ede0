/**
 * The wasm backend's `Slice` and `SplitV` kernels, copying through views of the
 * WebAssembly heap. tfjs-backend-wasm 4.22's own `Slice` first copies the **whole** input
 * out of the heap into a JavaScript array (`readSync`) and then copies the slice back in;
 * its `SplitV` does that once per part. The encoder splits its attention's projections
 * that way in every layer: 2–7 MB copied out per part of a 32-text run, ~0.9 s of the
 * ~6 s main-thread time of a 1,000-record import (docs/sources.md "Throughput"). These
 * kernels copy just the slice, heap to heap: the same bytes in the same places, so the
 * same vectors bit for bit (test/embed/slice-kernel.test.ts checks every box against
 * element-by-element reading).
 */
import type { BackendWasm } from "@tensorflow/tfjs-backend-wasm";

type Tf = typeof import("@tensorflow/tfjs-core");
type TensorInfo = import("@tensorflow/tfjs-core").TensorInfo;
type KernelFunc = import("@tensorflow/tfjs-core").KernelFunc;
type TypedArray = import("@tensorflow/tfjs-core").TypedArray;

/**
 * Copies the box `begin` + `size` of `x` (row-major, `strides` per axis but the last) into
 * `out`, one innermost row at a time.
 */
function copyBox(
  x: TypedArray,
  strides: readonly number[],
  begin: readonly number[],
  size: readonly number[],
  out: TypedArray,
): void {
  const rank = size.length;
  const row = size[rank - 1]!;
  const rows = size.slice(0, -1).reduce((a, b) => a * b, 1);
  const at = new Array<number>(rank - 1).fill(0);
  for (let r = 0; r < rows; r++) {
    let from = begin[rank - 1]!;
    for (let d = 0; d < rank - 1; d++) from += (begin[d]! + at[d]!) * strides[d]!;
    out.set(x.subarray(from, from + row), r * row);
    // The next row's index, last axis but one fastest.
    for (let d = rank - 2; d >= 0; d--) {
      if (++at[d]! < size[d]!) break;
      at[d] = 0;
    }
  }
}

/** One slice of `x` into a new output of the backend (numeric dtypes). */
function sliceOf(
  tf: Tf,
  backend: BackendWasm,
  x: TensorInfo,
  begin: number[],
  size: number[],
): TensorInfo {
  const out = backend.makeOutput(size, x.dtype);
  if (size.some((n) => n === 0)) return out;
  // Views made after the output's allocation: an allocation may grow (and so replace) the heap.
  const xVals = backend.typedArrayFromHeap(x);
  const outVals = backend.typedArrayFromHeap(out);
  const strides = tf.util.computeStrides(x.shape);
  if (tf.slice_util.isSliceContinous(x.shape, begin, size)) {
    const from = tf.slice_util.computeFlatOffset(begin, strides);
    outVals.set(xVals.subarray(from, from + tf.util.sizeFromShape(size)));
  } else {
    copyBox(xVals, strides, begin, size, outVals);
  }
  return out;
}

/**
 * Registers the heap-to-heap `Slice` and `SplitV` for the backend `wasm`, in place of
 * tfjs's (which still serve string tensors). Call once the backend is set.
 *
 * @example await tf.setBackend("wasm"); useHeapSlices(tf);
 */
export function useHeapSlices(tf: Tf): void {
  const own = (name: string): KernelFunc => {
    const kernel = tf.getKernel(name, "wasm");
    if (kernel === undefined) throw new Error(`the tfjs wasm backend has no ${name} kernel`);
    return kernel.kernelFunc;
  };
  const tfjsSlice = own(tf.Slice);
  const tfjsSplitV = own(tf.SplitV);
  const slice: KernelFunc = (args) => {
    const x = args.inputs.x as TensorInfo;
    if (x.dtype === "string") return tfjsSlice(args);
    const attrs = args.attrs as { begin: number | number[]; size: number | number[] };
    const [begin = [], size = []] = tf.slice_util.parseSliceParams(x, attrs.begin, attrs.size);
    return sliceOf(tf, args.backend as BackendWasm, x, begin, size);
  };
  const splitV: KernelFunc = (args) => {
    const x = args.inputs.x as TensorInfo;
    if (x.dtype === "string") return tfjsSplitV(args);
    const attrs = args.attrs as { numOrSizeSplits: number | number[]; axis: number | number[] };
    const [axis = 0] = tf.util.parseAxisParam(attrs.axis, x.shape);
    const sizes = tf.backend_util.prepareSplitSize(x, attrs.numOrSizeSplits, axis);
    const begin = x.shape.map(() => 0);
    return sizes.map((n) => {
      const size = x.shape.slice();
      size[axis] = n;
      const part = sliceOf(tf, args.backend as BackendWasm, x, begin, size);
      begin[axis]! += n;
      return part;
    });
  };
  for (const [name, kernelFunc] of [
    [tf.Slice, slice],
    [tf.SplitV, splitV],
  ] as const) {
    tf.unregisterKernel(name, "wasm");
    tf.registerKernel({ kernelName: name, backendName: "wasm", kernelFunc });
  }
}
