export * from "./archive/index.js";
export * from "./types.js";
