#!/usr/bin/env node
// The agentgov command: a thin shim into the compiled build (dist/), where every subcommand lives.
import { main } from '../dist/shared/cli/main.js'

main(process.argv.slice(2)).then(
  (code) => { if (typeof code === 'number') process.exitCode = code },
  (err) => {
    process.stderr.write(`agentgov: ${err && err.message ? err.message : String(err)}\n`)
    process.exitCode = 1
  }
)
