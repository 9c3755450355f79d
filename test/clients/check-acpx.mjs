// Checks acpx's `--format json` output (the JSON-RPC messages it exchanged with
// corvid, one per line): the streamed agent text must be the scripted answer and
// the prompt must end with end_turn.
//   node check-acpx.mjs OUTPUT_FILE EXPECTED_TEXT
import { readFileSync } from "node:fs";

const [file, want] = process.argv.slice(2);
const lines = readFileSync(file, "utf8").split("\n").filter((l) => l.trim() !== "");
let text = "";
let stop = null;
const problems = [];
for (const line of lines) {
  let m;
  try {
    m = JSON.parse(line);
  } catch {
    problems.push(`not JSON: ${line.slice(0, 200)}`);
    continue;
  }
  const u = m.params?.update;
  if (m.method === "session/update" && u?.sessionUpdate === "agent_message_chunk" && u.content?.type === "text") {
    text += u.content.text;
  }
  if (m.result && typeof m.result.stopReason === "string") stop = m.result.stopReason;
  if (m.error) problems.push(`error message: ${line.slice(0, 300)}`);
}
if (text !== want) problems.push(`agent text ${JSON.stringify(text)}, want ${JSON.stringify(want)}`);
if (stop !== "end_turn") problems.push(`stopReason ${JSON.stringify(stop)}, want "end_turn"`);
if (problems.length > 0) {
  console.error("acpx smoke failed:\n  " + problems.join("\n  "));
  process.exit(1);
}
console.log(`acpx smoke ok: ${lines.length} messages, agent text ${JSON.stringify(text)}`);
