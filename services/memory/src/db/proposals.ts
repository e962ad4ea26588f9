import type { Queryable } from "@3ngram/db";
import type { MemoryType, NewEdgeProposal, NewFactProposal, ProposalStatus, ProposedEdgeType } from "@3ngram/schema";

export type ProposalKind = "edge" | "fact";

/** A consolidation proposal as the service reads it, with the topics of both ends. */
export interface EdgeProposalRow {
  id: string;
  fromId: string;
  toId: string;
  edgeType: ProposedEdgeType;
  memoryType: MemoryType;
  fromTopic: string;
  toTopic: string;
  similarity: number;
  rationale: string | null;
  status: ProposalStatus;
  decidedAt: Date | null;
  decisionRationale: string | null;
  createdAt: Date;
}

export interface FactProposalRow {
  id: string;
  memoryId: string;
  subject: string;
  predicate: string;
  value: string;
  confidence: number | null;
  extractor: string;
  rationale: string | null;
  status: ProposalStatus;
  decidedAt: Date | null;
  decisionRationale: string | null;
  factId: string | null;
  createdAt: Date;
}

const EDGE_SELECT = `
  p.id, p.from_id AS "fromId", p.to_id AS "toId", p.edge_type AS "edgeType", p.memory_type AS "memoryType",
  f.topic AS "fromTopic", t.topic AS "toTopic", p.similarity, p.rationale, p.status,
  p.decided_at AS "decidedAt", p.decision_rationale AS "decisionRationale", p.created_at AS "createdAt"`;
const EDGE_FROM = `consolidation_proposals p
  JOIN memories f ON f.tenant_id = p.tenant_id AND f.id = p.from_id
  JOIN memories t ON t.tenant_id = p.tenant_id AND t.id = p.to_id`;

const FACT_SELECT = `
  p.id, p.memory_id AS "memoryId", p.subject, p.predicate, p.value, p.confidence, p.extractor, p.rationale, p.status,
  p.decided_at AS "decidedAt", p.decision_rationale AS "decisionRationale", p.fact_id AS "factId", p.created_at AS "createdAt"`;

/**
 * Stores edge proposals whose two ends are both live and not yet linked by any edge; a pair that
 * was ever proposed (open or decided, either orientation) is skipped by the pair index. Every
 * stored proposal registers its id in the shared id space in the same statement. Returns the new ids.
 */
export async function insertEdgeProposals(db: Queryable, tenantId: string, proposals: ReadonlyArray<NewEdgeProposal & { id: string }>): Promise<string[]> {
  if (proposals.length === 0) return [];
  const { rows } = await db.query<{ id: string }>(
    `WITH input AS (
       SELECT * FROM unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::text[], $6::float8[], $7::text[])
         AS i (id, from_id, to_id, edge_type, similarity, rationale)
     ),
     eligible AS (
       SELECT i.*, f.memory_type
         FROM input i
         JOIN memories f ON f.tenant_id = $1 AND f.id = i.from_id AND f.status = 'active' AND f.valid_to IS NULL
         JOIN memories t ON t.tenant_id = $1 AND t.id = i.to_id AND t.status = 'active' AND t.valid_to IS NULL
        WHERE i.from_id <> i.to_id
          AND NOT EXISTS (
            SELECT 1 FROM memory_edges e
             WHERE e.tenant_id = $1
               AND ((e.from_id = i.from_id AND e.to_id = i.to_id) OR (e.from_id = i.to_id AND e.to_id = i.from_id)))
     ),
     stored AS (
       INSERT INTO consolidation_proposals (id, tenant_id, from_id, to_id, edge_type, memory_type, similarity, rationale)
       SELECT id, $1, from_id, to_id, edge_type, memory_type, similarity, rationale FROM eligible
       ON CONFLICT DO NOTHING
       RETURNING id
     ),
     registered AS (
       INSERT INTO proposal_ids (id, tenant_id, kind) SELECT id, $1, 'edge' FROM stored RETURNING id
     )
     SELECT id FROM registered`,
    [
      tenantId,
      proposals.map((p) => p.id),
      proposals.map((p) => p.fromId),
      proposals.map((p) => p.toId),
      proposals.map((p) => p.edgeType),
      proposals.map((p) => p.similarity),
      proposals.map((p) => p.rationale ?? null),
    ],
  );
  return rows.map((r) => r.id);
}

