/**
 * Which store a target names, without loading a store: a module of its own so that the
 * callers that only ask (the CLI's `assemble` without a store) do not load the store's code.
 */

/**
 * True for a `postgres://` or `postgresql://` URL.
 *
 * @example isPostgresUrl("postgres://app@db/promptctx") // true
 */
export function isPostgresUrl(target: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(target);
}
