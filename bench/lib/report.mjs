/** Plain aligned text output. */

/** Prints rows (arrays of cells) as a table; numeric-looking cells are right-aligned. */
export function table(rows, { indent = "  " } = {}) {
  const cells = rows.map((r) => r.map((c) => (c === null || c === undefined ? "" : String(c))));
  const widths = [];
  for (const r of cells) {
    r.forEach((c, i) => {
      widths[i] = Math.max(widths[i] ?? 0, c.length);
    });
  }
  const numeric = (c) => /^[-+]?[\d,.]+(\s?(ms|×|x|%))?$/.test(c);
  const lines = cells.map((r, ri) =>
    r
      .map((c, i) => {
        const last = i === r.length - 1;
        if (ri > 0 && numeric(c)) return c.padStart(widths[i]);
        return last ? c : c.padEnd(widths[i]);
      })
      .join("  ")
      .trimEnd(),
  );
  if (lines.length > 1) {
    lines.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
  }
  for (const l of lines) console.log(indent + l);
}

export function ms(x) {
  if (x >= 100) return `${x.toFixed(0)} ms`;
  if (x >= 10) return `${x.toFixed(1)} ms`;
  return `${x.toFixed(2)} ms`;
}

export function ratio(x) {
  return `${x >= 10 ? x.toFixed(1) : x.toFixed(2)}×`;
}

export function int(x) {
  return String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/** `PASS` / `FAIL` against a target. */
export function verdict(ok) {
  return ok ? "PASS" : "FAIL";
}

/** Every target judged in this run, in order (the driver prints them all at the end). */
const judged = [];

/**
 * Judges one target and records it: `figure` against `limit` (`op` "<=" or ">="), with
 * the baseline measured in the same run when the target has one (`baseline`: a label and
 * its figure, already formatted). Returns the row for {@link targetTable}.
 */
export function judge(section, { check, figure, shown, op, limit, shownLimit, baseline = "" }) {
  const ok = Number.isFinite(figure) && (op === "<=" ? figure <= limit : figure >= limit);
  judged.push({ section, check, figure, op, limit, baseline, pass: ok });
  return [check, shown, baseline, `${op} ${shownLimit ?? limit}`, verdict(ok)];
}

/**
 * A row shown beside judged targets but not judged: a figure that is not one of the
 * targets (another setup), with how it compares to the limit (`meets` / `misses`).
 */
export function reference({ check, figure, shown, op, limit, shownLimit, baseline = "" }) {
  const ok = Number.isFinite(figure) && (op === "<=" ? figure <= limit : figure >= limit);
  return [check, shown, baseline, `${op} ${shownLimit ?? limit}`, ok ? "(meets)" : "(misses)"];
}

/** Prints judged rows (see {@link judge}) under one header. */
export function targetTable(rows) {
  table([["target", "figure", "baseline (same run)", "limit", "result"], ...rows]);
}

/** The targets judged so far. */
export function judgedTargets() {
  return judged.map((t) => ({ ...t }));
}

export function heading(text) {
  console.log("");
  console.log(text);
  console.log("=".repeat(text.length));
}

/**
 * The seeds a seeded section runs: `--seed 1,2,3` (`ctx.seeds`), else the environment
 * variable `envName` (comma-separated), else `fallback`.
 */
export function seedsOf(ctx, envName, fallback) {
  if (ctx?.seeds) return ctx.seeds;
  const env = process.env[envName];
  if (env === undefined || env === "") return fallback;
  const seeds = env.split(",").map(Number);
  if (!seeds.every((x) => Number.isInteger(x) && x >= 0)) {
    throw new Error(`${envName} needs non-negative integers, comma-separated`);
  }
  return seeds;
}

/** Judges counts that must be 0 (`[label, count]` pairs), checks named `${tag} ${label}`. */
export function judgeNone(section, tag, counts) {
  return counts.map(([label, figure]) =>
    judge(section, { check: `${tag} ${label}`, figure, shown: String(figure), op: "<=", limit: 0 }),
  );
}
