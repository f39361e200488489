import { defineConfig } from "vitest/config";

/**
 * `npm run test:host`: the end-to-end suite against a real OpenClaw (docs/operations.md). One gateway per file,
 * files one after another (each gateway wants most of a 2-core machine), generous deadlines.
 */
export default defineConfig({
  test: {
    include: ["test/host/**/*.test.ts"],
    globalSetup: ["test/host/global-setup.ts"],
    testTimeout: 300_000,
    hookTimeout: 240_000,
    pool: "forks",
    fileParallelism: false,
    retry: 0,
  },
});
