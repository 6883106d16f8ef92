/** Approvals of human_oversight policies: requested by a blocked decision, decided in the portal. */
export default `
CREATE TABLE approvals (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  agent_uuid TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'used')),
  subject TEXT NOT NULL,
  request TEXT NOT NULL,
  reason TEXT,
  created_at TEXT NOT NULL,
  decided_at TEXT,
  decided_by TEXT
);
CREATE INDEX approvals_tenant_status ON approvals (tenant_id, status, created_at);
`
