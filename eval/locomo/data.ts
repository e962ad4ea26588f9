import { existsSync, readFileSync } from "node:fs";
import type { Fixture, FixtureMemory, FixtureQuery } from "../retrieval/fixture.js";

/**
 * LoCoMo's development half (docs/evals.md "LoCoMo development half"): five conversations of the
 * public LoCoMo set, read at run time from LOCOMO_DIR (never copied into the repository). Each
 * turn becomes one memory, each question of categories 1–4 with evidence one search.
 */

/** The conversations of the development half, the only files this harness opens. */
const LOCOMO_CONVERSATIONS = ["26", "30", "41", "42", "43"] as const;
const DEFAULT_LOCOMO_DIR = "/work/shared/data/locomo-dev/";

/** The categories asked; 5 is adversarial (about something the other speaker said) and is left out. */
export const LOCOMO_CATEGORIES = [1, 2, 3, 4] as const;
type LocomoCategory = (typeof LOCOMO_CATEGORIES)[number];

/** A turn's id as the data writes it: `D<session>:<turn>`. */
const DIA_ID = /^D\d+:\d+$/;

/**
 * "event", not "note": a turn is a dated occurrence (who said what, on which day), and an event is
 * never superseded or updated, so if the consolidator ran, two alike things said months apart
 * would stay two records ("extends") instead of the later one being proposed to supersede the
 * earlier, which is what near-duplicate notes get (docs/consolidation.md). The type does not
 * enter the ranking, so the numbers are the same either way.
 */
const TURN_MEMORY_TYPE = "event";

export interface LocomoQuestion {
  conversation: string;
  /** Position in the conversation's `qa` list: how the output names the question. */
  index: number;
  category: LocomoCategory;
  question: string;
  /** Evidence dia_ids that name a turn of the conversation, each once. */
  evidence: string[];
  /** Evidence entries that are not a dia_id at all (e.g. two ids in one string), as written. */
  malformed: string[];
  /** Well-formed dia_ids that name no turn of the conversation. */
  dangling: string[];
}

export interface LocomoConversation {
  id: string;
  /** One scope per conversation; each question searches only its own. */
  scope: string;
  /** One memory per turn, fixture id `<conversation>/<dia_id>`, in session and turn order. */
  memories: FixtureMemory[];
  questions: LocomoQuestion[];
  /** Questions not asked: another category (5, adversarial), or no evidence. */
  skipped: { otherCategory: number; withoutEvidence: number };
}

function locomoDir(): string {
  const dir = process.env.LOCOMO_DIR || DEFAULT_LOCOMO_DIR;
  return dir.endsWith("/") ? dir : `${dir}/`;
}

/** Reads the development half; a missing file fails naming the path and LOCOMO_DIR. */
export function readConversations(dir: string = locomoDir()): LocomoConversation[] {
  return LOCOMO_CONVERSATIONS.map((id) => {
    const file = `${dir}${id}.json`;
    if (!existsSync(file)) throw new Error(`LoCoMo conversation ${id} not found at ${file} (set LOCOMO_DIR to the directory holding 26.json … 43.json)`);
    return parseConversation(id, JSON.parse(readFileSync(file, "utf8")) as unknown);
  });
}

/** The memory fixture id of a turn: dia_ids repeat across conversations, so they are prefixed. */
const turnId = (conversation: string, diaId: string): string => `${conversation}/${diaId}`;
/** The dia_id part of a fixture id (what the output prints). */
export const diaIdOf = (fixtureId: string): string => fixtureId.slice(fixtureId.indexOf("/") + 1);

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/**
 * One conversation in LoCoMo's shape (speaker_a/b, session_N turn lists, session_N_date_time, qa)
 * as memories and questions. The structure must hold (a broken file fails, naming the key); the
 * evidence lists are taken as they come, with malformed and dangling entries set aside.
 */
