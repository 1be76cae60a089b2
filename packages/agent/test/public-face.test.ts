import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * What `prime-agent` offers, as a user of the built package sees it: the names each subpath of
 * package.json's `exports` gives TypeScript and Node. A name added or removed here is a decision
 * (an export that slipped in through a folder's index fails this test).
 */

const repository = fileURLToPath(new URL("../../../", import.meta.url));
const agent = join(repository, "packages", "agent");

/** The declared faces: `values` exist at run time, `types` only for TypeScript. */
const PUBLIC_FACE: Record<string, { values: string[]; types: string[] }> = {
	".": {
		values: [
			"AgentSession",
			"Credentials",
			"ExitCode",
			"ModelRegistry",
			"Session",
			"SessionKernel",
			"UserError",
			"buildSystemPrompt",
			"createIpythonTool",
			"describeContents",
			"listSessions",
			"loadModelsFile",
			"localLink",
			"runCli",
			"startSession",
		],
		types: [
			"AgentSessionOptions",
			"CliIo",
			"CompactionEntry",
			"CustomEntry",
			"CustomMessageEntry",
			"ExitCodeValue",
			"HostMessage",
			"InteractiveContext",
			"InteractiveUi",
			"KernelStatus",
			"LinkCommand",
			"LinkInterrupt",
			"LinkRunEnd",
			"LinkStatus",
			"MessageEntry",
			"ProjectReview",
			"QueuedInput",
			"RunOutcome",
			"SessionChanges",
			"SessionEntry",
			"SessionEvent",
			"SessionInfo",
			"SessionKernelOptions",
			"SessionLink",
			"SessionNotice",
			"StartOptions",
			"StartedSession",
			"StillBusyChoice",
			"SystemPromptOptions",
		],
	},
	"./extensions": {
		values: [],
		types: [
			"AssistantMessage",
			"CompactionEntry",
			"CompactionPreparation",
			"CompactionReason",
			"ContextUsage",
			"CustomEntry",
			"Delivery",
			"ExtensionAPI",
			"ExtensionEventName",
			"ExtensionEvents",
			"ExtensionFactory",
			"ExtensionHandler",
			"ExtensionProblem",
			"HiddenMessage",
			"HostMessage",
			"KernelStartupOptions",
			"SessionEntry",
			"SessionStartReason",
			"SlashCommand",
		],
	},
	"./view": {
		values: [
			"ExitCode",
			"UserError",
			"captureConsole",
			"describeModelFailure",
			"describeSessionLine",
			"isSessionLine",
			"messageText",
			"parseSlashCommand",
			"promptText",
			"sameSession",
		],
		types: ["ExitCodeValue"],
	},
};

const specifier = (subpath: string) => (subpath === "." ? "prime-agent" : `prime-agent/${subpath.slice(2)}`);

function requireBuild(subpaths: string[]): void {
	const exportsMap = packageExports();
	for (const subpath of subpaths) {
		const built = join(agent, exportsMap[subpath]?.default ?? "");
		if (!existsSync(built))
			throw new Error(`This test reads the build; build it first with \`npx tsc -b\` (${built} is missing).`);
	}
}

function packageExports(): Record<string, { types: string; default: string }> {
	return JSON.parse(readFileSync(join(agent, "package.json"), "utf8")).exports;
}

/**
 * The names each subpath gives TypeScript, resolved as a consumer at the repository's root
 * resolves them (node_modules, package.json `exports`, the build's declarations), and the
 * problems TypeScript met on the way.
 */
function declaredNames(subpaths: string[]): {
	faces: Record<string, { values: string[]; types: string[] }>;
	problems: string[];
} {
	const consumer = join(repository, "public-face-consumer.ts");
	const text = subpaths.map((subpath, i) => `export * as face${i} from "${specifier(subpath)}";\n`).join("");
	const options: ts.CompilerOptions = {
		module: ts.ModuleKind.NodeNext,
		moduleResolution: ts.ModuleResolutionKind.NodeNext,
		target: ts.ScriptTarget.ES2022,
		strict: true,
		noEmit: true,
		skipLibCheck: true,
		types: ["node"],
	};
	const host = ts.createCompilerHost(options);
	const getSourceFile = host.getSourceFile.bind(host);
	const fileExists = host.fileExists.bind(host);
	host.getSourceFile = (name, language, ...rest) =>
		name === consumer ? ts.createSourceFile(name, text, language) : getSourceFile(name, language, ...rest);
	host.fileExists = (name) => name === consumer || fileExists(name);
	const program = ts.createProgram([consumer], options, host);
	const checker = program.getTypeChecker();
	const source = program.getSourceFile(consumer);
	if (!source) throw new Error("the consumer file did not load");
	const problems = ts
		.getPreEmitDiagnostics(program, source)
		.map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
	const faces: Record<string, { values: string[]; types: string[] }> = {};
	source.statements.forEach((statement, i) => {
		if (!ts.isExportDeclaration(statement) || !statement.moduleSpecifier) return;
		const module = checker.getSymbolAtLocation(statement.moduleSpecifier);
		const face = { values: [] as string[], types: [] as string[] };
		for (const symbol of module ? checker.getExportsOfModule(module) : []) {
			const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
			(target.flags & ts.SymbolFlags.Value ? face.values : face.types).push(symbol.name);
		}
		faces[subpaths[i]] = { values: face.values.sort(), types: face.types.sort() };
	});
	return { faces, problems };
}

/** The names each subpath gives Node at run time (the build, found through package.json `exports`). */
function runtimeNames(subpaths: string[]): Record<string, string[]> {
	const script = `const names = {};\n${subpaths
		.map(
			(subpath) => `names[${JSON.stringify(subpath)}] = Object.keys(await import("${specifier(subpath)}")).sort();\n`,
		)
		.join("")}console.log(JSON.stringify(names));`;
	const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
		cwd: repository,
		encoding: "utf8",
	});
	return JSON.parse(output);
}

