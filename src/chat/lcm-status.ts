/**
 * The text of `/lcm status` and `lcm status`, rendered from the status service's snapshot (services/status-service.ts):
 * what is stored for this conversation, what the model sees against its budget (the budget compaction works toward,
 * so /compact's answer gives the same numbers) and where automatic compaction starts, the summary DAG by depth
 * (fallback summaries called out), the last compaction, the last new session and how long ago the last message
 * arrived — measured, so a stalled ingestion or a failing compaction is visible at a glance — and the database's
 * size, growth and what retention would do (estimates, said as such; `lcm retention` gives the exact account).
 */
import { hostShareSentence, tooSmallAdvice } from "../services/host-share.js";
import type { ConversationStatus, SpendGuardView, StatusSnapshot } from "../services/status-service.js";
import type { RetentionOutlook, StorageStatus } from "../retention/storage-status.js";
import type { SummaryDepthStats } from "../store/status-store.js";

/**
 * The status as text. `scope` "session" (a chat command) says when nothing is stored for the session yet;
 * "database" (the CLI without a conversation) shows the database alone.
 */
export function renderStatus(snapshot: StatusSnapshot, scope: "session" | "database" = "session"): string {
  const { conversation } = snapshot;
  const lines: string[] = snapshot.readOnlyNotice ? [`LCM is read-only: nothing new is being stored. ${snapshot.readOnlyNotice}`] : [];
  if (conversation) {
    lines.push(...conversationLines(conversation, snapshot.now));
  } else if (scope === "session") {
    lines.push("LCM status: nothing is stored for this session yet (it starts with the first message).");
  } else {
    lines.push("LCM status · database");
  }
  const { totals } = snapshot;
  const kept = [
    totals.archivedConversations ? `${count(totals.archivedConversations)} archived` : "",
    totals.endedConversations ? `${count(totals.endedConversations)} ended` : "",
  ].filter(Boolean).join(", ");
  const archived = totals.archivedMessages ?? 0;
  lines.push(
    `Database: ${plural(totals.conversations, "conversation")}${kept ? ` (${kept})` : ""} · ${plural(totals.messages, "message")}` +
      (archived > 0 ? ` (${count(archived)} archived by retention)` : "") + ` · ${count(totals.messageTokens)} tokens · ${snapshot.databasePath}` +
      (totals.awaitingIndex > 0 ? ` · ${count(totals.awaitingIndex)} messages waiting for the full-text index` : ""),
  );
  if (snapshot.storage) lines.push(...storageLines(snapshot.storage, snapshot.now));
  const circuits = snapshot.summarizers.filter((circuit) => circuit.state !== "closed");
  if (circuits.length > 0) {
    lines.push(`Summarizer circuit: ${circuits.map((circuit) => `${circuit.key} ${circuit.state}`).join(", ")} (model calls are skipped; compaction falls back to truncation)`);
  }
  const guard = snapshot.spendGuard;
  if (guard.visible && guard.capped > 0) {
    lines.push(`Spend guard: ${plural(guard.capped, "conversation")} at the cap of ${count(guard.maxCallsPerWindow)} model calls per ${guard.windowMinutes} min`);
  }
  return lines.join("\n");
}

function conversationLines(conversation: ConversationStatus, now: number): string[] {
  const budgetSource = conversation.budgetIsDefault
    ? " (default; no turn assembled yet)"
    : conversation.budgetIsPlanningFloor ? " (the least compaction plans for; the model's own budget is smaller)" : "";
  const session = sessionLine(conversation, now);
  return [
    `LCM status · conversation ${conversation.conversationId} (agent ${conversation.agentId})`,
    `Stored: ${storedLine(conversation)}`,
    `Context: ${count(conversation.contextItems)} items · ${count(conversation.contextTokens)} tokens ` +
      `(${count(conversation.contextRawTokens)} raw) · budget ${count(conversation.budgetTokens)}${budgetSource} · ${conversation.budgetPercent}%` +
      (conversation.compactsAboveTokens !== undefined ? ` · compacts above ${count(conversation.compactsAboveTokens)}` : "") +
      (conversation.overBudget ? " (over budget: assembly sends the newest items that fit, and a memory floor for the rest)" : ""),
    ...hostShareLines(conversation),
    `Summaries: ${summaryLine(conversation.summaries)}`,
    `Last compaction: ${compactionLine(conversation, now)}`,
    ...(session ? [session] : []),
    `Last message stored: ${conversation.lastIngestAt === null ? "never" : ago(now - conversation.lastIngestAt)}`,
    `Spend guard: ${spendGuardLine(conversation.spendGuard, now)}`,
  ];
}

