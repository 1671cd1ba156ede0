/**
 * Chinese stop words for recall queries (docs/sources.md). Chinese has no spaces, so terms are
 * character bigrams (see ../terms.ts); stop words work on the character run before the
 * bigrams are made:
 *
 * - {@link CHINESE_STOP_WORDS}: function words (question words, pronouns, conjunctions,
 *   adverbs, politeness). Each occurrence is cut out of the query's run, and the run
 *   splits there, so `北京的天气怎么样` searches `北京` and `天气` — never the bigrams that
 *   straddle a function word (`京的`, `气怎`, `么样`), which would match by accident or,
 *   matching nothing, dilute the query.
 * - {@link CHINESE_STOP_CHARS}: single characters that are (almost) only grammar —
 *   particles, the copula 是, personal pronouns, question characters (哪, 几, 谁, 啥) — and
 *   split a run wherever they occur.
 *   Characters that also start or end content words (在 in 在线, 会 in 会议, 能 in 性能,
 *   更 in 更新) are deliberately absent.
 */
import { words } from "./words.js";

export const CHINESE_STOP_CHARS: readonly string[] = words(`
  的 了 吗 呢 吧 啊 呀 嘛 哦 啦 么 是 很 们
  我 你 您 他 她 它
  哪 几 谁 啥
`);

export const CHINESE_STOP_WORDS: readonly string[] = words(`
  # question words
  什么 怎么 怎么样 怎样 如何 为什么 为何 哪里 哪儿 哪个 哪些
  多少 几个 是否 是不是 有没有 能不能 可不可以 请问
  # pronouns and demonstratives
  我们 你们 他们 她们 它们 咱们 自己 大家 这个 那个 这些
  那些 这里 那里 这儿 那儿 这样 那样 这么 那么 这种 那种
  某个 某些 其他 其它 其中 一个 一些 一下 一点 一种
  # conjunctions and prepositions
  因为 所以 但是 可是 不过 而且 并且 或者 还是 以及 如果
  要是 虽然 然后 然而 因此 于是 否则 关于 对于 由于 为了
  除了 根据 按照 通过 的话
  # adverbs, auxiliaries, fillers
  已经 就是 不是 只是 还有 没有 可以 可能 应该 能够 需要
  一直 总是 经常 非常 特别 比较 有点 一样 现在 正在 以前
  以后 之前 之后 时候 等等 告诉 知道 记得 记住 提到 说过
`);
