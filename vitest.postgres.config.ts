import { defineConfig } from "vitest/config";

/**
 * `npm run test:postgres`: the backend contract suite and the PostgreSQL tests against a real PostgreSQL server that
 * the setup starts on 127.0.0.1 (Debian's packages, installed when missing). `npm test` runs the contract suite on
 * SQLite only and needs no server.
 */
export default defineConfig({
  test: {
    include: ["test/contract/**/*.test.ts", "test/postgres/**/*.test.ts"],
    globalSetup: ["test/postgres/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
