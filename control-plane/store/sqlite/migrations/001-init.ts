/** Migration 1: the initial schema. */
export default `
CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO meta (key, value) VALUES ('config_seq', 0);

CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE tenant_keys (
  key_hash TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  prefix TEXT NOT NULL,
  created_at TEXT NOT NULL
);

CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  agent_id TEXT NOT NULL,
  name TEXT NOT NULL,
  agent_type TEXT NOT NULL,
  capabilities TEXT NOT NULL,
  metadata TEXT NOT NULL,
  deployment_id TEXT,
  key_hash TEXT NOT NULL UNIQUE,
  key_prefix TEXT NOT NULL,
  contract TEXT NOT NULL,
  status TEXT NOT NULL,
  health TEXT NOT NULL,
  last_heartbeat TEXT,
  last_report TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (tenant_id, agent_id)
);

CREATE TABLE policies (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  scope_type TEXT NOT NULL,
  scope_id TEXT NOT NULL,
  config TEXT NOT NULL,
  enforcement TEXT NOT NULL,
  priority INTEGER NOT NULL,
  is_active INTEGER NOT NULL,
  version INTEGER NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (tenant_id, name)
);

CREATE TABLE secrets (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  scope_type TEXT NOT NULL,
  scope_id TEXT NOT NULL,
  name TEXT NOT NULL,
  value_sealed TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, scope_type, scope_id, name)
);

CREATE TABLE events (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  agent_uuid TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  event_type TEXT NOT NULL,
  category TEXT NOT NULL,
  timestamp TEXT NOT NULL,
  user_id TEXT,
  payload TEXT NOT NULL,
  evaluation_id TEXT,
  batch_id TEXT NOT NULL,
  client_event_id TEXT,
  cost_usd REAL,
  received_at TEXT NOT NULL
);
CREATE INDEX events_tenant_time ON events (tenant_id, received_at);
CREATE INDEX events_agent_time ON events (agent_uuid, received_at);
CREATE UNIQUE INDEX events_client_id ON events (agent_uuid, client_event_id) WHERE client_event_id IS NOT NULL;
CREATE INDEX events_cost ON events (tenant_id, timestamp) WHERE cost_usd IS NOT NULL;

CREATE TABLE evaluations (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL,
  agent_uuid TEXT NOT NULL,
  allowed INTEGER NOT NULL,
  reason TEXT,
  request TEXT NOT NULL,
  decision TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX evaluations_tenant_time ON evaluations (tenant_id, created_at);
`
