/** Deep freezing of plain data, defined once for every stage that hands out shared values. */

/**
 * `value` and every object and array inside it, frozen in place; returns it. An object
 * already frozen is taken as frozen all the way down (everything this package freezes is
 * frozen by this function), so freezing shared data again costs nothing. Cycles are safe:
 * an object is frozen before its members are visited.
 *
 * @example deepFreeze({ tags: ["a"] }).tags.push("b") // throws TypeError
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}
