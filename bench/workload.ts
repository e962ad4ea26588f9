/**
 * The standalone workload, shared by `bench:standalone` and `bench:peers`: a deterministic corpus
 * of N memories of ~30 words, each holding one made-up rare word no other memory contains, plus
 * paraphrase questions that share no content word with the memory they are about. A target (our
 * standalone server, or a peer) is driven through one interface, one write per memory, then the
 * searches, and the figures come back as one Result.
 */
import { execFile } from "node:child_process";
import { performance } from "node:perf_hooks";
import { percentiles, pick, prng, type Percentiles } from "./stats.js";
import { OBJECTS, SUBJECTS } from "./vocabulary.js";

export const MEMORY_TYPES = ["decision", "commitment", "blocker", "fact", "preference", "pattern", "note", "event"] as const;

export interface GeneratedMemory {
  index: number;
  memoryType: (typeof MEMORY_TYPES)[number];
  topic: string;
  content: string;
  /** The word only this memory contains. */
  rare: string;
}

export interface Paraphrase {
  /** The memory the question is about. */
  index: number;
  question: string;
}

export interface Corpus {
  memories: GeneratedMemory[];
  paraphrases: Paraphrase[];
}

const VERBS = ["chose", "moved", "replaced", "blocked", "measured", "agreed on", "deferred", "shipped", "reviewed", "rejected", "documented", "tuned"];
const DETAILS = [
  "because latency doubled during the busiest hour of the week",
  "after the incident review found two missing alerts",
  "for the third quarter launch with the partner team",
  "to cut the monthly cloud bill before the budget meeting",
  "as the security audit asked in its final report",
  "since several large customers asked for it again",
  "until the vendor replies about the contract terms",
  "with a two week rollback window agreed by everyone",
];
const FOLLOWUPS = [
  "Owners will check the result on Friday",
  "Nobody objected in the planning call",
  "The decision is recorded in the team wiki",
  "A follow-up review is booked next month",
];

/**
 * Paraphrase pairs: how the memory says it, and how a question asks about it in other words.
 * A target memory combines one habit and one circumstance, so 10 × 10 distinct meanings.
 */
const HABITS: Array<[memory: string, question: string]> = [
  ["drinks green tea every morning", "which hot beverage do they have at breakfast"],
  ["rides a bicycle to the office", "how do they commute to work"],
  ["is allergic to peanuts", "what food makes them ill"],
  ["plays the cello in an orchestra", "which instrument do they perform with"],
  ["adopted a beagle puppy", "what kind of dog did they get"],
  ["runs marathons on weekends", "what long distance racing hobby do they have"],
  ["is learning Japanese", "which foreign language are they studying"],
  ["booked a flight for the conference", "what travel plans exist for the event"],
  ["prefers dark mode in every editor", "which display theme do they pick for coding tools"],
  ["grows tomatoes on the balcony", "what vegetables do they garden at home"],
];
const CIRCUMSTANCES: Array<[memory: string, question: string]> = [
  ["while living in Lisbon", "during their time in Portugal's capital"],
  ["during the winter holidays", "around Christmas"],
  ["since the knee surgery last spring", "after their operation"],
  ["together with an older sister", "with a sibling"],
  ["near the riverside apartment", "close to their waterfront flat"],
  ["on doctor's advice", "because a physician recommended it"],
  ["to relax after stressful weeks", "to unwind when work gets tense"],
  ["on a tight budget", "while saving money"],
  ["as a childhood dream", "because they wanted it as a kid"],
  ["with colleagues from the design studio", "alongside coworkers from the creative agency"],
];
/** Every PARAPHRASE_EVERY-th memory is a paraphrase target (up to the 100 meanings above). */
const PARAPHRASE_EVERY = 97;
const SYLLABLES = ["ka", "zu", "mi", "tor", "vex", "lin", "qua", "dro", "pel", "fyn", "gru", "fo", "nix", "bel", "rho", "tam"];

/** A made-up word for index i: five syllables, a bijection on 0..16^5, so no two memories share one. */
function rareWord(i: number): string {
  let word = "";
  for (let k = 0, x = i; k < 5; k++, x = Math.floor(x / 16)) word += SYLLABLES[x % 16];
  return word;
}

export function generateCorpus(n: number): Corpus {
  const random = prng(42);
  const memories: GeneratedMemory[] = [];
  const paraphrases: Paraphrase[] = [];
  for (let i = 0; i < n; i++) {
    const rare = rareWord(i);
    const meaning = Math.floor(i / PARAPHRASE_EVERY);
    if (i % PARAPHRASE_EVERY === 0 && meaning < HABITS.length * CIRCUMSTANCES.length) {
      const [habit, habitQ] = HABITS[meaning % HABITS.length]!;
      const [circumstance, circumstanceQ] = CIRCUMSTANCES[Math.floor(meaning / HABITS.length)]!;
      memories.push({
        index: i,
        memoryType: "preference",
        topic: "personal life",
        content: `The user mentioned in passing that she ${habit} ${circumstance}. It came up in a chat, filed under ${rare} for later.`,
        rare,
      });
      paraphrases.push({ index: i, question: `${habitQ} ${circumstanceQ}?` });
      continue;
    }
    const subject = pick(random, SUBJECTS);
    memories.push({
      index: i,
      memoryType: pick(random, MEMORY_TYPES),
      topic: `${subject} ${pick(random, OBJECTS)}`,
      content: `The ${subject} team ${pick(random, VERBS)} ${pick(random, OBJECTS)} ${pick(random, DETAILS)}, tracked as ${rare}. ${pick(random, FOLLOWUPS)}.`,
      rare,
    });
  }
  return { memories, paraphrases };
}

