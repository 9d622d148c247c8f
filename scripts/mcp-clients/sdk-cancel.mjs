// A real TypeScript-SDK MCP client that cancels a call, driven by
// cmd/phantom/realclients_cancel_test.go.
//
//   node sdk-cancel.mjs CONFIG SERVER TERMINAL_ID
//
// It starts the server CONFIG names as the SDK does by default (see
// sdk-client.mjs), reads TERMINAL_ID once (the call the human grants),
// then calls read_output waiting for a line that never comes and aborts
// that call with an AbortSignal after 2 s: the SDK sends
// notifications/cancelled. It waits a few seconds, calls list_terminals,
// and reports every message the server sent: the MCP spec says a
// cancelled request gets no response.
//
// It prints one JSON line and exits 1 if there was any failure.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const fromTools = createRequire(new URL("../../.tools/node/package.json", import.meta.url));
const load = async (name) => import(pathToFileURL(fromTools.resolve(name)).href);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = await load("@modelcontextprotocol/sdk/client/stdio.js");

const [configPath, serverName, terminalId] = process.argv.slice(2);
const report = { failures: [], received_ids: [], sent: [] };
const fail = (msg) => report.failures.push(msg);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  await run();
} catch (err) {
  fail(`${err?.message ?? err}`);
}
console.log(JSON.stringify(report));
process.exit(report.failures.length ? 1 : 0);

async function run() {
  const entry = JSON.parse(readFileSync(configPath, "utf8")).mcpServers?.[serverName];
  if (!entry?.command) throw new Error(`${configPath} has no mcpServers.${serverName}.command`);
  const transport = new StdioClientTransport({ command: entry.command, args: entry.args ?? [], env: entry.env });
  const client = new Client({ name: "phantom-cancel-test", version: "1" });
  await client.connect(transport);
  // Every message each way, as the wire has it.
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    if (m.id !== undefined) report.received_ids.push(m.id);
    onmessage?.(m, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (m, opts) => {
    report.sent.push({ id: m.id, method: m.method, requestId: m.params?.requestId });
    return send(m, opts);
  };
  try {
    await client.callTool({ name: "read_output", arguments: { terminal_id: terminalId, lines: 5 } });
    const ac = new AbortController();
    setTimeout(() => ac.abort("the test stopped it"), 2000);
    try {
      await client.callTool(
        { name: "read_output", arguments: { terminal_id: terminalId, wait_for: "^never printed$", wait_seconds: 60 } },
        undefined,
        { signal: ac.signal, timeout: 120000 },
      );
      fail("the aborted call returned a result");
    } catch (err) {
      report.abort_error = `${err?.message ?? err}`;
    }
    const waited = report.sent.filter((m) => m.method === "tools/call").at(-1)?.id;
    report.cancelled_id = waited;
    report.cancel_sent = report.sent.some((m) => m.method === "notifications/cancelled" && m.requestId === waited);
    await sleep(3000);
    const list = await client.callTool({ name: "list_terminals", arguments: {} });
    report.later_answered = !list.isError;
    report.cancelled_answered = report.received_ids.includes(waited);
  } finally {
    await client.close();
  }
}
