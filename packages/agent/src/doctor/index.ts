/** `prime-agent doctor`: checks with a fix for each problem. */
export type { CheckResult } from "./check-result.js";
export { runChecks } from "./checks.js";

import type { CheckResult } from "./check-result.js";

/** One line per check, then the fix under each problem. */
export function formatChecks(results: readonly CheckResult[]): string {
	const mark = { ok: "✓", warn: "!", fail: "✗" } as const;
	return results
		.map((result) => {
			const head = `${mark[result.status]} ${result.name}: ${result.detail}`;
			return result.fix && result.status !== "ok" ? `${head}\n    fix: ${result.fix}` : head;
		})
		.join("\n");
}
