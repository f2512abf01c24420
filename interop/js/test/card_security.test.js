// Card security with @a2a-js/sdk: the schemes a card declares, the extended
// card for authenticated callers, and the SDK's signature verifier on cards
// Caddy signed. Started by interop/card_security_test.go
// (TestJSCardSecurity), which loads two sites and passes them here:
//   A2A_BASIC_URL   basic_auth on the RPC path, a basic scheme, signed card
//   A2A_BEARER_URL  forward_auth taking "Bearer tok-NAME", an oauth2 scheme
//                   with the scope a2a:call, signed card
//   A2A_BASIC_AUTH  an Authorization value basic_auth accepts
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mustEnv } from './env.js';
import * as jose from 'jose';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
} from '@a2a-js/sdk/client';
import { canonicalizeAgentCard, verifyAgentCardSignature } from '@a2a-js/sdk';

const BASIC = mustEnv('A2A_BASIC_URL');
const BEARER = mustEnv('A2A_BEARER_URL');
const BASIC_AUTH = mustEnv('A2A_BASIC_AUTH');
const TIMEOUT = { timeout: 20_000 };

// withAuth is a fetch that sends authorization on every request.
function withAuth(authorization) {
  return (input, init = {}) => {
    const headers = new Headers(init.headers);
    if (authorization) headers.set('Authorization', authorization);
    return fetch(input, { ...init, headers });
  };
}

async function connect(base, authorization) {
  const fetchImpl = withAuth(authorization);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
      transports: [new JsonRpcTransportFactory({ fetchImpl })],
    }),
  );
  return factory.createFromUrl(base);
}

// keyFromJWKS is a retrievePublicKey for verifyAgentCardSignature: the
// key of that kid in the JWKS the signature's jku names.
async function keyFromJWKS(kid, jku) {
  assert.ok(jku, 'the signature names its JWKS (jku)');
  const res = await fetch(jku);
  assert.equal(res.status, 200);
  const { keys } = await res.json();
  const jwk = keys.find((k) => k.kid === kid);
  assert.ok(jwk, `JWKS ${jku} holds kid ${kid}`);
  return jose.importJWK(jwk, jwk.alg ?? 'ES256');
}

// card10 is the 1.0 rendering of a site's card, what the verifier covers.
async function card10(base) {
  const res = await fetch(`${base}/.well-known/agent-card.json`, { headers: { 'A2A-Version': '1.0' } });
  assert.equal(res.status, 200);
  return res.json();
}

describe('@a2a-js/sdk and card security', () => {
  test('bearer site: the 1.0 card verifies with verifyAgentCardSignature; a tampered one does not', TIMEOUT, async () => {
    const card = await card10(BEARER);
    const { protected: prot } = card.signatures[0];
    const header = jose.decodeProtectedHeader({ protected: prot });
    assert.deepEqual(header, { alg: 'ES256', jku: `${BEARER}/.well-known/jwks.json`, kid: 'interop-card', typ: 'JOSE' });
    const verify = verifyAgentCardSignature(keyFromJWKS);
    await verify(card);
    await assert.rejects(verify({ ...card, description: 'Tampered' }), /No valid signatures/);
  });

  test('bearer site: the token gets the extended card, verified; anonymous is refused', TIMEOUT, async () => {
    const client = await connect(BEARER, 'Bearer tok-carol');
    const pub = await client.getAgentCard();
    // The public card as the SDK parsed it.
    // The SDK's card model is ts-proto's: oneofs as {$case, value}.
    const corp = pub.securitySchemes.corp.scheme;
    assert.equal(corp.$case, 'oauth2SecurityScheme');
    assert.equal(corp.value.flows.flow.$case, 'clientCredentials');
    assert.equal(corp.value.flows.flow.value.tokenUrl, 'https://id.example.com/token');
    assert.deepEqual(corp.value.flows.flow.value.scopes, { 'a2a:call': 'Call the agent' });
    assert.deepEqual(pub.securityRequirements.map((r) => r.schemes.corp.list), [['a2a:call']]);
    assert.equal(pub.capabilities.extendedAgentCard, true);

    const authed = await connect(BEARER, 'Bearer tok-carol');
    const ext = await authed.getAgentCard();
    assert.equal(ext.description, 'The agent, for staff');
    assert.deepEqual(ext.skills.map((s) => s.id), ['echo', 'admin']);
    // Client.getAgentCard(options, verifier) hands the verifier the SDK's
    // parsed model, whose oneofs ({$case, value}) AgentCard.fromJSON does
    // not read back: the securitySchemes drop out of the payload and no
    // card with a scheme verifies that way. The card as sent does.
    await assert.rejects(authed.getAgentCard(undefined, verifyAgentCardSignature(keyFromJWKS)), /No valid signatures/);
    const res = await fetch(`${BEARER}/a2a`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'A2A-Version': '1.0', Authorization: 'Bearer tok-carol' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetExtendedAgentCard', params: {} }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('Cache-Control'), 'private');
    const { result } = await res.json();
    assert.deepEqual(result.skills.map((s) => s.id), ['echo', 'admin']);
    await verifyAgentCardSignature(keyFromJWKS)(result);

    const anon = await connect(BEARER);
    await assert.rejects(anon.getAgentCard());
  });

  test('basic site: basic_auth credentials get the extended card; anonymous is refused', TIMEOUT, async () => {
    const anon = await connect(BASIC);
    await assert.rejects(anon.getAgentCard());
    const client = await connect(BASIC, BASIC_AUTH);
    const ext = await client.getAgentCard();
    assert.deepEqual(ext.skills.map((s) => s.id), ['echo', 'admin']);
    assert.deepEqual(ext.securitySchemes.users.scheme, {
      $case: 'httpAuthSecurityScheme', value: { description: 'Caddy basic_auth', scheme: 'Basic', bearerFormat: '' },
    });
    assert.deepEqual(Object.keys(ext.securityRequirements[0].schemes), ['users']);
  });

  // The SDK canonicalises by dropping every empty value (cleanEmpty), the
  // spec (§8.4) keeps what was set: a requirement without scopes,
  // {"schemes":{"users":{}}}, is in the signed payload and not in the
  // SDK's, so no card with one verifies there.
  test('basic site: the SDK drops a scope-less requirement from the payload, so its verifier refuses the card', TIMEOUT, async () => {
    const card = await card10(BASIC);
    assert.deepEqual(card.securityRequirements, [{ schemes: { users: {} } }]);
    assert.equal('securityRequirements' in JSON.parse(canonicalizeAgentCard(card)), false);
    await assert.rejects(verifyAgentCardSignature(keyFromJWKS)(card), /No valid signatures/);
  });
});
