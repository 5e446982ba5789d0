/**
 * Reading the plans `store.explain(read)` returns, for the index tests: which steps read a table
 * that grows with the business (licences, jobs, events, history, mails) other than through an
 * index range, or sort such a read whole.
 *
 * - SQLite (EXPLAIN QUERY PLAN): `SCAN <table>` reads all of it (with or without an index);
 *   `SEARCH <table> USING ... (<bounds>)` reads a range; `USE TEMP B-TREE FOR ORDER BY` right
 *   after such a step sorts all of that step's rows before the first is returned.
 * - PostgreSQL (EXPLAIN, sequential scans priced out): `Seq Scan on <table>` is the only way the
 *   planner found; an `Index Scan` or `Index Only Scan` without an `Index Cond` reads the whole
 *   index; a `Sort` whose input reaches a table's scan with no `Limit` between sorts it whole.
 */

const GROWING = ["services", "jobs", "events", "history", "mails"];

export interface PlanProblems {
  /** Steps that read a growing table whole. */
  scans: string[];
  /** Steps that sort a read of a growing table whole. */
  sorts: string[];
}

export function sqlitePlanProblems(lines: string[]): PlanProblems {
  const scans: string[] = [];
  const sorts: string[] = [];
  let previous = "";
  for (const line of lines) {
    const scan = /^SCAN (\S+)/.exec(line);
    // SQLite names a table by its alias when it has one; aliases here (j, p, s) are of growing tables too.
    if (scan && !/^\(subquery-\d+\)$|^CONSTANT$|_counts$/.test(scan[1]!)) scans.push(line);
    if (/^USE TEMP B-TREE FOR ORDER BY/.test(line) && /^(SCAN|SEARCH) (?!\(subquery)/.test(previous)) sorts.push(`${previous} / ${line}`);
    previous = line;
  }
  return { scans, sorts };
}

interface Node {
  line: string;
  indent: number;
  details: string[];
  parent: Node | undefined;
}

/** EXPLAIN's text as a tree: a node per `->` line (and the first line), its detail lines under it. */
function pgTree(lines: string[]): Node[] {
  const nodes: Node[] = [];
  const stack: Node[] = [];
  for (const raw of lines) {
    const arrow = raw.indexOf("->");
    const isNode = nodes.length === 0 || arrow >= 0;
    if (!isNode) {
      nodes.at(-1)!.details.push(raw.trim());
      continue;
    }
    const indent = arrow >= 0 ? arrow : 0;
    while (stack.length && stack.at(-1)!.indent >= indent) stack.pop();
    const node: Node = { line: raw.trim().replace(/^->\s*/, ""), indent, details: [], parent: stack.at(-1) };
    nodes.push(node);
    stack.push(node);
  }
  return nodes;
}

export function pgPlanProblems(lines: string[]): PlanProblems {
  const scans: string[] = [];
  const sorts: string[] = [];
  const growing = (line: string) => {
    const on = / on (\w+)/.exec(line);
    return on !== null && GROWING.includes(on[1]!);
  };
  for (const node of pgTree(lines)) {
    if (!/Scan/.test(node.line) || !growing(node.line)) continue;
    if (/^Seq Scan/.test(node.line)) scans.push(node.line);
    if (/^Index (Only )?Scan/.test(node.line) && !node.details.some((d) => d.startsWith("Index Cond:"))) scans.push(node.line);
    // A sort above this scan, with no Limit between them, takes all of the scan's rows first.
    for (let up = node.parent; up; up = up.parent) {
      if (/^Limit/.test(up.line)) break;
      if (/^(Sort|Incremental Sort)/.test(up.line)) {
        sorts.push(`${up.line} / ${node.line}`);
        break;
      }
    }
  }
  return { scans, sorts };
}

export function planProblems(dialect: "sqlite" | "postgres", lines: string[]): PlanProblems {
  return dialect === "sqlite" ? sqlitePlanProblems(lines) : pgPlanProblems(lines);
}
