#!/usr/bin/env node
// corvid's entry for the ACP agent registry (github.com/agentclientprotocol/registry),
// made from a GoReleaser release and checked against the registry's rules.
//
//   node release/registry.js generate --version V --checksums dist/checksums.txt --out DIR
//       writes DIR/agent.json and DIR/icon.svg (the registry's <id>/ folder layout);
//       one binary target per archive listed in checksums.txt
//   node release/registry.js validate DIR/agent.json [--icon FILE] [--checksums FILE]
//       exits 1 naming every broken rule
//   node release/registry.js selftest DIR/agent.json
//       breaks a valid entry in known ways and fails unless validate rejects each one
//
// The rules are those of the registry's agent.schema.json at commit
// 172d5034b0aa7f91b24622ce4ee4459414e0e07e (draft-07; written out here, the schema file
// itself is not copied), plus its icon rules (16x16 SVG, every fill and stroke
// currentColor or none) and one local rule: no top-level keys beyond the schema's
// (upstream allows them; we keep the entry to what clients read).
"use strict";
const fs = require("fs");
const path = require("path");

const REPO = "https://github.com/corvid-agent/corvid";
const NPM_PACKAGE = "@corvid-agent/corvid";
const DESCRIPTION =
	"A fast, spec-exact coding agent for editors that speak the Agent Client Protocol";
const ARGS = ["acp"];

// GoReleaser os_arch -> registry platform key.
const PLATFORMS = {
	darwin_arm64: "darwin-aarch64",
	darwin_amd64: "darwin-x86_64",
	linux_arm64: "linux-aarch64",
	linux_amd64: "linux-x86_64",
	windows_arm64: "windows-aarch64",
	windows_amd64: "windows-x86_64",
};

function parseChecksums(file) {
	const sums = new Map();
	for (const line of fs.readFileSync(file, "utf8").split("\n")) {
		const m = /^([0-9a-f]{64})\s+\*?(\S+)$/.exec(line.trim());
		if (m) sums.set(m[2], m[1]);
	}
	return sums;
}

function generate(version, checksumsFile, outDir, iconFile) {
	version = version.replace(/^v/, "");
	const binary = {};
	const sums = parseChecksums(checksumsFile);
	const names = [...sums.keys()].sort();
	for (const name of names) {
		const m = /^corvid_(.+)_([a-z]+)_([a-z0-9]+)\.(tar\.gz|zip)$/.exec(name);
		if (!m || m[1] !== version) continue;
		const key = PLATFORMS[`${m[2]}_${m[3]}`];
		if (!key) continue;
		binary[key] = {
			archive: `${REPO}/releases/download/v${version}/${name}`,
			sha256: sums.get(name),
			// The archive holds the binary at its top level. The registry's own
			// verifier strips a leading "./" before looking the command up, and its
			// format RFD writes Windows commands the same way ("./someagent.exe").
			cmd: m[2] === "windows" ? "./corvid.exe" : "./corvid",
			args: ARGS,
		};
	}
	if (Object.keys(binary).length === 0)
		throw new Error(`no corvid_${version}_<os>_<arch> archives in ${checksumsFile}`);
	const ordered = {};
	for (const k of Object.keys(binary).sort()) ordered[k] = binary[k];
	const entry = {
		id: "corvid",
		name: "Corvid",
		version,
		description: DESCRIPTION,
		repository: REPO,
		authors: ["The corvid authors"],
		license: "Apache-2.0",
		license_url: `${REPO}/blob/main/LICENSE`,
		distribution: {
			binary: ordered,
			npx: { package: `${NPM_PACKAGE}@${version}`, args: ARGS },
		},
	};
	fs.mkdirSync(outDir, { recursive: true });
	fs.writeFileSync(path.join(outDir, "agent.json"), JSON.stringify(entry, null, 2) + "\n");
	fs.copyFileSync(iconFile, path.join(outDir, "icon.svg"));
	return entry;
}

// --- validation -------------------------------------------------------------

const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isURI = (v) => {
	// format "uri": an absolute URI with a scheme.
	if (typeof v !== "string" || !/^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(v)) return false;
	try {
		new URL(v);
		return true;
	} catch {
		return false;
	}
};

