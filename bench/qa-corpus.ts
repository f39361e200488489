/**
 * The question-answering benchmark's conversation (issue 14): two people, Maya (user) and Theo (assistant),
 * talk across many dated sessions about many topics; now and then one of them states a fact, and a question
 * about it is asked later in natural language, with other words than the statement's where people would use
 * them (adopted / adopt, travelling / flying). The chit-chat around the facts reuses the facts' vocabulary
 * (animals, cities, jobs, instruments, dishes) in other senses, so finding the evidence takes more than one word.
 * Deterministic from a seed.
 */
import type { AgentMessage } from "../src/host/openclaw-types.js";
import { Random } from "./random.js";

export interface QaQuestion {
  question: string;
  /** Indexes of the evidence messages in the conversation's message order. */
  evidence: number[];
}

export interface QaCorpus {
  turns: AgentMessage[][];
  questions: QaQuestion[];
  messages: number;
}

const ANIMALS = ["dog", "cat", "parrot", "rabbit", "tortoise", "hamster", "ferret", "gecko"];
const PET_NAMES = ["Biscuit", "Pepper", "Mochi", "Juniper", "Waffles", "Clover", "Ziggy", "Noodle", "Pistachio", "Marble", "Tofu", "Basil"];
const JOBS = ["nurse", "architect", "pastry chef", "electrician", "translator", "pilot", "veterinarian", "paramedic", "librarian", "carpenter"];
const PLACES = ["hospital", "studio", "bakery", "shipyard", "embassy", "airline", "clinic", "museum", "school", "theatre"];
const CITIES = ["Lisbon", "Montreal", "Kyoto", "Nairobi", "Oslo", "Valparaiso", "Tbilisi", "Hanoi", "Seville", "Reykjavik", "Porto", "Krakow"];
const MONTHS = ["January", "March", "April", "May", "June", "August", "September", "October", "November", "December"];
const EVENTS = ["a cousin's wedding", "a jazz festival", "a marathon", "a conference", "a food market", "an art fair"];
const INSTRUMENTS = ["cello", "banjo", "saxophone", "harp", "accordion", "ukulele", "trumpet", "clarinet"];
const TEACHERS = ["Mrs. Okafor", "Mr. Lindqvist", "Rosalind", "Teodor", "Ms. Brennan", "Priyanka", "Anselm", "Mirela"];
const DISHES = ["lentil soup", "apple pie", "paella", "banana bread", "chili", "ramen", "goulash", "lasagna"];
const INGREDIENTS = ["smoked paprika", "cardamom", "brown butter", "miso paste", "orange zest", "anchovies", "maple syrup", "fennel seeds"];
const FRIENDS = ["Hana", "Dario", "Yusuf", "Lotte", "Mateo", "Sigrid", "Kwame", "Elena"];
const BOOKS = ["The Salt Road", "Glass Orchards", "A Winter Atlas", "The Quiet Engine", "Paper Lanterns", "North of Midnight"];
const NEIGHBORHOODS = ["Riverside", "Old Harbour", "Maple Heights", "Greenpoint", "Castle Hill", "Larkfield"];
const BODY_PARTS = ["ankle", "wrist", "shoulder", "knee", "elbow"];
const ACTIVITIES = ["bouldering", "playing volleyball", "skateboarding", "ice skating", "hiking a scree slope"];
const CARS = ["hatchback", "pickup truck", "station wagon", "minivan", "convertible"];
const COLORS = ["green", "silver", "mustard yellow", "navy blue", "burgundy"];
const ORGS = ["animal shelter", "food bank", "community garden", "public library", "youth football club"];
const WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"];
const TOPICS = [
  "weather", "work", "weekend", "movies", "books", "cooking", "travel", "music", "sports", "family", "garden", "news",
];

type Fact = { statement: string; question: string; speaker: "user" | "assistant" };

