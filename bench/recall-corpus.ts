/**
 * The recall benchmark's sessions (issues 14, 22, 31): ordinary generated turns with details of every shape an agent
 * later looks for planted among them, each with the query an agent would type for it, the form of that query, and
 * the text its answer must contain. Every detail has near-miss decoys planted after it (newer, so recency alone
 * cannot win): the same coined words with another number, path, verb, hash suffix or id, so "top 5" means ranked
 * first among look-alikes, not found at all. In the stored-aside session, most user messages carry a paste of about
 * 1.5k tokens and details sit inside pastes and long tool outputs, stored aside as a small window stores them.
 * Deterministic from a seed. Details are planted in the first 95% of the session, so compaction covers them.
 */
import type { AgentMessage } from "../src/host/openclaw-types.js";
import { type ConversationPlan, SessionGenerator } from "./generate.js";
import { Random } from "./random.js";
import { TextMaker } from "./text.js";
import { Vocabulary } from "./vocabulary.js";

/** How the agent asks: the query forms of the recall table. */
export type QueryForm =
  | "command (regex)" | "unique id (regex)" | "hash prefix" | "camelCase part" | "snake_case part" | "function name part"
  | "path component" | "number and unit" | "Chinese" | "Japanese" | "emoji-adjacent word" | "word form" | "several words" | "question";

export const QUERY_FORMS: readonly QueryForm[] = [
  "command (regex)", "unique id (regex)", "hash prefix", "camelCase part", "snake_case part", "function name part", "path component",
  "number and unit", "Chinese", "Japanese", "emoji-adjacent word", "word form", "several words", "question",
];

export interface PlantedDetail {
  form: QueryForm;
  /** What the agent passes to lcm_grep. */
  grep: { pattern: string; mode: "regex" | "full_text" };
  /** The literal a plain substring search would look for (the query as typed, regex escapes removed). */
  substring: string;
  /** A question about the detail, for lcm_expand_query, and the text its answer must quote. */
  question: string;
  answer: string;
  /** Index of the planted message in the session's message order (resolved to a stored id after ingest). */
  messageIndex: number;
  /** The detail sits inside a paste or tool output that the session stores aside. */
  insideStoredContent: boolean;
}

export interface RecallCorpus {
  plan: ConversationPlan;
  turns: AgentMessage[][];
  details: PlantedDetail[];
  messages: number;
}

export interface CorpusOptions {
  sessionId: string;
  /** Pastes on most user messages and details inside pastes and tool outputs (a small window's share). */
  storedAside: boolean;
}

/** Tokens of a paste (about 1.5k, as a user pastes in an 8k window) and of a long tool output. */
const PASTE_LINES = 110;
const OUTPUT_LINES = 150;
/** Share of ordinary user messages that carry a paste in the stored-aside session. */
const PASTE_SHARE = 0.6;
/** Near misses planted for every detail: more than the five places a detail must rank in. */
const DECOYS = 6;

const HAN = "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可里后小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计或司利受光王果亲界及今京务制解各任至清物台象记边共风战干接它许八特觉望直服毛林题建南度统色字请交爱让认算论百吃义科怎元社术结六功指思非流每青管夫连远资队跟带花快条院变联言权往展该领传近留红治决周保达办运武半候七必城父强步完革深区即求品士转量空甚众技轻程告江语英基派满式李息写呢识极令黄德收脸钱党倒未持取设始版双历越史商千片容研像找友孩站广改议形委早房音火际则首单据导影失拿网香似斯专石若兵弟谁校读志飞观争究包组造落视济喜离虽坏兴切须土验证另";
const KATAKANA = "アイウエオカキクケコサシスセソタチツテトナニヌネノハヒフヘホマミムメモヤユヨラリルレロワン";
const VERBS: readonly [string, string][] = [
  ["deploy", "deployed"], ["migrate", "migrated"], ["rotate", "rotated"], ["configure", "configured"], ["archive", "archived"],
  ["restart", "restarted"], ["upgrade", "upgraded"], ["provision", "provisioned"], ["decommission", "decommissioned"], ["throttle", "throttled"],
];
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const NAMES = ["Amara", "Bastian", "Chiara", "Dmitri", "Elif", "Farid", "Greta", "Hiroshi", "Ines", "Jonas", "Keziah", "Lorcan"];
/** Words for "several words" details: each detail draws its own five, so no two share their phrase. */
const SEVERAL_WORDS = (
  "rotate staging database credentials quarterly audit window vendor invoice backlog cache warmup replica failover " +
  "budget forecast sprint review onboarding checklist firewall rules certificate renewal billing export nightly " +
  "snapshot retention policy customer churn dashboard alert threshold latency regression pager escalation runbook " +
  "mobile release freeze feature flag cleanup search ranking experiment legal approval data residency migration"
).split(" ");

