/** The SQLite migrations, in order; migration N is applied once, when user_version < N. */
import m001 from './001-init.js'
import m002 from './002-approvals.js'
import m003 from './003-llm-providers.js'

export const MIGRATIONS: readonly string[] = [m001, m002, m003]