/** What OpenClaw's own prompt and tools leave history, and when that is too little, why and what to change (spec 023). */
function hostShareLines(conversation: ConversationStatus): string[] {
  const share = conversation.hostShare;
  if (!share) return [];
  const advice = tooSmallAdvice(share);
  return [`Host: ${hostShareSentence(share)}`, ...(advice ? [advice] : [])];
}

/** Messages and tokens stored; when retention archived some, how many keep their text here and where the rest is. */
function storedLine(conversation: ConversationStatus): string {
  const { messages, archivedMessages } = conversation;
  const head = `${plural(messages, "message")} · ${count(conversation.messageTokens)} tokens`;
  if (archivedMessages === 0) return head;
  return `${head} · ${count(messages - archivedMessages)} with their text here, ${count(archivedMessages)} archived by retention ` +
    "(a stub row here, the text in its gzip archive; summaries cover them)";
}

function spendGuardLine(guard: SpendGuardView, now: number): string {
  const window = `${Math.round(guard.windowMs / 60_000)} min`;
  if (!guard.visible) return `at most ${count(guard.maxCalls)} summarizer model calls per ${window}; the count is not visible here: ${guard.where}`;
  return `${count(guard.calls)} of ${count(guard.maxCalls)} summarizer model calls in the last ${window}` +
    (guard.capped ? ` · at the cap: summaries are written without a model${guard.freesAt !== null ? ` until ${ago(guard.freesAt - now, "in")}` : ""}` : "") +
    (guard.diverted > 0 ? ` · ${count(guard.diverted)} written without a model` : "");
}

function summaryLine(stats: SummaryDepthStats[]): string {
  if (stats.length === 0) return "none yet";
  const depths = stats.map((row) => `${count(row.count)} at depth ${row.depth} (${count(row.tokens)} tokens)`).join(", ");
  const fallback = stats.reduce((total, row) => total + row.fallbackCount, 0);
  return `${depths} · fallback summaries: ${count(fallback)}` +
    (fallback > 0 ? " (truncations written when the model failed; maintain redoes 2 a turn once a model answers, `lcm repair fallbacks --apply` all of them, and the messages they cover stay stored for recall)" : "");
}

function compactionLine(conversation: ConversationStatus, now: number): string {
  const outcome = conversation.lastCompaction;
  if (!outcome) return "never";
  const change = outcome.compacted
    ? `${count(outcome.tokensBefore)} → ${count(outcome.tokensAfter)} tokens in ${outcome.passes} pass${outcome.passes === 1 ? "" : "es"}`
    : `nothing compacted${outcome.reason ? ` (${outcome.reason})` : ""}`;
  const guarded = outcome.spendGuardDiverted ? ` · ${count(outcome.spendGuardDiverted)} written without a model (spend guard)` : "";
  return `${ago(now - outcome.at)} (${outcome.trigger}): ${change}${guarded}`;
}

/** The last new session under this conversation's key (/new, an idle or daily reset), or the archive it continues (/reset). */
function sessionLine(conversation: ConversationStatus, now: number): string | null {
  const reset = conversation.lastReset;
  if (reset) {
    const why = reset.reason === "new" ? "/new" : reset.reason === "detected" ? "a new session" : `${reset.reason} reset`;
    const carried = reset.carriedSummaries === 0
      ? "nothing carried over"
      : `${count(reset.carriedSummaries)} ${reset.carriedSummaries === 1 ? "summary" : "summaries"} carried over (${count(reset.carriedTokens)} tokens)`;
    return `New session: ${ago(now - reset.at)} (${why}): ${carried}; the ${count(reset.leftMessages)} earlier messages stay searchable`;
  }
  if (conversation.previousConversationId !== undefined && conversation.previousConversationId !== null) {
    return `New session: after /reset; the earlier history is archived as conversation ${conversation.previousConversationId} ` +
      "(lcm_grep reads it with allConversations)";
  }
  return null;
}