/** A planted turn, the index in it of the message holding the detail, and the decoy turns planted after it. */
interface Planting {
  detail: Omit<PlantedDetail, "messageIndex" | "insideStoredContent" | "form">;
  turn: AgentMessage[];
  at: number;
  decoys: AgentMessage[][];
}

export function buildRecallCorpus(seed: number, messages: number, detailsPerForm: number, options: CorpusOptions): RecallCorpus {
  const random = new Random(seed ^ (options.storedAside ? 0x5a17 : 0x7a3c));
  const plan: ConversationPlan = {
    role: "main", agentId: "main", sessionId: options.sessionId, sessionKey: `agent:main:${options.sessionId}`, messageTarget: messages,
  };
  const vocabulary = new Vocabulary(random.fork());
  const generator = new SessionGenerator(plan, random.fork(), vocabulary, Date.UTC(2026, 3, 1), false);
  const filler = new Filler(new TextMaker(vocabulary), random.fork());
  const coined = coiner(random.fork());
  const plantings = shuffle(QUERY_FORMS.flatMap((form) => Array.from({ length: detailsPerForm }, () => form)), random);
  const turns: AgentMessage[][] = [];
  const details: PlantedDetail[] = [];
  const decoysDue: { after: number; turn: AgentMessage[] }[] = [];
  let stored = 0;
  const every = Math.floor((messages * 0.95) / plantings.length);
  let next = 0;
  const push = (turn: AgentMessage[]) => {
    turns.push(turn);
    stored += turn.length;
  };
  while (stored < messages) {
    const turn = generator.nextTurn();
    if (options.storedAside) filler.pasteInto(turn, PASTE_SHARE);
    if (next < plantings.length && stored >= (next + 1) * every - every / 2) {
      const form = plantings[next]!;
      const planting = plant(form, coined, random);
      const hidden = options.storedAside ? filler.hide(planting.turn, planting.at) : { turn: planting.turn, at: planting.at, inside: false };
      details.push({ ...planting.detail, form, messageIndex: stored + turn.length + hidden.at, insideStoredContent: hidden.inside });
      turn.push(...hidden.turn);
      for (const decoy of planting.decoys) {
        const shown = options.storedAside && random.chance(0.5) ? filler.hide(decoy, 0).turn : decoy;
        decoysDue.push({ after: stored + random.int(20, Math.max(40, every * 3)), turn: shown });
      }
      next++;
    }
    push(turn);
    for (let index = decoysDue.length - 1; index >= 0; index--) {
      if (decoysDue[index]!.after <= stored) push(decoysDue.splice(index, 1)[0]!.turn);
    }
  }
  return { plan, turns, details, messages: stored };
}