/** What a benchmark drives: one write per memory, ranked search, a chronological listing. */
export interface Target {
  name: string;
  remember(memory: GeneratedMemory): Promise<void>;
  /** The indexes of the memories found, best first. */
  search(query: string, limit: number): Promise<number[]>;
  /** Newest first with a type filter; null when the target has no such listing. */
  listChronological: ((memoryType: string) => Promise<void>) | null;
  /** Resident memory of the server process, in MB. */
  rssMb(): Promise<number>;
  close(): Promise<void>;
}

export interface Result {
  target: string;
  n: number;
  /** Write p50 (ms) in each tenth of the load, first to last. */
  writeTenths: number[];
  write: Percentiles;
  /** Rare-word queries, first time each (the query is embedded). */
  searchFirst: Percentiles;
  /** The same queries again (query embedding cached where the target caches it). */
  searchCached: Percentiles;
  chronological: Percentiles | null;
  rareHit1: number;
  rareHit10: number;
  paraphraseTop1: number;
  paraphraseTop5: number;
  paraphraseCount: number;
  rssMb: number;
}

async function time(call: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await call();
  return performance.now() - start;
}

export interface WorkloadOptions {
  n: number;
  /** Rare-word searches (and chronological listings) to run. */
  searches: number;
  progress?: (line: string) => void;
}

/** Loads the corpus one write at a time, then runs the searches; every figure from one run. */
export async function runWorkload(target: Target, options: WorkloadOptions): Promise<Result> {
  const { memories, paraphrases } = generateCorpus(options.n);
  const writes: number[] = [];
  for (const memory of memories) {
    writes.push(await time(() => target.remember(memory)));
    if (options.progress && (memory.index + 1) % Math.max(1, Math.floor(options.n / 10)) === 0) {
      options.progress(`${target.name}: ${memory.index + 1}/${options.n} written, last write ${writes.at(-1)!.toFixed(1)} ms`);
    }
  }
  const tenth = Math.max(1, Math.floor(writes.length / 10));
  const writeTenths = Array.from({ length: 10 }, (_, k) => percentiles(writes.slice(k * tenth, (k + 1) * tenth)).p50);

  // Distinct memories picked deterministically across the whole load.
  const random = prng(7);
  const picked = new Set<number>();
  while (picked.size < Math.min(options.searches, memories.length)) picked.add(Math.floor(random() * memories.length));
  const targets = [...picked];
  let hit1 = 0;
  let hit10 = 0;
  const first: number[] = [];
  for (const index of targets) {
    let found: number[] = [];
    first.push(await time(async () => (found = await target.search(memories[index]!.rare, 10))));
    if (found[0] === index) hit1++;
    if (found.slice(0, 10).includes(index)) hit10++;
  }
  const cached: number[] = [];
  for (const index of targets) cached.push(await time(() => target.search(memories[index]!.rare, 10)));

  let top1 = 0;
  let top5 = 0;
  for (const p of paraphrases) {
    const found = await target.search(p.question, 5);
    if (found[0] === p.index) top1++;
    if (found.includes(p.index)) top5++;
  }

  let chronological: Percentiles | null = null;
  if (target.listChronological) {
    const list = target.listChronological;
    const samples: number[] = [];
    for (let i = 0; i < targets.length; i++) samples.push(await time(() => list(MEMORY_TYPES[i % MEMORY_TYPES.length]!)));
    chronological = percentiles(samples);
  }
  return {
    target: target.name,
    n: options.n,
    writeTenths,
    write: percentiles(writes),
    searchFirst: percentiles(first),
    searchCached: percentiles(cached),
    chronological,
    rareHit1: hit1 / targets.length,
    rareHit10: hit10 / targets.length,
    paraphraseTop1: paraphrases.length ? top1 / paraphrases.length : NaN,
    paraphraseTop5: paraphrases.length ? top5 / paraphrases.length : NaN,
    paraphraseCount: paraphrases.length,
    rssMb: await target.rssMb(),
  };
}

/** Process resident memory in MB, from ps (works on Linux and macOS). */
export async function processRssMb(pid: number): Promise<number> {
  const out = await new Promise<string>((resolve, reject) =>
    execFile("ps", ["-o", "rss=", "-p", String(pid)], (err, stdout) => (err ? reject(err) : resolve(stdout))),
  );
  return Number(out.trim()) / 1024;
}

export interface BenchArgs {
  sizes: number[];
  searches: number;
}

/** --sizes 1000,10000 (default) and --searches 200; --quick is --sizes 500 --searches 50. */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const value = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const quick = argv.includes("--quick");
  const sizes = (value("--sizes") ?? (quick ? "500" : "1000,10000")).split(",").map(Number);
  const searches = Number(value("--searches") ?? (quick ? 50 : 200));
  if (sizes.some((s) => !Number.isInteger(s) || s < 100) || !Number.isInteger(searches) || searches < 10) {
    throw new Error("usage: --sizes 1000,10000 --searches 200 (or --quick)");
  }
  return { sizes, searches };
}

export const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "–");
export const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : "–");
