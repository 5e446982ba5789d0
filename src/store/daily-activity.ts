import type { DailyActivity } from "./ports/console.js";

/** One count of one UTC day (the Unix day number), as a GROUP BY answers it. */
export interface DayCount {
  day: number;
  n: number;
}

/** The three counts by day, as one row per day that has any, oldest first. */
export function mergeDays(orders: DayCount[], renewals: DayCount[], failures: DayCount[]): DailyActivity[] {
  const days = new Map<number, DailyActivity>();
  const at = (day: number) => days.get(day) ?? days.set(day, { day, orders: 0, renewals: 0, failures: 0 }).get(day)!;
  for (const r of orders) at(Number(r.day)).orders = Number(r.n);
  for (const r of renewals) at(Number(r.day)).renewals = Number(r.n);
  for (const r of failures) at(Number(r.day)).failures = Number(r.n);
  return [...days.values()].sort((a, b) => a.day - b.day);
}
