// The one percentile of the benchmarks: nearest rank (the smallest value with at least q of the samples at or below
// it), q in 0..1; NaN for no samples.
export function percentile(values: ArrayLike<number>, q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