export function parseConversation(id: string, json: unknown): LocomoConversation {
  const broken = (what: string) => new Error(`LoCoMo conversation ${id}: ${what}`);
  if (!isObject(json)) throw broken("not a JSON object");
  const data = json;
  const sessions = Object.keys(data)
    .map((key) => /^session_(\d+)$/.exec(key))
    .filter((m): m is RegExpExecArray => m !== null && Array.isArray(data[m[0]]))
    .map((m) => Number(m[1]))
    .sort((a, b) => a - b);
  if (sessions.length === 0) throw broken("no session_N lists");
  const scope = `locomo-${id}`;
  const memories: FixtureMemory[] = [];
  for (const n of sessions) {
    // "1:56 pm on 8 May, 2023" -> "8 May, 2023": the protocol keeps the day, not the time.
    const stamp = data[`session_${n}_date_time`];
    if (typeof stamp !== "string") throw broken(`session_${n}_date_time is missing`);
    const date = stamp.includes(" on ") ? stamp.slice(stamp.indexOf(" on ") + 4).trim() : stamp.trim();
    for (const [i, turn] of (data[`session_${n}`] as unknown[]).entries()) {
      if (!isObject(turn) || typeof turn.speaker !== "string" || typeof turn.dia_id !== "string" || typeof turn.text !== "string")
        throw broken(`session_${n}[${i}] is not a turn {speaker, dia_id, text}`);
      const { speaker, dia_id: diaId, text, blip_caption: shared } = turn;
      const caption = typeof shared === "string" && shared.trim() !== "" ? ` [shares ${shared.trim()}]` : "";
      memories.push({ id: turnId(id, diaId), type: TURN_MEMORY_TYPE, scope, topic: `${speaker}, ${date}`, content: `${speaker} (${date}): ${text}${caption}` });
    }
  }
  const turns = new Set(memories.map((m) => diaIdOf(m.id)));
  if (turns.size !== memories.length) throw broken("a dia_id names two turns");

  if (!Array.isArray(data.qa)) throw broken("no qa list");
  const questions: LocomoQuestion[] = [];
  const skipped = { otherCategory: 0, withoutEvidence: 0 };
  for (const [index, qa] of (data.qa as unknown[]).entries()) {
    if (!isObject(qa)) throw broken(`qa[${index}] is not an object`);
    const { category, question, evidence } = qa;
    if (!LOCOMO_CATEGORIES.includes(category as LocomoCategory)) {
      skipped.otherCategory++;
      continue;
    }
    if (!Array.isArray(evidence) || evidence.length === 0) {
      skipped.withoutEvidence++;
      continue;
    }
    if (typeof question !== "string" || question.trim() === "") throw broken(`qa[${index}] has no question`);
    const q: LocomoQuestion = { conversation: id, index, category: category as LocomoCategory, question, evidence: [], malformed: [], dangling: [] };
    for (const e of evidence as unknown[]) {
      if (typeof e !== "string" || !DIA_ID.test(e)) q.malformed.push(typeof e === "string" ? e : JSON.stringify(e));
      else if (!turns.has(e)) q.dangling.push(e);
      else if (!q.evidence.includes(e)) q.evidence.push(e);
    }
    questions.push(q);
  }
  return { id, scope, memories, questions, skipped };
}

/**
 * The conversations as one retrieval fixture (for the pools, pools.ts, and the fit, fit.ts): each
 * question a retrieval query scoped to its conversation, whose expected ids are its evidence turns
 * (none when every entry was malformed: then it can only miss, as it does in the gate).
 */
export function locomoFixture(conversations: readonly LocomoConversation[]): Fixture {
  return {
    memories: conversations.flatMap((c) => c.memories),
    queries: conversations.flatMap((c) => c.questions.map((q) => locomoQuery(q, c.scope))),
  };
}

function locomoQuery(q: LocomoQuestion, scope: string): FixtureQuery {
  return { id: `${q.conversation}/q${q.index}`, slice: "retrieval", query: q.question, expected: q.evidence.map((e) => turnId(q.conversation, e)), scope };
}
