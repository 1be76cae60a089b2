/** The `prime-agent` command line. */
export { type CliArgs, type Command, parseArgs } from "./args.js";
export { HELP } from "./help.js";
export { type CliIo, runCli } from "./run-cli.js";
