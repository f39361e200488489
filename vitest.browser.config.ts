import { defineConfig } from "vitest/config";

/**
 * `npm run test:browser`: the inspector driven in a real headless Chromium (Debian's, installed by the setup when
 * missing). Not part of `npm test`, which must run without a browser.
 */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    globalSetup: ["test/browser/global-setup.ts"],
    testTimeout: 180_000,
    hookTimeout: 300_000,
    pool: "forks",
    fileParallelism: false,
  },
});
