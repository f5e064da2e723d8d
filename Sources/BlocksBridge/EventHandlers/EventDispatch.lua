-- The handler calls of bk.sendActionsForControlEvents. Lua, not Swift, so that a handler called
-- from a task may suspend it (bk.sleep, bk.await): the Swift function collects the handlers and
-- hands this function over to the trampoline (BK_CONTINUE_CALL), which calls it with lua_callk once
-- the Swift frame is gone, and xpcall is yieldable. Loaded once per state by EventDispatch.swift as
-- "=bk/EventDispatch.lua"; gets xpcall, the reporters' message handler and the reporter.
local xpcall, traceback, report = ...

-- handlers: the list of handlers due when the call began (a snapshot: a handler may add or remove
-- handlers). Each is called once, in order, with (obj, ...); a failure is reported (bk.onError)
-- and the others still run. Returns how many returned without error.
return function(handlers, count, obj, ...)
  local succeeded = 0
  for i = 1, count do
    local ok, err = xpcall(handlers[i], traceback, obj, ...)
    if ok then succeeded = succeeded + 1 else report(err) end
  end
  return succeeded
end
