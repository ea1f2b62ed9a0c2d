import { config } from "zod/mini";
import en from "zod/v4/locales/en.js";

/**
 * The project's zod: zod/mini, whose schemas are built with functions (`z.optional(z.string())`,
 * `.check(z.minLength(1))`) instead of methods. A classic schema carries every method on each
 * instance and its import keeps all of zod's API in the bundle; mini builds a schema in about a
 * third of the time and ships what is used, which the cold-start bench counts on every function
 * (each validates its settings and requests as it loads). Mini leaves messages generic ("Invalid
 * input") until a locale is set: English, set here once, before any schema parses.
 */
config(en());

export * from "zod/mini";
