/**
 * OpenTelemetry spans (docs/traces.md) through `@opentelemetry/api` only: without a
 * registered provider (and no tracer passed) every span is the API's no-op and nothing is
 * recorded. Span timestamps are OTel's own; nothing here reads the clock. Attributes that
 * cost work (counts, content) are computed only when the span records, and never feed
 * back into what is assembled.
 */
import {
  type Attributes,
  type Context,
  context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { PromptBudgetError, PromptctxError } from "../errors/index.js";

/** Instrumentation scope name of every promptctx span. */
export const TRACER_NAME = "promptctx";
/** Instrumentation scope version: the package version (a test keeps them equal). */
export const TRACER_VERSION = "0.1.0";

/** What a caller sets of tracing (`AssembleInput.trace`). */
export interface TraceOptions {
  /** Tracer to use; default `trace.getTracer("promptctx", TRACER_VERSION)` (the global provider). */
  tracer?: Tracer;
  /**
   * Record prompt, query and memory text on spans (default `false`). It may hold personal
   * or secret data: turn it on only where the trace backend may keep such text.
   */
  includeContent?: boolean;
  /** The model the prompt is for, recorded as `gen_ai.request.model` (never inferred). */
  model?: string;
}

/** Lazily computed attributes: called only when the span records. */
export type LazyAttributes = () => Attributes;

/** The code of an error: a promptctx error's `code`, else `internal_error`. */
export function errorCode(err: unknown): string {
  return err instanceof PromptctxError ? err.code : "internal_error";
}

/**
 * `{ "PREFIX.VALUE": count }` for each distinct value, in first-seen order.
 *
 * @example countAttributes("promptctx.decisions.memory", ["selected", "low_confidence", "selected"])
 * // { "promptctx.decisions.memory.selected": 2, "promptctx.decisions.memory.low_confidence": 1 }
 */
export function countAttributes(prefix: string, values: Iterable<string>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) {
    const key = `${prefix}.${v}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/**
 * One span of a traced operation with the context that makes it the parent of its
 * children. Each step ends exactly once: by {@link TraceStep.end} or {@link TraceStep.fail}.
 */
export class TraceStep {
  readonly span: Span;
  /** Whether content (prompt, query, memory text) may be recorded. */
  readonly includeContent: boolean;
  readonly #tracer: Tracer;
  readonly #ctx: Context;

  constructor(tracer: Tracer, span: Span, parent: Context, includeContent: boolean) {
    this.#tracer = tracer;
    this.span = span;
    this.#ctx = trace.setSpan(parent, span);
    this.includeContent = includeContent;
  }

  /** False for the no-op span: nothing to compute. */
  get recording(): boolean {
    return this.span.isRecording();
  }

  /** Starts a child span (attributes at start are cheap ones: names, ids, budgets). */
  child(name: string, attributes: Attributes = {}): TraceStep {
    const span = this.#tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, this.#ctx);
    return new TraceStep(this.#tracer, span, this.#ctx, this.includeContent);
  }

  /** Sets attributes computed only when the span records. */
  set(attributes: LazyAttributes): void {
    if (this.recording) this.span.setAttributes(attributes());
  }

  /** Runs `fn` with this span active, so instrumentation inside it nests here. */
  run<T>(fn: () => T): T {
    return context.with(this.#ctx, fn);
  }

  /** Ends the span, setting `attributes` first when it records. */
  end(attributes?: LazyAttributes): void {
    if (attributes !== undefined) this.set(attributes);
    this.span.end();
  }

  /**
   * Ends the span with status ERROR, `error.type` and `promptctx.error.code` (`code`, by
   * default the error's own), and for a budget failure the parts that did not fit. The
   * status message is the error's when it is a promptctx error or `code` is given (a
   * source's failure, as the manifest reports it); an unexpected fault is only
   * `internal error`, as on the CLI and over HTTP.
   */
  fail(err: unknown, code?: string): void {
    const known = code !== undefined || err instanceof PromptctxError;
    const type = code ?? errorCode(err);
    const attributes: Attributes = { "error.type": type, "promptctx.error.code": type };
    if (err instanceof PromptBudgetError) attributes["promptctx.error.names"] = [...err.names];
    this.span.setAttributes(attributes);
    const message = err instanceof Error ? err.message : String(err);
    this.span.setStatus({
      code: SpanStatusCode.ERROR,
      message: known ? message : "internal error",
    });
    this.span.end();
  }

  /** Runs `fn` in a child span `name`; `describe` adds attributes from its result. */
  within<T>(
    name: string,
    fn: (step: TraceStep) => T,
    describe?: (result: T, step: TraceStep) => Attributes,
    attributes?: Attributes,
  ): T {
    const step = this.child(name, attributes);
    let result: T;
    try {
      result = step.run(() => fn(step));
    } catch (err) {
      step.fail(err);
      throw err;
    }
    step.end(describe && (() => describe(result, step)));
    return result;
  }

  /** {@link TraceStep.within} for an async step: the span ends when `fn` settles. */
  async withinAsync<T>(
    name: string,
    fn: (step: TraceStep) => Promise<T>,
    describe?: (result: T, step: TraceStep) => Attributes,
    attributes?: Attributes,
  ): Promise<T> {
    const step = this.child(name, attributes);
    let result: T;
    try {
      result = await step.run(() => fn(step));
    } catch (err) {
      step.fail(err);
      throw err;
    }
    step.end(describe && (() => describe(result, step)));
    return result;
  }
}

/**
 * Starts the root span of an operation under the active context (so it nests inside the
 * application's own span, e.g. an HTTP request's).
 */
export function startTrace(
  name: string,
  options: TraceOptions | undefined,
  attributes: Attributes = {},
): TraceStep {
  const tracer = options?.tracer ?? trace.getTracer(TRACER_NAME, TRACER_VERSION);
  const parent = context.active();
  const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
  return new TraceStep(tracer, span, parent, options?.includeContent === true);
}

/** Runs `fn` inside `step`'s context when there is a step. */
export function inStep<T>(step: TraceStep | undefined, fn: () => T): T {
  return step === undefined ? fn() : step.run(fn);
}
