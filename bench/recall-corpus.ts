/**
 * The recall benchmark's session (issue 14): ordinary generated turns with details of every shape an agent later
 * looks for planted among them, each with the query an agent would type for it, the form of that query, and the
 * text its answer must contain. Deterministic from a seed. Details are planted in the first 95% of the session,
 * so compaction covers them; the last ones sit in the fresh tail.
 */
import type { AgentMessage } from "../src/host/openclaw-types.js";
import { type ConversationPlan, SessionGenerator } from "./generate.js";
import { Random } from "./random.js";
import { Vocabulary } from "./vocabulary.js";

/** How the agent asks: the query forms of the recall table. */
export type QueryForm =
  | "command (regex)" | "hash prefix" | "camelCase part" | "snake_case part" | "path component" | "number and unit"
  | "Chinese" | "Japanese" | "emoji-adjacent word" | "word form" | "several words" | "question";

export const QUERY_FORMS: readonly QueryForm[] = [
  "command (regex)", "hash prefix", "camelCase part", "snake_case part", "path component", "number and unit",
  "Chinese", "Japanese", "emoji-adjacent word", "word form", "several words", "question",
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
}

export interface RecallCorpus {
  plan: ConversationPlan;
  turns: AgentMessage[][];
  details: PlantedDetail[];
  messages: number;
}

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

export function buildRecallCorpus(seed: number, messages: number, detailsPerForm: number): RecallCorpus {
  const random = new Random(seed ^ 0x7a3c);
  const plan: ConversationPlan = { role: "main", agentId: "main", sessionId: "bench-recall", sessionKey: "agent:main:recall", messageTarget: messages };
  const generator = new SessionGenerator(plan, random.fork(), new Vocabulary(random.fork()), Date.UTC(2026, 3, 1), false);
  const coined = coiner(random.fork());
  const plantings: { form: QueryForm; index: number }[] = [];
  QUERY_FORMS.forEach((form) => {
    for (let index = 0; index < detailsPerForm; index++) plantings.push({ form, index });
  });
  const shuffled = shuffle(plantings, random);
  const turns: AgentMessage[][] = [];
  const details: PlantedDetail[] = [];
  let stored = 0;
  const every = Math.floor((messages * 0.95) / shuffled.length);
  let next = 0;
  while (stored < messages) {
    const turn = generator.nextTurn();
    if (next < shuffled.length && stored >= (next + 1) * every - every / 2) {
      const { detail, turn: planted } = plant(shuffled[next]!.form, coined, random, stored + turn.length);
      turn.push(...planted);
      details.push(detail);
      next++;
    }
    turns.push(turn);
    stored += turn.length;
  }
  return { plan, turns, details, messages: stored };
}

