-- The toolbox's aggregates: sum, min, max, count (see ToolboxCommon.lua). sum adds with Lua's `+`
-- from the first element (so integers stay integers and wrap as `+` does, floats and mixed lists
-- follow `+`, and a table's __add is used as Lua would); an empty collection sums to 0.

local G, common = ...
local KIND_DICTIONARY = common.KIND_DICTIONARY
local collection, collectionBound, optFunction, keysOf = common.collection, common.collectionBound,
  common.optFunction, common.keysOf
local rawget, next = G.rawget, G.next

local toolbox = {}

function toolbox.sum(c, f)
  local t, kind, n = collectionBound(c, 1, "sum")
  optFunction(f, 2, "sum")
  local total
  if kind == KIND_DICTIONARY then
    local names, m = keysOf(t)
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil then
        if f ~= nil then v = f(k, v) end
        if total == nil then total = v else total = total + v end
      end
    end
  elseif f == nil then
    total = t[1]
    if total == nil then return 0 end
    for i = 2, n do
      local v = t[i]
      if v == nil then break end
      total = total + v
    end
  else
    for i = 1, n do
      local v = t[i]
      if v == nil then break end
      if i == 1 then total = f(v) else total = total + f(v) end
    end
  end
  if total == nil then return 0 end
  return total
end

--- min (`greatest` false) / max: the element with the least / greatest key, first one on ties.
local function extreme(c, key, greatest, name)
  local t, kind, n = collectionBound(c, 1, name)
  optFunction(key, 2, name)
  local best, bestKey
  local found = false
  local function consider(v, k)
    if not found then
      found, best, bestKey = true, v, k
    elseif greatest then
      if bestKey < k then best, bestKey = v, k end
    elseif k < bestKey then
      best, bestKey = v, k
    end
  end
  if kind == KIND_DICTIONARY then
    local names, m = keysOf(t)
    for i = 1, m do
      local dk = names[i]
      local v = rawget(t, dk)
      if v ~= nil then
        if key ~= nil then consider(v, key(dk, v)) else consider(v, v) end
      end
    end
    return best
  end
  if key == nil then
    best = t[1]
    if best == nil then return nil end
    if greatest then
      for i = 2, n do
        local v = t[i]
        if v == nil then break end
        if best < v then best = v end
      end
    else
      for i = 2, n do
        local v = t[i]
        if v == nil then break end
        if v < best then best = v end
      end
    end
    return best
  end
  for i = 1, n do
    local v = t[i]
    if v == nil then break end
    consider(v, key(v))  -- once per element
  end
  return best
end

function toolbox.min(c, key) return extreme(c, key, false, "min") end
function toolbox.max(c, key) return extreme(c, key, true, "max") end

function toolbox.count(c, f)
  local t, kind, n = collection(c, 1, "count")
  optFunction(f, 2, "count")
  if kind == KIND_DICTIONARY then
    local count = 0
    if f == nil then
      for _ in next, t do count = count + 1 end
      return count
    end
    local names, m = keysOf(t)
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil and f(k, v) then count = count + 1 end
    end
    return count
  end
  if f == nil then return n end
  local count = 0
  for i = 1, n do
    local v = t[i]
    if v == nil then break end
    if f(v) then count = count + 1 end
  end
  return count
end

return toolbox
