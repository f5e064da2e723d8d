-- The Lua half of dynamic delegates (see DelegateChunk.swift), loaded once per state as
-- "=bk/DelegateChunk.lua". Uses no globals: it may load before the standard libraries are open.
local rawset = ...
local helpers = {}

-- The general dispatcher of one protocol method. `blocks` maps method names to
-- blocks; `weak.real` is the real delegate (weak table). Like BlocksKit's own delegate classes, it
-- calls the real delegate's method (as `real:name(...)`), then the block (with the method's
-- arguments only); a `combine` method joins their answers, otherwise the block's non-nil answer
-- wins, then the real delegate's, then the protocol's default.
function helpers.dispatcher(blocks, weak, name, default, combine)
  if combine == "and" or combine == "or" then
    local isAnd = combine == "and"
    return function(_, ...)
      local real, method = weak.real, nil
      if real ~= nil then method = real[name] end
      local block = blocks[name]
      local a, b
      if method ~= nil then a = method(real, ...) end
      if block ~= nil then b = block(...) end
      if method == nil then
        if block == nil then return default end
        return b
      end
      if block == nil then return a end
      if isAnd then return a and b end
      return a or b
    end
  end
  return function(_, ...)
    local real, answer = weak.real, nil
    if real ~= nil then
      local method = real[name]
      if method ~= nil then answer = method(real, ...) end
    end
    local block = blocks[name]
    if block ~= nil then
      local own = block(...)
      if own ~= nil then return own end
    end
    if answer ~= nil then return answer end
    return default
  end
end

-- The fast dispatchers: for a block of `n` fixed parameters while there is no real delegate, the
-- cached function calls the block with exactly its parameters (extra arguments would be dropped by
-- the block anyway) and no vararg frame: about one plain call's cost. (A block's extra results
-- pass through here; delegate methods answer one value.) Swift rebuilds the cache when
-- a block or the real delegate changes, so these never see a real delegate.
local exact = {  -- tail calls: no frame of their own
  [0] = function(f) return function(_) return f() end end,
  function(f) return function(_, a) return f(a) end end,
  function(f) return function(_, a, b) return f(a, b) end end,
  function(f) return function(_, a, b, c) return f(a, b, c) end end,
  function(f) return function(_, a, b, c, d) return f(a, b, c, d) end end,
  function(f) return function(_, a, b, c, d, e) return f(a, b, c, d, e) end end,
}
local orDefault = {
  [0] = function(f, v) return function(_) local r = f() if r == nil then return v end return r end end,
  function(f, v) return function(_, a) local r = f(a) if r == nil then return v end return r end end,
  function(f, v) return function(_, a, b) local r = f(a, b) if r == nil then return v end return r end end,
  function(f, v) return function(_, a, b, c) local r = f(a, b, c) if r == nil then return v end return r end end,
  function(f, v)
    return function(_, a, b, c, d) local r = f(a, b, c, d) if r == nil then return v end return r end
  end,
  function(f, v)
    return function(_, a, b, c, d, e) local r = f(a, b, c, d, e) if r == nil then return v end return r end
  end,
}

-- `parameters`: the block's fixed parameter count when it has no `...` (nil otherwise).
function helpers.make(blocks, weak, name, default, combine, parameters)
  local block = blocks[name]
  if weak.real == nil then
    if block == nil then
      return function() return default end
    end
    -- With only a block, a combine method answers the block's answer as it is.
    local value = default
    if combine ~= nil then value = nil end
    if parameters ~= nil then
      if value == nil then
        if exact[parameters] ~= nil then return exact[parameters](block) end
      elseif orDefault[parameters] ~= nil then
        return orDefault[parameters](block, value)
      end
    end
    return function(_, ...)
      local r = block(...)
      if r == nil then return value end
      return r
    end
  end
  return helpers.dispatcher(blocks, weak, name, default, combine)
end

-- t[k] with metamethods, for Swift (which calls it in protected mode).
function helpers.index(t, k) return t[k] end

-- Installs property accessors on a metatable: `getters[k](obj)` answers `obj.k`, `setters[k](obj, v)`
-- handles `obj.k = v`; every other key goes where it went before (`index` is the previous
-- `__index`: a table, a function or nil; likewise `newindex`), so the class keeps its methods.
-- `set` is the base library's `rawset` when Swift found it, else the bridge's own.
function helpers.hook(mt, getters, setters, index, indexIsFunction, newindex, newindexIsFunction, set)
  set = set or rawset
  local get
  if index == nil then
    get = function(obj, k)
      local getter = getters[k]
      if getter ~= nil then return getter(obj) end
    end
  elseif indexIsFunction then
    get = function(obj, k)
      local getter = getters[k]
      if getter ~= nil then return getter(obj) end
      return index(obj, k)
    end
  else
    get = function(obj, k)
      local getter = getters[k]
      if getter ~= nil then return getter(obj) end
      return index[k]
    end
  end
  local put
  if newindex == nil then
    put = function(obj, k, v)
      local setter = setters[k]
      if setter ~= nil then return setter(obj, v) end
      set(obj, k, v)
    end
  elseif newindexIsFunction then
    put = function(obj, k, v)
      local setter = setters[k]
      if setter ~= nil then return setter(obj, v) end
      return newindex(obj, k, v)
    end
  else
    put = function(obj, k, v)
      local setter = setters[k]
      if setter ~= nil then return setter(obj, v) end
      newindex[k] = v
    end
  end
  -- Raw: the class's own metatable (a base class, a strict-class guard) must not see these.
  rawset(mt, "__index", get)
  rawset(mt, "__newindex", put)
end

return helpers
