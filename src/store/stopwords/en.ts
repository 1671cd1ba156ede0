/**
 * English stop words: terms a recall query never searches and never scores (docs/sources.md:
 * "a hit needs at least one matching term that is not a stop word"). Data, one term per
 * entry, already in the form terms take (see ../terms.ts: NFKC, case folded, split at
 * every non-letter/digit, so `don't` is `don` + `t` and both pieces are listed).
 *
 * Based on the common IR lists (function words: articles, pronouns, auxiliaries,
 * prepositions, conjunctions, question words, frequent adverbs) plus the words people wrap
 * a question to a memory in (`please`, `tell`, `remember`, `know`, …). Content words that
 * only happen to be frequent (`project`, `team`, `deploy`) are not here: IDF weighs them.
 * Words that are also names or content are left out on purpose (`may` the month, `us`,
 * `won`, `will` stays: a query about a will is rare, a query with one is not).
 */
import { words } from "./words.js";

export const ENGLISH_STOP_WORDS: readonly string[] = words(`
  # articles, determiners, quantifiers
  a an the this that these those some any each every
  all both either neither no none other another such own
  same few more most much many several lot lots
  # pronouns
  i me my mine myself we our ours ourselves you
  your yours yourself yourselves he him his himself she her
  hers herself it its itself they them their theirs
  themselves one ones someone something anyone anything everyone
  everything nobody nothing
  # question words
  what which who whom whose when where why how whats
  whatever whenever wherever
  # auxiliaries and copulas
  am is are was were be been being have has had having
  do does did doing done will would shall should can could
  might must ought get gets got let
  # contraction pieces (don't → don + t, I'm → i + m, …)
  s t d ll m re ve don doesn didn isn aren wasn
  weren hasn haven hadn wouldn shouldn couldn cannot
  mustn needn shan ain
  # prepositions
  about above across after against along among around at
  before behind below beneath beside between beyond by down
  during except for from in inside into near of off on
  onto out outside over past per since than through
  throughout till to toward towards under until up upon via
  with within without
  # conjunctions
  and or but nor so yet if then else because as while
  whether though although unless whereas
  # frequent adverbs and fillers
  not only very too also just now again ever never always
  often here there still already even really quite rather
  maybe perhaps please thanks thank hi hello hey ok okay
  yes yeah well like etc
  # how a question to a memory is worded
  tell told say said says know knew known remember remind
  recall think mentioned mention
`);
