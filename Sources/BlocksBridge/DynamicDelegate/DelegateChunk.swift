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
-- blocks; `weak.real` is the real delegate (weak table). The block gets the method's arguments.
function helpers.dispatcher(blocks, weak, name, default, combine)
  if combine == "and" or combine == "or" then
    local isAnd = combine == "and"
    return function(_, ...)
      local block, real = blocks[name], weak.real
      local method
      if real ~= nil then method = real[name] end
      local a, b
      if block ~= nil then a = block(...) end
      if method ~= nil then b = method(real, ...) end
      if block == nil then
        if method == nil then return default end
        return b
      end
      if method == nil then return a end
      if isAnd then return a and b end
      return a or b
    end
  end
  return function(_, ...)
    local block = blocks[name]
    if block ~= nil then
      local answer = block(...)
      if answer ~= nil then return answer end
    end
    local real = weak.real
    if real ~= nil then
      local method = real[name]
      if method ~= nil then
        local answer = method(real, ...)
        if answer ~= nil then return answer end
      end
    end
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
