/// The Lua half of dynamic delegates, loaded once per state.
///
/// Why Lua: `dd:method(...)` must cost about what a plain Lua method call costs. A Swift function on
/// that path pays the trampoline and a protected call per call; a Lua closure cached in the delegate
/// table (the VM's raw-field fast path, then one closure call) does not. The same goes for the
/// `__index` / `__newindex` hooks installed on Lua classes: every method lookup of an instance goes
/// through them. The chunk uses no globals (it may be loaded before the standard libraries are open);
/// `rawset` is passed in by Swift.
enum DelegateChunk {
    static let source = #"""
local rawset = ...
local helpers = {}

-- The function a dynamic delegate caches for one protocol method. `blocks` maps method names to
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

-- t[k] with metamethods, for Swift (which calls it in protected mode).
function helpers.index(t, k) return t[k] end

-- Installs property accessors on a metatable: `getters[k](obj)` answers `obj.k`, `setters[k](obj, v)`
-- handles `obj.k = v`; every other key goes where it went before (`index` is the previous
-- `__index`: a table, a function or nil; likewise `newindex`), so the class keeps its methods.
function helpers.hook(mt, getters, setters, index, indexIsFunction, newindex, newindexIsFunction)
  if index == nil then
    mt.__index = function(obj, k)
      local get = getters[k]
      if get ~= nil then return get(obj) end
    end
  elseif indexIsFunction then
    mt.__index = function(obj, k)
      local get = getters[k]
      if get ~= nil then return get(obj) end
      return index(obj, k)
    end
  else
    mt.__index = function(obj, k)
      local get = getters[k]
      if get ~= nil then return get(obj) end
      return index[k]
    end
  end
  if newindex == nil then
    mt.__newindex = function(obj, k, v)
      local set = setters[k]
      if set ~= nil then return set(obj, v) end
      rawset(obj, k, v)
    end
  elseif newindexIsFunction then
    mt.__newindex = function(obj, k, v)
      local set = setters[k]
      if set ~= nil then return set(obj, v) end
      return newindex(obj, k, v)
    end
  else
    mt.__newindex = function(obj, k, v)
      local set = setters[k]
      if set ~= nil then return set(obj, v) end
      newindex[k] = v
    end
  end
end

return helpers
"""#
}
