import { visibleLine } from "./ansi.js";
import { parseCountedLine } from "./counted.js";
import { exceptionOf } from "./diagnostics.js";

/** The role a single output line plays, for capsule selection and burst detection. */
export type LineKind =
	| "summary"
	| "failure"
	| "exception"
	| "location"
	| "error"
	| "warning"
	| "trace"
	| "progress"
	| "usage-option"
	| "bullet"
	| "blank"
	| "plain";

const SUMMARY: RegExp[] = [
	/^=+ .*\b(?:passed|failed|errors?|skipped|no tests ran|xfailed|deselected)\b.* =+$/,
	/^Ran \d+ tests? in /,
	/^OK(?: \(.+\))?$/,
	/^FAILED \(.+\)$/,
	/^(?:Tests|Test Suites|Test Files):?\s{1,}\d+ /,
	/^Tests\s+(?:\d+|no tests)/,
	/^test result: (?:ok|FAILED)\./,
	/^\d+ (?:passing|failing|pending)(?: \(.+\))?$/,
	/^(?:#|ℹ) (?:tests|pass|fail) \d+$/,
	/^(?:Total|Passed|Skipped):\s+\d+$/,
	/^Found \d+ errors?\b/,
	/^✖ \d+ problems? \(/,
	/^(?:ok|FAIL)\s+\S+\s+(?:[\d.]+s|\(cached\))/,
	/^(?:\[(?:INFO|ERROR)\] )?BUILD (?:SUCCESS|FAILURE)$/,
	/^BUILD (?:SUCCESSFUL|FAILED)(?: in .*)?$/,
	/^(?:\[(?:INFO|ERROR|WARNING)\] )?Tests run: \d+, Failures: \d+/,
	/^\d+ tests? completed, \d+ failed/,
	/^!{3,} .* !{3,}$/,
	/^(?:Success: no issues found|All checks passed!)/,
];

const FAILURE: RegExp[] = [
	/^(?:\[gw\d+\] \[\s*\d+%\] )?(?:FAILED|ERROR) \S+\.(?:py|txt|rst|md)\b/,
	/^\S+::\S.* (?:FAILED|ERROR)(?:\s+\[\s*\d+%\])?$/,
	/^(?:FAIL|ERROR): \S/,
	/ \.\.\. (?:FAIL|ERROR|FAILED)$/,
	/^FAIL\s+\S/,
	/^● \S/,
	/^[×✕✗✖] \S/,
	/^not ok \d+/,
	/^--- FAIL: /,
	/^\S+ --- FAILED$/,
	/^\S.*? > \S.*? FAILED$/,
	/^\d+\) \S/,
	/^\[ERROR\] .*<<< (?:FAILURE|ERROR)!/,
];

const LOCATION: RegExp[] = [
	/^File "[^"]+", line \d+/,
	/^at (?:.+ \()?(?:file:\/\/)?[^\s()]+:\d+(?::\d+)?\)?$/,
	/^(?:-->|❯|⎯+>) \S+:\d+/,
	/^\S+\.\w{1,10}:\d+(?::\d+)?(?::|$| - | in )/,
	/^\S+\.\w{1,10}\(\d+,\d+\)/,
];

const ERROR: RegExp[] = [
	/^(?:error|fatal)(?:\[[\w-]+\])?[: ]/i,
	/^\[(?:ERROR|FATAL)\]/,
	/^npm (?:ERR!|error) /,
	/^E {2,}\S/,
	/^\d+:\d+\s+error\s/,
	/\berror (?:TS\d+|[A-Z]\d{4})\b/,
	/: error: /,
	/^(?:\S+ )?(?:ERROR|FATAL|CRITICAL)\b/,
];

const WARNING: RegExp[] = [
	/^warn(?:ing)?(?:\[[\w-]+\])?[: ]/i,
	/^\[WARN(?:ING)?\]/,
	/^npm (?:WARN|warn) /,
	/\b\w*Warning: /,
	/^\d+:\d+\s+warning\s/,
	/: warning: /,
	/^(?:\S+ )?WARN(?:ING)?\b/,
];

/** Log levels that only trace what a program does. */
const TRACE_LEVEL =
	/^(?:\[?[\d\-T:.,/Z+ ]{8,}\]?\s+)?(?:\[\s*|<)?(?:TRACE|DEBUG|VERBOSE|SILLY|trace|debug|verbose|silly|DBG|TRC|dbg|trc)(?:\s*\]|>|:|\s)/;
const TRACE_PREFIX = /^(?:\S+\s+){0,3}(?:TRACE|DEBUG)\b|^npm (?:verbose|timing|silly|http) /;

const PROGRESS: RegExp[] = [
	/^(?:Downloading|Downloaded|Collecting|Fetching|Resolving|Installing|Extracting|Unpacking|Compiling|Building|Preparing|Processing|Uploading|Pulling|Pushing|Receiving objects|Resolving deltas|Counting objects|Compressing objects|Writing objects|remote: (?:Counting|Compressing|Enumerating))\b/,
	/^\S*\s*\d{1,3}(?:\.\d+)?\s?%/,
	/\b\d{1,3}(?:\.\d+)?%\s*(?:\||\[|$|complete|done)/,
	/[█▉▊▋▌▍▎▏━─=#]{6,}[ >░▒▓·-]*\s*\d{1,3}%/,
	/\[[=#>\- ]{5,}\]/,
	/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⣾⣽⣻⢿⡿⣟⣯⣷|/\\-]\s/,
	/^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏⣾⣽⣻⢿⡿⣟⣯⣷]$/,
	/^[.FEsxX]{8,}(?:\s+\[\s*\d+%\])?$/,
	/^[․.,!]{8,}$/,
	/\d+(?:\.\d+)?\s?(?:[kKMG]i?B|B)\s*\/\s*\d+(?:\.\d+)?\s?(?:[kKMG]i?B|B)/,
	/\beta \d/i,
];

/** `  -h, --help  show help`, `  --out-dir <dir>   Where to write`. */
const USAGE_OPTION = /^\s{1,12}(?:-[A-Za-z0-9?](?:[ ,=]|$)|--[A-Za-z0-9][\w-]*)(?:[\s,=|[<]|$)/;
const BULLET = /^\s*(?:[-*+•] |\d{1,3}\. |- \[[ xX]\] )\S/;

/**
 * Classifies one output line (ANSI stripped internally). Order matters: decisive kinds (summary,
 * failure, exception, location, error) win over noise kinds (warning, trace, progress) and prose.
 */
export function classifyLine(text: string): LineKind {
	const raw = visibleLine(text);
	const line = raw.trim();
	if (line === "") return text.includes("\r") && text.trim() !== "" ? "progress" : "blank";
	if (parseCountedLine(line) || SUMMARY.some((p) => p.test(line))) return "summary";
	if (FAILURE.some((p) => p.test(line))) return "failure";
	if (/^thread '[^']*'(?: \(\d+\))? panicked at /.test(line) || exceptionOf(line.replace(/^E {2,}/, ""), false)) {
		return "exception";
	}
	if (TRACE_LEVEL.test(line) || TRACE_PREFIX.test(line)) return "trace";
	if (ERROR.some((p) => p.test(line))) return "error";
	if (LOCATION.some((p) => p.test(line))) return "location";
	if (WARNING.some((p) => p.test(line))) return "warning";
	if (/\r./.test(text) || PROGRESS.some((p) => p.test(line))) return "progress";
	if (USAGE_OPTION.test(raw)) return "usage-option";
	if (BULLET.test(raw)) return "bullet";
	return "plain";
}
