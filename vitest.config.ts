import { defineConfig } from "vitest/config";

// Where the tests live: a package's, service's or tool's own test/ folder, and the end-to-end scenarios.
const TEST_DIRS = "{packages,services,standalone,test,eval,deploy,scripts}/**/test/**";

/**
 * Three tiers, named by what a file starts (`npm run test:unit`, `test:integration`, `test:e2e`;
 * `vitest run`, as `make test` calls it, runs all three):
 * - unit, `*.test.ts`: no database, queue, socket or child process; seconds, with nothing running;
 * - integration, `*.int.test.ts`: real PostgreSQL, PGlite, Redis, gRPC or HTTP servers, child processes;
 * - e2e: the scenarios under test/e2e (whole deployments as processes) and the browser tests.
 */
export default defineConfig({
  test: {
    exclude: ["**/node_modules/**", "**/dist/**"],
    // Every file that touches PostgreSQL or Redis creates its own database and key prefix,
    // so files can run side by side. Three workers on two cores: many files spend much of their
    // time waiting (on PostgreSQL, child processes, a stopped Redis, a restart), and with two
    // workers a core stood idle for a quarter of the run.
    pool: "forks",
    maxWorkers: 3,
    // A worker keeps its loaded modules from one file to the next. Isolated, every file loaded the
    // services afresh (~1-3 s each, 159 s of the run's work for 156 files); shared, 38 s, and vitest
    // took 227 s instead of 297 s back to back. Safe here because no test mocks a module, replaces a
    // global without putting it back or sets the environment, and no module keeps what a test
    // registers globally (tracers are looked up at each use): each test builds its own servers,
    // database and key prefix (CONTRIBUTING.md says so for new ones; ADR-0046). Vitest reuses a
    // worker only for files of the same project, so the unit tier's guard never reaches an
    // integration file.
    isolate: false,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [`${TEST_DIRS}/*.test.ts`],
          exclude: ["**/node_modules/**", "**/dist/**", "**/*.int.test.ts", "**/*.browser.test.ts", "test/e2e/**"],
          // Fails a unit test that opens a socket or starts a process (test/support/unit-tier-guard.ts).
          setupFiles: ["test/support/unit-tier-guard.ts"],
        },
      },
      { extends: true, test: { name: "integration", include: [`${TEST_DIRS}/*.int.test.ts`], exclude: ["**/node_modules/**", "**/dist/**", "test/e2e/**"] } },
      {
        extends: true,
        test: { name: "e2e", include: ["test/e2e/**/*.test.ts", `${TEST_DIRS}/*.browser.test.ts`], exclude: ["**/node_modules/**", "**/dist/**"] },
      },
    ],
  },
});