/** Two lines: size and growth; what retention would do (or, off, what a cap could archive). */
function storageLines(storage: StorageStatus, now: number): string[] {
  const free = storage.freeBytes === 0
    ? ""
    : storage.autoVacuum === "incremental"
      ? ` (+ ${megabytes(storage.freeBytes)} free, reused or given back by retention's vacuum)`
      : storage.autoVacuum === "server"
        ? ` (+ ~${megabytes(storage.freeBytes)} in dead rows, reused once the server's autovacuum or \`lcm retention --apply\` vacuums them)`
        : ` (+ ${megabytes(storage.freeBytes)} free, reused; the file shrinks only after \`lcm retention --apply --vacuum\`)`;
  const { growth } = storage;
  return [
    `Size: ${megabytes(storage.usedBytes)} in use${free} · growth: ${plural(growth.messages, "message")} stored in the last ${growth.days} days ` +
      `(≈ ${megabytes(growth.bytes)} at the mean size of a stored message)`,
    `Retention: ${retentionLine(storage.retention, now)}`,
  ];
}

function retentionLine(outlook: RetentionOutlook, now: number): string {
  if (!outlook.enabled) {
    const { exampleAgeCap: example, covered } = outlook;
    return `off. A ${count(example.days)}-day age cap (retentionMaxAgeDays) would archive ~${count(example.messages)} covered messages ` +
      `(${tokens(example.tokens)}); a size cap (retentionMaxDatabaseMb) at most the ${count(covered.messages)} that summaries cover ` +
      `(${tokens(covered.tokens)}), oldest first` +
      (outlook.endedConversations > 0 ? `; ${count(outlook.endedConversations)} conversations whose session is gone could go (retentionPruneEndedSessions)` : "") +
      ". Estimates; `lcm retention` lists exactly.";
  }
  const { policy, nextRun, prunable } = outlook;
  const caps = [
    policy.maxDatabaseBytes !== null
      ? `size cap ${megabytes(policy.maxDatabaseBytes)}${outlook.overCapBytes > 0 ? `, over by ${megabytes(outlook.overCapBytes)}` : ", under it"}`
      : "",
    policy.maxAgeMs !== null ? `age cap ${days(Math.round(policy.maxAgeMs / 86_400_000))}` : "",
    policy.pruneEndedSessions ? "ended sessions archived" : "",
  ].filter(Boolean).join(", ");
  const work = [
    prunable.messages > 0
      ? `~${count(Math.min(prunable.messages, nextRun.maxMessages))} of ${count(prunable.messages)} covered messages (${tokens(prunable.tokens)})`
      : "",
    outlook.endedConversations > 0
      ? `${count(Math.min(outlook.endedConversations, nextRun.maxConversations))} of ${count(outlook.endedConversations)} ended conversations`
      : "",
  ].filter(Boolean);
  const nothing = outlook.overCapBytes > 0
    ? "nothing left it may archive: the size cap cannot be met (summaries, the context and the raw tail stay)"
    : "nothing to archive";
  const last = outlook.lastArchiveAt === null ? "no archive yet" : `last archive ${ago(now - outlook.lastArchiveAt)}`;
  return `on (${caps}) · next background run (every ${nextRun.intervalMinutes} min at most): ` +
    (work.length > 0 ? `archives ${work.join(" and ")}` : nothing) + ` · ${last}. Estimates; \`lcm retention\` lists exactly.`;
}

function days(value: number): string {
  return `${count(value)} day${value === 1 ? "" : "s"}`;
}

function megabytes(value: number): string {
  return `${(value / 1_048_576).toFixed(1)} MB`;
}

function tokens(value: number): string {
  return `${count(value)} tokens`;
}

function count(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** "1 conversation", "2 conversations". */
function plural(value: number, noun: string): string {
  return `${count(value)} ${noun}${Math.round(value) === 1 ? "" : "s"}`;
}

/** "5 min ago" (a past moment `millis` ago), or with `direction` "in", "in 5 min" (a moment `millis` ahead). */
export function ago(millis: number, direction: "ago" | "in" = "ago"): string {
  const seconds = Math.max(0, Math.round(millis / 1_000));
  if (seconds < 5) return direction === "ago" ? "just now" : "a moment";
  const say = (amount: string) => (direction === "ago" ? `${amount} ago` : `in ${amount}`);
  if (seconds < 120) return say(`${seconds} s`);
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return say(`${minutes} min`);
  const hours = Math.round(minutes / 60);
  if (hours < 48) return say(`${hours} h`);
  return say(`${Math.round(hours / 24)} d`);
}
