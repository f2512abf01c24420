package redisstore

// The Lua scripts that make each write atomic. Redis runs a script alone,
// so a compare-and-set of the version, the snapshot, the events, the
// owner index and the expiry either all happen or none does. The result
// of a script that can fail is a table whose first element is a status
// word ("ok" or one of the errors mapped in status.go).

// luaCommon is shared by the scripts that touch an owner index: Redis
// keeps no functions between EVAL scripts, so each carries its own copy.
//
// An index member is the status timestamp as 16 hex digits (biased so
// that byte order is signed order), the task id, NUL, the state in
// decimal, NUL, the context id: with every score 0 a sorted set orders
// its members bytewise, so the index is ordered by (timestamp, id) and
// carries what List filters on. The deadline set (same tag) scores the
// same members by the time (ms) their task expires, so expired tasks
// leave the index by range instead of by a walk.
const luaCommon = `
local function ixkey(prefix, owner) return '{' .. prefix .. '}o:' .. owner .. ':ix' end
local function dlkey(prefix, owner) return '{' .. prefix .. '}o:' .. owner .. ':dl' end
local function terminal(s) return s == 3 or s == 4 or s == 5 or s == 7 end
local function interrupted(s) return s == 6 or s == 8 end
local function nowms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function parse(m)
  local i = string.find(m, '\0', 17, true)
  local j = string.find(m, '\0', i + 1, true)
  return string.sub(m, 17, i - 1), tonumber(string.sub(m, i + 1, j - 1)), string.sub(m, j + 1)
end
local function prune(ix, dl, now)
  local gone = redis.call('ZRANGEBYSCORE', dl, '-inf', now, 'LIMIT', 0, 256)
  if #gone > 0 then
    redis.call('ZREM', ix, unpack(gone))
    redis.call('ZREM', dl, unpack(gone))
  end
end
local function drop(prefix, id)
  local tag = '{' .. prefix .. '}t:' .. id
  redis.call('DEL', tag .. ':h', tag .. ':p', tag .. ':c')
  redis.call('PUBLISH', prefix .. 'e:' .. id, '')
end
`