/**
 * Stores fact proposals for one memory. A claim (subject, predicate, value) already proposed for
 * this memory — open, applied or rejected — or already written as one of its facts is skipped,
 * and so is everything for an erased memory (its text may have been read before it was erased).
 */
export async function insertFactProposals(
  db: Queryable,
  tenantId: string,
  memoryId: string,
  extractor: string,
  facts: ReadonlyArray<NewFactProposal & { id: string }>,
): Promise<string[]> {
  if (facts.length === 0) return [];
  // A share lock: an erasure of this memory in flight commits first, and is then seen here.
  const { rows: state } = await db.query<{ erased: boolean }>(
    "SELECT erased_at IS NOT NULL AS erased FROM memories WHERE tenant_id = $1 AND id = $2 FOR SHARE",
    [tenantId, memoryId],
  );
  if (state[0]?.erased !== false) return [];
  const { rows } = await db.query<{ id: string }>(
    `WITH input AS (
       SELECT * FROM unnest($4::uuid[], $5::text[], $6::text[], $7::text[], $8::float8[], $9::text[])
         AS i (id, subject, predicate, value, confidence, rationale)
     ),
     eligible AS (
       SELECT i.* FROM input i
        WHERE NOT EXISTS (
          SELECT 1 FROM facts f
           WHERE f.tenant_id = $1 AND f.memory_id = $2 AND f.subject = i.subject AND f.predicate = i.predicate AND f.value = i.value)
     ),
     stored AS (
       INSERT INTO fact_proposals (id, tenant_id, memory_id, subject, predicate, value, confidence, extractor, rationale)
       SELECT id, $1, $2, subject, predicate, value, confidence, $3, rationale FROM eligible
       ON CONFLICT DO NOTHING
       RETURNING id
     ),
     registered AS (
       INSERT INTO proposal_ids (id, tenant_id, kind) SELECT id, $1, 'fact' FROM stored RETURNING id
     )
     SELECT id FROM registered`,
    [
      tenantId,
      memoryId,
      extractor,
      facts.map((f) => f.id),
      facts.map((f) => f.subject),
      facts.map((f) => f.predicate),
      facts.map((f) => f.value),
      facts.map((f) => f.confidence ?? null),
      facts.map((f) => f.rationale ?? null),
    ],
  );
  return rows.map((r) => r.id);
}

/** Edge proposals with this status, newest first. */
export async function selectEdgeProposals(db: Queryable, tenantId: string, status: ProposalStatus, limit: number): Promise<EdgeProposalRow[]> {
  const { rows } = await db.query<EdgeProposalRow>(
    `SELECT ${EDGE_SELECT} FROM ${EDGE_FROM}
      WHERE p.tenant_id = $1 AND p.status = $2
      ORDER BY p.created_at DESC, p.id DESC
      LIMIT $3`,
    [tenantId, status, limit],
  );
  return rows.map(numericSimilarity);
}

/** Fact proposals with this status, newest first. */
export async function selectFactProposals(db: Queryable, tenantId: string, status: ProposalStatus, limit: number): Promise<FactProposalRow[]> {
  const { rows } = await db.query<FactProposalRow>(
    `SELECT ${FACT_SELECT} FROM fact_proposals p
      WHERE p.tenant_id = $1 AND p.status = $2
      ORDER BY p.created_at DESC, p.id DESC
      LIMIT $3`,
    [tenantId, status, limit],
  );
  return rows;
}

/** Which kind of proposal an id names in this tenant, or null when it names none. */
export async function selectProposalKind(db: Queryable, tenantId: string, proposalId: string): Promise<ProposalKind | null> {
  const { rows } = await db.query<{ kind: ProposalKind }>("SELECT kind FROM proposal_ids WHERE tenant_id = $1 AND id = $2", [tenantId, proposalId]);
  return rows[0]?.kind ?? null;
}

