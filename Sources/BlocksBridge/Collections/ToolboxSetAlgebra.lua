-- The toolbox's set algebra: union, intersection, difference, symmetricDifference (a set when `a`
-- is a set, an index set when `a` is an index set, else an ordered set in the order of `a`, then
-- `b`) and isSubset, isSuperset, isDisjoint (booleans; any list kinds). A dictionary's elements
-- are its values. Elements compare as Lua table keys (raw equality; 1 and 1.0 are one element); a
-- NaN element is an error naming it (it can be no set's member).

local G, common = ...
local collection, elements, argError = common.collection, common.elements, common.argError
local membersOf, setWithMembers, indexValue, list = common.membersOf, common.setWithMembers, common.indexValue,
  common.list
local describePlace = common.describePlace
local KIND_SET, KIND_INDEXSET = common.KIND_SET, common.KIND_INDEXSET
local SET, ORDERED, INDEXSET = common.SET, common.ORDERED, common.INDEXSET
local setmetatable = G.setmetatable
local sort = G.table.sort

--- The elements of argument `arg` as a list, its count, its kind and its membership table. Called
--- by a helper or by `combine` (a helper's tail call): errors name the caller two levels up.
local function operand(c, arg, name)
  local t, kind, n = collection(c, arg, name, 5)
  local source, count = elements(t, kind, n)
  return source, count, kind, membersOf(source, count, arg, name, 5)
end

--- Builds the result of `name` from the elements of `a` kept by `keepA(v)`, then those of `b`
--- kept by `keepB(v)`, each once; of `a`'s kind (see the top of this file).
local function combine(a, b, name, keepA, keepB)
  local sa, na, kind, ma = operand(a, 1, name)
  local sb, nb, _, mb = operand(b, 2, name)
  local result, members, count = list(0), {}, 0
  local indexes = kind == KIND_INDEXSET
  for i = 1, na do
    local v = sa[i]
    if members[v] == nil and keepA(v, mb) then
      members[v] = true
      count = count + 1
      result[count] = v
    end
  end
  if keepB ~= nil then
    for i = 1, nb do
      local v = sb[i]
      if members[v] == nil and keepB(v, ma) then
        if indexes then
          v = indexValue(v)
          if v == nil then
            argError(2, name, "non-negative integers expected, got " .. G.type(sb[i]) .. " at "
              .. describePlace(nil, i))
          end
        end
        members[v] = true
        count = count + 1
        result[count] = v
      end
    end
  end
  if indexes then
    sort(result)  -- integers: equal ones are one element, so order is all there is
    return setmetatable(result, INDEXSET)
  end
  return setWithMembers(result, members, kind == KIND_SET and SET or ORDERED)
end

local function always() return true end
local function inOther(v, other) return other[v] ~= nil end
local function notInOther(v, other) return other[v] == nil end

local toolbox = {}

function toolbox.union(a, b) return combine(a, b, "union", always, always) end
function toolbox.intersection(a, b) return combine(a, b, "intersection", inOther) end
function toolbox.difference(a, b) return combine(a, b, "difference", notInOther) end
function toolbox.symmetricDifference(a, b)
  return combine(a, b, "symmetricDifference", notInOther, notInOther)
end

--- True when every element of `sa[1..na]` is (`expected` true) / is not (false) in `members`.
local function every(sa, na, members, expected)
  for i = 1, na do
    if (members[sa[i]] ~= nil) ~= expected then return false end
  end
  return true
end

function toolbox.isSubset(a, b)
  local sa, na = operand(a, 1, "isSubset")
  local _, _, _, mb = operand(b, 2, "isSubset")
  return every(sa, na, mb, true)
end

function toolbox.isSuperset(a, b)
  local _, _, _, ma = operand(a, 1, "isSuperset")
  local sb, nb = operand(b, 2, "isSuperset")
  return every(sb, nb, ma, true)
end

function toolbox.isDisjoint(a, b)
  local sa, na = operand(a, 1, "isDisjoint")
  local _, _, _, mb = operand(b, 2, "isDisjoint")
  return every(sa, na, mb, false)
end

return toolbox