// luaWrite is Create (mode "c") and Update (mode "u").
//
// KEYS: 1 task hash, 2 push configs, 3 claims, 4 the prefix's leases
// (lease.go).
// ARGV: 1 mode, 2 expected version (u), 3 owner (c), 4 snapshot,
// 5 state, 6 timestamp (16 hex), 7 context id, 8 TTL in ms (0: none),
// 9 max events, 10 max tasks per owner (0: none), 11 key prefix,
// 12 task id, 13 when a lease taken now lapses (unix ms, the writer's
// clock, as its renewals and every process's Orphans use), 14 the send's
// messageId ("" for no claim; the owner is 3, for an Update too), 15 its
// digest, 16 when the claim lapses (unix ms), 17 how many secrets the
// writer holds (k), then k pairs of a secret's key and the writer's value
// of it (secret.go), then the encoded events.
//
// A send's claim is a key of its own, {<prefix>}s:<owner length>:<owner>:
// <messageId>, holding the task id, NUL, the digest, expiring when the
// claim lapses: a claim whose task hash is gone (expired, evicted) is
// dead. A live one turns the write into the reply {"sent"|"reused",
// task id}, with nothing written.
//
// The events live in the task hash, event k (from 1) in field "e<k>",
// with n the count: one key per task, one HSET for the snapshot and the
// events, one expiry. A Stream per task was a key, an XADD per event and
// a PEXPIRE more, and a 4 KiB node per task: BenchmarkClient/Send, Redis's
// time per blocking send 77-95 µs where it was 102-110; under the load of
// bench/run.sh's redis step 94 µs where it was 117; a short task 1.5 KB of
// Redis memory where it was 5.6.
//
// The write that makes a task running (a send, a continuation) takes the
// writer's lease on it, the one that settles it drops the lease: here,
// not in a command of their own, which was two more round trips a send.
//
// The owner index keys are derived from the stored owner inside the
// script, so an Update needs no read first; in Redis Cluster they would
// have to be declared (see doc.go).
const luaWrite = luaCommon + `
local mode, st, ttl = ARGV[1], tonumber(ARGV[5]), tonumber(ARGV[8])
local maxev, maxown, prefix, id = tonumber(ARGV[9]), tonumber(ARGV[10]), ARGV[11], ARGV[12]
-- ev0: ARGV[ev0 + k] is event k.
local nsec = tonumber(ARGV[17])
local ev0 = 17 + 2 * nsec
local send = ARGV[14]
local claimKey
-- claimed returns the reply a live claim of the send makes, or nil.
local function claimed(owner)
  claimKey = '{' .. prefix .. '}s:' .. #owner .. ':' .. owner .. ':' .. send
  local cv = redis.call('GET', claimKey)
  if not cv then return nil end
  local sep = string.find(cv, '\0', 1, true)
  local ctask = string.sub(cv, 1, sep - 1)
  if redis.call('EXISTS', '{' .. prefix .. '}t:' .. ctask .. ':h') == 0 then return nil end
  if string.sub(cv, sep + 1) == ARGV[15] then return {'sent', ctask} end
  return {'reused', ctask}
end
local nev = #ARGV - ev0
-- The server's clock, read only by a write that needs it (an owner's
-- index): each redis.call costs a script about as much as the command.
local now
local function clock()
  if not now then now = nowms() end
  return now
end
local owner, n, ver
local wasRunning = false
local hasPush, hasClaims = false, false
-- prevLast is the log's newest event id before this write ('' for none).
local prevLast = ''
-- prevMember is the task's index member before this write, prevTTL
-- whether its keys had an expiry: a write that changes neither (a
-- running task's chunk, nearly every write) leaves the index and the
-- expiries alone.
local prevMember, prevTTL = nil, false
-- quiet: nobody can be waiting on the task's channel (a new task's, no
-- leftover), so the write publishes nothing.
local quiet = false
if mode == 'c' then
  -- One EXISTS for the task and what an expired one with this id may
  -- have left (push configs or claims that outlived its hash), which
  -- must not pass to the new one: a DEL of keys that are not there cost
  -- four times as much.
  if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3]) > 0 then
    if redis.call('EXISTS', KEYS[1]) == 1 then return {'exists'} end
    redis.call('DEL', KEYS[2], KEYS[3])
  else
    quiet = true
  end
  if send ~= '' then
    local r = claimed(ARGV[3])
    if r then return r end
  end
  if nev > maxev and not terminal(st) then return {'toomany'} end
  owner, n, ver = ARGV[3], 0, 1
  local ix, dl = ixkey(prefix, owner), dlkey(prefix, owner)
  if owner ~= '' then prune(ix, dl, clock()) end
  if maxown > 0 and owner ~= '' and redis.call('ZCARD', ix) >= maxown then
    local count = redis.call('ZCARD', ix)
    local all = redis.call('ZRANGE', ix, 0, -1)
    for _, want in ipairs({terminal, interrupted}) do
      for _, m in ipairs(all) do
        if count < maxown then break end
        local vid, vst = parse(m)
        if want(vst) then
          drop(prefix, vid)
          redis.call('ZREM', ix, m)
          redis.call('ZREM', dl, m)
          count = count - 1
        end
      end
    end
    if count >= maxown then return {'quota'} end
  end
else
  local cur = redis.call('HMGET', KEYS[1], 'o', 'v', 'st', 'n', 'ix', 'ps', 'cl')
  if not cur[1] or (send ~= '' and cur[1] ~= ARGV[3]) then return {'notfound'} end
  -- A retry finds its claim whatever the version has become.
  if send ~= '' then
    local r = claimed(cur[1])
    if r then return r end
  end
  if cur[2] ~= ARGV[2] then return {'conflict'} end
  owner, n, ver = cur[1], tonumber(cur[4]), tonumber(cur[2]) + 1
  local pst = tonumber(cur[3])
  if n + nev > maxev and not (terminal(st) and not terminal(pst)) then return {'toomany'} end
  prevMember, prevTTL = cur[5], terminal(pst) or interrupted(pst)
  wasRunning = not prevTTL
  if owner ~= '' then prune(ixkey(prefix, owner), dlkey(prefix, owner), clock()) end
  -- The push configs and the claims exist once a config was put (ps) or
  -- a delivery claimed (cl): their expiry follows the task's then.
  hasPush, hasClaims = cur[6] ~= false, cur[7] ~= false
  if n > 0 then prevLast = tostring(n) end
end
local member = ARGV[6] .. id .. '\0' .. st .. '\0' .. ARGV[7]
local last, size = '', 0
if nev > 0 then last = tostring(n + nev) end
-- One HSET for the record and the events, in slices that stay well
-- inside what unpack can pass.
local f = {'o', owner, 'v', ver, 's', ARGV[4], 'st', st, 'ix', member, 'n', n + nev}
for i = ev0 + 1, #ARGV do
  f[#f + 1] = 'e' .. (n + i - ev0)
  f[#f + 1] = ARGV[i]
  size = size + #ARGV[i]
  if #f >= 2000 then
    redis.call('HSET', KEYS[1], unpack(f))
    f = {}
  end
end
if #f > 0 then redis.call('HSET', KEYS[1], unpack(f)) end
-- The anonymous owner's tasks are not indexed: List never lists them
-- (an anonymous caller can prove no task is its own), and the index of
-- every anonymous task was a third of a send's work in Redis.
if owner ~= '' and (member ~= prevMember or ttl > 0) then
  if prevMember then
    redis.call('ZREM', ixkey(prefix, owner), prevMember)
    redis.call('ZREM', dlkey(prefix, owner), prevMember)
  end
  redis.call('ZADD', ixkey(prefix, owner), 0, member)
end
if ttl > 0 then
  if owner ~= '' then redis.call('ZADD', dlkey(prefix, owner), clock() + ttl, member) end
  redis.call('PEXPIRE', KEYS[1], ttl)
  if hasPush then redis.call('PEXPIRE', KEYS[2], ttl) end
  if hasClaims then redis.call('PEXPIRE', KEYS[3], ttl) end
elseif prevTTL then
  redis.call('PERSIST', KEYS[1])
  if hasPush then redis.call('PERSIST', KEYS[2]) end
  if hasClaims then redis.call('PERSIST', KEYS[3]) end
end
local running = not terminal(st) and not interrupted(st)
-- changed: the secrets whose stored value is not the writer's.
local changed = {}
if running and not wasRunning then
  redis.call('ZADD', KEYS[4], ARGV[13], id)
  -- A turn starts: its agent call is given ids derived under the
  -- writer's secrets, which must be the stored ones. One lost (a Redis
  -- restarted without persistence, an eviction) is put back; one that
  -- differs (another process made it anew first) is returned, for the
  -- writer to take.
  for j = 1, nsec do
    local key, val = ARGV[16 + 2 * j], ARGV[17 + 2 * j]
    local cur = redis.call('GET', key)
    if not cur then
      redis.call('SET', key, val)
    elseif cur ~= val then
      changed[#changed + 1] = key
      changed[#changed + 1] = cur
    end
  end
elseif wasRunning and not running then
  redis.call('ZREM', KEYS[4], id)
end
-- The message tells the subscribers where the log was and where it is
-- now, and carries the events themselves up to 16 KiB in all, so that a
-- stream waiting on the task has them without reading them back
-- (subscriber.go, tailCache): "<prev>\n<last>\n" then, for each event,
-- "<id>\n<length>\n<bytes>".
if last ~= '' and not quiet then
  local msg = {prevLast, '\n', last, '\n'}
  if size <= 16384 then
    for k = 1, nev do
      local ev = ARGV[ev0 + k]
      msg[#msg + 1] = (n + k) .. '\n' .. #ev .. '\n'
      msg[#msg + 1] = ev
    end
  end
  redis.call('PUBLISH', prefix .. 'e:' .. id, table.concat(msg))
end
if send ~= '' then
  redis.call('SET', claimKey, id .. '\0' .. ARGV[15], 'PXAT', ARGV[16])
end
-- Whether the task has push configs (or had: ps stays once put), so the
-- writer need not read them for a task that never had one (PushHints);
-- then the secrets that changed, key and value.
local out = {'ok', ver, last, hasPush and 1 or 0}
for j = 1, #changed do out[#out + 1] = changed[j] end
return out
`