/** A detail of `form` in a turn of its own, and near-miss decoys: look-alikes the query must rank below it. */
function plant(form: QueryForm, coined: () => string, random: Random): Planting {
  const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 });
  const assistant = (text: string): AgentMessage => ({ role: "assistant", content: [{ type: "text", text }], timestamp: 0, stopReason: "stop" });
  const [a, b, c] = [coined(), coined(), coined()];
  /** A detail in one message and DECOYS near misses, `decoy(i)` the i-th (alternating its shapes). */
  const one = (detail: Planting["detail"], message: AgentMessage, decoy: (index: number) => AgentMessage): Planting =>
    ({ detail, turn: [message], at: 0, decoys: Array.from({ length: DECOYS }, (_, index) => [decoy(index)]) });
  switch (form) {
    case "command (regex)": {
      const command = `curl -s -H "Authorization: Bearer $TOKEN" "https://api.${a}.internal/v1/${b}?limit=${random.int(10, 999)}"`;
      const typed = `-H "Authorization: Bearer $TOKEN" "https://api.${a}.internal/v1/${b}`;
      const call = (text: string, id: string): AgentMessage[] => [
        { role: "assistant", content: [{ type: "toolCall", id, name: "exec", arguments: { command: text } }], timestamp: 0, stopReason: "toolUse" },
        { role: "toolResult", toolCallId: id, toolName: "exec", content: [{ type: "text", text: `{"items": [], "next": null}` }], timestamp: 0 },
      ];
      return {
        detail: { grep: { pattern: escapeRegex(typed), mode: "regex" }, substring: typed, question: `Which curl command queried the ${a} API?`, answer: `api.${a}.internal/v1/${b}` },
        turn: call(command, `toolu_recall_${a}`),
        at: 0,
        decoys: Array.from({ length: DECOYS }, (_, index) => index % 2 === 0
          ? call(`curl -s -H "Authorization: Bearer $TOKEN" "https://api.${a}.internal/v${index + 2}/${b}?limit=5"`, `toolu_recall_${a}_v${index}`)
          : call(`curl -s -H "Authorization: Bearer $TOKEN" "https://api.${a}.internal/v1/${coined()}"`, `toolu_recall_${a}_${index}`)),
      };
    }
    case "unique id (regex)": {
      const date = `2026${String(random.int(1, 12)).padStart(2, "0")}${String(random.int(10, 28))}`;
      const id = `INC-${date}-${suffix(random)}`;
      return one(
        { grep: { pattern: escapeRegex(id), mode: "regex" }, substring: id, question: `What happened in incident ${id}?`, answer: id },
        user(`Incident ${id}: the ${a} queue stalled for twelve minutes; page ${b} if it recurs.`),
        (index) => index % 2 === 0
          ? user(`Incident INC-${date}-${suffix(random)}: the ${a} queue was slow again.`)
          : assistant(`Closed INC-${date}-${suffix(random)} as a duplicate of the ${a} stall.`),
      );
    }
    case "hash prefix": {
      const hash = hex(random, 40);
      const nearMiss = () => hash.slice(0, 6) + hex(random, 34);
      return one(
        { grep: { pattern: hash.slice(0, 8), mode: "full_text" }, substring: hash.slice(0, 8), question: `What did commit ${hash.slice(0, 8)} change?`, answer: hash.slice(0, 12) },
        assistant(`Pushed ${hash} to origin: it removes the ${a} fallback from the ${b} loader.`),
        (index) => (index % 2 === 0 ? assistant(`Pushed ${nearMiss()} to origin: it restores the ${a} fallback.`) : assistant(`Reverted ${nearMiss()} on the ${b} loader.`)),
      );
    }
    case "camelCase part": {
      const name = `${cap(a)}${cap(b)}${cap(c)}Service`;
      return one(
        { grep: { pattern: `${cap(b)}${cap(c)}`, mode: "full_text" }, substring: `${cap(b)}${cap(c)}`, question: `Which service class did we add for ${b} ${c}?`, answer: name },
        user(`Add a ${name} that caches the results for an hour.`),
        (index) => (index % 2 === 0
          ? user(`Rename ${cap(a)}${cap(b)}${cap(coined())}Service before the release.`)
          : user(`The ${cap(coined())}${cap(c)}Handler stays as it is; ${cap(b)} is unrelated.`)),
      );
    }
    case "snake_case part": {
      const name = `${a}_${b}_${c}_id`;
      return one(
        { grep: { pattern: `${b}_${c}`, mode: "full_text" }, substring: `${b}_${c}`, question: `Which column holds the ${b} ${c} id?`, answer: name },
        assistant(`The join uses the column ${name}, which is indexed.`),
        (index) => (index % 2 === 0 ? assistant(`The column ${a}_${b}_${coined()}_id is not indexed yet.`) : assistant(`Drop ${coined()}_${c}_id and ${b}_id from the export.`)),
      );
    }
    case "function name part": {
      const name = `parse_${a}`;
      const code = `def ${name}(value):\n    """Reads a ${a} value."""\n    return ${b}.loads(value)`;
      return one(
        { grep: { pattern: a, mode: "full_text" }, substring: a, question: `Which function reads a ${a} value?`, answer: `def ${name}(value)` },
        assistant(`The helper is defined as:\n${code}`),
        (index) => (index % 2 === 0 ? assistant(`The ${a} values arrive from the ${coined()} queue.`) : user(`Why does format_${coined()} never see a ${a}?`)),
      );
    }
    case "path component": {
      const path = `src/${a}/${b}/${c}.ts`;
      return one(
        { grep: { pattern: `${b}/${c}`, mode: "full_text" }, substring: `${b}/${c}`, question: `Which file under ${b} did we edit?`, answer: path },
        user(`Look at ${path} before the refactor.`),
        (index) => (index % 2 === 0 ? user(`Look at src/${a}/${b}/${coined()}.ts as well.`) : user(`And src/${coined()}/${c}/${b}.ts is generated.`)),
      );
    }
    case "number and unit": {
      const value = `${random.int(1_000, 99_999)}.${random.int(10, 99)}`;
      const spaced = random.chance(0.5);
      const written = spaced ? `${value} ms` : `${value}ms`;
      const typed = spaced ? `${value}ms` : `${value} ms`;
      return one(
        { grep: { pattern: `${a} ${typed}`, mode: "full_text" }, substring: `${a} ${typed}`, question: `What was the p99 latency of ${a}?`, answer: written },
        assistant(`The p99 of ${a} was ${written} under load.`),
        (index) => (index % 3 === 2
          ? assistant(`The p50 of ${coined()} was ${written}.`)
          : assistant(`The p99 of ${a} was ${random.int(1_000, 99_999)}.${random.int(10, 99)}${index % 3 === 0 ? " " : ""}ms after the fix.`)),
      );
    }
    case "Chinese": {
      const run = Array.from({ length: 8 }, () => HAN[random.int(0, HAN.length - 1)]).join("");
      const part = run.slice(2, 6);
      return one(
        { grep: { pattern: part, mode: "full_text" }, substring: part, question: `${part}是什么？`, answer: run },
        user(`记录一下：${run}，明天再确认。`),
        () => user(`另外：${run.slice(0, 4) + Array.from({ length: 4 }, () => HAN[random.int(0, HAN.length - 1)]).join("")}，不用确认。`),
      );
    }
    case "Japanese": {
      const word = Array.from({ length: 6 }, () => KATAKANA[random.int(0, KATAKANA.length - 1)]).join("");
      const part = word.slice(1, 5);
      return one(
        { grep: { pattern: part, mode: "full_text" }, substring: part, question: `${part}について教えて`, answer: word },
        assistant(`${word}の設定は完了しました。`),
        () => assistant(`${word.slice(0, 4) + KATAKANA[random.int(0, KATAKANA.length - 1)]!.repeat(2)}の設定はまだです。`),
      );
    }
    case "emoji-adjacent word":
      return one(
        { grep: { pattern: `${a} ${b}`, mode: "full_text" }, substring: `${a} ${b}`, question: `What happened with ${a}?`, answer: `${a} ${b}` },
        user(`🤖${a} ${b}🚀 finished, 👍🏽thanks`),
        (index) => (index % 2 === 0 ? user(`🤖${a} ${coined()}🚀 failed`) : user(`${coined()} ${b} is next`)),
      );
    case "word form": {
      const [base, past] = VERBS[random.int(0, VERBS.length - 1)]!;
      return one(
        { grep: { pattern: `${base} ${a}`, mode: "full_text" }, substring: `${base} ${a}`, question: `When did we ${base} ${a}?`, answer: `${past} the ${a}` },
        assistant(`We ${past} the ${a} cluster on ${WEEKDAYS[random.int(0, 6)]} after the review.`),
        (index) => (index % 2 === 0
          ? assistant(`We ${VERBS.filter(([verb]) => verb !== base)[random.int(0, VERBS.length - 2)]![1]} the ${a} cluster on ${WEEKDAYS[random.int(0, 6)]}.`)
          : assistant(`We ${past} the ${coined()} cluster too.`)),
      );
    }
    case "several words": {
      const words = shuffle(SEVERAL_WORDS, random).slice(0, 5);
      const typed = [words[0], words[1], words[3], words[4]].join(" ");
      const decoy = (order: string[]) => user(`${order[0]} is on the list. Later, much later: ${order.slice(1).join(", then ")} and ${a}.`);
      return {
        detail: { grep: { pattern: typed, mode: "full_text" }, substring: typed, question: `What did we plan to ${typed}?`, answer: `${words.join(" ")} ${b}` },
        turn: [decoy([...words].reverse()), assistant(`Plan: ${words.join(" ")} ${b} next week.`)],
        at: 1,
        decoys: Array.from({ length: DECOYS }, (_, index) => [index % 2 === 0
          ? decoy(shuffle(words, random))
          : assistant(`Plan: ${shuffle(words, random).slice(0, 3).join(" ")} ${coined()} later.`)]),
      };
    }
    case "question": {
      const name = NAMES[random.int(0, NAMES.length - 1)]!;
      const day = WEEKDAYS[random.int(0, 6)]!;
      const question = `Who takes over the ${a} on-call rotation on ${day}s?`;
      return one(
        { grep: { pattern: question, mode: "full_text" }, substring: question, question, answer: `${a} team moves to ${name}` },
        user(`Note for the roster: the on-call rotation for the ${a} team moves to ${name} every ${day}.`),
        (index) => (index % 2 === 0
          ? user(`Note for the roster: the ${a} team keeps its on-call rotation on ${WEEKDAYS.filter((weekday) => weekday !== day)[random.int(0, 5)]!}s.`)
          : user(`The ${coined()} team's on-call rotation moves every ${day}.`)),
      );
    }
  }
}