function checkEntry(e) {
	const errs = [];
	const err = (p, msg) => errs.push(`${p}: ${msg}`);
	const stringArray = (p, v) => {
		if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) err(p, "must be an array of strings");
	};
	const stringMap = (p, v) => {
		if (!isObj(v) || Object.values(v).some((x) => typeof x !== "string"))
			err(p, "must be an object of strings");
	};
	const onlyKeys = (p, v, keys) => {
		for (const k of Object.keys(v)) if (!keys.includes(k)) err(`${p}.${k}`, "is not allowed (additionalProperties: false)");
	};
	if (!isObj(e)) return ["entry: must be an object"];
	for (const k of ["id", "name", "version", "description", "distribution"])
		if (!(k in e)) err(k, "is required");
	onlyKeys("", e, ["id", "name", "version", "description", "repository", "website", "authors",
		"license", "license_url", "icon", "distribution"]);
	if ("id" in e && (typeof e.id !== "string" || !/^[a-z][a-z0-9-]*$/.test(e.id)))
		err("id", "must match ^[a-z][a-z0-9-]*$");
	for (const k of ["name", "description"])
		if (k in e && (typeof e[k] !== "string" || e[k].length < 1)) err(k, "must be a non-empty string");
	if ("version" in e && (typeof e.version !== "string" || !/^[0-9]+\.[0-9]+\.[0-9]+/.test(e.version)))
		err("version", "must match ^[0-9]+\\.[0-9]+\\.[0-9]+");
	for (const k of ["repository", "website", "license_url"])
		if (k in e && !isURI(e[k])) err(k, "must be a URI");
	if ("authors" in e) stringArray("authors", e.authors);
	for (const k of ["license", "icon"]) if (k in e && typeof e[k] !== "string") err(k, "must be a string");
	const d = e.distribution;
	if ("distribution" in e) {
		if (!isObj(d) || Object.keys(d).length < 1) err("distribution", "must be an object with at least one property");
		else {
			onlyKeys("distribution", d, ["binary", "npx", "uvx"]);
			if ("binary" in d) {
				const b = d.binary;
				if (!isObj(b) || Object.keys(b).length < 1) err("distribution.binary", "must be an object with at least one platform");
				else
					for (const [plat, t] of Object.entries(b)) {
						const p = `distribution.binary.${plat}`;
						if (!Object.values(PLATFORMS).includes(plat)) err(p, "is not a registry platform");
						if (!isObj(t)) {
							err(p, "must be an object");
							continue;
						}
						onlyKeys(p, t, ["archive", "sha256", "cmd", "args", "env"]);
						for (const k of ["archive", "cmd"]) if (!(k in t)) err(`${p}.${k}`, "is required");
						if ("archive" in t && !isURI(t.archive)) err(`${p}.archive`, "must be a URI");
						if ("sha256" in t && (typeof t.sha256 !== "string" || !/^[a-fA-F0-9]{64}$/.test(t.sha256)))
							err(`${p}.sha256`, "must be 64 hex digits");
						if ("cmd" in t && typeof t.cmd !== "string") err(`${p}.cmd`, "must be a string");
						if ("args" in t) stringArray(`${p}.args`, t.args);
						if ("env" in t) stringMap(`${p}.env`, t.env);
					}
			}
			for (const kind of ["npx", "uvx"]) {
				if (!(kind in d)) continue;
				const p = `distribution.${kind}`, t = d[kind];
				if (!isObj(t)) {
					err(p, "must be an object");
					continue;
				}
				onlyKeys(p, t, ["package", "args", "env"]);
				if (typeof t.package !== "string" || t.package.length < 1) err(`${p}.package`, "is required (non-empty string)");
				if ("args" in t) stringArray(`${p}.args`, t.args);
				if ("env" in t) stringMap(`${p}.env`, t.env);
			}
		}
	}
	return errs;
}