// luaEvents reads a task's events after an event number, or nil if the
// task is gone. KEYS: 1 task hash. ARGV: 1 the number of the last event
// not wanted (0: from the first), 2 (optional) how many at most. The
// reply is the events' encodings, the first being event ARGV[1] + 1.
const luaEvents = `
local n = redis.call('HGET', KEYS[1], 'n')
if not n then return false end
local from, to = tonumber(ARGV[1]) + 1, tonumber(n)
if ARGV[2] then to = math.min(to, from + tonumber(ARGV[2]) - 1) end
local out, f = {}, {}
for i = from, to do
  f[#f + 1] = 'e' .. i
  if #f == 1000 or i == to then
    local vs = redis.call('HMGET', KEYS[1], unpack(f))
    for k = 1, #vs do out[#out + 1] = vs[k] end
    f = {}
  end
end
return out
`

// luaList selects a page of an owner's index. KEYS: 1 index, 2 deadline
// set. ARGV: 1 lower lex bound (the After filter), 2 upper lex bound
// (the cursor), 3 context id ("" any), 4 state (0 any), 5 page size.
// It returns the matching total, whether more follow the page, then the
// page's members, newest first.
const luaList = luaCommon + `
prune(KEYS[1], KEYS[2], nowms())
local ctx, st, size = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
if ctx == '' and st == 0 then
  -- No filter: a count and one slice of the index, O(log n + size).
  local out = {redis.call('ZLEXCOUNT', KEYS[1], ARGV[1], '+'), 0}
  local page = redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[2], ARGV[1], 'LIMIT', 0, size + 1)
  for i = 1, math.min(#page, size) do out[#out + 1] = page[i] end
  if #page > size then out[2] = 1 end
  return out
end
local function match(m)
  local _, mst, mctx = parse(m)
  return (ctx == '' or mctx == ctx) and (st == 0 or mst == st)
end
local total = 0
for _, m in ipairs(redis.call('ZREVRANGEBYLEX', KEYS[1], '+', ARGV[1])) do
  if match(m) then total = total + 1 end
end
local out, more = {total, 0}, 0
if total > 0 then
  for _, m in ipairs(redis.call('ZREVRANGEBYLEX', KEYS[1], ARGV[2], ARGV[1])) do
    if match(m) then
      if #out - 2 < size then out[#out + 1] = m else more = 1 break end
    end
  end
end
out[2] = more
return out
`

