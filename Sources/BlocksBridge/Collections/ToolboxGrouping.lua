-- The toolbox's grouping: groupBy, countBy, partition, uniq (see ToolboxCommon.lua).
--
-- Keys are hashed by a Lua table, so they compare as Lua table keys do (raw equality; 1 and 1.0
-- are one key). A nil key is kept as bk.null (as map keeps nil results); NaN cannot be a key and
-- is an error naming the element.

local G, common = ...
local KIND_DICTIONARY = common.KIND_DICTIONARY
local collection, checkFunction, optFunction = common.collection, common.checkFunction, common.optFunction
local keysOf, array, dictionary, list, nanError = common.keysOf, common.array, common.dictionary, common.list,
  common.nanError
local sameKind, setWithMembers = common.sameKind, common.setWithMembers
local ARRAY, DICTIONARY, null = common.ARRAY, common.DICTIONARY, common.null
local rawget, setmetatable = G.rawget, G.setmetatable

local toolbox = {}

function toolbox.groupBy(c, key)
  local t, kind, n = collection(c, 1, "groupBy")
  checkFunction(key, 2, "groupBy")
  local groups, counts = {}, {}
  if kind == KIND_DICTIONARY then
    local names, m = keysOf(t)
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil then
        local g = key(k, v)
        if g == nil then g = null elseif g ~= g then nanError(2, "groupBy", k, nil, true) end
        local group = groups[g]
        if group == nil then
          group = setmetatable({}, DICTIONARY)
          groups[g] = group
        end
        group[k] = v
      end
    end
  else
    for i = 1, n do
      local v = t[i]
      if v == nil then break end
      local g = key(v)
      if g == nil then g = null elseif g ~= g then nanError(2, "groupBy", nil, i, true) end
      local count = counts[g]
      if count == nil then
        groups[g] = setmetatable({ v }, ARRAY)
        counts[g] = 1
      else
        count = count + 1
        groups[g][count] = v
        counts[g] = count
      end
    end
  end
  return dictionary(groups)
end

function toolbox.countBy(c, key)
  local t, kind, n = collection(c, 1, "countBy")
  optFunction(key, 2, "countBy")
  local counts = {}
  if kind == KIND_DICTIONARY then
    local names, m = keysOf(t)
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil then
        local g = v
        if key ~= nil then g = key(k, v) end
        if g == nil then g = null elseif g ~= g then nanError(key and 2 or 1, "countBy", k, nil, key ~= nil) end
        counts[g] = (counts[g] or 0) + 1
      end
    end
  else
    for i = 1, n do
      local v = t[i]
      if v == nil then break end
      local g = v
      if key ~= nil then g = key(v) end
      if g == nil then g = null elseif g ~= g then nanError(key and 2 or 1, "countBy", nil, i, key ~= nil) end
      counts[g] = (counts[g] or 0) + 1
    end
  end
  return dictionary(counts)
end

function toolbox.partition(c, f)
  local t, kind, n = collection(c, 1, "partition")
  checkFunction(f, 2, "partition")
  if kind == KIND_DICTIONARY then
    local yes, no = {}, {}
    local names, m = keysOf(t)
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil then
        if f(k, v) then yes[k] = v else no[k] = v end
      end
    end
    return dictionary(yes), dictionary(no)
  end
  local yes, no, y, o = list(0), list(0), 0, 0
  for i = 1, n do
    local v = t[i]
    if v == nil then break end
    if f(v) then
      y = y + 1
      yes[y] = v
    else
      o = o + 1
      no[o] = v
    end
  end
  local meta, withMembers = sameKind(kind)
  if not withMembers then return setmetatable(yes, meta), setmetatable(no, meta) end
  -- Sets: the elements are already unique; a NaN element is kept without a membership entry.
  local yesMembers, noMembers = {}, {}
  for i = 1, y do local v = yes[i] if v == v then yesMembers[v] = true end end
  for i = 1, o do local v = no[i] if v == v then noMembers[v] = true end end
  return setWithMembers(yes, yesMembers, meta), setWithMembers(no, noMembers, meta)
end

function toolbox.uniq(c, key)
  local t, kind, n = collection(c, 1, "uniq")
  optFunction(key, 2, "uniq")
  local seen, result, count = {}, list(0), 0
  if kind == KIND_DICTIONARY then
    local names, m = keysOf(t)
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil then
        local g = v
        if key ~= nil then g = key(k, v) end
        if g == nil then g = null elseif g ~= g then nanError(key and 2 or 1, "uniq", k, nil, key ~= nil) end
        if seen[g] == nil then
          seen[g] = true
          count = count + 1
          result[count] = v
        end
      end
    end
  elseif key == nil then
    for i = 1, n do
      local v = t[i]
      if v ~= v then nanError(1, "uniq", nil, i, false) end
      if seen[v] == nil then
        seen[v] = true
        count = count + 1
        result[count] = v
      end
    end
  else
    for i = 1, n do
      local v = t[i]
      if v == nil then break end
      local g = key(v)
      if g == nil then g = null elseif g ~= g then nanError(2, "uniq", nil, i, true) end
      if seen[g] == nil then
        seen[g] = true
        count = count + 1
        result[count] = v
      end
    end
  end
  return array(result)
end

return toolbox
