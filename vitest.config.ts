import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["{packages,services,standalone,test,eval,deploy,scripts}/**/test/**/*.test.ts", "test/e2e/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    // Every file that touches PostgreSQL or Redis creates its own database and key prefix,
    // so files can run side by side; two workers match the two cores.
    pool: "forks",
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
  },
});
