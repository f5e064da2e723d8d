-- The collection toolbox's shared plumbing: argument checks, reading a collection's elements and
-- making results of bk's kinds. Loaded first by Toolbox.swift, which passes the globals, the bk
-- module and the Swift natives; the other Toolbox*.lua files get the table this returns.
--
-- Why Lua: every toolbox helper that calls a block calls it from Lua, so a block may yield (a task's
-- bk.sleep) and its error reaches the caller unchanged with no protected call per element, and a
-- Lua->Lua call costs less than a C->Lua one. What Lua cannot do safely is done once per call by
-- the natives (ToolboxNatives.swift): `contents` swaps an observed table for its snapshot, a table
-- with a foreign metatable for a raw copy, and counts a list's elements raw (positions up to the
-- first nil, never `#t`), so every list loop here is `for i = 1, n` over positions that were present
-- when the helper started: a read `t[i]` of a present position is raw, and a loop cannot outrun n.
-- Dictionaries are read with `next` and `rawget` only.

local G, bk, native = ...

local type, error, next, setmetatable = G.type, G.error, G.next, G.setmetatable
local tostring, tonumber = G.tostring, G.tonumber
local format = G.string.format
local tointeger, mathtype = G.math.tointeger, G.math.type

local common = {
  ARRAY = native.array, DICTIONARY = native.dictionary, SET = native.set, ORDERED = native.orderedSet,
  INDEXSET = native.indexSet, MEMBERS = native.members, null = bk.null,
  newtable = native.newtable, spliceable = native.spliceable, splicePlain = native.splicePlain,
  uniform = native.uniform,
  -- The kinds' numbers as `contents` answers them (CollectionKind's raw values).
  KIND_ARRAY = native.kinds.array, KIND_DICTIONARY = native.kinds.dictionary, KIND_SET = native.kinds.set,
  KIND_ORDERED = native.kinds.orderedSet, KIND_INDEXSET = native.kinds.indexSet,
}
local ARRAY, DICTIONARY, MEMBERS = common.ARRAY, common.DICTIONARY, common.MEMBERS
local KIND_DICTIONARY = common.KIND_DICTIONARY
local contents, newtable = native.contents, native.newtable

-- MARK: errors. The level names the helper's caller, so the message carries the script's position
-- as a C function's `bad argument` does: 3 from a helper (argError, the helper, its caller), 4 from
-- a check a helper calls. Helpers are reached through a stub's tail call, which adds no level.

local function typeName(v)
  return type(v)
end
common.typeName = typeName

--- Raises `bad argument #arg to 'name' (message)` at `level` (default 3: the caller of the helper
--- that called argError).
local function argError(arg, name, message, level)
  error(format("bad argument #%d to '%s' (%s)", arg, name, message), level or 3)
end
common.argError = argError

--- How an element is named in errors: its position in a list, its key in a dictionary.
local function describePlace(key, position)
  if position ~= nil then return "position " .. position end
  if type(key) == "string" then return format("key %q", key) end
  if type(key) == "number" or type(key) == "boolean" then return "key " .. tostring(key) end
  return "key of type " .. type(key)
end
common.describePlace = describePlace

--- The error for a NaN key: a block's answer (`block` true) or the element itself.
function common.nanError(arg, name, key, position, block, level)
  local what = block and "block returned NaN for the element at " or "NaN element at "
  argError(arg, name, what .. describePlace(key, position), (level or 3) + 1)
end

-- MARK: argument checks (each raises at its caller's caller)

--- The collection at argument `arg`: its readable table, its kind and, for list kinds, its count.
--- `level`: as argError's, from here (default 4: called by the helper).
function common.collection(c, arg, name, level)
  if type(c) ~= "table" then argError(arg, name, "table expected, got " .. typeName(c), level or 4) end
  return contents(c)
end

--- The same, with a raw border in place of the count for list kinds: an upper bound the caller's
--- loop must stop before at the first nil (saves the counting pass; never sizes anything).
function common.collectionBound(c, arg, name, level)
  if type(c) ~= "table" then argError(arg, name, "table expected, got " .. typeName(c), level or 4) end
  return contents(c, true)
end

function common.checkFunction(f, arg, name)
  if type(f) ~= "function" then argError(arg, name, "function expected, got " .. typeName(f), 4) end
end

--- An optional function: nil or a function.
function common.optFunction(f, arg, name)
  if f ~= nil and type(f) ~= "function" then argError(arg, name, "function expected, got " .. typeName(f), 4) end
end

--- An integer as luaL_checkinteger reads it (integral floats and numeric strings convert).
function common.checkInteger(v, arg, name)
  local n = v
  if type(n) == "string" then n = tonumber(n) end
  if type(n) ~= "number" then argError(arg, name, "number expected, got " .. typeName(v), 4) end
  local i = mathtype(n) == "integer" and n or tointeger(n)
  if i == nil then argError(arg, name, "number has no integer representation", 4) end
  return i
end

-- MARK: reading

--- The keys of the dictionary `t`, recorded before any block runs (so blocks may add and remove
--- keys: each key is visited if its value is still non-nil when its turn comes). Returns them, count.
function common.keysOf(t)
  local keys, n = {}, 0
  for k in next, t do
    n = n + 1
    keys[n] = k
  end
  return keys, n
end

--- The elements of the collection as a list: the table itself for list kinds, a new array of the
--- values (in `next` order) for dictionaries. Returns the list and its count.
function common.elements(t, kind, n)
  if kind ~= KIND_DICTIONARY then return t, n end
  local values, count = {}, 0
  for _, v in next, t do
    count = count + 1
    values[count] = v
  end
  return values, count
end

-- MARK: results

function common.array(t)
  return setmetatable(t, ARRAY)
end

function common.dictionary(t)
  return setmetatable(t, DICTIONARY)
end

--- Makes the list `t` (unique elements, non-NaN ones in `members`) a set of metatable `meta`.
function common.setWithMembers(t, members, meta)
  MEMBERS[t] = members
  return setmetatable(t, meta)
end

--- A new empty list pre-sized for `n` elements (n is a real count: elements that exist).
function common.list(n)
  return newtable(n, 0)
end

--- The kind's metatable for a result of the same kind as a list of kind `kind`, and whether it
--- needs a membership table.
function common.sameKind(kind)
  if kind == common.KIND_SET then return common.SET, true end
  if kind == common.KIND_ORDERED then return common.ORDERED, true end
  if kind == common.KIND_INDEXSET then return common.INDEXSET, false end
  return ARRAY, false
end

--- Membership of the list `t` of `n` elements (`v -> true`); a NaN element is an error naming it,
--- raised for argument `arg` of `name` at `level` from here (default 4: called by the helper).
function common.membersOf(t, n, arg, name, level)
  local members = newtable(0, n)
  for i = 1, n do
    local v = t[i]
    if v ~= v then common.nanError(arg, name, nil, i, false, level or 4) end
    members[v] = true
  end
  return members
end

--- `v` as an index-set element (a non-negative integer), or nil.
function common.indexValue(v)
  if type(v) ~= "number" then return nil end
  local i = mathtype(v) == "integer" and v or tointeger(v)
  if i == nil or i < 0 then return nil end
  return i
end

return common
