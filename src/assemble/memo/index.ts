/**
 * What an assembly may keep for the next one, around the pipeline's steps: packed layers,
 * global plans, manifest entries and hashes (docs/performance.md). The core steps never
 * import this folder; `assemble()` hands a memo to the pipeline as its steps.
 */
export { createLayerMemo, LayerMemo } from "./layer-memo.js";
export { ManifestMemo } from "./manifest-memo.js";
