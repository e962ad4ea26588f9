export {
  createPool,
  givenOrNewPool,
  ping,
  withClient,
  withOwnerTransaction,
  withRole,
  withTenant,
  type Pool,
  type PoolClient,
  type Queryable,
} from "./pool.js";
export { assertRoleRespectsRls } from "./role-guard.js";
export { withPreparedStatements } from "./prepared.js";
export { fromVectorBinary, toVectorLiteral, vectorParam, type VectorParam } from "./vector.js";
export { assertLocalDatabaseUrl } from "./local-guard.js";
export { contentHeadColumns } from "./content-head.js";
export { isTransientDatabaseError } from "./transient.js";
