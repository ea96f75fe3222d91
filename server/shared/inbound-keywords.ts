/**
 * What the texting rules read in an inbound text (server/services/compliance/opt-out-words.ts):
 * the class of keyword it is, and what matched. Pure, so readers of replies elsewhere (appointment
 * replies, server/shared/appointment-replies.ts) take the rules' answer without importing them.
 */
export type KeywordClass = 'opt_out' | 'opt_in' | 'help' | 'likely_opt_out' | 'none';

export type Classification = {
  class: KeywordClass;
  /** What matched, normalised (a keyword, or the name of a likely-opt-out pattern); null for `none`. */
  match: string | null;
};
