// @a2a-js/sdk streaming from an OpenAI-compatible model through the
// module's openai upstream. Started by interop/openai_test.go
// (TestOpenAIJS), which loads the mount and its model server:
//   A2A_OPENAI_URL  base URL of the mount; the model answers
//                   "Hel" "lo, " and the number of user turns it was sent
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const BASE = process.env.A2A_OPENAI_URL;
if (!BASE) throw new Error('A2A_OPENAI_URL is not set: run these tests through interop/run.sh or go test in interop/');

function userMessage(text, extra = {}) {
  return { messageId: crypto.randomUUID(), role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text } }], ...extra };
}

function partsText(parts) {
  return (parts ?? []).map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}

describe('@a2a-js/sdk through the openai upstream', () => {
  test('stream: the deltas as artifact chunks, then completed; a follow-up continues the context', { timeout: 20_000 }, async () => {
    const client = await new ClientFactory().createFromUrl(BASE);
    const chunks = [];
    let task;
    let final;
    for await (const ev of client.sendMessageStream({ message: userMessage('Hi') })) {
      if (ev.payload?.$case === 'task') task = ev.payload.value;
      if (ev.payload?.$case === 'artifactUpdate') chunks.push(partsText(ev.payload.value.artifact.parts));
      if (ev.payload?.$case === 'statusUpdate') final = ev.payload.value.status.state;
    }
    assert.ok(task, 'the stream starts with the task');
    assert.deepEqual(chunks.filter((c) => c !== ''), ['Hel', 'lo, ', '1']);
    assert.equal(final, TaskState.TASK_STATE_COMPLETED);

    const res = await client.sendMessage({ message: userMessage('Again', { contextId: task.contextId }) });
    const next = res.payload?.$case === 'task' ? res.payload.value : res;
    assert.equal(next.status.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(next.artifacts.map((a) => partsText(a.parts)).join(''), 'Hello, 2');
  });
});
