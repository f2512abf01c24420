// Push notifications with the @a2a-js/sdk 1.3.0 client: it leaves a config
// in a send and creates, gets, lists and deletes configs, over JSON-RPC and
// HTTP+JSON (1.0); a webhook receiver here records every delivery.
// Started by interop/js_test.go (TestJSPush) with A2A_PUSH_URL, a mount
// with `push { allow 127.0.0.1 }`.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const PUSH = process.env.A2A_PUSH_URL;
if (!PUSH) throw new Error('A2A_PUSH_URL is not set: run through interop/run.sh or go test in interop/');
const TIMEOUT = { timeout: 20_000 };

let server;
let hookURL;
const deliveries = [];
const waiters = [];

before(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body: JSON.parse(body) });
      res.end();
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  hookURL = `http://127.0.0.1:${server.address().port}/hook`;
});
after(() => server.close());

// until waits for a delivery matching pred, at most 10 s.
async function until(pred) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const d = deliveries.find(pred);
    if (d) return d;
    if (Date.now() > deadline) throw new Error(`no such delivery in ${JSON.stringify(deliveries)}`);
    await new Promise((r) => {
      waiters.push(r);
      setTimeout(r, 200);
    });
  }
}

async function connect(rest) {
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      cardResolver: new DefaultAgentCardResolver({}),
      transports: [rest ? new RestTransportFactory({}) : new JsonRpcTransportFactory({})],
      ...(rest ? { preferredTransports: ['HTTP+JSON'] } : {}),
    }),
  );
  return factory.createFromUrl(PUSH);
}

for (const rest of [false, true]) {
  describe(rest ? 'HTTP+JSON 1.0' : 'JSON-RPC 1.0', () => {
    test('a config in a send gets every change, in order, as StreamResponse', TIMEOUT, async () => {
      const client = await connect(rest);
      const token = `tok-${rest ? 'rest' : 'rpc'}-${crypto.randomUUID()}`;
      const task = await client.sendMessage({
        message: { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'echo js push' } }] },
        configuration: {
          acceptedOutputModes: [],
          taskPushNotificationConfig: { tenant: '', id: '', taskId: '', url: hookURL, token, authentication: undefined },
        },
      });
      assert.equal(TaskState[task.status.state] ?? task.status.state, 'TASK_STATE_COMPLETED');
      await until((d) => d.body.statusUpdate?.taskId === task.id && d.body.statusUpdate.status.state === 'TASK_STATE_COMPLETED');
      const mine = deliveries.filter((d) => d.headers['x-a2a-notification-token'] === token);
      const kinds = mine.map((d) => Object.keys(d.body)[0]);
      assert.deepEqual(kinds, ['task', 'statusUpdate', 'artifactUpdate', 'statusUpdate']);
      assert.equal(mine[2].body.artifactUpdate.artifact.parts[0].text, 'echo: js push');
      assert.equal(mine[0].headers['content-type'], 'application/json');
    });

    test('create, get, list, delete', TIMEOUT, async () => {
      const client = await connect(rest);
      const task = await client.sendMessage({
        message: { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: 'echo configs' } }] },
      });
      const created = await client.createTaskPushNotificationConfig({
        tenant: '', id: 'js-1', taskId: task.id, url: hookURL, token: 't', authentication: { scheme: 'Bearer', credentials: 'k' },
      });
      assert.equal(created.id, 'js-1');
      assert.equal(created.taskId, task.id);
      assert.equal(created.authentication?.scheme, 'Bearer');
      const got = await client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'js-1' });
      assert.equal(got.url, hookURL);
      const list = await client.listTaskPushNotificationConfig({ tenant: '', taskId: task.id, pageSize: 0, pageToken: '' });
      assert.deepEqual(list.configs.map((c) => c.id), ['js-1']);
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'js-1' });
      await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'js-1' });
      await assert.rejects(client.getTaskPushNotificationConfig({ tenant: '', taskId: task.id, id: 'js-1' }));
    });
  });
}
