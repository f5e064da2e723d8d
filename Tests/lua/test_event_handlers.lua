-- Event handlers (UIControl+BlocksKit): addEventHandler, removeEventHandlersForControlEvents,
-- hasEventHandlersForControlEvents, sendActionsForControlEvents on any table or bridged object.

-- Captures reported callback errors (bk.onError's registry slot) while `f` runs.
local function capturingErrors(f)
  local registry = debug.getregistry()
  local saved = registry["bk.onError"]
  local errors = {}
  registry["bk.onError"] = function(message) errors[#errors + 1] = message end
  local okCall, err = pcall(f)
  registry["bk.onError"] = saved
  if not okCall then error(err, 0) end
  return errors
end

test("handlers get the object and the extra arguments", function()
  local button = {}
  local got
  bk.addEventHandler(button, function(sender, ...) got = table.pack(sender, ...) end, "touchUpInside")
  eq(bk.sendActionsForControlEvents(button, "touchUpInside", 1, nil, "three"), 1)
  eq(got[1], button)
  eq(got.n, 4)
  eq(got[2], 1)
  eq(got[4], "three")
end)

test("only handlers of the sent events run, in registration order, each once", function()
  local control = {}
  local log = {}
  bk.addEventHandler(control, function() log[#log + 1] = "down" end, "touchDown")
  bk.addEventHandler(control, function() log[#log + 1] = "up" end, { "touchUpInside", "touchUpOutside" })
  bk.addEventHandler(control, function() log[#log + 1] = "changed" end, "valueChanged")
  bk.sendActionsForControlEvents(control, "touchUpOutside")
  deepEq(log, { "up" })
  log = {}
  eq(bk.sendActionsForControlEvents(control, { "touchUpInside", "touchUpOutside", "touchDown" }), 2)
  deepEq(log, { "down", "up" }, "a handler for two of the events runs once")
  log = {}
  eq(bk.sendActionsForControlEvents(control, "editingDidEnd"), 0)
  deepEq(log, {})
  eq(bk.sendActionsForControlEvents({}, "touchDown"), 0, "an object without handlers")
end)

test("hasEventHandlersForControlEvents", function()
  local control = {}
  eq(bk.hasEventHandlersForControlEvents(control, "touchDown"), false)
  bk.addEventHandler(control, print, { "touchDown", "touchDragInside" })
  eq(bk.hasEventHandlersForControlEvents(control, "touchDown"), true)
  eq(bk.hasEventHandlersForControlEvents(control, { "valueChanged", "touchDragInside" }), true)
  eq(bk.hasEventHandlersForControlEvents(control, "valueChanged"), false)
  eq(bk.hasEventHandlersForControlEvents(control, {}), false)
end)

test("removeEventHandlersForControlEvents removes the events, keeping the others", function()
  local control = {}
  local log = {}
  bk.addEventHandler(control, function() log[#log + 1] = "a" end, { "touchDown", "valueChanged" })
  bk.addEventHandler(control, function() log[#log + 1] = "b" end, "touchDown")
  bk.addEventHandler(control, function() log[#log + 1] = "c" end, "valueChanged")
  bk.removeEventHandlersForControlEvents(control, "touchDown")
  eq(bk.hasEventHandlersForControlEvents(control, "touchDown"), false)
  bk.sendActionsForControlEvents(control, "touchDown")
  deepEq(log, {})
  bk.sendActionsForControlEvents(control, "valueChanged")
  deepEq(log, { "a", "c" }, "a keeps its other event")
  bk.removeEventHandlersForControlEvents(control)
  eq(bk.hasEventHandlersForControlEvents(control, "valueChanged"), false, "no events: every handler")
end)

test("a failing handler is reported and the others still run", function()
  local control = {}
  local ran = {}
  bk.addEventHandler(control, function() ran[#ran + 1] = 1 end, "tap")
  bk.addEventHandler(control, function() error("handler broke") end, "tap")
  bk.addEventHandler(control, function() ran[#ran + 1] = 3 end, "tap")
  local count
  local errors = capturingErrors(function() count = bk.sendActionsForControlEvents(control, "tap") end)
  deepEq(ran, { 1, 3 })
  eq(count, 2, "handlers that ran cleanly")
  eq(#errors, 1)
  ok(errors[1]:find("handler broke", 1, true), errors[1])
  ok(errors[1]:find("stack traceback", 1, true), "with traceback")
end)

test("handlers may add and remove handlers while they run", function()
  local control = {}
  local log = {}
  bk.addEventHandler(control, function()
    log[#log + 1] = "first"
    bk.removeEventHandlersForControlEvents(control, "tap")
    bk.addEventHandler(control, function() log[#log + 1] = "added" end, "tap")
  end, "tap")
  bk.addEventHandler(control, function() log[#log + 1] = "second" end, "tap")
  bk.sendActionsForControlEvents(control, "tap")
  deepEq(log, { "first", "second" }, "the handlers due when sent")
  bk.sendActionsForControlEvents(control, "tap")
  deepEq(log, { "first", "second", "added" })
end)

test("handlers do not keep their object alive", function()
  local weak = setmetatable({}, { __mode = "k" })
  do
    local control = {}
    bk.addEventHandler(control, function() return control end, "tap")
    weak[control] = true
  end
  collectgarbage()
  collectgarbage()
  eq(next(weak), nil)
end)

test("bridged objects and method syntax", function()
  local parser = bk.XMLParser("<a/>")
  local got
  bk.addEventHandler(parser, function(sender, x) got = { sender, x } end, "done")
  bk.sendActionsForControlEvents(parser, "done", 5)
  eq(got[1], parser)
  eq(got[2], 5)
  local Button = { addEventHandler = bk.addEventHandler, sendActionsForControlEvents = bk.sendActionsForControlEvents }
  Button.__index = Button
  local button = setmetatable({}, Button)
  local n = 0
  button:addEventHandler(function(sender) eq(sender, button) n = n + 1 end, "tap")
  button:sendActionsForControlEvents("tap")
  eq(n, 1)
end)

test("events as a set: {touchUpInside = true} is {\"touchUpInside\"}; false leaves one out", function()
  local control, log = {}, {}
  bk.addEventHandler(control, function() log[#log + 1] = "tap" end, { touchUpInside = true, touchDown = false })
  eq(bk.hasEventHandlersForControlEvents(control, { touchUpInside = true }), true)
  eq(bk.hasEventHandlersForControlEvents(control, "touchDown"), false)
  eq(bk.sendActionsForControlEvents(control, { "valueChanged", touchUpInside = true }), 1)
  deepEq(log, { "tap" })
  raises("bad argument #3 to 'addEventHandler' (event names must be strings", bk.addEventHandler, {}, print,
    { touchUpInside = "yes" })
end)

test("bad arguments", function()
  raises("bad argument #1 to 'addEventHandler' (table expected, got number)", bk.addEventHandler, 1, print, "tap")
  raises("bad argument #2 to 'addEventHandler' (function expected, got nil)", bk.addEventHandler, {}, nil, "tap")
  raises("bad argument #3 to 'addEventHandler' (string or table expected, got no value)", bk.addEventHandler, {}, print)
  raises("bad argument #3 to 'addEventHandler' (no events given)", bk.addEventHandler, {}, print, {})
  raises("bad argument #3 to 'addEventHandler' (event names must be strings", bk.addEventHandler, {}, print, { 1 })
  raises("bad argument #2 to 'sendActionsForControlEvents' (string or table expected, got nil)",
    bk.sendActionsForControlEvents, {}, nil)
  raises("bad argument #2 to 'hasEventHandlersForControlEvents' (string or table expected, got boolean)",
    bk.hasEventHandlersForControlEvents, {}, true)
end)
