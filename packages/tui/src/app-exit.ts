/** How the app leaves: the exit code for `prime-agent`. */
export type AppExit = { code: 0 } | { code: number; message: string };
