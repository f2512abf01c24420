// @a2a-js/sdk's gRPC transports dialing the URL the card gives: the 1.0
// transport from supportedInterfaces, the legacy (0.3) one from the card's 0.3
// members, as a 0.3 reader sees them. Started by interop/js_test.go (TestJSGRPC):
//   A2A_REST_URL  base URL of a mount serving 0.3 and 1.0 with grpc on (h2c)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { Role, TaskState } from '@a2a-js/sdk';

const REST = process.env.A2A_REST_URL;
if (!REST) throw new Error('A2A_REST_URL is not set: run these tests through interop/run.sh or go test in interop/');
// The gRPC interface as the card lists it: host and port, no scheme. The
// transports hand it to @grpc/grpc-js unchanged, which resolves
// "http://host:port" as a DNS name and fails.
const TARGET = new URL(REST).host;
const TIMEOUT = { timeout: 20_000 };

async function card(version) {
  const res = await fetch(`${REST}/.well-known/agent-card.json`, { headers: version ? { 'A2A-Version': version } : {} });
  assert.equal(res.status, 200);
  return res.json();
}

function factory(legacy) {
  const legacyCompat = { enabled: legacy };
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({ legacyCompat }),
      transports: [new GrpcTransportFactory({ legacyCompat })],
      preferredTransports: ['GRPC'],
    }),
  );
}

async function sendEcho(client) {
  const word = crypto.randomUUID();
  const res = await client.sendMessage({
    // Every field: the 1.0 transport encodes the message as given.
    message: {
      messageId: crypto.randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text', value: `echo ${word}` } }], extensions: [], referenceTaskIds: [],
    },
  });
  assert.ok(res && res.id, `send returned ${JSON.stringify(res)}, want a Task`);
  assert.equal(TaskState[res.status?.state], 'TASK_STATE_COMPLETED');
  const text = (res.artifacts ?? []).flatMap((a) => a.parts).map((p) => p.content?.value ?? '').join('');
  assert.equal(text, `echo: ${word}`);
}

test('GrpcTransport (1.0) from the 1.0 card', TIMEOUT, async () => {
  const c = await card('1.0');
  const grpc = c.supportedInterfaces.filter((i) => i.protocolBinding === 'GRPC');
  assert.deepEqual(grpc, [
    { url: TARGET, protocolBinding: 'GRPC', protocolVersion: '1.0' },
    { url: TARGET, protocolBinding: 'GRPC', protocolVersion: '0.3' },
  ]);
  const client = await factory(false).createFromAgentCard(c);
  assert.equal(client.protocolVersion, '1.0');
  await sendEcho(client);
});

test('LegacyGrpcTransport (0.3) from the card\'s 0.3 members', TIMEOUT, async () => {
  const c = await card();
  assert.deepEqual(c.additionalInterfaces.filter((i) => i.transport === 'GRPC'), [{ url: TARGET, transport: 'GRPC' }]);
  // What a 0.3 reader reads: the 0.3 members, without supportedInterfaces
  // (with it, the SDK would prefer the 1.0 interface).
  delete c.supportedInterfaces;
  const client = await factory(true).createFromAgentCard(c);
  assert.equal(client.protocolVersion, '0.3');
  await sendEcho(client);
});
