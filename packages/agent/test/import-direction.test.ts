import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

/**
 * Every folder's imports run one way: no source file of any workspace reaches itself again through
 * relative imports (`import`, `import type`, `export ... from`, `import("...")`). Type-only imports
 * count too: a type two files both need belongs in a module below both.
 */

const repository = fileURLToPath(new URL("../../../", import.meta.url));

/** The TypeScript files of every workspace's `src` and `test` folders (no builds, no declarations). */
function sourceFiles(root: string): string[] {
	const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { workspaces: string[] };
	const files: string[] = [];
	const walk = (dir: string): void => {
		for (const entry of readdirSync(dir, { withFileTypes: true })) {
			const path = join(dir, entry.name);
			if (entry.isDirectory()) walk(path);
			else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) files.push(path);
		}
	};
	for (const workspace of manifest.workspaces) {
		for (const folder of ["src", "test"]) {
			if (existsSync(join(root, workspace, folder))) walk(join(root, workspace, folder));
		}
	}
	return files.sort();
}

/**
 * Each file's relative imports, as files (`./x.js` is `./x.ts` on disk, a folder its `index.ts`);
 * `unresolved`: relative imports of code that name no source file (a data file such as JSON is not code).
 */
function importGraph(root: string, files: string[]): { edges: Map<string, string[]>; unresolved: string[] } {
	const known = new Set(files);
	const edges = new Map<string, string[]>();
	const unresolved: string[] = [];
	for (const file of files) {
		// TypeScript's own scanner: an import mentioned in a comment or a string is not an import.
		const { importedFiles } = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
		const targets: string[] = [];
		for (const { fileName: specifier } of importedFiles) {
			if (!/^\.\.?\//.test(specifier) || specifier.endsWith(".json")) continue;
			const path = resolve(dirname(file), specifier);
			const target = [path.replace(/\.js$/, ".ts"), `${path}.ts`, join(path, "index.ts")].find((candidate) =>
				known.has(candidate),
			);
			if (target) targets.push(target);
			else unresolved.push(`${relative(root, file)}: ${specifier}`);
		}
		edges.set(file, targets);
	}
	return { edges, unresolved };
}

/**
 * The groups of files that reach themselves again through their imports (Tarjan's strongly
 * connected components), each as its files relative to `root`, sorted, joined by ` ↔ `.
 */
function importCircles(root: string, edges: Map<string, string[]>): string[] {
	const order = new Map<string, number>();
	const low = new Map<string, number>();
	const stack: string[] = [];
	const onStack = new Set<string>();
	const circles: string[] = [];
	const visit = (file: string): void => {
		const own = order.size;
		order.set(file, own);
		low.set(file, own);
		stack.push(file);
		onStack.add(file);
		for (const next of edges.get(file) ?? []) {
			if (!order.has(next)) visit(next);
			if (onStack.has(next)) low.set(file, Math.min(low.get(file) as number, low.get(next) as number));
		}
		if (low.get(file) !== own) return;
		const group = stack.splice(stack.indexOf(file));
		for (const member of group) onStack.delete(member);
		if (group.length > 1 || edges.get(file)?.includes(file)) {
			circles.push(
				group
					.map((member) => relative(root, member))
					.sort()
					.join(" ↔ "),
			);
		}
	};
	for (const file of edges.keys()) if (!order.has(file)) visit(file);
	return circles.sort();
}

describe("import direction", () => {
	const files = sourceFiles(repository);
	const { edges, unresolved } = importGraph(repository, files);
	const circles = importCircles(repository, edges);

	it("reads the sources of every package and resolves every relative import", () => {
		for (const folder of ["packages/kernel", "packages/context", "packages/agent", "packages/tui", "bench"]) {
			expect(files.some((file) => relative(repository, file).startsWith(`${folder}/src/`))).toBe(true);
		}
		expect(unresolved).toEqual([]);
	});

	it("no source file imports itself back", () => {
		expect(circles).toEqual([]);
	});

	it("finds a circle closed by a type-only import, a dynamic import or a folder's index, and not one in a comment", () => {
		const root = mkdtempSync(join(tmpdir(), "import-direction-"));
		try {
			const write = (path: string, text: string) => {
				mkdirSync(dirname(join(root, path)), { recursive: true });
				writeFileSync(join(root, path), text);
			};
			write("package.json", JSON.stringify({ workspaces: ["one"] }));
			write("one/src/a.ts", 'import type { B } from "./b.js";\nexport type A = B;\n');
			write("one/src/b.ts", 'export type B = string;\nexport const c = () => import("./c/index.js");\n');
			write("one/src/c/index.ts", 'export { a } from "./a.js";\n');
			write("one/src/c/a.ts", 'import type { A } from "../a.js";\nexport const a: A = "";\n');
			// Mentioned in a comment and a string only: no edge back to d.ts.
			write("one/src/d.ts", 'import { e } from "./e.js";\nexport const d = e;\n');
			write("one/src/e.ts", '/** like `import { d } from "./d.js"` */\nexport const e = \'import("./d.js")\';\n');
			write("one/test/f.ts", 'import "../src/missing.js";\nimport data from "./data.json";\nexport { data };\n');
			const sources = sourceFiles(root);
			const graph = importGraph(root, sources);
			expect(sources.map((file) => relative(root, file))).toEqual([
				"one/src/a.ts",
				"one/src/b.ts",
				"one/src/c/a.ts",
				"one/src/c/index.ts",
				"one/src/d.ts",
				"one/src/e.ts",
				"one/test/f.ts",
			]);
			expect(graph.unresolved).toEqual(["one/test/f.ts: ../src/missing.js"]);
			expect(importCircles(root, graph.edges)).toEqual([
				"one/src/a.ts ↔ one/src/b.ts ↔ one/src/c/a.ts ↔ one/src/c/index.ts",
			]);
		} finally {
			rmSync(root, { recursive: true, force: true });
		}
	});
});
