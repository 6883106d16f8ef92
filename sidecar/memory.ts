/**
 * V8 settings of the `agentgov sidecar` process, for its memory goal (under 100 MB resident beside
 * each agent). Set at start, before the first upstream call and before the young generation grows;
 * both are read by V8 when it needs them, so setting them at run time takes effect.
 *
 * - `--liftoff-only`: undici parses HTTP with llhttp compiled to WebAssembly. A few hundred
 *   milliseconds after the first upstream call, V8's optimising compiler rebuilt that module in the
 *   background: 35 MB at the peak, 9 MB for good (measured: peak 131 MB, then 96 MB, at start). The
 *   baseline (Liftoff) code it runs instead is plenty for the sidecar's few upstream calls (configs,
 *   event batches, heartbeats); the decision path does not use it.
 * - `--semi-space-growth-factor=1`: the young generation keeps its initial size (1 MB semi-spaces)
 *   instead of doubling up to 16 MB under load, which took RSS from 96 MB to 120 MB. The sidecar's
 *   requests leave little alive, so the more frequent scavenges stay short (measured: 2-4% of
 *   throughput at 40,000 decisions/s).
 */
import { setFlagsFromString } from 'node:v8'

export const SIDECAR_V8_FLAGS = ['--liftoff-only', '--semi-space-growth-factor=1'] as const

/** The flag's name: `--semi-space-growth-factor=1` -> `semi-space-growth-factor` (V8 takes `_` for `-` too). */
const nameOf = (flag: string): string => flag.replace(/^--?(no-)?/, '').split('=')[0]?.replace(/_/g, '-') ?? ''

/**
 * The flags to set: SIDECAR_V8_FLAGS but those an operator set already, on node's command line or in
 * NODE_OPTIONS (set at run time, ours would override theirs).
 */
export function sidecarV8Flags (execArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const given = new Set([...execArgv, ...(nodeOptions ?? '').split(/\s+/)].filter((a) => a.startsWith('-')).map(nameOf))
  return SIDECAR_V8_FLAGS.filter((flag) => !given.has(nameOf(flag)))
}

export function limitSidecarMemory (): void {
  for (const flag of sidecarV8Flags(process.execArgv, process.env.NODE_OPTIONS)) setFlagsFromString(flag)
}