/** One edge proposal, locked for the rest of the transaction when `lock` is set. */
export async function selectEdgeProposal(db: Queryable, tenantId: string, proposalId: string, options: { lock: boolean }): Promise<EdgeProposalRow | null> {
  const { rows } = await db.query<EdgeProposalRow>(
    `SELECT ${EDGE_SELECT} FROM ${EDGE_FROM} WHERE p.tenant_id = $1 AND p.id = $2${options.lock ? " FOR UPDATE OF p" : ""}`,
    [tenantId, proposalId],
  );
  return rows[0] ? numericSimilarity(rows[0]) : null;
}

/** One fact proposal, locked for the rest of the transaction when `lock` is set. */
export async function selectFactProposal(db: Queryable, tenantId: string, proposalId: string, options: { lock: boolean }): Promise<FactProposalRow | null> {
  const { rows } = await db.query<FactProposalRow>(
    `SELECT ${FACT_SELECT} FROM fact_proposals p WHERE p.tenant_id = $1 AND p.id = $2${options.lock ? " FOR UPDATE" : ""}`,
    [tenantId, proposalId],
  );
  return rows[0] ?? null;
}

export interface Decision {
  status: Exclude<ProposalStatus, "proposed">;
  decidedBy: string | null;
  rationale: string | null;
}

/** Records the decision on an open edge proposal. Returns false when it was no longer open. */
export async function decideEdgeProposal(db: Queryable, tenantId: string, proposalId: string, decision: Decision): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE consolidation_proposals SET status = $3, decided_at = now(), decided_by = $4, decision_rationale = $5
      WHERE tenant_id = $1 AND id = $2 AND status = 'proposed'`,
    [tenantId, proposalId, decision.status, decision.decidedBy, decision.rationale],
  );
  return rowCount === 1;
}

/** Records the decision on an open fact proposal (with the fact written when it was applied). */
export async function decideFactProposal(
  db: Queryable,
  tenantId: string,
  proposalId: string,
  decision: Decision & { factId: string | null },
): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE fact_proposals SET status = $3, decided_at = now(), decided_by = $4, decision_rationale = $5, fact_id = $6
      WHERE tenant_id = $1 AND id = $2 AND status = 'proposed'`,
    [tenantId, proposalId, decision.status, decision.decidedBy, decision.rationale, decision.factId],
  );
  return rowCount === 1;
}

/** Whether an edge of this type already links from → to. */
export async function edgeExists(db: Queryable, tenantId: string, fromId: string, toId: string, edgeType: string): Promise<boolean> {
  const { rows } = await db.query("SELECT 1 FROM memory_edges WHERE tenant_id = $1 AND from_id = $2 AND to_id = $3 AND edge_type = $4", [
    tenantId,
    fromId,
    toId,
    edgeType,
  ]);
  return rows.length > 0;
}

/** When a memory became true in the world: a fact read from it holds from then on. */
export async function selectValidFrom(db: Queryable, tenantId: string, memoryId: string): Promise<Date | null> {
  const { rows } = await db.query<{ validFrom: Date }>(`SELECT valid_from AS "validFrom" FROM memories WHERE tenant_id = $1 AND id = $2`, [tenantId, memoryId]);
  return rows[0]?.validFrom ?? null;
}

/** The open generation of subject + predicate, if any. */
export async function selectOpenFact(db: Queryable, tenantId: string, subject: string, predicate: string): Promise<{ id: string; value: string } | null> {
  const { rows } = await db.query<{ id: string; value: string }>(
    "SELECT id, value FROM facts WHERE tenant_id = $1 AND subject = $2 AND predicate = $3 AND valid_to IS NULL AND erased_at IS NULL",
    [tenantId, subject, predicate],
  );
  return rows[0] ?? null;
}

/** A real (float4) carries noise past its 7th digit: four decimals are what a reviewer reads. */
function numericSimilarity(row: EdgeProposalRow): EdgeProposalRow {
  return { ...row, similarity: Math.round(Number(row.similarity) * 10_000) / 10_000 };
}
