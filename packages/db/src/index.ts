export {
  createPool,
  ping,
  quoteIdentifier,
  withClient,
  withOwnerTransaction,
  withRole,
  withTenant,
  type Pool,
  type PoolClient,
  type PoolOptions,
  type Queryable,
  type TenantScope,
} from "./pool.js";
export { assertRoleRespectsRls } from "./role-guard.js";
export { withPreparedStatements } from "./prepared.js";
export { parseTimestamptz } from "./timestamp.js";
export { fromVectorBinary, toVectorBinary, toVectorLiteral, vectorParam, type VectorParam } from "./vector.js";
export { assertLocalDatabaseUrl } from "./local-guard.js";
export { asUnavailable, databaseUnavailable, isTransientDatabaseError } from "./transient.js";
