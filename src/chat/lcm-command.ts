/**
 * The `/lcm` chat command: `status` (the default), `compact` (through the host's compactCurrent, the same path
 * as /compact) and `doctor` (the integrity service's doctor, see lcm-doctor.ts). The handler never throws: a failure becomes a
 * reply saying what went wrong, because a chat command has no other way to report it.
 */
import type { Clock, Logger } from "../contracts.js";
import { DATABASE_PATH_SETTING, type LcmConfig, SETTINGS } from "../config.js";
import { agentIdFromSessionKey, DEFAULT_AGENT_ID } from "../sessions/session-identity.js";
import { describeError, isLcmError } from "../errors.js";
import type { CommandContext, CommandDefinition } from "../host/openclaw-types.js";
import type { RetrievalStore } from "../store/retrieval-store.js";
import type { StatusStore } from "../store/status-store.js";
import type { StorageStatusStore } from "../retention/storage-status.js";
import type { RetentionSettings } from "../retention/retention-policy.js";
import type { ConversationStore } from "../store/store.js";
import type { IntegrityChecker } from "../integrity/integrity-checker.js";
import { type ConversationSelector, StatusService } from "../services/status-service.js";
import { compactCommandReply } from "../services/compaction-words.js";
import type { SessionLifecycle } from "../sessions/session-lifecycle.js";
import { doctorReply } from "./lcm-doctor.js";
import { renderStatus } from "./lcm-status.js";

export const LCM_COMMAND = "lcm";

export interface LcmCommandServices {
  /** Where the history is stored: the SQLite file, or the PostgreSQL URL without its password. */
  location: string;
  conversations: Pick<ConversationStore, "findConversation" | "getConversation">;
  sessions: Pick<RetrievalStore, "findConversationBySessionKey">;
  status: StatusStore;
  integrity: IntegrityChecker;
  /** Set when the database is served read-only: why, and the fix (shown by /lcm status). */
  notice?: string;
  /** Marks conversations whose OpenClaw session is gone (`/lcm doctor all`); absent outside a gateway. */
  endedSessions?: Pick<SessionLifecycle, "markGoneSessions">;
  /** Size, growth and retention estimates for `/lcm status` (absent: status says nothing about size). */
  storage?: StorageStatusStore;
}

export interface LcmCommandDeps {
  /**
   * Opens (or reuses) the shared database; called inside the handler only. Throws LcmError("unavailable") with a
   * message naming the path, the setting and the fix when the database cannot be used (the reply is that message).
   */
  services: () => LcmCommandServices;
  config: Pick<LcmConfig, "databasePath" | "defaultTokenBudget">
    & Partial<Pick<LcmConfig, "maxSummaryCallsPerWindow" | "summaryCallWindowMinutes" | "contextThreshold">> & Partial<RetentionSettings>;
  clock: Clock;
  logger: Logger;
}

const USAGE = [
  "Usage: /lcm [status|compact|doctor]",
  "  status   what is stored, what the model sees against its budget, summaries, last compaction; the database's size,",
  "           growth and what retention would do (default)",
  "  compact  compact this conversation now (same as /compact; use /compact <instructions> to steer the summary)",
  "  doctor   check this conversation's stored history for problems; `doctor all` checks every conversation,",
  "           `doctor repair` also applies the safe repairs (recount, re-index, stored times)",
].join("\n");

