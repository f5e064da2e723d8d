-- The toolbox's set algebra: union, intersection, difference, symmetricDifference (a set when `a`
-- is a set, an index set when `a` is an index set, else an ordered set in the order of `a`, then
-- `b`) and isSubset, isSuperset, isDisjoint (booleans; any list kinds). A dictionary's elements
-- are its values. Elements compare as Lua table keys (raw equality; 1 and 1.0 are one element); a
-- NaN element is an error naming it (it can be no set's member).

local G, common = ...
local collection, elements, argError = common.collection, common.elements, common.argError
local membersOf, setWithMembers, indexValue, list = common.membersOf, common.setWithMembers, common.indexValue,
  common.list
local describePlace, nanError, newtable = common.describePlace, common.nanError, common.newtable
local KIND_SET, KIND_INDEXSET = common.KIND_SET, common.KIND_INDEXSET
local SET, ORDERED, INDEXSET = common.SET, common.ORDERED, common.INDEXSET
local setmetatable = G.setmetatable
local sort = G.table.sort

--- The elements of argument `arg` as a list, its count and its kind. Called by a helper or by
--- `combine` (a helper's tail call): errors name the caller two levels up.
local function operand(c, arg, name)
  local t, kind, n = collection(c, arg, name, 5)
  local source, count = elements(t, kind, n)
  return source, count, kind
end

-- What combine keeps: of `a`, the elements in `b` (INTERSECTION) or not (DIFFERENCE, SYMMETRIC), or
-- all (UNION); then of `b`, those not in `a` (UNION, SYMMETRIC) or none.
local UNION, INTERSECTION, DIFFERENCE, SYMMETRIC = 1, 2, 3, 4

--- The result of `name` (see the top of this file), each element once, of `a`'s kind. The
--- membership checks are inline (one loop per case) rather than a call per element.
local function combine(a, b, name, mode)
  local sa, na, kind = operand(a, 1, name)
  local sb, nb = operand(b, 2, name)
  local mb = membersOf(sb, nb, 2, name, 4)
  local result, members, count = list(0), newtable(0, na), 0
  local ma = members  -- the elements of `a` seen so far (a union's members are exactly those)
  -- A NaN element of `a` is an error: checked where each element is first seen (NaN is never a
  -- member, so every NaN reaches that check).
  if mode == UNION then
    for i = 1, na do
      local v = sa[i]
      if members[v] == nil then
        if v ~= v then nanError(1, name, nil, i, false) end
        members[v] = true
        count = count + 1
        result[count] = v
      end
    end
  elseif mode == INTERSECTION then
    for i = 1, na do
      local v = sa[i]
      if members[v] == nil then
        if v ~= v then nanError(1, name, nil, i, false) end
        if mb[v] ~= nil then
          members[v] = true
          count = count + 1
          result[count] = v
        end
      end
    end
  elseif mode == DIFFERENCE then
    for i = 1, na do
      local v = sa[i]
      if members[v] == nil then
        if v ~= v then nanError(1, name, nil, i, false) end
        if mb[v] == nil then
          members[v] = true
          count = count + 1
          result[count] = v
        end
      end
    end
  else  -- SYMMETRIC: `ma` records all of `a` for the walk of `b`
    ma = newtable(0, na)
    for i = 1, na do
      local v = sa[i]
      if ma[v] == nil then
        if v ~= v then nanError(1, name, nil, i, false) end
        ma[v] = true
        if mb[v] == nil then
          members[v] = true
          count = count + 1
          result[count] = v
        end
      end
    end
  end
  local indexes = kind == KIND_INDEXSET
  if mode == UNION or mode == SYMMETRIC then
    for i = 1, nb do
      local v = sb[i]
      if ma[v] == nil and (ma == members or members[v] == nil) then
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

local toolbox = {}

function toolbox.union(a, b) return combine(a, b, "union", UNION) end
function toolbox.intersection(a, b) return combine(a, b, "intersection", INTERSECTION) end
function toolbox.difference(a, b) return combine(a, b, "difference", DIFFERENCE) end
function toolbox.symmetricDifference(a, b) return combine(a, b, "symmetricDifference", SYMMETRIC) end

--- True when every element of `sa[1..na]` is (`expected` true) / is not (false) in `members`.
local function every(sa, na, members, expected)
  for i = 1, na do
    if (members[sa[i]] ~= nil) ~= expected then return false end
  end
  return true
end

--- isSubset / isDisjoint: every element of `a` is (`expected`) / is not in `b`. Called by a
--- helper's tail call.
--- (`argA`, `argB`: their argument numbers.)
local function against(a, argA, b, argB, name, expected)
  local sa, na = operand(a, argA, name)
  local sb, nb = operand(b, argB, name)
  for i = 1, na do
    local v = sa[i]
    if v ~= v then nanError(argA, name, nil, i, false) end
  end
  return every(sa, na, membersOf(sb, nb, argB, name, 4), expected)
end

function toolbox.isSubset(a, b) return against(a, 1, b, 2, "isSubset", true) end
function toolbox.isSuperset(a, b) return against(b, 2, a, 1, "isSuperset", true) end
function toolbox.isDisjoint(a, b) return against(a, 1, b, 2, "isDisjoint", false) end

return toolbox
