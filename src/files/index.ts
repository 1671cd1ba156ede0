/**
 * Files: the one confinement rule by which every source reads a file or lists a
 * directory (confine.ts), and by which the chat tools write one (write.ts). May import only errors.
 */
export {
  type ConfinedList,
  type ConfinedRead,
  type ConfineHooks,
  confinedPath,
  confinedRoots,
  entryInside,
  isInside,
  listConfined,
  PATH_REFUSED,
  PathRefusedError,
  REFUSED,
  type Roots,
  readConfined,
} from "./confine.js";
export { type ConfinedWrite, writeConfined } from "./write.js";
