/** One line of `prime-agent doctor`: what was checked, how it stands, and what to do about a problem. */
export interface CheckResult {
	name: string;
	status: "ok" | "warn" | "fail";
	detail: string;
	/** What to do about a warning or failure. */
	fix?: string;
}
