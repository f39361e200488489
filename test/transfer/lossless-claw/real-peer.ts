/**
 * The databases lossless-claw's own code wrote (test/fixtures/lossless-claw/, README there): unpacked into a fresh
 * folder per test, with the files the peer stored aside beside them as `lcm-files/<conversation>/`.
 */
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import { tempDir } from "../../helpers/temp-dir.js";

export const PEER_VERSIONS = ["0.1.4", "0.15.3", "1.0.0-beta.4"] as const;
export type PeerVersion = (typeof PEER_VERSIONS)[number];

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "fixtures", "lossless-claw");

/** The session each fixture's three conversations belong to, in conversation order. */
export const PEER_SESSIONS = [
  { sessionId: "session-alpha", sessionKey: "agent:main:main" },
  { sessionId: "session-beta", sessionKey: "agent:ops:telegram:direct:7" },
  { sessionId: "session-gamma", sessionKey: "agent:main:cron:nightly" },
] as const;

/** Whether the version keeps session keys (0.1 did not: its conversations go to the default agent). */
export function keepsSessionKeys(version: PeerVersion): boolean {
  return version !== "0.1.4";
}

/** Unpacks the fixture into a new folder; returns the database's path (its files are in `lcm-files/` beside it). */
export function unpackPeer(version: PeerVersion): string {
  const directory = tempDir(`peer-${version}-`);
  const path = join(directory, "lcm.db");
  writeFileSync(path, gunzipSync(readFileSync(join(FIXTURES, version, "lcm.db.gz"))));
  const files = join(FIXTURES, version, "lcm-files");
  if (existsSync(files)) cpSync(files, join(directory, "lcm-files"), { recursive: true });
  return path;
}
