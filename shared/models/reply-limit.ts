/** The most a model's reply may be, in tokens: the chat model's ceiling, and what a day's first turn reserves of a token quota. */
export const REPLY_MAX_TOKENS = 2048;
