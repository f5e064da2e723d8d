-- The toolbox's sequence helpers: keys, values, zip, flatten, flatMap, compactMap, slice, take,
-- drop, takeWhile, dropWhile, chunked, first, last, indexOf (see ToolboxCommon.lua). A dictionary's
-- elements are its values, in its walk order; blocks get (key, value) for dictionaries.

local G, common = ...
local KIND_DICTIONARY = common.KIND_DICTIONARY
local collection, checkFunction, checkInteger, argError = common.collection, common.checkFunction,
  common.checkInteger, common.argError
local collectionBound = common.collectionBound
local elements, keysOf, array, dictionary, list = common.elements, common.keysOf, common.array, common.dictionary,
  common.list
local spliceable, splicePlain, ARRAY, null = common.spliceable, common.splicePlain, common.ARRAY, common.null
local type, next, rawget, rawequal, setmetatable = G.type, G.next, G.rawget, G.rawequal, G.setmetatable
local getmetatable = G.getmetatable
local select = G.select

local toolbox = {}

function toolbox.keys(c)
  local t, kind, n = collection(c, 1, "keys")
  if kind ~= KIND_DICTIONARY then
    local result = list(n)
    for i = 1, n do result[i] = i end
    return array(result)
  end
  local result, count = list(0), 0
  for k in next, t do
    count = count + 1
    result[count] = k
  end
  return array(result)
end

function toolbox.values(c)
  local t, kind, n = collection(c, 1, "values")
  local source, count = elements(t, kind, n)
  if source ~= t then return array(source) end
  local result = list(count)
  for i = 1, count do result[i] = t[i] end
  return array(result)
end

function toolbox.zip(...)
  local lists = {}
  local argc = select("#", ...)
  if argc == 0 then argError(1, "zip", "table expected, got no value") end
  local shortest
  for a = 1, argc do
    local t, kind, n = collection((select(a, ...)), a, "zip")
    local source, count = elements(t, kind, n)
    lists[a] = source
    if shortest == nil or count < shortest then shortest = count end
  end
  local result = list(shortest)
  if argc == 2 then
    local a, b = lists[1], lists[2]
    for i = 1, shortest do result[i] = setmetatable({ a[i], b[i] }, ARRAY) end
  else
    for i = 1, shortest do
      local tuple = list(argc)
      for a = 1, argc do tuple[a] = lists[a][i] end
      result[i] = setmetatable(tuple, ARRAY)
    end
  end
  return array(result)
end