/**
 * Filler for the stored-aside session: pastes of about 1.5k tokens on user messages, and details moved inside a
 * paste (user messages) or a long tool output (assistant messages) at a line past the head the reference keeps.
 */
class Filler {
  private outputs = 0;
  constructor(private readonly text: TextMaker, private readonly random: Random) {}

  /** Adds a paste to `share` of the turn's user messages. */
  pasteInto(turn: AgentMessage[], share: number): void {
    for (const message of turn) {
      if (message.role === "user" && typeof message.content === "string" && this.random.chance(share)) {
        message.content = `${message.content}\n\n${this.lines(PASTE_LINES, null, 0)}`;
      }
    }
  }

  /**
   * The turn with the message at `at` holding its text inside stored content: a user message's text inside a paste,
   * an assistant's text inside the output of a tool it ran. Returns where the detail now is.
   */
  hide(turn: AgentMessage[], at: number): { turn: AgentMessage[]; at: number; inside: boolean } {
    const message = turn[at]!;
    const line = this.random.int(Math.floor(PASTE_LINES * 0.3), Math.floor(PASTE_LINES * 0.8));
    if (message.role === "user" && typeof message.content === "string") {
      const copy = { ...message, content: `Here is what I have:\n${this.lines(PASTE_LINES, message.content, line)}` };
      return { turn: turn.map((item, index) => (index === at ? copy : item)), at, inside: true };
    }
    const text = Array.isArray(message.content) && message.role === "assistant"
      ? (message.content as { type: string; text?: string }[]).map((block) => block.text ?? "").join("\n")
      : null;
    if (!text) return { turn, at, inside: false };
    const id = `toolu_filler_${++this.outputs}`;
    const call: AgentMessage = {
      role: "assistant", content: [{ type: "toolCall", id, name: "read", arguments: { path: `notes/${this.outputs}.md` } }], timestamp: 0, stopReason: "toolUse",
    };
    const result: AgentMessage = {
      role: "toolResult", toolCallId: id, toolName: "read", content: [{ type: "text", text: this.lines(OUTPUT_LINES, text, line) }], timestamp: 0,
    };
    const done: AgentMessage = { role: "assistant", content: [{ type: "text", text: "Read it." }], timestamp: 0, stopReason: "stop" };
    return { turn: [...turn.slice(0, at), call, result, done, ...turn.slice(at + 1)], at: at + 1, inside: true };
  }

