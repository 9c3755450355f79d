// Validates every document of the given YAML files against the Kubernetes
// API's OpenAPI schema of its apiVersion and kind (kubernetes-models: the
// validators are compiled into the package, so nothing is fetched), then
// checks what docs/scale.md promises of these manifests.
//
//   node validate.mjs FILE...        # exit 1 naming each problem
//   node validate.mjs --selftest     # broken manifests must be refused
import { readFileSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import * as core from "kubernetes-models/v1";
import * as apps from "kubernetes-models/apps/v1";
import * as batch from "kubernetes-models/batch/v1";
import * as networking from "kubernetes-models/networking.k8s.io/v1";

const groups = { v1: core, "apps/v1": apps, "batch/v1": batch, "networking.k8s.io/v1": networking };

// schemaProblems returns why doc does not match its kind's schema, or [].
function schemaProblems(doc) {
  const cls = groups[doc?.apiVersion]?.[doc?.kind];
  if (!cls) return [`unknown apiVersion/kind ${doc?.apiVersion}/${doc?.kind}`];
  try {
    new cls(doc).validate();
    return [];
  } catch (e) {
    return [e.message];
  }
}

// pods returns the pod spec of a Deployment or Job.
const podSpec = (doc) => doc?.spec?.template?.spec;

// projectProblems checks what the docs say of these manifests: the store URL
// and the keys come from the Secret, never a literal; the probes do not ask /acp
// (it answers no probe with 2xx/3xx); the fleet listens with a token.
function projectProblems(doc) {
  const out = [];
  const spec = podSpec(doc);
  if (!spec) return out;
  for (const c of spec.containers ?? []) {
    for (const e of c.env ?? []) {
      if ((e.name === "CORVID_STORE" || e.name.endsWith("_API_KEY")) && !e.valueFrom?.secretKeyRef) {
        out.push(`${doc.kind} ${doc.metadata?.name}: ${e.name} must come from a Secret (valueFrom.secretKeyRef)`);
      }
    }
    if (!(c.env ?? []).some((e) => e.name === "CORVID_STORE")) {
      out.push(`${doc.kind} ${doc.metadata?.name}: no CORVID_STORE: every replica and Job must share the store`);
    }
    for (const p of [c.readinessProbe, c.livenessProbe]) {
      if (p?.httpGet?.path?.startsWith("/acp")) {
        out.push(`${doc.kind} ${doc.metadata?.name}: a probe on ${p.httpGet.path} gets 401/405/406, never 2xx/3xx`);
      }
    }
    const args = c.args ?? [];
    if (args[0] === "serve") {
      if (!args.some((a) => a.startsWith("--token-file"))) out.push(`${doc.kind} ${doc.metadata?.name}: serve on a non-loopback address needs --token-file`);
      if (!c.readinessProbe) out.push(`${doc.kind} ${doc.metadata?.name}: serve without a readinessProbe`);
    }
  }
  return out;
}

function check(name, text) {
  const problems = [];
  for (const d of parseAllDocuments(text)) {
    if (d.errors.length) {
      problems.push(...d.errors.map((e) => `${name}: YAML: ${e.message}`));
      continue;
    }
    const doc = d.toJS();
    if (doc == null) continue;
    for (const p of [...schemaProblems(doc), ...projectProblems(doc)]) problems.push(`${name}: ${doc.kind} ${doc.metadata?.name}: ${p}`);
  }
  return problems;
}

const args = process.argv.slice(2);
if (args[0] === "--selftest") {
  // Each broken manifest must be refused; the validator is useless otherwise.
  const dep = readFileSync(new URL("./deployment.yaml", import.meta.url), "utf8");
  const broken = {
    "replicas as a string": dep.replace("replicas: 3", 'replicas: "three"'),
    "a container without a name": dep.replace("- name: corvid\n          image:", "- image:"),
    "a probe port of the wrong type": dep.replace("port: http\n            periodSeconds: 5", "port: [http]\n            periodSeconds: 5"),
    "the store URL as a literal": dep.replace(/- name: CORVID_STORE\n\s+valueFrom:\n\s+secretKeyRef:\n\s+name: corvid\n\s+key: store-url/, '- name: CORVID_STORE\n              value: "postgres://u:pw@db/corvid"'),
    "a readiness probe on /acp": dep.replace("path: /login", "path: /acp"),
    "an unknown kind": "apiVersion: apps/v1\nkind: Deploymint\nmetadata: {name: x}\n",
  };
  let bad = 0;
  for (const [what, text] of Object.entries(broken)) {
    if (text === dep) {
      console.error(`selftest: ${what}: the edit did not apply`);
      bad++;
    } else if (check(what, text).length === 0) {
      console.error(`selftest: ${what}: accepted`);
      bad++;
    } else {
      console.log(`ok  refused: ${what}`);
    }
  }
  if (check("deployment.yaml", dep).length) bad++;
  process.exit(bad ? 1 : 0);
}
let problems = [];
for (const f of args) {
  problems = problems.concat(check(f, readFileSync(f, "utf8")));
  if (!problems.length) console.log(`ok  ${f}`);
}
for (const p of problems) console.error(p);
process.exit(problems.length ? 1 : 0);