/** A planted turn (messages appended to an ordinary turn) and its detail; `at` is the first planted message's index. */
function plant(form: QueryForm, coined: () => string, random: Random, at: number): { detail: PlantedDetail; turn: AgentMessage[] } {
  const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 });
  const assistant = (text: string): AgentMessage => ({ role: "assistant", content: [{ type: "text", text }], timestamp: 0, stopReason: "stop" });
  const detail = (fields: Omit<PlantedDetail, "form" | "messageIndex">, offset = 0): PlantedDetail => ({ ...fields, form, messageIndex: at + offset });
  const [a, b, c] = [coined(), coined(), coined()];
  switch (form) {
    case "command (regex)": {
      const command = `curl -s -H "Authorization: Bearer $TOKEN" "https://api.${a}.internal/v1/${b}?limit=${random.int(10, 999)}"`;
      const typed = `-H "Authorization: Bearer $TOKEN" "https://api.${a}.internal/v1/${b}`;
      const id = `toolu_recall_${a}`;
      return {
        detail: detail({ grep: { pattern: escapeRegex(typed), mode: "regex" }, substring: typed, question: `Which curl command queried the ${a} API?`, answer: `api.${a}.internal/v1/${b}` }),
        turn: [
          { role: "assistant", content: [{ type: "toolCall", id, name: "exec", arguments: { command } }], timestamp: 0, stopReason: "toolUse" },
          { role: "toolResult", toolCallId: id, toolName: "exec", content: [{ type: "text", text: `{"items": [], "next": null}` }], timestamp: 0 },
        ],
      };
    }
    case "hash prefix": {
      const hash = Array.from({ length: 40 }, () => "0123456789abcdef"[random.int(0, 15)]).join("");
      return {
        detail: detail({ grep: { pattern: hash.slice(0, 8), mode: "full_text" }, substring: hash.slice(0, 8), question: `What did commit ${hash.slice(0, 8)} change?`, answer: hash.slice(0, 12) }),
        turn: [assistant(`Pushed ${hash} to origin: it removes the ${a} fallback from the ${b} loader.`)],
      };
    }
    case "camelCase part": {
      const name = `${cap(a)}${cap(b)}${cap(c)}Service`;
      return {
        detail: detail({ grep: { pattern: `${cap(b)}${cap(c)}`, mode: "full_text" }, substring: `${cap(b)}${cap(c)}`, question: `Which service class did we add for ${b} ${c}?`, answer: name }),
        turn: [user(`Add a ${name} that caches the results for an hour.`)],
      };
    }
    case "snake_case part": {
      const name = `${a}_${b}_${c}_id`;
      return {
        detail: detail({ grep: { pattern: `${b}_${c}`, mode: "full_text" }, substring: `${b}_${c}`, question: `Which column holds the ${b} ${c} id?`, answer: name }),
        turn: [assistant(`The join uses the column ${name}, which is indexed.`)],
      };
    }
    case "path component": {
      const path = `src/${a}/${b}/${c}.ts`;
      return {
        detail: detail({ grep: { pattern: `${b}/${c}`, mode: "full_text" }, substring: `${b}/${c}`, question: `Which file under ${b} did we edit?`, answer: path }),
        turn: [user(`Look at ${path} before the refactor.`)],
      };
    }
    case "number and unit": {
      const value = random.int(1_000, 99_999);
      const spaced = random.chance(0.5);
      const written = spaced ? `${value} ms` : `${value}ms`;
      const typed = spaced ? `${value}ms` : `${value} ms`;
      return {
        detail: detail({ grep: { pattern: `${a} ${typed}`, mode: "full_text" }, substring: `${a} ${typed}`, question: `What was the p99 latency of ${a}?`, answer: written }),
        turn: [assistant(`The p99 of ${a} was ${written} under load.`)],
      };
    }
    case "Chinese": {
      const run = Array.from({ length: 8 }, () => HAN[random.int(0, HAN.length - 1)]).join("");
      const part = run.slice(2, 6);
      return {
        detail: detail({ grep: { pattern: part, mode: "full_text" }, substring: part, question: `${part}是什么？`, answer: run }),
        turn: [user(`记录一下：${run}，明天再确认。`)],
      };
    }
    case "Japanese": {
      const word = Array.from({ length: 6 }, () => KATAKANA[random.int(0, KATAKANA.length - 1)]).join("");
      const part = word.slice(1, 5);
      return {
        detail: detail({ grep: { pattern: part, mode: "full_text" }, substring: part, question: `${part}について教えて`, answer: word }),
        turn: [assistant(`${word}の設定は完了しました。`)],
      };
    }
    case "emoji-adjacent word": {
      return {
        detail: detail({ grep: { pattern: `${a} ${b}`, mode: "full_text" }, substring: `${a} ${b}`, question: `What happened with ${a}?`, answer: `${a} ${b}` }),
        turn: [user(`🤖${a} ${b}🚀 finished, 👍🏽thanks`)],
      };
    }
    case "word form": {
      const [base, past] = VERBS[random.int(0, VERBS.length - 1)]!;
      return {
        detail: detail({ grep: { pattern: `${base} ${a}`, mode: "full_text" }, substring: `${base} ${a}`, question: `When did we ${base} ${a}?`, answer: `${past} the ${a}` }),
        turn: [assistant(`We ${past} the ${a} cluster on ${WEEKDAYS[random.int(0, 6)]} after the review.`)],
      };
    }
    case "several words": {
      const words = shuffle(SEVERAL_WORDS, random).slice(0, 5);
      const typed = [words[0], words[1], words[3], words[4]].join(" ");
      // Decoys first (newer messages would hold the same words far apart): two ordinary-looking messages.
      const decoy = (order: string[]) => user(`${order[0]} is on the list. Later, much later: ${order.slice(1).join(", then ")} and ${a}.`);
      return {
        detail: detail({ grep: { pattern: typed, mode: "full_text" }, substring: typed, question: `What did we plan to ${typed}?`, answer: `${words.join(" ")} ${b}` }, 2),
        turn: [decoy([...words].reverse()), decoy([words[2]!, words[0]!, words[4]!, words[1]!, words[3]!]), assistant(`Plan: ${words.join(" ")} ${b} next week.`)],
      };
    }
    case "question": {
      const name = NAMES[random.int(0, NAMES.length - 1)]!;
      const day = WEEKDAYS[random.int(0, 6)]!;
      return {
        detail: detail({
          grep: { pattern: `Who takes over the ${a} on-call rotation on ${day}s?`, mode: "full_text" },
          substring: `Who takes over the ${a} on-call rotation on ${day}s?`,
          question: `Who takes over the ${a} on-call rotation on ${day}s?`,
          answer: `${a} team moves to ${name}`,
        }),
        turn: [user(`Note for the roster: the on-call rotation for the ${a} team moves to ${name} every ${day}.`)],
      };
    }
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

function cap(word: string): string {
  return word[0]!.toUpperCase() + word.slice(1);
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function shuffle<T>(items: T[], random: Random): T[] {
  const copy = [...items];
  for (let index = copy.length - 1; index > 0; index--) {
    const other = random.int(0, index);
    [copy[index], copy[other]] = [copy[other]!, copy[index]!];
  }
  return copy;
}
