/**
 * The standalone workload, shared by `bench:standalone` and `bench:peers`: a deterministic corpus
 * of N memories of ~30 words, each holding one made-up rare word no other memory contains, plus
 * paraphrase questions that share no content word with the memory they are about. A target (our
 * standalone server, or a peer) is driven through one interface, one write per memory, then the
 * searches, and the figures come back as one Result.
 */
import { execFile } from "node:child_process";
import { performance } from "node:perf_hooks";
import { flagValue, percentiles, pick, prng, type Percentiles } from "./stats.js";
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
 * Paraphrase pairs: a fact as a memory states it, and a question about it in other words. Each
 * pair is a different fact, so a question has one right answer among the targets, as a question a
 * user asks about their own notes does; none shares a content word with its memory
 * (checkParaphrases). Written by hand as a person would ask, not chosen by what the model finds.
 */
const PARAPHRASES: Array<[memory: string, question: string]> = [
  ["drinks green tea every morning", "which hot beverage does she have at breakfast"],
  ["is allergic to peanuts", "what food makes her ill"],
  ["plays the cello in an orchestra", "which instrument does she perform with"],
  ["adopted a beagle puppy", "what kind of dog did she get"],
  ["runs marathons on weekends", "what long distance racing hobby does she have"],
  ["is learning Japanese", "which foreign language is she studying"],
  ["booked a flight to the Berlin conference", "what travel plans exist for the event in Germany"],
  ["grows tomatoes on the balcony", "what vegetables does she garden at home"],
  ["rides a bicycle to the office", "how does she commute to work"],
  ["prefers dark mode in every editor", "which display theme does she pick for coding tools"],
  ["moved to Lisbon last year", "when did she settle in Portugal's capital"],
  ["has two older brothers", "how many male siblings does she have"],
  ["had knee surgery in the spring", "what operation did she undergo"],
  ["is vegetarian", "does she eat meat"],
  ["collects vintage vinyl records", "what old music albums does she hoard"],
  ["hates flying on small planes", "is she afraid of air travel in tiny aircraft"],
  ["bakes sourdough bread on Sundays", "what loaf does she make at the weekend"],
  ["works night shifts at the hospital", "when is she on duty at the clinic"],
  ["keeps bees in the back garden", "does she look after honey insects in her yard"],
  ["wears contact lenses instead of glasses", "how does she correct her eyesight"],
  ["is saving for a house deposit", "what is she putting money aside for"],
  ["speaks fluent Portuguese", "which language of Brazil does she know well"],
  ["volunteers at the animal shelter", "where does she help out unpaid with pets"],
  ["drives an electric car", "what battery powered vehicle does she own"],
  ["lost her wallet on the train", "what did she misplace during the rail journey"],
  ["reads crime novels before bed", "what books does she enjoy at night"],
  ["practises yoga at dawn", "what stretching exercise does she do early"],
  ["supports the local football club", "which soccer team is she a fan of"],
  ["is afraid of spiders", "which creepy crawlies frighten her"],
  ["paints watercolour landscapes", "what kind of art does she make"],
  ["plays chess online every evening", "which strategy game with kings and pawns does she play on the internet"],
  ["has a sister who lives in Canada", "where does her sibling reside abroad"],
  ["is training for a triathlon", "which swim bike run race is she preparing for"],
  ["quit smoking three years ago", "when did she give up cigarettes"],
  ["cooks spicy Thai curries", "what hot Asian dish does she make"],
  ["uses a standing desk", "does she work upright at her workstation"],
  ["visits her grandmother every Sunday", "who does she see at the weekend in her family"],
  ["is colour blind", "does she have trouble telling red from green"],
  ["sleeps badly when it is hot", "what keeps her awake during warm nights"],
  ["plays the drums in a garage band", "what percussion does she play with friends"],
  ["owns three cats", "how many felines live with her"],
  ["never drinks alcohol", "does she avoid wine and beer"],
  ["runs a small pottery studio", "what ceramics business does she have"],
  ["got married in June", "when was her wedding"],
  ["is studying for a law degree", "what legal qualification is she pursuing"],
  ["takes the ferry across the bay", "how does she cross the water to get to her job"],
  ["prefers window seats on trains", "where does she like to sit on the railway"],
  ["listens to jazz while cooking", "what music does she put on in the kitchen"],
  ["broke her wrist skiing", "what injury did she get on the slopes"],
  ["tutors maths to teenagers", "which subject does she coach adolescents in"],
  ["keeps a journal every night", "does she write a diary in the evenings"],
  ["dreams of hiking the Inca trail", "which ancient path in the Andes does she want to walk"],
  ["cannot stand loud restaurants", "which noisy places to eat does she avoid"],
  ["sings in a church choir", "where does she perform vocal music with a group"],
  ["grew up on a dairy farm", "what kind of rural place did she spend her childhood on"],
  ["is a night owl who codes after midnight", "when does she program, late or early"],
  ["rents a flat above a bakery", "what shop is below her apartment"],
  ["has type 1 diabetes", "which blood sugar condition does she manage"],
  ["does woodworking in the garage", "what carpentry hobby does she have"],
  ["plays tennis with her father", "which racket sport does she play with her dad"],
  ["wants to learn to fly gliders", "what aviation hobby is she hoping to take up"],
  ["gets hay fever every May", "what seasonal allergy bothers her in late spring"],
  ["knits scarves for her nieces", "what woollen things does she make for her brother's daughters"],
  ["takes the night bus home", "how does she get back late"],
  ["uses a Linux laptop", "which open source operating system is on her computer"],
  ["is writing a fantasy novel", "what book is she authoring"],
  ["has a fear of heights", "does being up high scare her"],
  ["went to university in Edinburgh", "where in Scotland did she study"],
  ["works from a cafe on Fridays", "where does she do her job at the end of the week"],
  ["plays video games with her nephew", "what does she do on the console with her sister's son"],
  ["donates blood every quarter", "how often does she give plasma"],
  ["is on a gluten free diet", "which wheat protein does she avoid eating"],
  ["keeps tropical fish in a large tank", "what aquarium pets does she have"],
  ["climbs at a bouldering gym", "what wall sport does she do"],
  ["drives her children to school", "who takes her sons and daughters to class"],
  ["restores old motorcycles", "what vintage bikes does she repair"],
  ["hosts a board game night every Thursday", "what does she organise for friends weekly with dice and cards"],
  ["takes cold showers every morning", "how does she wash at the start of the day"],
  ["meditates for twenty minutes daily", "how long is her mindfulness practice each day"],
  ["owns a sailboat on the lake", "what vessel does she keep on the water"],
  ["is moving to a bigger apartment in March", "when will she relocate to a larger flat"],
  ["builds model trains", "what miniature railway hobby does she have"],
  ["plays golf with clients", "which club and ball sport does she use for business"],
  ["watches every Formula 1 race", "which motor racing series does she follow"],
  ["has a tattoo of a whale", "what ink art of a sea mammal is on her skin"],
  ["walks ten thousand steps a day", "how far does she go on foot daily"],
  ["studied architecture", "what did she learn at college about designing buildings"],
  ["rents out a room to a student", "who lodges in her spare bedroom"],
  ["uses a wheelchair since the accident", "how does she get around after the crash"],
  ["makes her own jam from garden plums", "what fruit preserves does she cook"],
  ["teaches salsa classes", "what Latin dance does she instruct"],
  ["is deaf in one ear", "does she have hearing loss on a single side"],
  ["collects stamps from Africa", "what postage items does she gather"],
  ["fosters rescue greyhounds", "what racing dogs does she look after temporarily"],
  ["goes fishing at the reservoir", "where does she cast a line for trout"],
  ["has a weekly call with her mentor", "when does she speak to her adviser"],
  ["keeps chickens for eggs", "what poultry does she raise"],
  ["plays the ukulele at parties", "which small four string instrument does she strum"],
  ["is learning to surf in Cornwall", "where in England is she catching waves"],
  ["has a parrot that talks", "what speaking bird lives with her"],
];

