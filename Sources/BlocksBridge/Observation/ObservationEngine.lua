-- The observation engine: the Lua half of bk.addObserverForKeyPath and observable properties.
-- Loaded once per state by ObservationEngine.swift as "=bk/ObservationEngine.lua"; gets the
-- globals and its natives by name (see ObservationEngine.push), uses no globals.

---@class bk.ObservationNatives
---@field traceback fun(err: any): any the blocks' message handler: records err's traceback, returns err unchanged
---@field report fun(err: any) to bk.onError (raises a cancelled task's bk.cancelled on instead)
---@field setmetatable fun(t: table, mt: table?) raw: ignores __metatable
---@field getmetatable fun(v: any): table? raw: ignores __metatable
---@field observableUserdata fun(u: userdata): boolean whether u is an observable Swift object (registers it)
---@field makeWrite fun(write: bk.ObservedWrite): function the C __newindex of a proxy metatable (ObservedWrite.c)
---@field options string[] the options observe accepts (Observation.optionNames), in the order bk.observers lists them

---@class bk.ObservedWrite makeWrite's argument: a write of a key in `singles` is taken in C
---@field singles table key -> its one plain observer's task, kept by the fast-path rule (fastTask, summarize)
---@field store table the table's moved (observed) fields
---@field handler function the message handler the task is called with
---@field report fun(err: any) where the task's error goes
---@field general fun(t: table, k: any, v: any) every other write

---@type table, bk.ObservationNatives
local G, native = ...
local traceback, report, setmeta, getmeta = native.traceback, native.report, native.setmetatable, native.getmetatable
local observableUserdata, makeWrite = native.observableUserdata, native.makeWrite
local rawget, rawset, rawequal, rawlen, rawnext = G.rawget, G.rawset, G.rawequal, G.rawlen, G.next
local type, xpcall, pcall, setmetatable, error = G.type, G.xpcall, G.pcall, G.setmetatable, G.error
local select = G.select
local tostring = G.tostring
local tointeger = G.math and G.math.tointeger or G.tonumber
if not (rawget and rawset and rawequal and rawlen and rawnext and type and xpcall and pcall and setmetatable) then
  error("observation needs Lua's base library")
end
local weakK, weakV = { __mode = "k" }, { __mode = "v" }

-- observed object (table or bridged userdata) -> record. Weak keys: observing never keeps the
-- object alive (an ephemeron: the record may refer to the object through tasks and closures).
local records = setmetatable({}, weakK)
-- observer -> weak set of the objects it has observations on (for cc_easyRemoveAllKVO).
local byObserver = setmetatable({}, weakK)
-- observer -> serial number, for the identifiers of the sj_ aliases.
local observerSerials = setmetatable({}, weakK)
local serial = 0

local E = {}

local function index(t, k) return t[k] end

-- t[k] with metamethods; nil when reading raises (a key path through something unreadable).
local function valueOf(t, k)
  local kind = type(t)
  if kind ~= "table" and kind ~= "userdata" then return nil end
  local ok, v = pcall(index, t, k)
  if ok then return v end
  return nil
end

local function resolve(v, parts, from)
  for i = from, #parts do
    if v == nil then return nil end
    v = valueOf(v, parts[i])
  end
  return v
end

-- `next` that also walks an observed table's moved keys: the raw fields first, then the store.
local function observedNext(...)
  local t, k = ...
  local record = records[t]
  if record == nil or record.store == nil then
    if type(t) ~= "table" then   -- next's own message ("no value" when called without arguments)
      local got = select("#", ...) == 0 and "no value" or type(t)
      error("bad argument #1 to 'next' (table expected, got " .. got .. ")", 2)
    end
    return rawnext(t, k)
  end
  local store = record.store
  -- The store's keys come after the raw ones. A key that is observed and not a raw field is a
  -- store key (even if its value was just cleared: `next` accepts keys cleared while walking).
  if k ~= nil and record.links[k] ~= nil and rawget(t, k) == nil then return rawnext(store, k) end
  local nk, nv = rawnext(t, k)
  if nk ~= nil then return nk, nv end
  return rawnext(store, nil)
end
E.next = observedNext

-- Delivers one notification to an observation's task; errors are reported, never raised.
local function deliver(obs, kp, old, new, isPrior, isInitial)
  if not obs.live then return end
  local options = obs.options
  if options.distinct and not isInitial and rawequal(old, new) then return end
  local task = obs.task
  if task == nil then
    local _
    _, task = rawnext(obs.owner)
    if task == nil then E.removeObservation(obs) return end  -- the observer was collected
  end
  local obj = obs.w.obj
  if obj == nil then return end
  local style, ok, err = obs.style
  if style == "plain" then
    ok, err = xpcall(task, traceback, obj)
  elseif style == "plainMulti" then
    ok, err = xpcall(task, traceback, obj, kp)
  elseif style == "sj" then
    ok, err = xpcall(task, traceback, obj, kp, old, new)
  else
    local change = { kind = "setting" }
    if options.new and not isPrior then change.new = new end
    if options.old and not isInitial then change.old = old end
    if isPrior then change.prior = true end
    if style == "change" then
      ok, err = xpcall(task, traceback, obj, change)
    else
      ok, err = xpcall(task, traceback, obj, kp, change)
    end
  end
  if not ok then report(err) end
end

local attach, detach

-- MARK: the fast path of writes
--
-- A write of an observed key of a table without its own __newindex runs in C (ObservedWrite.c)
-- when the key has one link that holds a task (`singles`), and observedSet's first loop when all
-- its links hold one: both store the value and call task(obj), bypassing `deliver`. Only
-- fastTask gives a link a task, so this is the one place that decides what they serve.
--
-- Each option observe accepts (native.options) is listed here: true when the fast path honours it
-- (it changes nothing a write of the key itself does), false when an observation with it must
-- take `deliver`. A new option must be added here (ObservedWriteFastPathTests checks that every
-- accepted one is); one missing is treated as false.
local FAST_PATH_OPTIONS = {
  new = true,       -- only shapes the change table, and a plain task gets none
  old = true,       -- the same
  initial = true,   -- delivered once by E.add, never by a write
  prior = false,    -- a call before the store: only priorPass makes it
  distinct = false, -- compares old and new: only deliver does
}

-- The task a link calls on the fast path, or nil: a key of the observed object itself (no key
-- path), a plain task (task(obj)), held by the observation (not by an observer's ephemeron), and
-- only options the fast path honours. Only such a link lives in the observed object's own record.
local function fastTask(obs, parts, i)
  if i ~= 1 or #parts ~= 1 or obs.style ~= "plain" or obs.task == nil then return nil end
  for option, on in rawnext, obs.options do
    if on and not FAST_PATH_OPTIONS[option] then return nil end
  end
  return obs.task
end

-- A key's list of links, summarized for writes: prior (some observation wants a call before the
-- store), fast (every link holds a task) and single (the one link's task: the C path, `singles`).
local function summarize(record, key, ls)
  local prior, fast = false, true
  for i = 1, #ls do
    local link = ls[i]
    local obs = link.w.obs
    if obs and obs.options.prior then prior = true end
    if link.task == nil then fast = false end
  end
  ls.prior, ls.fast = prior, fast
  ls.single = fast and #ls == 1 and ls[1].task or nil
  if record.singles then record.singles[key] = ls.single end
end

-- A key of `record` is observed while it has links; the first link moves a table's key out of
-- the raw table into the store (so writes reach __newindex), the last one moves it back.
local function addLink(record, target, key, link)
  local links = record.links
  local ls = links[key]
  local copy = {}
  if ls == nil then
    record.keys = record.keys + 1
    if record.store then
      local v = rawget(target, key)
      if v ~= nil then
        rawset(target, key, nil)
        record.store[key] = v
      end
    end
  else
    for i = 1, #ls do copy[i] = ls[i] end
  end
  copy[#copy + 1] = link
  summarize(record, key, copy)
  links[key] = copy   -- copy on write: a notification in progress keeps walking its snapshot
end

local function restore(target, record)
  records[target] = nil
  if record.store then
    -- Setting a metatable that has __gc marks the object for finalization. Restoring must not
    -- mark an object that was not marked (its __gc was added after setmetatable): hide it.
    local original = record.original
    local gc = original and rawget(original, "__gc")
    if gc ~= nil then rawset(original, "__gc", nil) end
    setmeta(target, original)
    if gc ~= nil then rawset(original, "__gc", gc) end
  end
end

local function removeLink(record, target, key, link)
  local links = record.links
  local ls = links[key]
  if ls == nil then return end
  link.live = false
  local copy = {}
  for i = 1, #ls do
    local l = ls[i]
    if l ~= link then copy[#copy + 1] = l end
  end
  summarize(record, key, copy)
  if #copy > 0 then links[key] = copy return end
  links[key] = nil
  record.keys = record.keys - 1
  if record.store then
    local v = record.store[key]
    record.store[key] = nil
    if v ~= nil then rawset(target, key, v) end
  end
  if record.keys == 0 then restore(target, record) end
end

-- Notifications for a change of `key` of an object with `links` (the snapshot for this key).
local function priorPass(ls, old, new)
  for i = 1, #ls do
    local link = ls[i]
    local obs = link.w.obs
    if link.live and obs and obs.live and obs.options.prior then
      local parts, from = link.parts, link.i + 1
      deliver(obs, link.kp, resolve(old, parts, from), resolve(new, parts, from), true, false)
    end
  end
end

local function postPass(ls, old, new)
  for i = 1, #ls do
    local link = ls[i]
    local obs = link.w.obs
    if link.live and obs and obs.live then
      local parts, from = link.parts, link.i + 1
      if from <= #parts then
        -- A middle object was replaced: follow the path from the new one.
        detach(link.next)
        link.next = attach(obs, link.kp, parts, from, new)
        deliver(obs, link.kp, resolve(old, parts, from), resolve(new, parts, from), false, false)
      else
        deliver(obs, link.kp, old, new, false, false)
      end
    end
  end
end

local function proxyTable(target)
  local original = getmeta(target)
  local store, links, singles = {}, {}, {}
  local record = { store = store, links = links, keys = 0, original = original, singles = singles }
  local meta = {}
  if original then
    for k, v in rawnext, original do meta[k] = v end
    if rawget(original, "__metatable") == nil then meta.__metatable = original end
  end
  local oindex = original and rawget(original, "__index")
  local onewindex = original and rawget(original, "__newindex")
  if oindex == nil then
    meta.__index = store   -- a table: reads of observed keys stay on the VM's fast path
  elseif type(oindex) == "function" then
    meta.__index = function(t, k)
      local v = store[k]
      if v ~= nil then return v end
      return oindex(t, k)
    end
  else
    meta.__index = function(t, k)
      local v = store[k]
      if v ~= nil then return v end
      return oindex[k]
    end
  end
  local function plainSet(t, k, v)
    if onewindex == nil then rawset(t, k, v)
    elseif type(onewindex) == "function" then onewindex(t, k, v)
    else onewindex[k] = v end
  end
  -- Writes of observed keys: notifications around the store (the general case).
  local function observedSet(t, k, v, ls)
    if ls.fast and (onewindex == nil or store[k] ~= nil) then
      -- Only plain observers of this very key: task(obj), nothing else to compute.
      store[k] = v
      for i = 1, #ls do
        local link = ls[i]
        if link.live then
          local ok, err = xpcall(link.task, traceback, t)
          if not ok then report(err) end
        end
      end
      return
    end
    local old = store[k]
    if old == nil and oindex ~= nil then old = t[k] end
    if ls.prior then
      priorPass(ls, old, v)
      -- A prior task may have ended the observation: then this is an ordinary write.
      if records[t] ~= record or links[k] == nil then t[k] = v return end
    end
    local new = v
    if onewindex == nil or store[k] ~= nil then
      store[k] = v
    else
      -- The key was not a field: the original __newindex decides where the value goes.
      plainSet(t, k, v)
      local raw = rawget(t, k)
      if raw ~= nil then rawset(t, k, nil) store[k] = raw end
      new = t[k]
    end
    postPass(ls, old, new)
  end
  if onewindex == nil then
    -- The common case, a key with one plain observer (`singles`: key -> its task), is handled in C
    -- (ObservedWrite.c: store, then the task in a protected call); every other write comes here.
    meta.__newindex = makeWrite({ singles = singles, store = store, handler = traceback, report = report,
      general = function(t, k, v)
        local ls = links[k]
        if ls == nil then rawset(t, k, v) return end
        return observedSet(t, k, v, ls)
      end })
  else
    meta.__newindex = function(t, k, v)
      local ls = links[k]
      if ls == nil then return plainSet(t, k, v) end
      return observedSet(t, k, v, ls)
    end
  end
  if not (original and rawget(original, "__len")) then
    meta.__len = function(t)
      local n = rawlen(t)
      while rawget(t, n + 1) ~= nil or store[n + 1] ~= nil do n = n + 1 end
      return n
    end
  end
  if not (original and rawget(original, "__pairs")) then
    meta.__pairs = function(t) return observedNext, t, nil end
  end
  meta.__bkobserved = store   -- for Swift helpers that walk tables raw (pushObservedFields)
  -- __gc goes in after setmetatable: an object already marked for finalization stays marked and
  -- finds it; one that was not marked is not marked now (see restore).
  local gc = meta.__gc
  meta.__gc = nil
  setmeta(target, meta)
  meta.__gc = gc
  if rawget(G, "next") == rawnext then rawset(G, "next", observedNext) end
  return record
end

local function recordFor(target, create)
  local record = records[target]
  if record ~= nil or not create then return record end
  local kind = type(target)
  if kind == "table" then
    record = proxyTable(target)
  elseif kind == "userdata" and observableUserdata(target) then
    record = { links = {}, keys = 0 }
  else
    return nil
  end
  record.observations, record.order = {}, {}
  records[target] = record
  return record
end

-- Links follow a key path: link i observes parts[i] of the i-th object on the path and holds
-- the rest of the path (`next`). A link holds its observation and target weakly (`w`): an inner
-- object must not keep the outer one, or the observation's task, alive.
function attach(obs, kp, parts, i, target)
  local record = recordFor(target, true)
  if record == nil then return nil end
  local key = parts[i]
  local link = { w = setmetatable({ obs = obs, target = target }, weakV), kp = kp, parts = parts, i = i,
    live = true }
  link.task = fastTask(obs, parts, i)
  addLink(record, target, key, link)
  if i < #parts then link.next = attach(obs, kp, parts, i + 1, valueOf(target, key)) end
  return link
end

function detach(link)
  while link ~= nil do
    local target = link.w.target
    if target ~= nil then
      local record = records[target]
      if record ~= nil then removeLink(record, target, link.parts[link.i], link) end
    end
    link = link.next
  end
end

local function splitPath(kp)
  if type(kp) ~= "string" then return { kp } end
  local parts = {}
  -- A part made of digits is an integer key: "items.1.name" is items[1].name.
  for part in kp:gmatch("[^.]+") do parts[#parts + 1] = part:find("^%d+$") and tointeger(part) or part end
  return parts
end

function E.removeObservation(obs)
  if not obs.live then return end
  obs.live = false
  for _, link in rawnext, obs.chains do detach(link) end
  obs.chains = {}
  local obj = obs.w.obj
  if obj == nil then return end
  local record = records[obj]
  if record == nil or record.observations[obs.id] ~= obs then return end
  record.observations[obs.id] = nil
  local order = record.order
  for i = 1, #order do
    if order[i] == obs.id then
      for j = i, #order do order[j] = order[j + 1] end
      break
    end
  end
end

-- Drops observations whose observer was collected.
local function purge(obj)
  local record = records[obj]
  if record == nil then return nil end
  local dead
  for _, obs in rawnext, record.observations do
    if obs.task == nil and rawnext(obs.owner) == nil then
      dead = dead or {}
      dead[#dead + 1] = obs
    end
  end
  if dead then for i = 1, #dead do E.removeObservation(dead[i]) end end
  return records[obj]
end

-- add(obj, keyPaths, style, options, identifier, hasObserver, observer, task) -> identifier
function E.add(obj, keyPaths, style, options, identifier, hasObserver, observer, task)
  purge(obj)
  if identifier == nil then
    serial = serial + 1
    identifier = "BKObserver-" .. serial
  end
  local existing = records[obj]
  if existing and existing.observations[identifier] then
    E.removeObservation(existing.observations[identifier])
  end
  local unique, seen = {}, {}
  for i = 1, #keyPaths do   -- a key path listed twice is observed once
    local kp = keyPaths[i]
    if not seen[kp] then seen[kp] = true unique[#unique + 1] = kp end
  end
  keyPaths = unique
  local obs = {
    id = identifier, keyPaths = keyPaths, options = options, style = style,
    w = setmetatable({ obj = obj }, weakV), chains = {}, live = true, hasObserver = hasObserver,
  }
  if hasObserver then
    -- An ephemeron: the task is kept only while the observer lives, even if it refers to it.
    obs.owner = setmetatable({ [observer] = task }, weakK)
    local set = byObserver[observer]
    if set == nil then set = setmetatable({}, weakK) byObserver[observer] = set end
    set[obj] = true
  else
    obs.task = task
  end
  for i = 1, #keyPaths do
    local kp = keyPaths[i]
    obs.chains[kp] = attach(obs, kp, splitPath(kp), 1, obj)
  end
  local record = recordFor(obj, true)
  record.observations[identifier] = obs
  record.order[#record.order + 1] = identifier
  if options.initial then
    for i = 1, #keyPaths do
      local kp = keyPaths[i]
      deliver(obs, kp, nil, resolve(obj, splitPath(kp), 1), false, true)
    end
  end
  return identifier
end

function E.removeKeyPath(obj, kp, identifier)
  local record = purge(obj)
  local obs = record and record.observations[identifier]
  if obs == nil then return end
  local link = obs.chains[kp]
  if link == nil then return end
  obs.chains[kp] = nil
  detach(link)
  local remaining = {}
  for i = 1, #obs.keyPaths do
    if obs.keyPaths[i] ~= kp then remaining[#remaining + 1] = obs.keyPaths[i] end
  end
  obs.keyPaths = remaining
  if #remaining == 0 then E.removeObservation(obs) end
end

function E.removeIdentifier(obj, identifier)
  local record = purge(obj)
  local obs = record and record.observations[identifier]
  if obs then E.removeObservation(obs) end
end

local function each(obj, predicate)
  local record = purge(obj)
  if record == nil then return end
  local list = {}
  for i = 1, #record.order do list[i] = record.observations[record.order[i]] end
  for i = 1, #list do
    if predicate == nil or predicate(list[i]) then E.removeObservation(list[i]) end
  end
end

function E.removeAll(obj) each(obj) end

local optionOrder = native.options

local function observerOf(obs)
  if obs.owner then return (rawnext(obs.owner)) end
  return nil
end

function E.list(obj)
  local record = purge(obj)
  local list = {}
  if record == nil then return list end
  for i = 1, #record.order do
    local obs = record.observations[record.order[i]]
    local keyPaths, options = {}, {}
    for j = 1, #obs.keyPaths do keyPaths[j] = obs.keyPaths[j] end
    for j = 1, #optionOrder do
      if obs.options[optionOrder[j]] then options[#options + 1] = optionOrder[j] end
    end
    list[i] = { identifier = obs.id, keyPaths = keyPaths, options = options, observer = observerOf(obs) }
  end
  return list
end

-- Every observation `observer` made, on any object (cc_easyRemoveAllKVO).
function E.removeByObserver(observer)
  local set = byObserver[observer]
  if set == nil then return end
  byObserver[observer] = nil
  local objects = {}
  for obj in rawnext, set do objects[#objects + 1] = obj end
  for i = 1, #objects do
    each(objects[i], function(obs) return obs.owner ~= nil and rawequal(observerOf(obs), observer) end)
  end
end

local function sjIdentifier(observer, key)
  local n = observerSerials[observer]
  if n == nil then
    serial = serial + 1
    n = serial
    observerSerials[observer] = n
  end
  return "SJObserver-" .. n .. "-" .. tostring(key)
end
E.sjIdentifier = sjIdentifier

-- sj_removeObserver(obj, observer [, keys]): keys nil removes every key of that observer.
function E.sjRemove(obj, observer, keys)
  local wanted
  if keys then
    wanted = {}
    for i = 1, #keys do wanted[keys[i]] = true end
  end
  each(obj, function(obs)
    if obs.owner == nil or not rawequal(observerOf(obs), observer) then return false end
    if wanted == nil then return true end
    return wanted[obs.keyPaths[1]] == true
  end)
end

function E.sjList(obj)
  local record = purge(obj)
  local list, byObs = {}, {}
  if record == nil then return list end
  for i = 1, #record.order do
    local obs = record.observations[record.order[i]]
    local observer = observerOf(obs)
    if observer ~= nil then
      local entry = byObs[observer]
      if entry == nil then
        entry = { observer = observer, keyPaths = {} }
        byObs[observer] = entry
        list[#list + 1] = entry
      end
      for j = 1, #obs.keyPaths do entry.keyPaths[#entry.keyPaths + 1] = obs.keyPaths[j] end
    end
  end
  return list
end

-- A Swift object's observable property changed (isPrior: before the new value is stored).
function E.changed(obj, key, old, new, isPrior)
  local record = records[obj]
  if record == nil then return end
  local ls = record.links[key]
  if ls == nil then return end
  if isPrior then
    if ls.prior then priorPass(ls, old, new) end
  else
    postPass(ls, old, new)
  end
end

-- A Swift object's property set by Lua code that can yield (a task): the Swift setter has returned
-- and its Lua observers run here, so that they may suspend the task. The pairs old, new are the
-- sets it made, in order (LuaObservers.setDeferringLuaObservers).
function E.changedAfterSet(obj, key, ...)
  for i = 1, select("#", ...), 2 do
    local old, new = select(i, ...)
    E.changed(obj, key, old, new, false)
  end
end

function E.isObserved(obj) return records[obj] ~= nil end

-- The collections' in-place helpers on an observed table t: they computed on a snapshot (`after`,
-- from `before`); what changed is assigned to t, so observers are notified. Lists: positions
-- 1 .. #after, then the positions after it cleared from the end; dictionaries: changed keys, then
-- removed ones.
function E.assignChanges(t, before, after, isList)
  if isList then
    local n, m = rawlen(before), rawlen(after)
    for i = 1, m do
      local v = rawget(after, i)
      if not rawequal(rawget(before, i), v) then t[i] = v end
    end
    for i = n, m + 1, -1 do t[i] = nil end
  else
    for k, v in rawnext, after do
      if not rawequal(rawget(before, k), v) then t[k] = v end
    end
    for k in rawnext, before do
      if rawget(after, k) == nil then t[k] = nil end
    end
  end
end

-- For ObservedWriteFastPathTests: the fast path's decision on each option, and the options it
-- was given as the accepted ones.
E.fastPathOptions, E.fastPathOptionNames = FAST_PATH_OPTIONS, native.options

return E