export function createLcmCommand(deps: LcmCommandDeps): CommandDefinition {
  return {
    name: LCM_COMMAND,
    description: "Lossless context: /lcm status | compact | doctor",
    acceptsArgs: true,
    async handler(context: CommandContext) {
      let subcommand: string | undefined;
      try {
        subcommand = (context.args ?? "").trim().split(/\s+/)[0]?.toLowerCase() || "status";
        switch (subcommand) {
          case "status":
            return { text: await status(deps, context) };
          case "compact":
            return { text: await compact(context) };
          case "doctor":
            return { text: await doctor(deps, context) };
          case "help":
            return { text: USAGE };
          default:
            return { text: `Unknown /lcm subcommand "${subcommand}".\n${USAGE}` };
        }
      } catch (error) {
        // The context itself may be unreadable (then there is no subcommand to name).
        const command = subcommand === undefined ? "/lcm" : `/lcm ${subcommand}`;
        // The database cannot be used: the message says where, why and what to do; the plugin logged it once.
        if (isLcmError(error, "unavailable")) return { text: `${command}: LCM is unavailable. ${error.message}` };
        deps.logger.error(`${command} failed: ${describeError(error)}`);
        return {
          text: `${command} failed: ${describeError(error).replace(/\.$/, "")}. Database: ${deps.config.databasePath} (set by ` +
            `${DATABASE_PATH_SETTING}). Fix: look for "[lcm]" lines in the gateway log; /lcm doctor checks the stored history.`,
        };
      }
    },
  };
}

async function status(deps: LcmCommandDeps, context: CommandContext): Promise<string> {
  return renderStatus(await statusServiceOf(deps, deps.services()).snapshot(sessionOf(context)));
}

function statusServiceOf(deps: LcmCommandDeps, services: LcmCommandServices): StatusService {
  return new StatusService({
    location: services.location, conversations: services.conversations, sessions: services.sessions, status: services.status, clock: deps.clock,
    ...(services.storage ? { storage: services.storage } : {}),
    config: {
      ...deps.config,
      maxSummaryCallsPerWindow: deps.config.maxSummaryCallsPerWindow ?? defaultOf("maxSummaryCallsPerWindow"),
      summaryCallWindowMinutes: deps.config.summaryCallWindowMinutes ?? defaultOf("summaryCallWindowMinutes"),
    },
    readOnlyNotice: services.notice ?? null,
  });
}

/** The conversation of the chat the command came from: its agent, session id and key. */
function sessionOf(context: CommandContext): ConversationSelector {
  const agentId = agentIdFromSessionKey(context.sessionKey) ?? context.agentId ?? DEFAULT_AGENT_ID;
  return { agentId, ...(context.sessionId ? { sessionId: context.sessionId } : {}), ...(context.sessionKey ? { sessionKey: context.sessionKey } : {}) };
}

function defaultOf(key: "maxSummaryCallsPerWindow" | "summaryCallWindowMinutes"): number {
  return SETTINGS.find((setting) => setting.key === key)!.defaultValue as number;
}

async function doctor(deps: LcmCommandDeps, context: CommandContext): Promise<string> {
  const services = deps.services();
  // SQLite runs FTS5's integrity check as a write statement, so even a check needs a writable file.
  if (services.notice) return `/lcm doctor needs to write to the database, which LCM has open read-only. ${services.notice}`;
  const conversation = await statusServiceOf(deps, services).findConversation(sessionOf(context));
  const args = (context.args ?? "").trim().toLowerCase().split(/\s+/).slice(1);
  const report = await doctorReply(services.integrity, conversation?.conversationId ?? null, args);
  if (!args.includes("all") || !services.endedSessions) return report;
  const gone = await services.endedSessions.markGoneSessions(GONE_SESSIONS_DEADLINE_MS);
  if (gone.marked === 0 && gone.complete) return report;
  return `${report}\nSessions: ${gone.marked} of ${gone.checked} conversations checked belong to a session OpenClaw no longer has; ` +
    `marked ended (kept and searchable)${gone.complete ? "" : "; stopped at the deadline, run again to continue"}.`;
}

/** How long `/lcm doctor all` spends asking OpenClaw which sessions still exist. */
const GONE_SESSIONS_DEADLINE_MS = 5_000;

async function compact(context: CommandContext): Promise<string> {
  const compactCurrent = context.runtimeContext?.compactCurrent;
  if (!compactCurrent) return "This host does not let plugin commands compact; use /compact instead.";
  // The words of /compact's answer (services/compaction-words.ts).
  return compactCommandReply(await compactCurrent());
}