  /** `count` lines of generated prose and log lines, with `detail` (when given) as line `line`. */
  private lines(count: number, detail: string | null, line: number): string {
    const lines: string[] = [];
    for (let index = 0; index < count; index++) {
      if (detail !== null && index === line) lines.push(...detail.split("\n"));
      else lines.push(this.random.chance(0.5) ? this.text.sentence(this.random, 5, 10) : this.text.logLine(this.random, Date.UTC(2026, 3, 1) + index * 1_000));
    }
    return lines.join("\n");
  }
}

/** Unique coined words (letters only) that occur nowhere else: every one starts with "zq". */
function coiner(random: Random): () => string {
  const seen = new Set<string>();
  const syllables = ["ba", "ke", "lo", "mi", "nu", "ra", "so", "ti", "vu", "we", "xa", "yo", "dar", "fen", "gil", "hom", "jut", "kev"];
  return () => {
    for (;;) {
      const word = `zq${Array.from({ length: 3 }, () => syllables[random.int(0, syllables.length - 1)]).join("")}`;
      if (!seen.has(word)) {
        seen.add(word);
        return word;
      }
    }
  };
}

function hex(random: Random, length: number): string {
  return Array.from({ length }, () => "0123456789abcdef"[random.int(0, 15)]).join("");
}

function suffix(random: Random): string {
  return Array.from({ length: 3 }, () => "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"[random.int(0, 31)]).join("");
}

function cap(word: string): string {
  return word[0]!.toUpperCase() + word.slice(1);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function shuffle<T>(items: readonly T[], random: Random): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = random.int(0, index);
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}
