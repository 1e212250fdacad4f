// Finds agents through Agentdex with the official A2A JavaScript SDK's client, for Agentdex's
// interoperability tests (tests/interop/test_a2a_js_sdk.py): it resolves the registry's card,
// verifies the card's signature with the registry's JWKS, sends a find-agents message over the
// binding asked for, reads the task back and tries to cancel it.
//
//   node a2a_find_agents.mjs REGISTRY_URL BINDING QUERY   -> one JSON object on stdout
//
// BINDING is JSONRPC or HTTP+JSON. QUERY is text in Agentdex's query syntax, or a JSON object
// (a data part of filters) when it starts with "{".
import { randomUUID } from "node:crypto";
import { Role, taskStateToJSON, verifyAgentCardSignature } from "@a2a-js/sdk";
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";

const [registryUrl, binding, query] = process.argv.slice(2);
const content = query.startsWith("{")
  ? { $case: "data", value: JSON.parse(query) }
  : { $case: "text", value: query };

const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [binding] }),
);
const client = await factory.createFromUrl(registryUrl);

const jwks = await (await fetch(`${registryUrl}/.well-known/jwks.json`)).json();
await client.getAgentCard(undefined, verifyAgentCardSignature(async (kid) => {
  const key = jwks.keys.find((candidate) => candidate.kid === kid);
  if (!key) throw new Error(`no key ${kid} in the registry's JWKS`);
  return key;
}));

const task = await client.sendMessage({
  tenant: "",
  message: {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [{ content, metadata: undefined, filename: "", mediaType: "" }],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  },
  configuration: undefined,
  metadata: undefined,
});

const parts = task.artifacts.flatMap((artifact) => artifact.parts);
const found = parts.find((part) => part.content?.$case === "data")?.content.value;
const text = parts.find((part) => part.content?.$case === "text")?.content.value;
const again = await client.getTask({ tenant: "", id: task.id, historyLength: 0 });
let cancel = "canceled";
try {
  await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
} catch (error) {
  cancel = error.name; // the A2A error's name, whichever binding's subclass carried it
}

process.stdout.write(JSON.stringify({
  protocol: client.transport.protocolName,
  version: client.protocolVersion,
  state: taskStateToJSON(task.status.state),
  agents: found.agents.map((agent) => agent.name),
  total: found.total,
  suggestedTags: found.suggestedTags ?? null,
  text,
  readBack: { id: again.id, state: taskStateToJSON(again.status.state), history: again.history.length },
  cancel,
}));