/** One TypeScript program for every subpath (loading the declarations is most of the time). */
let declared: ReturnType<typeof declaredNames> | undefined;
function declaredFaces(): ReturnType<typeof declaredNames> {
	const subpaths = Object.keys(packageExports());
	requireBuild(subpaths);
	declared ??= declaredNames(subpaths);
	return declared;
}

describe("the public face of prime-agent", () => {
	it("package.json exports the index, the extension API, the view's start and the daemon's clients", () => {
		const exportsMap = packageExports();
		expect(Object.keys(exportsMap)).toEqual([".", "./extensions", "./view", "./daemon"]);
		requireBuild(Object.keys(exportsMap));
		const missing = Object.values(exportsMap)
			.flatMap((entry) => [entry.types, entry.default])
			.filter((file) => !existsSync(join(agent, file)));
		expect(missing).toEqual([]);
	});

	it("each subpath gives TypeScript exactly the names declared here, nothing that slipped in", () => {
		const { faces, problems } = declaredFaces();
		expect(problems).toEqual([]);
		expect(Object.fromEntries(Object.keys(PUBLIC_FACE).map((subpath) => [subpath, faces[subpath]]))).toEqual(
			PUBLIC_FACE,
		);
	});

	it("each subpath loads in Node with the values TypeScript declares (the extension API loads no code)", () => {
		const subpaths = Object.keys(packageExports());
		const { faces, problems } = declaredFaces();
		expect(problems).toEqual([]);
		const loaded = runtimeNames(subpaths);
		expect(loaded).toEqual(Object.fromEntries(subpaths.map((subpath) => [subpath, faces[subpath].values])));
		expect(loaded["./extensions"]).toEqual([]);
		// The daemon's clients: what a program that starts or watches background sessions calls first.
		expect(loaded["./daemon"]).toEqual(expect.arrayContaining(["connectSupervisor", "connectWorker", "WorkerLink"]));
	});
});