/** Words too common to carry meaning; the rest of a question must be absent from its memory. */
const STOP_WORDS = new Set(
  "a an the and or of to in on at for with from by up out as is are was be been being do does did she her they them their it its this that what which who when where how why many much long far often every each some any no not own".split(
    " ",
  ),
);

/** A word's crude stem: lower case, its first five letters (so "drinks" and "drinking" collide). */
const stem = (word: string) => word.toLowerCase().slice(0, 5);

/** Throws if a question shares a content word with its memory, or two memories or two questions repeat. */
export function checkParaphrases(pairs: ReadonlyArray<readonly [string, string]>): void {
  const words = (text: string) => (text.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !STOP_WORDS.has(w));
  for (const [memory, question] of pairs) {
    const memoryStems = new Set(words(memory).map(stem));
    const shared = words(question).filter((w) => memoryStems.has(stem(w)));
    if (shared.length > 0) throw new Error(`paraphrase question ${JSON.stringify(question)} shares ${shared.join(", ")} with its memory`);
  }
  if (new Set(pairs.map((p) => p[0])).size !== pairs.length || new Set(pairs.map((p) => p[1])).size !== pairs.length) {
    throw new Error("paraphrase pairs repeat a memory or a question");
  }
}
checkParaphrases(PARAPHRASES);

