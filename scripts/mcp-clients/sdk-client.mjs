// A real TypeScript-SDK MCP client, driven by cmd/phantom/realclients_test.go.
//
//   node sdk-client.mjs CONFIG SERVER TERMINAL_ID [CALLS [WAIT_FOR]]
//
// It starts the server that CONFIG (a Claude-style file: mcpServers.SERVER =
// {command, args, env}) names exactly as the SDK does by default — with only
// the handful of variables getDefaultEnvironment passes plus the entry's env —
// lists the tools, compiles every inputSchema and outputSchema with ajv, calls
// list_terminals and read_output(TERMINAL_ID) (none when TERMINAL_ID is "-"),
// then each call of CALLS (a JSON array of {name, arguments}), and validates
// each result's structuredContent against the tool's outputSchema. The report
// also says how big the tool list is (its JSON, in bytes), which tools have
// no title and which output schemas use $ref. With WAIT_FOR it then
// calls read_output(TERMINAL_ID, wait_for WAIT_FOR, wait_seconds 3) with a
// request timeout of 1 s that progress resets (resetTimeoutOnProgress), as
// agents set theirs, recording what onprogress saw (calls.read_output_wait).
//
// It prints one JSON line — what it saw, and every failure in words — and
// exits 1 if there was any failure. Nothing is lenient on purpose: a tool
// without an outputSchema is a failure (the MCP spec lets a server omit it;
// Phantom promises one for every tool).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

// The packages live in .tools/node (scripts/setup runs npm ci there), not
// beside this file, and ESM resolves bare names only from the importing
// file's folder: resolve them from there explicitly.
const fromTools = createRequire(new URL("../../.tools/node/package.json", import.meta.url));
const load = async (name) => import(pathToFileURL(fromTools.resolve(name)).href);
const { Client } = await load("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport, getDefaultEnvironment } = await load("@modelcontextprotocol/sdk/client/stdio.js");
const { default: Ajv2020 } = await load("ajv/dist/2020.js");
const { default: addFormats } = await load("ajv-formats");
const sdkVersion = JSON.parse(
  readFileSync(new URL("../../.tools/node/node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url)),
).version;

const [configPath, serverName, terminalId, callsJSON, waitFor] = process.argv.slice(2);
const report = { client: `@modelcontextprotocol/sdk ${sdkVersion}`, node: process.version, failures: [] };
const fail = (msg) => report.failures.push(msg);

try {
  await run();
} catch (err) {
  fail(`${err?.message ?? err}`);
}
console.log(JSON.stringify(report));
// The transport's child may outlive close() by a moment; do not wait for it.
process.exit(report.failures.length ? 1 : 0);

async function run() {
  const entry = JSON.parse(readFileSync(configPath, "utf8")).mcpServers?.[serverName];
  if (!entry?.command) throw new Error(`${configPath} has no mcpServers.${serverName}.command`);
  // What the bridge will see: the SDK merges its default environment with
  // the entry's env (and passes nothing else of ours).
  report.bridge_env = Object.keys({ ...getDefaultEnvironment(), ...entry.env }).sort();

  const transport = new StdioClientTransport({ command: entry.command, args: entry.args ?? [], env: entry.env });
  // The SDK tells a transport the negotiated revision through this hook.
  transport.setProtocolVersion = (v) => (report.protocol_version = v);
  const client = new Client({ name: "phantom-realclients-test", version: "1" });
  await client.connect(transport);
  try {
    report.server = client.getServerVersion();
    await exercise(client);
  } finally {
    await client.close();
  }
}

async function exercise(client) {
  // tools/list, every page.
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  report.tools = tools.map((t) => t.name);
  report.tools_list_bytes = Buffer.byteLength(JSON.stringify({ tools }));
  report.untitled = tools.filter((t) => !t.title).map((t) => t.name);
  report.ref_output_schemas = tools.filter((t) => JSON.stringify(t.outputSchema ?? {}).includes('"$ref"')).map((t) => t.name);

  // Every schema must compile: a schema ajv rejects is one a client cannot
  // check arguments or results against. MCP's default dialect is 2020-12.
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats(ajv);
  const outputOf = new Map();
  const missing = [];
  for (const tool of tools) {
    compile(ajv, tool.name, "inputSchema", tool.inputSchema);
    if (!tool.outputSchema) {
      missing.push(tool.name);
      continue;
    }
    const validate = compile(ajv, tool.name, "outputSchema", tool.outputSchema);
    if (validate) outputOf.set(tool.name, validate);
  }
  if (missing.length) fail(`${missing.length} of ${tools.length} tools have no outputSchema: ${missing.join(", ")}`);

  report.calls = {};
  await call(client, outputOf, "list_terminals", {});
  if (terminalId !== "-") await call(client, outputOf, "read_output", { terminal_id: terminalId, lines: 50 });
  for (const c of callsJSON ? JSON.parse(callsJSON) : []) await call(client, outputOf, c.name, c.arguments ?? {});
  if (waitFor) {
    await call(client, outputOf, "read_output", { terminal_id: terminalId, wait_for: waitFor, wait_seconds: 3 }, "read_output_wait", {
      timeout: 1000,
      resetTimeoutOnProgress: true,
    });
  }
}

function compile(ajv, tool, which, schema) {
  if (schema?.type !== "object") fail(`tool ${tool}: ${which} is not an object schema: ${JSON.stringify(schema)}`);
  try {
    return ajv.compile(schema);
  } catch (err) {
    fail(`tool ${tool}: ${which} does not compile: ${err.message}`);
    return undefined;
  }
}

// call calls tool name, recorded as report.calls[as]; with options (the
// SDK's RequestOptions) it records the progress onprogress sees.
async function call(client, outputOf, name, args, as = name, options = undefined) {
  const seen = (report.calls[as] = {});
  if (options) {
    seen.progress = [];
    options = { ...options, onprogress: (p) => seen.progress.push(p) };
  }
  let result;
  try {
    result = await client.callTool({ name, arguments: args }, undefined, options);
  } catch (err) {
    // The SDK itself refuses a result whose structuredContent is missing or
    // does not match the outputSchema it listed.
    seen.error = `${err?.message ?? err}`;
    fail(`${name}: ${seen.error}`);
    return;
  }
  seen.is_error = !!result.isError;
  seen.text = (result.content ?? []).map((c) => c.text ?? `[${c.type}]`).join("");
  seen.structured = result.structuredContent !== undefined;
  if (options) seen.structured_content = result.structuredContent;
  if (result.isError) {
    fail(`${name}: isError: ${seen.text}`);
    return;
  }
  const validate = outputOf.get(name);
  if (!validate) return; // already reported: no usable outputSchema
  if (!seen.structured) {
    fail(`${name}: no structuredContent although the tool has an outputSchema`);
  } else if (!validate(result.structuredContent)) {
    fail(`${name}: structuredContent does not match the outputSchema: ${ajvErrors(validate)}`);
  }
}

const ajvErrors = (validate) => validate.errors.map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
