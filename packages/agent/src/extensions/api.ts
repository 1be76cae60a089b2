/**
 * What an extension is written against: the API its factory receives and the types its events
 * carry. Extensions (the built-in ones included) import this module only, never the package
 * index, which would pull in the command line and the modes that load them.
 */
export type { CompactionEntry, CustomEntry, HostMessage, SessionEntry } from "../session/index.js";
export type * from "./types.js";
