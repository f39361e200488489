import { homedir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SETTINGS, resolveConfig } from "../src/config.js";
import { LcmError } from "../src/errors.js";

describe("resolveConfig", () => {
  it("uses the documented defaults", () => {
    const config = resolveConfig({}, {});
    expect(config).toMatchObject({
      enabled: true,
      databasePath: join(homedir(), ".openclaw", "lcm-context.db"),
      filesDirectory: join(homedir(), ".openclaw", "lcm-context-files"),
      contextThreshold: 0.75,
      freshTailCount: 32,
      leafMinFanout: 8,
      condensedMinFanout: 4,
      condensedMinFanoutHard: 2,
      incrementalMaxDepth: 0,
      leafChunkTokens: 20_000,
      leafTargetTokens: 1_200,
      condensedTargetTokens: 2_000,
      maxExpandTokens: 4_000,
      largeFileTokenThreshold: 25_000,
      autocompactDisabled: false,
    });
    expect(config.summaryModel).toBeUndefined();
    expect(config.summaryProvider).toBeUndefined();
  });

  it("puts the database in OPENCLAW_STATE_DIR when set", () => {
    const config = resolveConfig({}, { OPENCLAW_STATE_DIR: "/srv/claw" });
    expect(config.databasePath).toBe("/srv/claw/lcm-context.db");
    expect(config.filesDirectory).toBe("/srv/claw/lcm-context-files");
  });

  it("lets the plugin choose the default database path, and never overrides a configured one with it", () => {
    const chooser = { defaultDatabasePath: () => "/srv/claw/lcm.db" };
    expect(resolveConfig({}, {}, chooser)).toMatchObject({ databasePath: "/srv/claw/lcm.db", filesDirectory: "/srv/claw/lcm-files" });
    expect(resolveConfig({ databasePath: "/data/mine.db" }, {}, chooser).databasePath).toBe("/data/mine.db");
    expect(resolveConfig({}, { LCM_DATABASE_PATH: "/data/env.db" }, chooser).databasePath).toBe("/data/env.db");
  });

  it("takes a PostgreSQL URL from databaseUrl or LCM_DATABASE_URL, and refuses anything else without showing its password", () => {
    expect(resolveConfig({}, {}).databaseUrl).toBeUndefined();
    expect(resolveConfig({ databaseUrl: "postgres://lcm@db.internal:5432/lcm" }, {}).databaseUrl).toBe("postgres://lcm@db.internal:5432/lcm");
    expect(resolveConfig({ databaseUrl: "postgres://a@x/one" }, { LCM_DATABASE_URL: "postgresql://b@y/two" }).databaseUrl).toBe("postgresql://b@y/two");
    const refused = (() => {
      try {
        resolveConfig({ databaseUrl: "mysql://admin:hunter2@db/lcm" }, {});
      } catch (error) {
        return error as LcmError;
      }
      throw new Error("accepted a MySQL URL");
    })();
    expect(refused.code).toBe("invalid_config");
    expect(refused.message).toContain("databaseUrl must be a PostgreSQL URL");
    expect(refused.message).not.toContain("hunter2");
  });

  it("gives every database its own large-file directory", () => {
    expect(resolveConfig({ databasePath: "/data/team.sqlite" }, {}).filesDirectory).toBe("/data/team-files");
    expect(resolveConfig({ databasePath: "/data/lcm.db", filesDirectory: "/blobs" }, {}).filesDirectory).toBe("/blobs");
  });

  it("lets LCM_* environment variables override plugin config", () => {
    const config = resolveConfig(
      { freshTailCount: 10, contextThreshold: 0.5, summaryModel: "a/b" },
      { LCM_FRESH_TAIL_COUNT: "12", LCM_AUTOCOMPACT_DISABLED: "true", LCM_SUMMARY_MODEL: "anthropic/claude" },
    );
    expect(config.freshTailCount).toBe(12);
    expect(config.contextThreshold).toBe(0.5);
    expect(config.autocompactDisabled).toBe(true);
    expect(config.summaryModel).toBe("anthropic/claude");
  });

  it.each([
    [{ contextThreshold: 0 }, /contextThreshold.*> 0 and <= 1/],
    [{ contextThreshold: 1.5 }, /Invalid setting "contextThreshold": 1.5/],
    [{ freshTailCount: 2.5 }, /"freshTailCount".*an integer >= 0/],
    [{ leafMinFanout: "8" }, /"leafMinFanout": "8"/],
    [{ enabled: "yes" }, /true or false for "enabled"/],
    [{ summaryModel: "" }, /non-empty string for "summaryModel"/],
    [{ freshTailCont: 3 }, /Unknown setting "freshTailCont"/],
    [{ condensedMinFanout: 3, condensedMinFanoutHard: 4 }, /condensedMinFanoutHard \(4\) must not exceed condensedMinFanout \(3\)/],
  ])("rejects %j with a message naming the key, value and range", (input, message) => {
    expect(() => resolveConfig(input, {})).toThrow(message);
    expect(() => resolveConfig(input, {})).toThrow(LcmError);
  });

  it("rejects invalid environment values naming the variable", () => {
    expect(() => resolveConfig({}, { LCM_LEAF_CHUNK_TOKENS: "lots" })).toThrow(
      /environment variable LCM_LEAF_CHUNK_TOKENS: "lots"\. Expected an integer >= 256/,
    );
  });

  it("has one LCM_ environment variable per setting", () => {
    const envs = SETTINGS.map((setting) => setting.env);
    expect(new Set(envs).size).toBe(SETTINGS.length);
    for (const env of envs) expect(env).toMatch(/^LCM_[A-Z_]+$/);
  });
});
