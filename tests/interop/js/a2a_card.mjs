// Signs and verifies Agent Cards with the official A2A JavaScript SDK, for Agentdex's
// interoperability tests (tests/registry/api/test_trust_js_interop.py).
//
//   node a2a_card.mjs sign CARD.json PRIVATE_JWK.json KID ALG   -> the signed card on stdout
//   node a2a_card.mjs verify CARD.json JWKS.json                 -> exit 0 verified, 1 not
//   node a2a_card.mjs canonicalize CARDS.json                    -> each card's signed payload (a JSON list)
import { readFileSync } from "node:fs";
import { canonicalizeAgentCard, generateAgentCardSignature, verifyAgentCardSignature } from "@a2a-js/sdk";

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));
const [command, ...args] = process.argv.slice(2);

if (command === "sign") {
  const [cardPath, jwkPath, kid, alg] = args;
  const sign = generateAgentCardSignature(readJson(jwkPath), { alg, kid, typ: "JOSE" });
  process.stdout.write(JSON.stringify(await sign(readJson(cardPath))));
} else if (command === "verify") {
  const [cardPath, jwksPath] = args;
  const keys = readJson(jwksPath).keys;
  const verify = verifyAgentCardSignature(async (kid) => {
    const key = keys.find((candidate) => candidate.kid === kid);
    if (!key) throw new Error(`no key ${kid} in the JWKS`);
    return key;
  });
  try {
    await verify(readJson(cardPath));
    process.stdout.write("verified\n");
  } catch (error) {
    process.stdout.write(`not verified: ${error.message}\n`);
    process.exit(1);
  }
} else if (command === "canonicalize") {
  process.stdout.write(JSON.stringify(readJson(args[0]).map((card) => canonicalizeAgentCard(card))));
} else {
  process.stderr.write("usage: a2a_card.mjs sign CARD JWK KID ALG | verify CARD JWKS | canonicalize CARDS\n");
  process.exit(2);
}
