-- The Lua walks of bk.select, bk.reject and bk.reduce over list kinds: CollectionHelpers checks
-- the arguments and lays out the result in Swift, then continues into one of these once its Swift
-- frame is gone (BK_CONTINUE_CALL, ListWalks.swift), so each block is called Lua->Lua, cheaper
-- than the C walk's C->Lua call per element (Walk.c), and a block may still yield (suspend its
-- task) and raise any value unchanged.
--
-- Each gets (t, n, f, ...): the list `t`, which has no metatable or a bk kind's (a read `t[i]` of a
-- present position is raw; a list with any other metatable takes the C walk, which reads raw); `n`,
-- its raw border when the helper started, never a size: the loops stop at the first nil before
-- it, so elements a block appends are not visited and one it removes ends the walk, as in the C
-- walk; and the block `f`. No globals: it may load before the standard libraries are open.

local walks = {}

--- select(t, n, f, r): appends to `r` the elements for which `f` is truthy.
function walks.select(t, n, f, r)
  local k = 0
  for i = 1, n do
    local v = t[i]
    if v == nil then break end
    if f(v) then
      k = k + 1
      r[k] = v
    end
  end
  return r
end

--- reject(t, n, f, r): appends to `r` the elements for which `f` is falsy.
function walks.reject(t, n, f, r)
  local k = 0
  for i = 1, n do
    local v = t[i]
    if v == nil then break end
    if not f(v) then
      k = k + 1
      r[k] = v
    end
  end
  return r
end

--- reduce(t, n, f, a): folds the elements into `a` with `a = f(a, v)`.
function walks.reduce(t, n, f, a)
  for i = 1, n do
    local v = t[i]
    if v == nil then break end
    a = f(a, v)
  end
  return a
end

return walks