/** One fact of a kind, with its question; `pick` draws slot values. */
function fact(kind: number, random: Random): Fact {
  const pick = <T>(list: readonly T[]) => list[random.int(0, list.length - 1)]!;
  const speaker = random.chance(0.5) ? "user" : "assistant";
  const who = speaker === "user" ? "Maya" : "Theo";
  switch (kind) {
    case 0: {
      const animal = pick(ANIMALS);
      return { speaker, statement: `I finally adopted a ${animal} from the shelter, we named her ${pick(PET_NAMES)}.`, question: `What is the name of the ${animal} ${who} adopted?` };
    }
    case 1: {
      const job = pick(JOBS);
      return { speaker, statement: `My brother got a job as a ${job} at a ${pick(PLACES)} in ${pick(CITIES)}.`, question: `Where does ${who}'s brother work as a ${job}?` };
    }
    case 2: {
      const month = pick(MONTHS);
      return { speaker, statement: `We're flying to ${pick(CITIES)} in ${month} for ${pick(EVENTS)}.`, question: `Where is ${who} travelling in ${month}?` };
    }
    case 3: {
      const instrument = pick(INSTRUMENTS);
      return { speaker, statement: `I've started ${instrument} lessons with a teacher called ${pick(TEACHERS)}.`, question: `Who teaches ${who} to play the ${instrument}?` };
    }
    case 4: {
      const dish = pick(DISHES);
      return { speaker, statement: `The secret in my grandmother's ${dish} is a spoon of ${pick(INGREDIENTS)}.`, question: `What is the secret ingredient in the ${dish} recipe?` };
    }
    case 5: {
      const book = pick(BOOKS);
      return { speaker, statement: `I just finished reading ${book}, ${pick(FRIENDS)} recommended it to me.`, question: `Who recommended ${book} to ${who}?` };
    }
    case 6: {
      const neighborhood = pick(NEIGHBORHOODS);
      return { speaker, statement: `We signed the lease on a flat in ${neighborhood}, moving in next month.`, question: `Which neighborhood is ${who} moving to?` };
    }
    case 7: {
      const part = pick(BODY_PARTS);
      return { speaker, statement: `I sprained my ${part} while ${pick(ACTIVITIES)} last weekend.`, question: `How did ${who} sprain the ${part}?` };
    }
    case 8:
      return { speaker, statement: `I bought a used ${pick(COLORS)} ${pick(CARS)} from my neighbour.`, question: `What kind of car did ${who} buy from the neighbour?` };
    default: {
      const org = pick(ORGS);
      return { speaker, statement: `I've been volunteering at the ${org} every ${pick(WEEKDAYS)}.`, question: `On which day does ${who} volunteer at the ${org}?` };
    }
  }
}

/** Chit-chat that reuses the facts' vocabulary in other senses. */
function chatter(random: Random): string {
  const pick = <T>(list: readonly T[]) => list[random.int(0, list.length - 1)]!;
  const lines = [
    `Did you see the documentary about ${pick(ANIMALS)}s in ${pick(CITIES)}? The ${pick(JOBS)} in it was great.`,
    `My colleague keeps talking about ${pick(INSTRUMENTS)} music and ${pick(DISHES)}, I don't get it.`,
    `The ${pick(TOPICS)} this week was rough, I barely had time for the ${pick(ORGS)}.`,
    `Someone at the ${pick(PLACES)} said ${pick(CITIES)} is lovely in ${pick(MONTHS)}.`,
    `I tried a recipe with ${pick(INGREDIENTS)} but it did not work, maybe next ${pick(WEEKDAYS)}.`,
    `Have you heard from ${pick(FRIENDS)}? They wanted to talk about the ${pick(TOPICS)} again.`,
    `We watched a film about a ${pick(JOBS)} who plays the ${pick(INSTRUMENTS)}. Very sweet.`,
    `The traffic near ${pick(NEIGHBORHOODS)} was terrible, a ${pick(COLORS)} ${pick(CARS)} broke down.`,
    `My ${pick(BODY_PARTS)} is sore from the gym, I should stretch more before ${pick(ACTIVITIES)}.`,
    `Not much news, the ${pick(TOPICS)} is the same as ever. How was your ${pick(WEEKDAYS)}?`,
    `I keep meaning to read ${pick(BOOKS)} but the library copy is always out.`,
    `Our neighbour's ${pick(ANIMALS)} escaped again and ran all the way to the ${pick(PLACES)}.`,
  ];
  return lines[random.int(0, lines.length - 1)]!;
}

export function buildQaCorpus(seed: number, sessions: number, exchangesPerSession: number, factsPerSession: number): QaCorpus {
  const random = new Random(seed ^ 0x51ab);
  const turns: AgentMessage[][] = [];
  const questions: QaQuestion[] = [];
  let index = 0;
  let kind = 0;
  for (let session = 0; session < sessions; session++) {
    const factAt = new Set(Array.from({ length: factsPerSession }, () => random.int(1, exchangesPerSession - 2)));
    for (let exchange = 0; exchange < exchangesPerSession; exchange++) {
      let user = chatter(random);
      let assistant = chatter(random);
      if (factAt.has(exchange)) {
        const stated = fact(kind++ % 10, random);
        if (stated.speaker === "user") user = `${user} ${stated.statement}`;
        else assistant = `${stated.statement} ${assistant}`;
        questions.push({ question: stated.question, evidence: [stated.speaker === "user" ? index : index + 1] });
      }
      turns.push([
        { role: "user", content: exchange === 0 ? `(session ${session + 1}) ${user}` : user, timestamp: 0 },
        { role: "assistant", content: [{ type: "text", text: assistant }], timestamp: 0, stopReason: "stop" },
      ]);
      index += 2;
    }
  }
  return { turns, questions, messages: index };
}