/** Every PARAPHRASE_EVERY-th memory is a paraphrase target (up to the 100 pairs above). */
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
    const pair = i % PARAPHRASE_EVERY === 0 ? PARAPHRASES[i / PARAPHRASE_EVERY] : undefined;
    if (pair) {
      memories.push({
        index: i,
        memoryType: "preference",
        topic: "personal life",
        content: `The user mentioned in passing that she ${pair[0]}. It came up in a chat, filed under ${rare} for later.`,
        rare,
      });
      paraphrases.push({ index: i, question: `${pair[1]}?` });
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
  /** Right after the last search. */
  rssMb: number;
  /** After WorkloadOptions.idleSeconds without calls (null when not measured). */
  rssIdleMb: number | null;
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
  /** The target already holds the corpus (a kept data directory): skip the writes. */
  loaded?: boolean;
  /**
   * Seconds to wait without calls before reading resident memory again (0: no second reading).
   * A garbage-collected server holds the heap a burst of work left behind until its runtime shrinks
   * it, so memory right after the load and memory at rest are different figures.
   */
  idleSeconds?: number;
  progress?: (line: string) => void;
}

/** Loads the corpus one write at a time, then runs the searches; every figure from one run. */
export async function runWorkload(target: Target, options: WorkloadOptions): Promise<Result> {
  const { memories, paraphrases } = generateCorpus(options.n);
  const writes: number[] = [];
  for (const memory of options.loaded ? [] : memories) {
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
  const rssMb = await target.rssMb();
  const idleSeconds = options.idleSeconds ?? 0;
  let rssIdleMb: number | null = null;
  if (idleSeconds > 0) {
    options.progress?.(`${target.name}: idle for ${idleSeconds} s, then resident memory again`);
    await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
    rssIdleMb = await target.rssMb();
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
    rssMb,
    rssIdleMb,
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
  /** --idle-rss: seconds idle before the second memory reading (WorkloadOptions.idleSeconds). */
  idleSeconds: number;
}

/**
 * --sizes 1000,10000 (default), --searches 200 and --idle-rss 60; --quick is --sizes 500
 * --searches 50 --idle-rss 0.
 */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const value = (flag: string) => flagValue(argv, flag);
  const quick = argv.includes("--quick");
  const sizes = (value("--sizes") ?? (quick ? "500" : "1000,10000")).split(",").map(Number);
  const searches = Number(value("--searches") ?? (quick ? 50 : 200));
  const idleSeconds = Number(value("--idle-rss") ?? (quick ? 0 : 60));
  if (sizes.some((s) => !Number.isInteger(s) || s < 100) || !Number.isInteger(searches) || searches < 10 || !(idleSeconds >= 0)) {
    throw new Error("usage: --sizes 1000,10000 --searches 200 --idle-rss 60 (or --quick)");
  }
  return { sizes, searches, idleSeconds };
}

export const ms = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "–");
export const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : "–");