--- Appends the elements of `source[1..n]` to `result` (at `count`), splicing lists `depth` levels.
--- A table with no metatable is read here (its reads are raw: `v[1]`, `v[2]`, ... up to the first
--- nil); any other table is asked of the native (bk's kinds, observed tables, foreign metatables).
--- The last level's plain lists are spliced by `splicePlain` (C: no call per list).
local function splice(result, count, source, n, depth)
  if depth == 1 then
    local i = 1
    while true do
      count, i = splicePlain(result, count, source, i, n)
      if i > n then return count end
      local v = source[i]  -- a table with a metatable
      local inner, m = spliceable(v)
      if inner ~= nil then
        count = splice(result, count, inner, m, 0)
      else
        count = count + 1
        result[count] = v
      end
      i = i + 1
    end
  end
  for i = 1, n do
    local v = source[i]
    if depth > 0 and type(v) == "table" then
      local inner, m
      if getmetatable(v) == nil then
        if v[1] ~= nil then
          inner, m = v, 1
          while v[m + 1] ~= nil do m = m + 1 end
        end
      else
        inner, m = spliceable(v)
      end
      if inner ~= nil then
        count = splice(result, count, inner, m, depth - 1)
      else
        count = count + 1
        result[count] = v
      end
    else
      count = count + 1
      result[count] = v
    end
  end
  return count
end

function toolbox.flatten(c, depth)
  local t, kind, n = collection(c, 1, "flatten")
  if depth == nil then depth = 1 else depth = checkInteger(depth, 2, "flatten") end
  if depth < 0 then argError(2, "flatten", "depth must be non-negative") end
  local source, count = elements(t, kind, n)
  local result = list(count)
  splice(result, 0, source, count, depth)
  return array(result)
end

function toolbox.flatMap(c, f)
  local t, kind, n = collection(c, 1, "flatMap")
  checkFunction(f, 2, "flatMap")
  local mapped, count = list(n or 0), 0
  if kind == KIND_DICTIONARY then
    local names, m = keysOf(t)
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil then
        local r = f(k, v)
        if r == nil then r = null end
        count = count + 1
        mapped[count] = r
      end
    end
  else
    for i = 1, n do
      local v = t[i]
      if v == nil then break end
      local r = f(v)
      if r == nil then r = null end
      count = i
      mapped[i] = r
    end
  end
  local result = list(count)
  splice(result, 0, mapped, count, 1)
  return array(result)
end

function toolbox.compactMap(c, f)
  local t, kind, n = collection(c, 1, "compactMap")
  checkFunction(f, 2, "compactMap")
  if kind == KIND_DICTIONARY then
    local result = {}
    local names, m = keysOf(t)
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil then
        local r = f(k, v)
        if r ~= nil and r ~= null then result[k] = r end
      end
    end
    return dictionary(result)
  end
  local result, count = list(0), 0
  for i = 1, n do
    local v = t[i]
    if v == nil then break end
    local r = f(v)
    if r ~= nil and not rawequal(r, null) then
      count = count + 1
      result[count] = r
    end
  end
  return array(result)
end

--- `source[from..to]` as a new array (positions already clamped to 1..count).
local function range(source, from, to)
  local result = list(to >= from and to - from + 1 or 0)
  local k = 0
  for i = from, to do
    k = k + 1
    result[k] = source[i]
  end
  return array(result)
end

function toolbox.slice(c, i, j)
  local t, kind, n = collection(c, 1, "slice")
  local from = checkInteger(i, 2, "slice")
  local to
  if j ~= nil then to = checkInteger(j, 3, "slice") end
  local source, count = elements(t, kind, n)
  -- As string.sub: negative positions count from the end; out of range positions are clamped.
  if from < 0 then from = from < -count and 1 or count + from + 1 elseif from == 0 then from = 1 end
  if to == nil or to > count then to = count elseif to < 0 then to = to < -count and 0 or count + to + 1 end
  return range(source, from, to)
end

function toolbox.take(c, k)
  local t, kind, n = collectionBound(c, 1, "take")
  local count = checkInteger(k, 2, "take")
  if count < 0 then argError(2, "take", "count must be non-negative") end
  if kind == KIND_DICTIONARY then
    local source, total = elements(t, kind, n)
    return range(source, 1, count < total and count or total)
  end
  -- Lists: up to `count` elements, stopping at the first nil before the raw border `n` (no
  -- counting pass over the rest; nothing is sized by `n` or `count`).
  if count > n then count = n end
  local result = list(0)
  for i = 1, count do
    local v = t[i]
    if v == nil then break end
    result[i] = v
  end
  return array(result)
end

function toolbox.drop(c, k)
  local t, kind, n = collection(c, 1, "drop")
  local count = checkInteger(k, 2, "drop")
  if count < 0 then argError(2, "drop", "count must be non-negative") end
  local source, total = elements(t, kind, n)
  return range(source, count < total and count + 1 or total + 1, total)
end

--- takeWhile (`taking` true) / dropWhile: the prefix of elements for which `f` is truthy, or the rest.
local function whilePrefix(c, f, taking, name)
  local t, kind, n = collection(c, 1, name)
  checkFunction(f, 2, name)
  local result, count = list(0), 0
  local inPrefix = true
  if kind == KIND_DICTIONARY then
    local names, m = keysOf(t)
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil then
        if inPrefix and not f(k, v) then inPrefix = false end
        if inPrefix == taking then
          count = count + 1
          result[count] = v
        elseif taking then
          break
        end
      end
    end
  else
    for i = 1, n do
      local v = t[i]
      if v == nil then break end
      if inPrefix and not f(v) then inPrefix = false end
      if inPrefix == taking then
        count = count + 1
        result[count] = v
      elseif taking then
        break
      end
    end
  end
  return array(result)
end

function toolbox.takeWhile(c, f) return whilePrefix(c, f, true, "takeWhile") end
function toolbox.dropWhile(c, f) return whilePrefix(c, f, false, "dropWhile") end

function toolbox.chunked(c, size)
  local t, kind, n = collection(c, 1, "chunked")
  local width = checkInteger(size, 2, "chunked")
  if width < 1 then argError(2, "chunked", "size must be at least 1") end
  local source, count = elements(t, kind, n)
  local result = list(count // width + 1)
  local k = 0
  for from = 1, count, width do
    local to = from + width - 1
    if to > count then to = count end
    k = k + 1
    result[k] = range(source, from, to)
  end
  return array(result)
end

--- first / last: the element at the front (back), or an array of `k` of them.
local function ends(c, k, front, name)
  local t, kind, n = collection(c, 1, name)
  if k == nil then
    if kind == KIND_DICTIONARY then
      if front then
        local _, v = next(t)
        return v
      end
      local last
      for _, v in next, t do last = v end
      return last
    end
    if n == 0 then return nil end
    return t[front and 1 or n]
  end
  local count = checkInteger(k, 2, name)
  if count < 0 then argError(2, name, "count must be non-negative") end
  local source, total = elements(t, kind, n)
  if count > total then count = total end
  if front then return range(source, 1, count) end
  return range(source, total - count + 1, total)
end

function toolbox.first(c, k) return ends(c, k, true, "first") end
function toolbox.last(c, k) return ends(c, k, false, "last") end

function toolbox.indexOf(c, value)
  local t, kind, n = collectionBound(c, 1, "indexOf")
  if kind == KIND_DICTIONARY then
    for k, v in next, t do
      if rawequal(v, value) then return k end
    end
    return nil
  end
  if value == nil then return nil end
  local vt = type(value)
  if vt == "table" or vt == "userdata" then  -- `==` would run __eq
    for i = 1, n do
      local v = t[i]
      if v == nil then break end
      if rawequal(v, value) then return i end
    end
  else
    for i = 1, n do
      local v = t[i]
      if v == nil then break end
      if v == value then return i end
    end
  end
  return nil
end

return toolbox
