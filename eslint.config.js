// Lint rules for the whole monorepo (`npm run lint`, part of `make test`).
// Beyond the recommended sets, three rules encode the architecture:
//  - no import cycles inside a package (import-x/no-cycle);
//  - services never import one another: they talk gRPC through proto/ and packages/rpc;
//  - SQL lives only in db/ modules (packages/db and each service's src/db), so every query sits
//    beside the others that touch the same tables and the roles that may run them.
import js from "@eslint/js";
import tseslint from "typescript-eslint";
import { importX } from "eslint-plugin-import-x";
import { createTypeScriptImportResolver } from "eslint-import-resolver-typescript";

const SERVICES = ["gateway", "memory", "search", "consolidator"];

/** A string or template that starts like a SQL statement. */
const SQL = "^\\s*(SELECT|INSERT|UPDATE|DELETE|WITH|CREATE|ALTER|DROP|GRANT|SET|BEGIN|COMMIT|ROLLBACK|ANALYZE|VACUUM)\\s";
const SQL_OUTSIDE_DB = "SQL belongs in a db/ module (packages/db or the service's src/db)";

export default tseslint.config(
  {
    ignores: ["**/dist/**", "**/node_modules/**", "proto/src/gen/**", "**/*.d.ts", "test/conformance/**", "data/**", "test-results/**", "coverage/**"],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // Tells import-x how to parse the .ts files it follows when it walks the import graph.
  importX.flatConfigs.typescript,
  {
    settings: {
      "import-x/resolver-next": [createTypeScriptImportResolver()],
    },
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: "module",
      globals: {
        process: "readonly",
        console: "readonly",
        Buffer: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        setInterval: "readonly",
        clearInterval: "readonly",
        setImmediate: "readonly",
        fetch: "readonly",
      },
    },
    rules: {
      "import-x/no-cycle": ["error", { ignoreExternal: true }],
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_", caughtErrors: "none" }],
    },
  },
  ...SERVICES.map((service) => ({
    files: [`services/${service}/src/**/*.ts`],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: SERVICES.filter((other) => other !== service).flatMap((other) => [
            { group: [`@3ngram/${other}`, `@3ngram/${other}/*`], message: "services talk gRPC, never import one another" },
            { group: [`**/services/${other}/**`, `../../${other}/**`], message: "services talk gRPC, never import one another" },
          ]),
        },
      ],
    },
  })),
  {
    files: ["services/*/src/**/*.ts", "packages/*/src/**/*.ts", "standalone/src/**/*.ts"],
    ignores: ["services/*/src/db/**", "packages/db/src/**", "standalone/src/db/**"],
    rules: {
      "no-restricted-syntax": [
        "error",
        { selector: `Literal[value=/${SQL}/]`, message: SQL_OUTSIDE_DB },
        { selector: `TemplateLiteral > TemplateElement:first-child[value.raw=/${SQL}/]`, message: SQL_OUTSIDE_DB },
      ],
    },
  },
);
