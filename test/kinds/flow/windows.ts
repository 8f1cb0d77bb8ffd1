/**
 * The windows of `perMs` holding more than `count` grant times (each as the
 * times of its grants): for sorted times t, grants i and i + count in one
 * window means t[i + count] - t[i] < perMs. Empty when the rate held.
 */
export function overRate(times: number[], rate: { count: number; perMs: number }): number[][] {
  const t = [...times].sort((a, b) => a - b);
  const over: number[][] = [];
  for (let i = 0; i + rate.count < t.length; i++) {
    if (t[i + rate.count] - t[i] < rate.perMs) over.push(t.slice(i, i + rate.count + 1));
  }
  return over;
}
