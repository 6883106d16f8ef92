/** LLM provider keys of a tenant (the assistant's and agents' providers), sealed under the master key. */
export default `
CREATE TABLE llm_providers (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  key_sealed TEXT NOT NULL,
  key_prefix TEXT NOT NULL,
  base_url TEXT,
  is_active INTEGER NOT NULL DEFAULT 1,
  enabled_for_assistant INTEGER NOT NULL DEFAULT 1,
  last_used_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (tenant_id, provider)
);
`