// corvid's own expectations on top of the registry's.
function checkCorvid(e, sums) {
	const errs = [];
	if (e.id !== "corvid") errs.push(`id: want "corvid", got ${JSON.stringify(e.id)}`);
	if (e.license !== "Apache-2.0") errs.push("license: want Apache-2.0");
	const npx = e.distribution && e.distribution.npx;
	if (!npx || npx.package !== `${NPM_PACKAGE}@${e.version}`)
		errs.push(`distribution.npx.package: want ${NPM_PACKAGE}@${e.version}`);
	if (!npx || JSON.stringify(npx.args) !== JSON.stringify(ARGS)) errs.push('distribution.npx.args: want ["acp"]');
	const bin = (e.distribution && e.distribution.binary) || {};
	for (const [plat, t] of Object.entries(bin)) {
		const p = `distribution.binary.${plat}`;
		if (!isObj(t)) continue;
		const prefix = `${REPO}/releases/download/v${e.version}/`;
		if (typeof t.archive !== "string" || !t.archive.startsWith(prefix)) {
			errs.push(`${p}.archive: want a URL under ${prefix}`);
			continue;
		}
		const name = t.archive.slice(prefix.length);
		const osarch = Object.keys(PLATFORMS).find((k) => PLATFORMS[k] === plat);
		if (!osarch) {
			errs.push(`${p}: not a registry platform`);
			continue;
		}
		const [os, arch] = osarch.split("_");
		const ext = os === "windows" ? "zip" : "tar.gz";
		if (name !== `corvid_${e.version}_${os}_${arch}.${ext}`) errs.push(`${p}.archive: unexpected file ${name}`);
		if (!t.sha256) errs.push(`${p}.sha256: missing`);
		if (sums && sums.get(name) !== t.sha256) errs.push(`${p}.sha256: not the checksum of ${name} in checksums.txt`);
		if (t.cmd !== (os === "windows" ? "./corvid.exe" : "./corvid")) errs.push(`${p}.cmd: unexpected ${t.cmd}`);
		if (JSON.stringify(t.args) !== JSON.stringify(ARGS)) errs.push(`${p}.args: want ["acp"]`);
	}
	return errs;
}

