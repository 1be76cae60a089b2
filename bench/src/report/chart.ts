/** Hand-written SVG: retention against tokens, one labelled point per arm, in one or more panels. */

export interface ChartPoint {
	name: string;
	tokens: number;
	/** 0..1 */
	retention: number;
	highlight?: boolean;
}

export interface ChartPanel {
	title: string;
	yLabel: string;
	points: ChartPoint[];
}

const xmlText = (text: string) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

const PANEL = { width: 600, height: 470, left: 78, right: 36, top: 40, bottom: 60 };

/** Panels side by side under one title, sharing the x axis label (tokens, log scale). */
export function retentionChart(panels: ChartPanel[], title: string, xLabel: string): string {
	const width = PANEL.width * panels.length;
	const height = PANEL.height + 56;
	const parts: string[] = [
		`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="Helvetica, Arial, sans-serif" font-size="13" role="img" aria-label="${xmlText(title)}">`,
		`<title>${xmlText(title)}</title>`,
		`<rect width="${width}" height="${height}" fill="#ffffff"/>`,
		`<text x="${width / 2}" y="26" text-anchor="middle" font-size="17" font-weight="bold">${xmlText(title)}</text>`,
		`<text x="${width / 2}" y="45" text-anchor="middle" fill="#555">up and to the left is better</text>`,
	];
	for (const [index, panel] of panels.entries()) {
		parts.push(`<g transform="translate(${index * PANEL.width} 50)">`, ...panelParts(panel, xLabel), "</g>");
	}
	parts.push("</svg>");
	return `${parts.join("\n")}\n`;
}

function panelParts(panel: ChartPanel, xLabel: string): string[] {
	const { points } = panel;
	const plotW = PANEL.width - PANEL.left - PANEL.right;
	const plotH = PANEL.height - PANEL.top - PANEL.bottom;
	const positive = points.map((point) => Math.max(1, point.tokens));
	const lo = Math.floor(Math.log10(Math.min(...positive)));
	const hi = Math.max(lo + 1, Math.ceil(Math.log10(Math.max(...positive)) + 0.05));
	const minRetention = Math.min(...points.map((point) => point.retention));
	const yLo = Math.max(0, Math.floor((minRetention * 100 - 5) / 10) * 10);
	// Headroom above 100% so points at the top stay clear of the frame and their labels fit.
	const yHi = 100 + (100 - yLo) * 0.1;
	const x = (tokens: number) => PANEL.left + ((Math.log10(Math.max(1, tokens)) - lo) / (hi - lo)) * plotW;
	const y = (retention: number) => PANEL.top + (1 - (retention * 100 - yLo) / (yHi - yLo)) * plotH;
	const parts: string[] = [
		`<text x="${PANEL.left + plotW / 2}" y="${PANEL.top - 12}" text-anchor="middle" font-size="15" font-weight="bold">${xmlText(panel.title)}</text>`,
	];
	for (let power = lo; power <= hi; power++) {
		const px = x(10 ** power);
		parts.push(
			`<line x1="${px}" y1="${PANEL.top}" x2="${px}" y2="${PANEL.top + plotH}" stroke="#e3e3e3"/>`,
			`<text x="${px}" y="${PANEL.top + plotH + 20}" text-anchor="middle">${tickLabel(10 ** power)}</text>`,
		);
	}
	for (let value = yLo; value <= 100; value += 10) {
		const py = y(value / 100);
		parts.push(
			`<line x1="${PANEL.left}" y1="${py}" x2="${PANEL.left + plotW}" y2="${py}" stroke="#e3e3e3"/>`,
			`<text x="${PANEL.left - 10}" y="${py + 4}" text-anchor="end">${value}%</text>`,
		);
	}
	parts.push(
		`<rect x="${PANEL.left}" y="${PANEL.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#888"/>`,
		`<text x="${PANEL.left + plotW / 2}" y="${PANEL.height - 14}" text-anchor="middle">${xmlText(xLabel)}</text>`,
		`<text transform="translate(22 ${PANEL.top + plotH / 2}) rotate(-90)" text-anchor="middle">${xmlText(panel.yLabel)}</text>`,
	);
	const placed: { x: number; y: number }[] = [];
	for (const point of [...points].sort((a, b) => a.tokens - b.tokens)) {
		const px = x(point.tokens);
		const py = y(point.retention);
		const free = (candidate: number) =>
			candidate > PANEL.top + 10 &&
			candidate < PANEL.top + plotH - 4 &&
			!placed.some((other) => Math.abs(other.x - px) < 150 && Math.abs(other.y - candidate) < 15);
		const candidates = [py - 12, py + 22, py - 28, py + 38, py - 44, py + 54];
		const labelY = candidates.find(free) ?? py + 22;
		placed.push({ x: px, y: labelY });
		const color = point.highlight ? "#d62728" : "#1f77b4";
		const anchor = px > PANEL.left + plotW - 90 ? "end" : px < PANEL.left + 70 ? "start" : "middle";
		parts.push(
			`<circle cx="${px.toFixed(1)}" cy="${py.toFixed(1)}" r="${point.highlight ? 8 : 6}" fill="${color}"/>`,
			`<text x="${px.toFixed(1)}" y="${labelY.toFixed(1)}" text-anchor="${anchor}" fill="${color}"${point.highlight ? ' font-weight="bold"' : ""}>${xmlText(point.name)} (${(point.retention * 100).toFixed(1)}%, ${tickLabel(point.tokens)})</text>`,
		);
	}
	return parts;
}

function tickLabel(value: number): string {
	if (value >= 1e6) return `${+(value / 1e6).toFixed(value >= 1e7 ? 0 : 1)}M`;
	if (value >= 1e3) return `${+(value / 1e3).toFixed(value >= 1e4 ? 0 : 1)}k`;
	return String(Math.round(value));
}
