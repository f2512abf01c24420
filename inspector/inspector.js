// The A2A inspector: the endpoint's card, a chat with its agent, the
// caller's tasks and every raw frame. It talks to its own origin only, in
// JSON-RPC 1.0, and builds every node with textContent: what an agent
// sends is shown, never run.
'use strict';

(() => {
  const meta = (name) => document.querySelector(`meta[name="${name}"]`).content;
  const CARD = meta('a2a-card');
  const RPC = meta('a2a-rpc');
  const PROBLEMS = meta('a2a-problems');
  const PROBE_ID = 'caddy-a2a-card-check';
  const $ = (id) => document.getElementById(id);

  const state = {
    docs: {},          // the card documents: v10 and hybrid
    problems: {},      // what the server's card check found, per document
    shown: 'v10',
    streaming: true,   // the card says the agent streams
    contextId: '',
    taskId: '',        // the task the next message continues
    views: new Map(),  // task id -> its view in the chat
  };
  let rpcID = 0;

  // el makes an element with properties and children (strings become
  // text nodes).
  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    Object.assign(e, props || {});
    for (const k of kids) {
      if (k !== null && k !== undefined) e.append(k);
    }
    return e;
  }

  function randomID() {
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  // stateName is a 1.0 state as the spec's prose spells it.
  function stateName(s) {
    return (s || 'TASK_STATE_UNSPECIFIED').replace(/^TASK_STATE_/, '').toLowerCase().replace(/_/g, '-');
  }
  const terminal = new Set(['completed', 'failed', 'canceled', 'rejected']);
  const waiting = new Set(['input-required', 'auth-required']);

  class CallError extends Error {}

  function showError(err) {
    const box = $('error');
    box.textContent = err && err.message ? err.message : String(err);
    box.hidden = false;
  }

  function clearError() {
    $('error').hidden = true;
  }

  // frame adds one raw frame to the panel: what was sent, what came back.
  function frame(kind, text) {
    const list = $('frames');
    const item = el('li', { className: `frame ${kind}` },
      el('span', { className: 'kind' }, kind), el('pre', {}, text));
    list.append(item);
    while (list.children.length > 500) list.firstElementChild.remove();
    list.scrollTop = list.scrollHeight;
  }

  function headers(extra) {
    const h = { 'Content-Type': 'application/json', 'A2A-Version': '1.0', ...extra };
    const name = $('auth-name').value.trim();
    const value = $('auth-value').value;
    if (name && value) h[name] = value;
    return h;
  }

  // answer is a JSON-RPC response's result, or the server's error as it
  // said it: the code and message, or the HTTP status.
  function answer(resp, text) {
    let doc;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new CallError(`HTTP ${resp.status} ${resp.statusText}${text ? ': ' + text.slice(0, 300) : ''}`);
    }
    if (doc && doc.error) throw new CallError(`error ${doc.error.code}: ${doc.error.message}`);
    if (!resp.ok) throw new CallError(`HTTP ${resp.status} ${resp.statusText}`);
    return doc.result;
  }

  function request(method, params) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++rpcID, method, params });
    frame('request', body);
    return body;
  }

  async function call(method, params) {
    const body = request(method, params);
    const resp = await fetch(RPC, { method: 'POST', headers: headers(), body, cache: 'no-store', credentials: 'same-origin' });
    const text = await resp.text();
    frame('response', `HTTP ${resp.status}\n${text}`);
    return answer(resp, text);
  }

  // stream calls a streaming method and hands each event's result to
  // onResult as it arrives.
  async function stream(method, params, onResult) {
    const body = request(method, params);
    const resp = await fetch(RPC, {
      method: 'POST', headers: headers({ Accept: 'text/event-stream' }), body, cache: 'no-store', credentials: 'same-origin',
    });
    if (!(resp.headers.get('Content-Type') || '').startsWith('text/event-stream')) {
      const text = await resp.text();
      frame('response', `HTTP ${resp.status}\n${text}`);
      onResult(answer(resp, text));
      return;
    }
    frame('response', `HTTP ${resp.status} (event stream)`);
    const reader = resp.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    let data = [];
    const dispatch = () => {
      if (!data.length) return;
      const d = data.join('\n');
      data = [];
      frame('event', d);
      const doc = JSON.parse(d);
      if (doc.error) throw new CallError(`error ${doc.error.code}: ${doc.error.message}`);
      onResult(doc.result);
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        let line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.endsWith('\r')) line = line.slice(0, -1);
        if (line === '') dispatch();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
    }
    if (buf.startsWith('data:')) data.push(buf.slice(5).replace(/^ /, ''));
    dispatch();
  }

  // partNodes shows parts: text as text, data as JSON, a file as a
  // download (bytes) or its address (a URL is not fetched).
  function partNodes(parts) {
    return (parts || []).map((p) => {
      if (typeof p.text === 'string') return el('span', { className: 'text' }, p.text);
      if (p.data !== undefined) return el('pre', { className: 'data' }, JSON.stringify(p.data, null, 2));
      const name = p.filename || 'file';
      if (typeof p.raw === 'string') {
        let bytes;
        try {
          bytes = Uint8Array.from(atob(p.raw), (c) => c.charCodeAt(0));
        } catch {
          return el('span', { className: 'file' }, `[${name}: not base64]`);
        }
        const href = URL.createObjectURL(new Blob([bytes], { type: p.mediaType || 'application/octet-stream' }));
        return el('a', { className: 'file', href, download: name }, `${name} (${p.mediaType || 'file'}, ${bytes.length} bytes)`);
      }
      if (typeof p.url === 'string') return el('span', { className: 'file' }, `${name} at ${p.url}`);
      return el('span', { className: 'file' }, '[an unknown part]');
    });
  }

  function bubble(who, ...kids) {
    const b = el('div', { className: `bubble ${who}` }, ...kids);
    $('chat').append(b);
    $('chat').scrollTop = $('chat').scrollHeight;
    return b;
  }

  // view is a task's place in the chat: its state, its status message
  // and its artifacts, updated in place as events arrive.
  function view(id) {
    let v = state.views.get(id);
    if (v) return v;
    const badge = el('span', { className: 'state' });
    const status = el('div', { className: 'status' });
    const artifacts = el('div', { className: 'artifacts' });
    const root = bubble('agent', el('div', { className: 'task-head' }, 'task ', el('code', {}, id), ' ', badge), artifacts, status);
    root.dataset.task = id;
    v = { id, root, badge, status, artifacts, byID: new Map(), state: '' };
    state.views.set(id, v);
    return v;
  }

  function setStatus(v, st) {
    // What the agent asked while the task waited stays in the bubble,
    // above the answer that follows it.
    if (waiting.has(v.state) && v.status.childNodes.length) {
      v.artifacts.before(el('div', { className: 'said' }, ...v.status.childNodes));
    }
    v.state = stateName(st && st.state);
    v.badge.textContent = v.state;
    v.badge.dataset.state = v.state;
    v.root.dataset.state = v.state;
    v.status.replaceChildren(...partNodes(st && st.message && st.message.parts));
  }

  function setArtifact(v, a, append) {
    let box = v.byID.get(a.artifactId);
    if (!box) {
      box = el('div', { className: 'artifact' });
      box.dataset.artifact = a.artifactId;
      v.byID.set(a.artifactId, box);
      v.artifacts.append(box);
    } else if (!append) {
      box.replaceChildren();
    }
    box.append(...partNodes(a.parts));
  }

  // apply shows one result (a task, a message, or a status or artifact
  // update) and returns the task's view, if it is one.
  function apply(r) {
    if (!r) return null;
    if (r.message) {
      bubble('agent', ...partNodes(r.message.parts));
      if (r.message.contextId) state.contextId = r.message.contextId;
      return null;
    }
    if (r.task) {
      const t = r.task;
      const v = view(t.id);
      if (t.contextId) state.contextId = t.contextId;
      setStatus(v, t.status);
      v.byID.clear();
      v.artifacts.replaceChildren();
      for (const a of t.artifacts || []) setArtifact(v, a, false);
      return v;
    }
    if (r.statusUpdate) {
      const v = view(r.statusUpdate.taskId);
      setStatus(v, r.statusUpdate.status);
      return v;
    }
    if (r.artifactUpdate) {
      const v = view(r.artifactUpdate.taskId);
      setArtifact(v, r.artifactUpdate.artifact, r.artifactUpdate.append);
      return v;
    }
    return null;
  }

  function setContinuing(id) {
    state.taskId = id || '';
    $('continuing').hidden = !state.taskId;
    $('continuing-id').textContent = state.taskId;
    $('text').placeholder = state.taskId ? 'Answer to continue the task' : 'Message the agent';
  }

  function readFile(f) {
    return new Promise((resolve, reject) => {
      const r = new FileReader();
      r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ''));
      r.onerror = () => reject(r.error);
      r.readAsDataURL(f);
    });
  }

  async function send(ev) {
    ev.preventDefault();
    clearError();
    const text = $('text').value;
    const files = [...$('file').files];
    if (!text.trim() && !files.length) return;
    const parts = [];
    if (text.trim()) parts.push({ text });
    for (const f of files) {
      parts.push({ raw: await readFile(f), mediaType: f.type || 'application/octet-stream', filename: f.name });
    }
    const message = { messageId: randomID(), role: 'ROLE_USER', parts };
    if (state.contextId) message.contextId = state.contextId;
    if (state.taskId) message.taskId = state.taskId;
    bubble('user', ...partNodes(parts));
    $('text').value = '';
    $('file').value = '';
    $('send').disabled = true;
    let last = null;
    const seen = (r) => { last = apply(r) || last; };
    try {
      if ($('stream').checked && state.streaming) await stream('SendStreamingMessage', { message }, seen);
      else seen(await call('SendMessage', { message }));
      setContinuing(last && waiting.has(last.state) ? last.id : '');
    } catch (e) {
      showError(e);
    } finally {
      $('send').disabled = false;
    }
    refreshTasks();
  }

  // taskCell shows as much of a task id as tells tasks apart: the end,
  // since a UUIDv7 starts with its creation time, alike for every task
  // of a minute. The whole id is its title and what a copy of it takes.
  function taskCell(id) {
    const shown = id.length > 13 ? `…${id.slice(-12)}` : id;
    const cell = el('td', { className: 'task-id', title: id }, el('code', {}, shown));
    cell.addEventListener('copy', (ev) => {
      const sel = getSelection();
      if (!sel.rangeCount || !cell.contains(sel.getRangeAt(0).commonAncestorContainer)) return;
      ev.clipboardData.setData('text/plain', id);
      ev.preventDefault();
    });
    return cell;
  }

  async function refreshTasks() {
    const body = $('tasks').tBodies[0];
    let res;
    try {
      res = await call('ListTasks', {});
    } catch (e) {
      showError(e);
      return;
    }
    body.replaceChildren(...(res.tasks || []).map((t) => {
      const st = stateName(t.status && t.status.state);
      const actions = el('td', { className: 'actions' });
      if (!terminal.has(st)) {
        actions.append(
          el('button', { type: 'button', className: 'cancel', onclick: () => cancel(t.id) }, 'cancel'),
          el('button', { type: 'button', className: 'resubscribe', onclick: () => resubscribe(t.id) }, 'resubscribe'));
      }
      const row = el('tr', {}, taskCell(t.id),
        el('td', { className: 'state' }, st), el('td', {}, (t.status && t.status.timestamp) || ''), actions);
      row.dataset.task = t.id;
      return row;
    }));
  }

  async function cancel(id) {
    clearError();
    try {
      apply({ task: await call('CancelTask', { id }) });
    } catch (e) {
      showError(e);
    }
    refreshTasks();
  }

  async function resubscribe(id) {
    clearError();
    try {
      await stream('SubscribeToTask', { id }, apply);
    } catch (e) {
      showError(e);
    }
    refreshTasks();
  }

  // interfaces lists a card document's interfaces: 1.0's
  // supportedInterfaces, and a 0.3 card's url and additionalInterfaces.
  function interfaces(doc) {
    const out = [];
    const add = (url, binding, version) => {
      // The hybrid document lists its 0.3 interfaces twice (url and
      // supportedInterfaces): show each once.
      const major = String(version).split('.').slice(0, 2).join('.');
      if (!out.some((o) => o.url === url && o.binding === binding && String(o.version).startsWith(major))) {
        out.push({ url, binding, version });
      }
    };
    for (const i of doc.supportedInterfaces || []) add(i.url, i.protocolBinding, i.protocolVersion);
    if (doc.url) {
      const v = doc.protocolVersion || '0.3';
      add(doc.url, doc.preferredTransport || 'JSONRPC', v);
      for (const i of doc.additionalInterfaces || []) add(i.url, i.transport, v);
    }
    return out;
  }

  // probe asks a JSON-RPC interface of this origin for a task no server
  // has, as `caddy a2a card` does: an A2A server answers in JSON. Other
  // origins are not asked (the page talks to its own only).
  async function probe(i) {
    let u;
    try {
      u = new URL(i.url, location.href);
    } catch {
      return { text: 'not a URL', bad: true };
    }
    if (u.origin !== location.origin) return { text: 'not probed (another origin)' };
    if (i.binding !== 'JSONRPC') return { text: 'not probed' };
    const v10 = String(i.version).startsWith('1.');
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'probe', method: v10 ? 'GetTask' : 'tasks/get', params: { id: PROBE_ID } });
    try {
      const h = headers({ 'A2A-Version': v10 ? '1.0' : '0.3' });
      const resp = await fetch(u.pathname + u.search, { method: 'POST', headers: h, body, cache: 'no-store', credentials: 'same-origin' });
      if (resp.status === 401 || resp.status === 403) return { text: `needs credentials (HTTP ${resp.status})` };
      JSON.parse(await resp.text());
      return { text: 'answers' };
    } catch (e) {
      return { text: 'does not answer', bad: true };
    }
  }

  async function showCard() {
    const doc = state.docs[state.shown];
    document.querySelectorAll('.tab').forEach((t) => t.classList.toggle('selected', t.dataset.doc === state.shown));
    if (!doc) return;
    const caps = doc.capabilities || {};
    const capList = [caps.streaming && 'streaming', caps.pushNotifications && 'push notifications',
      (caps.extendedAgentCard || doc.supportsAuthenticatedExtendedCard) && 'extended card',
      ...(caps.extensions || []).map((x) => `extension ${x.uri}${x.required ? ' (required)' : ''}`)].filter(Boolean);
    const rows = [['Name', doc.name], ['Description', doc.description], ['Version', doc.version],
      ['Provider', doc.provider && `${doc.provider.organization} (${doc.provider.url})`],
      ['Capabilities', capList.join(', ') || 'none'],
      ['Input modes', (doc.defaultInputModes || []).join(', ')], ['Output modes', (doc.defaultOutputModes || []).join(', ')],
      ['Security', Object.keys(doc.securitySchemes || {}).join(', ') || 'none declared']];
    $('card').replaceChildren(...rows.filter((r) => r[1]).flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, String(v))]));
    $('skills').replaceChildren(...(doc.skills || []).map((s) =>
      el('li', { className: 'skill' }, el('strong', {}, s.name || s.id), ` (${s.id}): ${s.description || ''}`,
        (s.tags || []).length ? el('span', { className: 'tags' }, ` [${s.tags.join(', ')}]`) : null)));
    $('card-json').textContent = JSON.stringify(doc, null, 2);
    const list = interfaces(doc);
    const items = list.map((i) => el('li', {}, `${i.binding} ${i.version} ${i.url} `, el('span', { className: 'probe' }, '…')));
    $('interfaces').replaceChildren(...items);
    const problems = [...(state.problems[state.shown] || [])];
    const results = await Promise.all(list.map(probe));
    results.forEach((r, n) => {
      items[n].lastChild.textContent = r.text;
      if (r.bad) problems.push(`interface ${list[n].binding} ${list[n].version} ${list[n].url}: ${r.text}`);
    });
    $('problems').replaceChildren(...(problems.length ? problems.map((p) => el('li', { className: 'problem' }, p)) : [el('li', { className: 'none' }, 'none')]));
  }

  async function loadCard() {
    const get = async (version) => {
      const h = version ? { 'A2A-Version': version } : {};
      const resp = await fetch(CARD, { headers: h, cache: 'no-store' });
      if (!resp.ok) throw new CallError(`the card: HTTP ${resp.status} ${resp.statusText}`);
      return resp.json();
    };
    try {
      [state.docs.v10, state.docs.hybrid] = await Promise.all([get('1.0'), get('')]);
      const p = await fetch(PROBLEMS, { cache: 'no-store' });
      if (p.ok) state.problems = await p.json();
    } catch (e) {
      showError(e);
      return;
    }
    const doc = state.docs.v10;
    $('agent-name').textContent = doc.name || 'A2A inspector';
    $('agent-description').textContent = doc.description || '';
    document.title = `${doc.name} · A2A inspector`;
    state.streaming = !!(doc.capabilities && doc.capabilities.streaming);
    $('stream').checked = state.streaming;
    $('stream').disabled = !state.streaming;
    await showCard();
  }

  document.addEventListener('DOMContentLoaded', () => {
    $('composer').addEventListener('submit', send);
    $('text').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) $('composer').requestSubmit();
    });
    $('new-task').addEventListener('click', () => setContinuing(''));
    $('new-context').addEventListener('click', () => { state.contextId = ''; setContinuing(''); $('chat').replaceChildren(); state.views.clear(); });
    $('refresh').addEventListener('click', refreshTasks);
    $('clear-frames').addEventListener('click', () => $('frames').replaceChildren());
    $('auth').addEventListener('submit', (e) => { e.preventDefault(); refreshTasks(); });
    document.querySelectorAll('.tab').forEach((t) => t.addEventListener('click', () => { state.shown = t.dataset.doc; showCard(); }));
    loadCard().then(refreshTasks);
  });
})();
