/**
 * A small Japanese stop list for recall queries (docs/sources.md): particles and copula forms
 * written in hiragana, used like the Chinese lists (see zh.ts): {@link JAPANESE_STOP_CHARS}
 * split a run wherever they occur, {@link JAPANESE_STOP_WORDS} are cut out of it. Kanji
 * and katakana words are never touched.
 */
import { words } from "./words.js";

export const JAPANESE_STOP_CHARS: readonly string[] = words(`
  の は が を に で と も へ や か ね よ
`);

export const JAPANESE_STOP_WORDS: readonly string[] = words(`
  です ます でした ました ません ない ある いる する した
  して から まで より こと もの これ それ あれ どれ この
  その あの どの ここ そこ あそこ どこ だれ なに なん いつ
  なぜ どう どうして ください について
`);
