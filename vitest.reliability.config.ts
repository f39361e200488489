import { defineConfig } from "vitest/config";

/** The reliability suites: they drive the built plugin (dist/) in child processes killed at random points. */
export default defineConfig({
  test: {
    include: ["test/reliability/**/*.test.ts"],
    testTimeout: 1_800_000,
    hookTimeout: 120_000,
    pool: "forks",
  },
});
