-- The toolbox's ordering: sorted, sortedBy, reversed (see ToolboxCommon.lua for the conventions).
--
-- A stable merge sort written in Lua: Lua's table.sort is neither stable nor safe with an
-- inconsistent `less` ("invalid order function for sorting", or a result that depends on it). Here
-- every loop is bounded by the count, so any `less` gives a permutation of the elements in
-- O(n log n) calls, and `less` is called Lua->Lua (cheaper than table.sort's calls from C). Runs of
-- 12 are sorted by insertion first, then merged bottom-up between two lists.

local G, common = ...
local KIND_DICTIONARY = common.KIND_DICTIONARY
local collection, optFunction, checkFunction = common.collection, common.optFunction, common.checkFunction
local elements, keysOf, array, list = common.elements, common.keysOf, common.array, common.list
local rawget, sort, uniform = G.rawget, G.table.sort, common.uniform

-- The merge sort, written once and compiled into four variants that differ only in how two
-- elements compare (`LESS(x, y)` below): by a block, by `<` inline, and by precomputed keys
-- (ascending, descending) on positions. Inline compares save a Lua call per comparison.
local MERGE_SORT = [[
local list = ...
local RUN = 12
-- Sorts a[1..n] (`by`: the block or the keys); returns the sorted list (`a` or a second list).
return function(a, n, by)
  for lo = 1, n, RUN do
    local hi = lo + RUN - 1
    if hi > n then hi = n end
    for i = lo + 1, hi do
      local v = a[i]
      local j = i - 1
      while j >= lo and LESS(v, a[j]) do
        a[j + 1] = a[j]
        j = j - 1
      end
      a[j + 1] = v
    end
  end
  if n <= RUN then return a end
  local src, dst = a, list(n)
  local width = RUN
  while width < n do
    for lo = 1, n, 2 * width do
      local mid = lo + width - 1
      local hi = mid + width
      if hi > n then hi = n end
      if mid >= hi or not LESS(src[mid + 1], src[mid]) then  -- one run, or already in order
        for k = lo, hi do dst[k] = src[k] end
      else
        local i, j, k = lo, mid + 1, lo
        local x, y = src[i], src[j]
        while true do
          if LESS(y, x) then  -- the right one only when strictly less: stable
            dst[k] = y
            k = k + 1
            j = j + 1
            if j > hi then break end
            y = src[j]
          else
            dst[k] = x
            k = k + 1
            i = i + 1
            if i > mid then break end
            x = src[i]
          end
        end
        for m = i, mid do dst[k] = src[m] k = k + 1 end
        for m = j, hi do dst[k] = src[m] k = k + 1 end
      end
    end
    src, dst = dst, src
    width = width * 2
  end
  return src
end
]]

--- The merge sort with `LESS(x, y)` written as `compare` (`%1`, `%2`: the operands), in
--- parentheses: `not LESS(x, y)` must stay `not (x < y)`, never `(not x) < y`.
local function mergeSort(name, compare)
  local source = MERGE_SORT:gsub("LESS%(([^,]+), ([^)]+%]?)%)", "(" .. compare .. ")")
  return G.load(source, "=bk/ToolboxSorting.lua (" .. name .. ")", "t", {})(list)
end
local sortWith = mergeSort("block", "by(%1, %2)")
local sortInline = mergeSort("<", "%1 < %2")
local sortByKeys = mergeSort("keys", "by[%1] < by[%2]")
local sortByKeysDescending = mergeSort("keys descending", "by[%2] < by[%1]")

--- A new list holding the elements of the collection (dictionaries: its values).
local function copyElements(t, kind, n)
  local source, count = elements(t, kind, n)
  if source ~= t then return source, count end
  local copy = list(count)
  for i = 1, count do copy[i] = t[i] end
  return copy, count
end

local toolbox = {}

function toolbox.sorted(c, less)
  local t, kind, n = collection(c, 1, "sorted")
  optFunction(less, 2, "sorted")
  local a, count = copyElements(t, kind, n)
  if less == nil then
    -- Integers alone, or strings alone: equal elements are the same value, so stability cannot be
    -- seen and Lua's own sort (C, no call per comparison) does. Else `<` inline, stably (1 and 1.0
    -- are equal but not the same).
    if uniform(a, count) then
      sort(a)
      return array(a)
    end
    return array(sortInline(a, count))
  end
  return array(sortWith(a, count, less))
end

function toolbox.sortedBy(c, key, descending)
  local t, kind, n = collection(c, 1, "sortedBy")
  checkFunction(key, 2, "sortedBy")
  local values, keys, count
  if kind == KIND_DICTIONARY then
    local names, m = keysOf(t)
    values, keys, count = list(m), list(m), 0
    for i = 1, m do
      local k = names[i]
      local v = rawget(t, k)
      if v ~= nil then
        count = count + 1
        values[count] = v
        keys[count] = key(k, v)
      end
    end
  else
    values, keys, count = list(n), list(n), n
    for i = 1, n do
      local v = t[i]
      if v == nil then count = i - 1 break end
      values[i] = v
      keys[i] = key(v)  -- once per element
    end
  end
  local p = list(count)
  for i = 1, count do p[i] = i end
  if descending then p = sortByKeysDescending(p, count, keys) else p = sortByKeys(p, count, keys) end
  local result = list(count)
  for i = 1, count do result[i] = values[p[i]] end
  return array(result)
end

function toolbox.reversed(c)
  local t, kind, n = collection(c, 1, "reversed")
  local source, count = elements(t, kind, n)
  local result = list(count)
  for i = 1, count do result[i] = source[count + 1 - i] end
  return array(result)
end

return toolbox