// luaCancel marks a task cancelled and tells every replica. KEYS: 1 task
// hash. ARGV: 1 the cancel channel. Returns 0 for a task that is gone.
const luaCancel = `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'x', 1)
redis.call('PUBLISH', ARGV[1], '1')
return 1
`

// luaPutPush puts a push config. KEYS: 1 task hash, 2 push hash. ARGV:
// 1 owner, 2 config id, 3 data, 4 max configs. The push hash holds
// "d:<id>" (the data) and "o:<id>" (the order of first put).
const luaPutPush = `
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then return 'notfound' end
if redis.call('HEXISTS', KEYS[2], 'd:' .. ARGV[2]) == 0 then
  if redis.call('HLEN', KEYS[2]) / 2 >= tonumber(ARGV[4]) then return 'toomany' end
  redis.call('HSET', KEYS[2], 'o:' .. ARGV[2], redis.call('HINCRBY', KEYS[1], 'ps', 1))
end
redis.call('HSET', KEYS[2], 'd:' .. ARGV[2], ARGV[3])
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return 'ok'
`

// luaPushConfigs returns the push hash, or nil for a task that is not
// the owner's. KEYS: 1 task hash, 2 push hash. ARGV: 1 owner.
const luaPushConfigs = `
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then return false end
return redis.call('HGETALL', KEYS[2])
`

// luaDeletePush removes a push config. KEYS: 1 task hash, 2 push hash.
// ARGV: 1 owner, 2 config id.
const luaDeletePush = `
if redis.call('HGET', KEYS[1], 'o') ~= ARGV[1] then return 'notfound' end
redis.call('HDEL', KEYS[2], 'd:' .. ARGV[2], 'o:' .. ARGV[2])
return 'ok'
`

// luaClaim claims a delivery: 1 for the first claimant, 0 after, -1 for
// a task that is gone. KEYS: 1 task hash, 2 claims set. ARGV: 1 key.
const luaClaim = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local r = redis.call('SADD', KEYS[2], ARGV[1])
if r == 1 then redis.call('HSET', KEYS[1], 'cl', 1) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[2], ttl) end
return r
`

// luaOrphans claims the running tasks whose lease lapsed, up to a bound,
// in one step with reading them. KEYS: 1 the prefix's leases. ARGV: 1 now
// (unix ms), 2 when a claim made now lapses, 3 key prefix, 4 how many at
// most. It returns id, owner, id, owner...
//
// A claim is a lease of the claimant's (the task's score moved to ARGV
// 2), not a removal: the write that records the task failed drops it as
// every settling write does, and a claimant whose write does not land
// (Redis at maxmemory, a claimant that dies) loses nothing: the claim
// lapses, and a later pass of any process claims the task again. A task
// that is gone (expired, evicted) or settled leaves the set here.
const luaOrphans = luaCommon + `
local out = {}
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[4]))
for _, id in ipairs(ids) do
  local h = redis.call('HMGET', '{' .. ARGV[3] .. '}t:' .. id .. ':h', 'o', 'st')
  local st = tonumber(h[2])
  if not h[1] or terminal(st) or interrupted(st) then
    redis.call('ZREM', KEYS[1], id)
  else
    -- ZADD may be refused (maxmemory): what was claimed before is
    -- returned, else the error.
    local r = redis.pcall('ZADD', KEYS[1], ARGV[2], id)
    if type(r) == 'table' and r.err then
      if #out == 0 then return r end
      break
    end
    out[#out + 1] = id
    out[#out + 1] = h[1]
  end
end
return out
`
