/**
 * The management API's schema (interface.md section 4.5, object types of section 2), in one SDL
 * document: scalars and enums first, then object and input types, then the operations that use them.
 * Enum values are the upper-case forms of the stored values; a test checks they stay in step with the
 * constants the store and the policy engine use.
 */
export const SCHEMA = /* GraphQL */ `
"""An ISO 8601 date and time, in UTC."""
scalar DateTime

"""A JSON value written as a string (a policy's type-specific config)."""
scalar JSONString

"""Lifecycle of an agent endpoint."""
enum AgentStatus {
  "Registered, not yet heard from."
  PROVISIONING
  "Serving requests."
  ACTIVE
  "Refused by the API until activated again."
  SUSPENDED
  "Not seen for a long time."
  OFFLINE
  "Deregistered or deleted; its key no longer works."
  TERMINATED
}

"""Health of an agent endpoint, from its heartbeats."""
enum HealthStatus {
  HEALTHY
  DEGRADED
  UNHEALTHY
  "No heartbeat yet."
  UNKNOWN
}

"""The kinds of policy the engine knows."""
enum PolicyTypeEnum {
  RATE_LIMIT
  TOOL_PERMISSION
  MODEL_RESTRICTION
  CONTENT_FILTER
  BUDGET_LIMIT
  NETWORK_POLICY
  HUMAN_OVERSIGHT
  CUSTOM
}

"""What a policy applies to."""
enum ScopeType {
  "The whole tenant."
  ORG
  "The agents whose team (metadata.team) is scopeId."
  TEAM
  "The agents of deployment scopeId."
  DEPLOYMENT
  "One agent endpoint (its agentId)."
  ENDPOINT
  "Requests of one user_id."
  USER
}

"""What a failing policy does."""
enum Enforcement {
  "The action is blocked."
  ENFORCE
  "The failure is reported in warnings; the action goes ahead."
  AUDIT
  "The policy is not evaluated."
  DISABLED
}

"""An agent registered with the control plane (section 2.1)."""
type AgentEndpointType {
  "The endpoint's UUID."
  id: ID!
  "Slug identifier, unique within the tenant."
  agentId: String!
  "The first characters of its API key; the key itself is never shown again."
  apiKeyPrefix: String!
  "The tenant it belongs to."
  tenantId: String!
  "Where it stands."
  status: AgentStatus!
  "Health from its heartbeats."
  health: HealthStatus!
  "What it can do (tool names, 'chat', ...); decides which policies apply."
  capabilities: [String!]!
  "When its last heartbeat arrived; null before the first."
  lastHeartbeat: DateTime
  "When it was created."
  createdAt: DateTime!
}

"""A governance policy (section 2.2)."""
type PolicyType {
  "The policy's UUID."
  id: ID!
  "Unique within the tenant."
  name: String!
  "The kind of policy."
  policyType: PolicyTypeEnum!
  "What it applies to."
  scopeType: ScopeType!
  "The team, deployment, agent or user the scope names (the tenant id for ORG)."
  scopeId: String!
  "Type-specific config, as JSON."
  config: JSONString!
  "What a failure does (default ENFORCE)."
  enforcement: Enforcement!
  "Evaluation order: higher first, then by name."
  priority: Int!
  "Whether it is evaluated."
  isActive: Boolean!
  "Bumped on every change."
  version: Int!
  "The tenant it belongs to."
  tenantId: String!
  "When it was created."
  createdAt: DateTime!
  "When it last changed."
  updatedAt: DateTime!
}

"""Which REST contract an agent endpoint speaks (decides the form of its key)."""
enum AgentContract {
  "Versioned API, key sk_agent_..."
  V1
  "Legacy API, key zk_live_..."
  LEGACY
}

"""What a secret is granted to."""
enum SecretScopeType {
  "Every agent of the tenant."
  TENANT
  "The agents of one deployment."
  DEPLOYMENT
  "One agent (by its agentId)."
  AGENT
}

"""A new agent endpoint and its API key, shown this once."""
type CreatedAgentEndpoint {
  "The new endpoint."
  agentEndpoint: AgentEndpointType!
  "The full key: store it now; only its prefix is kept."
  apiKey: String!
}

"""A secret handed to agents by GET /secrets; its value is never shown here."""
type SecretType {
  "Stable id of the secret (made of its scope and name)."
  id: ID!
  "The key agents see it under."
  name: String!
  "Who gets it."
  scopeType: SecretScopeType!
  "The deployment id or agentId of the scope; empty for TENANT."
  scopeId: String!
  "When its value last changed."
  updatedAt: DateTime!
}

"""Something an agent reported or the platform recorded (section 2.3)."""
type EventType {
  "The event's UUID."
  id: ID!
  "The agent endpoint it came from."
  agentEndpoint: AgentEndpointType!
  "Free-form type, e.g. tool.invoked, policy.blocked."
  eventType: String!
  "The event's data, as JSON."
  payload: JSONString!
  "When it happened (as the agent said)."
  timestamp: DateTime!
}

"""An event and its cursor."""
type EventEdge {
  "Pass as after to get the items that follow this one."
  cursor: String!
  "The item."
  node: EventType!
}

"""A page of events, newest first."""
type EventConnection {
  "The items of this page, each with its cursor."
  edges: [EventEdge!]!
  "Whether more follow, and the cursor to get them."
  pageInfo: PageInfo!
  "How many match the filter, over all pages."
  totalCount: Int!
}

"""Which events to list; every field given must match."""
input EventFilter {
  "The agentId of an agent endpoint."
  agentId: String
  "Only events of this type."
  eventType: String
  "telemetry, audit or alert."
  category: String
  "Events at or after this time."
  from: DateTime
  "Events before this time."
  to: DateTime
}

"""A tenant API key (legacy registration); the key itself is never shown after creation."""
type TenantApiKeyType {
  "Stable id of the key (not the key, not its hash)."
  id: ID!
  "The first characters of the key."
  keyPrefix: String!
  "When it was created."
  createdAt: DateTime!
}

"""A new tenant API key, shown this once."""
type CreatedTenantApiKey {
  "The new key's record."
  tenantApiKey: TenantApiKeyType!
  "The full key (tk_live_...): store it now; only a hash is kept."
  apiKey: String!
}

"""A recorded decision of the legacy /evaluate (the interaction log behind evaluation_id)."""
type EvaluationType {
  "The eval_ id the agent was given."
  id: ID!
  "The agent that asked."
  agentEndpoint: AgentEndpointType!
  "Whether the action was allowed."
  allowed: Boolean!
  "Why it was blocked; null when allowed."
  reason: String
  "The request the agent sent, as JSON."
  request: JSONString!
  "The decision with every policy's result, as JSON."
  decision: JSONString!
  "When it was decided."
  createdAt: DateTime!
}

"""An evaluation and its cursor."""
type EvaluationEdge {
  "Pass as after to get the items that follow this one."
  cursor: String!
  "The item."
  node: EvaluationType!
}

"""A page of evaluations, newest first."""
type EvaluationConnection {
  "The items of this page, each with its cursor."
  edges: [EvaluationEdge!]!
  "Whether more follow, and the cursor to get them."
  pageInfo: PageInfo!
  "How many match the filter, over all pages."
  totalCount: Int!
}

"""Which evaluations to list; every field given must match."""
input EvaluationFilter {
  "The agentId of an agent endpoint."
  agentId: String
  "Only allowed (true) or blocked (false) decisions."
  allowed: Boolean
  "Evaluations at or after this time."
  from: DateTime
  "Evaluations before this time."
  to: DateTime
}

"""A policy as it applies to one agent, with the JSON-logic it compiles to."""
type EffectivePolicyType {
  "The policy as stored."
  policy: PolicyType!
  "The compiled rule: falsy means pass, a message means fail."
  logic: JSONString!
  "Set when the policy cannot be compiled (it then always fails)."
  error: String
}

"""Where an approval stands."""
enum ApprovalStatus {
  "Waiting for an admin."
  PENDING
  "Approved: the agent's next request with this approval_id is allowed, once."
  APPROVED
  "Rejected by an admin: it allows nothing."
  REJECTED
  "Approved and used by the decision it allowed."
  USED
}

"""A human_oversight approval, requested when a decision was blocked for the lack of one."""
type ApprovalType {
  "apr_...: the agent sends it back as context.approval_id."
  id: ID!
  "The agent whose request was blocked."
  agentEndpoint: AgentEndpointType!
  "Where it stands."
  status: ApprovalStatus!
  "What needs approval: tool <name> or action <name>."
  subject: String!
  "The request that was blocked, as JSON."
  request: JSONString!
  "The policy's message."
  reason: String
  "When it was created."
  createdAt: DateTime!
  "When it was decided; null while pending."
  decidedAt: DateTime
  "The sub of the admin who decided."
  decidedBy: String
}

"""How many items have one value."""
type CountByValue {
  "The value counted (upper case)."
  value: String!
  "How many."
  count: Int!
}

"""A count over one hour."""
type HourlyCount {
  "The start of the hour (UTC)."
  hour: DateTime!
  "How many in that hour."
  count: Int!
}

"""The tenant at a glance, for the portal's dashboard."""
type OverviewType {
  "Agent endpoints per status (every status, zeros included)."
  agentsByStatus: [CountByValue!]!
  "Agent endpoints per health (every value, zeros included); terminated endpoints are left out."
  agentsByHealth: [CountByValue!]!
  "Events received in each of the last 24 hours, oldest first (the current hour last)."
  eventsPerHour: [HourlyCount!]!
  "Blocked decisions in each of the last 24 hours, oldest first."
  blockedPerHour: [HourlyCount!]!
}

"""Where a page of a list stops."""
type PageInfo {
  "Whether more items follow this page."
  hasNextPage: Boolean!
  "The cursor of the page's last item: pass it as after to get the next page."
  endCursor: String
}

"""An agent endpoint and its cursor."""
type AgentEndpointEdge {
  "Pass as after to get the items that follow this one."
  cursor: String!
  "The item."
  node: AgentEndpointType!
}

"""A page of agent endpoints."""
type AgentEndpointConnection {
  "The items of this page, each with its cursor."
  edges: [AgentEndpointEdge!]!
  "Whether more follow, and the cursor to get them."
  pageInfo: PageInfo!
  "How many match the filter, over all pages."
  totalCount: Int!
}

"""A policy and its cursor."""
type PolicyEdge {
  "Pass as after to get the items that follow this one."
  cursor: String!
  "The item."
  node: PolicyType!
}

"""A page of policies."""
type PolicyConnection {
  "The items of this page, each with its cursor."
  edges: [PolicyEdge!]!
  "Whether more follow, and the cursor to get them."
  pageInfo: PageInfo!
  "How many match the filter, over all pages."
  totalCount: Int!
}

"""Which agent endpoints to list; every field given must match."""
input AgentEndpointFilter {
  "Only endpoints in this status."
  status: AgentStatus
  "Only endpoints in this health."
  health: HealthStatus
  "The agent framework (agent_type at registration), e.g. langchain."
  agentType: String
  "Part of the agentId or name, any case."
  search: String
}

"""Which policies to list; every field given must match."""
input PolicyFilter {
  "Only policies of this type."
  policyType: PolicyTypeEnum
  "Only policies of this scope type."
  scopeType: ScopeType
  "Only policies of this scope id."
  scopeId: String
  "Only active (true) or inactive (false) policies."
  isActive: Boolean
  "Part of the name, any case."
  search: String
}

"""A new agent endpoint. agentId is generated from name when left out; contract defaults to V1."""
input CreateAgentEndpointInput {
  "Slug identifier, unique within the tenant; generated from name when left out."
  agentId: String
  "A display name."
  name: String
  "The agent framework, e.g. custom, langchain, claude_code."
  agentType: String!
  "What it can do (tool names, chat, ...); decides which policies apply."
  capabilities: [String!]
  "A JSON object."
  metadata: JSONString
  "The deployment it runs in (DEPLOYMENT-scoped policies and secrets)."
  deploymentId: String
  "V1 (default) or LEGACY."
  contract: AgentContract
}

"""Changes to an agent endpoint: fields left out keep their values; deploymentId null clears it."""
input UpdateAgentEndpointInput {
  "A display name."
  name: String
  "What it can do (tool names, chat, ...); decides which policies apply."
  capabilities: [String!]
  "A JSON object."
  metadata: JSONString
  "The deployment it runs in (DEPLOYMENT-scoped policies and secrets)."
  deploymentId: String
}

"""A new secret; scopeId is required for DEPLOYMENT and AGENT."""
input CreateSecretInput {
  "Letters, digits, _ . - (1 to 200): the key agents see it under."
  name: String!
  "Who gets it."
  scopeType: SecretScopeType!
  "The deployment id or agentId of the scope; ignored for TENANT."
  scopeId: String
  "Stored encrypted (AES-256-GCM under the master key); never shown again."
  value: String!
}

"""A secret's new value."""
input UpdateSecretInput {
  "The new value; stored encrypted, never shown again."
  value: String!
}

"""A new policy. Omitted: enforcement ENFORCE, priority 0, isActive true, scopeId the tenant (ORG)."""
input CreatePolicyInput {
  "Unique within the tenant."
  name: String!
  "The kind of policy."
  policyType: PolicyTypeEnum!
  "What it applies to."
  scopeType: ScopeType!
  "The team, deployment, agent or user of the scope (the tenant id for ORG)."
  scopeId: String
  "Type-specific config, as a JSON object."
  config: JSONString!
  "What a failure does (default ENFORCE)."
  enforcement: Enforcement
  "Evaluation order: higher first, then by name (default 0)."
  priority: Int
  "Whether it is evaluated."
  isActive: Boolean
}

"""Changes to a policy: fields left out keep their values."""
input UpdatePolicyInput {
  "A new name, unique within the tenant."
  name: String
  "The kind of policy."
  policyType: PolicyTypeEnum
  "What it applies to."
  scopeType: ScopeType
  "The team, deployment, agent or user of the scope (the tenant id for ORG)."
  scopeId: String
  "Type-specific config, as a JSON object."
  config: JSONString
  "What a failure does (default ENFORCE)."
  enforcement: Enforcement
  "Evaluation order: higher first, then by name (default 0)."
  priority: Int
  "Whether it is evaluated."
  isActive: Boolean
}

"""What the portal reads; everything is scoped to the caller's tenant."""
type Query {
  "The tenant's agent endpoints, newest first. first: 1 to 200 (default 50)."
  agentEndpoints(filter: AgentEndpointFilter, first: Int, after: String): AgentEndpointConnection!
  "One agent endpoint by its UUID; null when the tenant has none with that id."
  agentEndpoint(id: ID!): AgentEndpointType
  "The tenant's policies, by name. first: 1 to 200 (default 50)."
  policies(filter: PolicyFilter, first: Int, after: String): PolicyConnection!
  "One policy by its UUID; null when the tenant has none with that id."
  policy(id: ID!): PolicyType
  "The tenant's secrets (names and scopes, never values)."
  secrets: [SecretType!]!
  "The tenant's events, newest first. first: 1 to 200 (default 50)."
  events(filter: EventFilter, first: Int, after: String): EventConnection!
  "Recorded legacy decisions, newest first. first: 1 to 200 (default 50)."
  evaluations(filter: EvaluationFilter, first: Int, after: String): EvaluationConnection!
  "The policies that apply to an agent (by agentId), in evaluation order, each with its compiled JSON-logic."
  effectivePolicies(agentId: String!): [EffectivePolicyType!]!
  "The tenant's API keys (prefixes only)."
  tenantApiKeys: [TenantApiKeyType!]!
  "Agents by status and health, events and blocked decisions per hour over the last 24 hours."
  overview: OverviewType!
  "Approvals of human_oversight policies, newest first; only those of one status when given."
  approvals(status: ApprovalStatus): [ApprovalType!]!
}

"""What the portal changes (the admin role); everything is scoped to the caller's tenant."""
type Mutation {
  "Creates a policy (admin). The config is checked as the engine will read it."
  createPolicy(input: CreatePolicyInput!): PolicyType!
  "Changes a policy (admin); its version goes up when anything changed."
  updatePolicy(id: ID!, input: UpdatePolicyInput!): PolicyType!
  "Deletes a policy (admin); true when it existed."
  deletePolicy(id: ID!): Boolean!
  "Turns a policy on or off (admin)."
  setPolicyActive(id: ID!, isActive: Boolean!): PolicyType!
  "Suspends an agent endpoint (admin): its key is refused until it is activated."
  suspendAgentEndpoint(id: ID!): AgentEndpointType!
  "Activates a suspended agent endpoint (admin)."
  activateAgentEndpoint(id: ID!): AgentEndpointType!
  "Registers an agent endpoint (admin); the API key is in the answer only."
  createAgentEndpoint(input: CreateAgentEndpointInput!): CreatedAgentEndpoint!
  "Changes an agent endpoint's name, capabilities, metadata or deployment (admin)."
  updateAgentEndpoint(id: ID!, input: UpdateAgentEndpointInput!): AgentEndpointType!
  "Terminates an agent endpoint (admin): its key stops working; its events stay. True when it was not terminated yet."
  deleteAgentEndpoint(id: ID!): Boolean!
  "Gives an agent endpoint a new API key (admin); the old key stops working at once."
  rotateAgentApiKey(id: ID!): CreatedAgentEndpoint!
  "Stores a secret (admin); CONFLICT when the scope already has one of that name."
  createSecret(input: CreateSecretInput!): SecretType!
  "Replaces a secret's value (admin)."
  updateSecret(id: ID!, input: UpdateSecretInput!): SecretType!
  "Deletes a secret (admin); true when it existed."
  deleteSecret(id: ID!): Boolean!
  "Creates a tenant API key (admin); the key is in the answer only."
  createTenantApiKey: CreatedTenantApiKey!
  "Revokes a tenant API key (admin): it stops working at once. True when it existed."
  revokeTenantApiKey(id: ID!): Boolean!
  "Approves (approve: true) or rejects a pending approval (admin); CONFLICT when it is decided already."
  decideApproval(id: ID!, approve: Boolean!): ApprovalType!
}

"""Live updates over a WebSocket (graphql-transport-ws; the token in connection_init as authorization)."""
type Subscription {
  "Each event as it is stored, for the portal's live feed; only those of agentId when given."
  eventAdded(agentId: String): EventType!
}
`
