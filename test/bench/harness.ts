/**
 * A small micro-benchmark harness: warm up, then time batches until the time budget is spent.
 * Results are printed as ratios against baselines measured in the same run, since absolute speeds
 * drift on shared machines.
 */

export interface Throughput {
  name: string
  opsPerSec: number
  samples: number
}

/** Calls `fn` in batches for about `ms` milliseconds (after a warm-up) and returns calls per second. */
export function throughput (name: string, fn: () => unknown, ms = 1500): Throughput {
  let sink: unknown
  const warmEnd = performance.now() + Math.min(300, ms / 4)
  while (performance.now() < warmEnd) for (let i = 0; i < 1000; i++) sink = fn()
  let calls = 0
  let batch = 1000
  const start = process.hrtime.bigint()
  const end = performance.now() + ms
  while (performance.now() < end) {
    for (let i = 0; i < batch; i++) sink = fn()
    calls += batch
    if (batch < 100_000) batch *= 2
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  keep(sink)
  return { name, opsPerSec: calls / seconds, samples: calls }
}

/** The median of a non-empty list. */
export function median (values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] as number : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

export interface Comparison {
  subject: number
  baseline: number
  /** Median of the per-round ratios subject / baseline. */
  ratio: number
  ratios: number[]
}

/**
 * Measures `subject` and `baseline` in alternating rounds (ABAB...), so that both see the same
 * machine load, and returns their median throughputs and the median of the per-round ratios.
 */
export function compare (subject: () => unknown, baseline: () => unknown, rounds = 6, ms = 400): Comparison {
  const a: number[] = []
  const b: number[] = []
  for (let r = 0; r < rounds; r++) {
    a.push(throughput('subject', subject, ms).opsPerSec)
    b.push(throughput('baseline', baseline, ms).opsPerSec)
  }
  const ratios = a.map((x, i) => x / (b[i] as number))
  return { subject: median(a), baseline: median(b), ratio: median(ratios), ratios }
}

export interface Percentiles {
  p50: number
  p90: number
  p99: number
  p999: number
  max: number
}

/** Times `n` single calls (nanoseconds each, timer overhead included) and returns percentiles in µs. */
export function latency (fn: () => unknown, n = 200_000): Percentiles {
  let sink: unknown
  for (let i = 0; i < 20_000; i++) sink = fn()
  const times = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint()
    sink = fn()
    times[i] = Number(process.hrtime.bigint() - t0)
  }
  keep(sink)
  times.sort()
  const at = (q: number): number => (times[Math.min(n - 1, Math.floor(q * n))] as number) / 1000
  return { p50: at(0.5), p90: at(0.9), p99: at(0.99), p999: at(0.999), max: at(1) }
}

/** Times one call of `fn` in milliseconds. */
export function once (fn: () => unknown): number {
  const t0 = process.hrtime.bigint()
  keep(fn())
  return Number(process.hrtime.bigint() - t0) / 1e6
}

let kept: unknown
/** Keeps a result alive so the optimiser cannot drop the work that made it. */
export function keep (value: unknown): void {
  kept = value
}
export function kept_ (): unknown {
  return kept
}

export function fmt (n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M`
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`
  return n.toFixed(1)
}

/** One verdict line: what, the figure, the target, and PASS or MISS. */
export function verdict (what: string, figure: string, target: string, ok: boolean): string {
  return `${ok ? 'PASS' : 'MISS'}  ${what}: ${figure} (target ${target})`
}
