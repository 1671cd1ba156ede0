/** Manifest and trace types of spec 07. */
export {
  type AssemblyManifest,
  deterministicView,
  type LayerItemDecision,
  type LayerManifest,
  type LayerReason,
  type LayerStatus,
  type SourceFailure,
  type Timings,
} from "./manifest.js";