// The registry's icon rules: SVG, 16x16, monochrome through currentColor.
function checkIcon(svg) {
	const errs = [];
	const root = /<svg\b[^>]*>/.exec(svg);
	if (!root) return ["icon: no <svg> element"];
	const attr = (tag, name) => {
		const m = new RegExp(`\\s${name}\\s*=\\s*"([^"]*)"`).exec(tag);
		return m ? m[1] : null;
	};
	const vb = attr(root[0], "viewBox");
	if (vb === null || vb.trim().split(/[\s,]+/).join(" ") !== "0 0 16 16") errs.push('icon: viewBox must be "0 0 16 16"');
	for (const k of ["width", "height"]) {
		const v = attr(root[0], k);
		if (v !== null && v.replace(/px$/, "") !== "16") errs.push(`icon: ${k} must be 16`);
	}
	const paint = [];
	for (const m of svg.matchAll(/\s(fill|stroke|color|stop-color|flood-color|lighting-color)\s*=\s*"([^"]*)"/g))
		paint.push([m[1], m[2]]);
	for (const m of svg.matchAll(/\sstyle\s*=\s*"([^"]*)"/g))
		for (const decl of m[1].split(";")) {
			const [k, v] = decl.split(":").map((s) => (s || "").trim());
			if (/^(fill|stroke|color|stop-color|flood-color|lighting-color)$/.test(k)) paint.push([k, v]);
		}
	let fills = 0;
	for (const [k, v] of paint) {
		if (v === "currentColor" || v === "none") {
			if (k === "fill" && v === "currentColor") fills++;
			continue;
		}
		errs.push(`icon: ${k}="${v}" (only currentColor or none)`);
	}
	if (fills + paint.filter(([k, v]) => k === "stroke" && v === "currentColor").length === 0)
		errs.push("icon: nothing is painted with currentColor");
	if (/<style\b/.test(svg)) errs.push("icon: <style> is not allowed (colours must be attributes)");
	if (/<(image|script|foreignObject)\b/.test(svg)) errs.push("icon: embedded images, scripts or foreign objects");
	if (/#[0-9a-fA-F]{3,8}\b|rgba?\(|hsla?\(/.test(svg.replace(/\sd="[^"]*"/g, ""))) errs.push("icon: a hard-coded colour value");
	return errs;
}

function validate(file, iconFile, checksumsFile) {
	const e = JSON.parse(fs.readFileSync(file, "utf8"));
	const sums = checksumsFile ? parseChecksums(checksumsFile) : null;
	let errs = [...checkEntry(e), ...checkCorvid(e, sums)];
	if (iconFile) errs = errs.concat(checkIcon(fs.readFileSync(iconFile, "utf8")));
	return errs;
}

// Each mutation must be rejected; proves the validator can fail.
function selftest(file, iconFile) {
	const good = JSON.parse(fs.readFileSync(file, "utf8"));
	const icon = fs.readFileSync(iconFile, "utf8");
	const base = [...checkEntry(good), ...checkCorvid(good, null), ...checkIcon(icon)];
	if (base.length) return ["the entry under test is not valid to begin with: " + base.join("; ")];
	const plat = Object.keys(good.distribution.binary)[0];
	const cases = {
		"missing description": (e) => delete e.description,
		"uppercase id": (e) => (e.id = "Corvid"),
		"version without patch": (e) => (e.version = "1.2"),
		"unknown top-level key": (e) => (e.homepage = "https://example.com"),
		"unknown distribution": (e) => (e.distribution.brew = { package: "corvid" }),
		"platform outside the enum": (e) => (e.distribution.binary["linux-x64"] = e.distribution.binary[plat]),
		"short sha256": (e) => (e.distribution.binary[plat].sha256 = "abc123"),
		"binary target without cmd": (e) => delete e.distribution.binary[plat].cmd,
		"extra key in a binary target": (e) => (e.distribution.binary[plat].path = "corvid"),
		"archive not a URI": (e) => (e.distribution.binary[plat].archive = "corvid.tar.gz"),
		"npx without package": (e) => delete e.distribution.npx.package,
		"args not strings": (e) => (e.distribution.npx.args = [1]),
		"empty distribution": (e) => (e.distribution = {}),
	};
	const iconCases = {
		"icon with a hex fill": icon.replace('fill="currentColor"', 'fill="#112233"'),
		"icon with a named stroke": icon.replace("<path ", '<path stroke="black" '),
		"icon 24x24": icon.replace('viewBox="0 0 16 16"', 'viewBox="0 0 24 24"'),
		"icon with a style colour": icon.replace("<path ", '<path style="fill:red" '),
	};
	const failures = [];
	for (const [name, mutate] of Object.entries(cases)) {
		const e = JSON.parse(JSON.stringify(good));
		mutate(e);
		if (checkEntry(e).length + checkCorvid(e, null).length === 0) failures.push(`not rejected: ${name}`);
	}
	for (const [name, svg] of Object.entries(iconCases)) {
		if (svg === icon) failures.push(`icon case did not apply: ${name}`);
		else if (checkIcon(svg).length === 0) failures.push(`not rejected: ${name}`);
	}
	return failures;
}

function main(argv) {
	const [cmd, ...rest] = argv;
	const opts = {}, pos = [];
	for (let i = 0; i < rest.length; i++) {
		if (rest[i].startsWith("--")) opts[rest[i].slice(2)] = rest[++i];
		else pos.push(rest[i]);
	}
	const defIcon = path.join(__dirname, "icon.svg");
	let errs;
	switch (cmd) {
		case "generate":
			if (!opts.version || !opts.checksums || !opts.out) {
				console.error("usage: registry.js generate --version V --checksums FILE --out DIR");
				return 2;
			}
			generate(opts.version, opts.checksums, opts.out, opts.icon || defIcon);
			console.log(path.join(opts.out, "agent.json"));
			return 0;
		case "validate":
			errs = validate(pos[0], opts.icon, opts.checksums);
			break;
		case "selftest":
			errs = selftest(pos[0], opts.icon || defIcon);
			break;
		default:
			console.error("usage: registry.js generate|validate|selftest ...");
			return 2;
	}
	for (const e of errs) console.error(`registry.js ${cmd}: ${e}`);
	if (!errs.length) console.log(`registry.js ${cmd}: ok`);
	return errs.length ? 1 : 0;
}

process.exitCode = main(process.argv.slice(2));
