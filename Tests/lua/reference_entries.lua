-- docs/reference.md's entries of kinds of objects, for the tests that check help and annotations
-- against it (test_bklua_help.lua, test_reference.lua): `dofile` returns this module.
--
-- A kind's entry is a `### <Kind> objects (bk.Type, ...)` heading (any `### ` heading that does not
-- start with `bk.` and names `(bk.` types) with one bullet per member: `- \`ch:receive([timeout])\`: ...`.
-- A bullet's members are its code spans `x:name(...)` / `x.name` before its first `: ` outside code
-- (as bklua's ReferenceHelp.members(ofBullet:) reads them); `bk_name` counts as name.

local M = {}

function M.read(path)
  local f = assert(io.open(path or "docs/reference.md"))
  local text = f:read("a")
  f:close()
  return text
end

function M.bulletMembers(line)
  local head, inCode = {}, false
  for i = 3, #line do
    local c = line:sub(i, i)
    if c == "`" then inCode = not inCode end
    if not inCode and c == " " and line:sub(i - 1, i - 1) == ":" then break end
    head[#head + 1] = c
  end
  local members = {}
  for span in table.concat(head):gmatch("`([^`]*)`") do
    local receiver, member = span:match("^([%a_][%w_]*)[:.]([%a_][%w_]*)")
    if receiver and receiver ~= "bk" then
      members[#members + 1] = { receiver = receiver, name = (member:gsub("^bk_", "")) }
    end
  end
  return members
end

-- { {heading = "### Task objects (bk.Task)", types = {"Task"}, members = {{receiver =, name =}, ...}}, ... }
function M.types(text)
  local entries, current = {}, nil
  for line in ((text or M.read()) .. "\n"):gmatch("([^\n]*)\n") do
    if line:match("^#") then current = nil end
    if line:match("^### ") and not line:match("^### bk%.") and line:find("(bk.", 1, true) then
      current = { heading = line, types = {}, members = {} }
      for name in line:gmatch("bk%.([%a_][%w_]*)") do current.types[#current.types + 1] = name end
      entries[#entries + 1] = current
    elseif current and line:match("^%- `") then
      for _, member in ipairs(M.bulletMembers(line)) do current.members[#current.members + 1] = member end
    end
  end
  return entries
end

-- How the tests make an object of each kind the reference documents: a new kind needs a line here.
M.samples = {
  array = "bk.array{1}", dictionary = "bk.dictionary{a = 1}", set = "bk.set{1}",
  orderedSet = "bk.orderedSet{1}", indexSet = "bk.indexSet{1}",
  Invocation = "bk.invocationWithTarget(nil, print)",
  BlockHandle = "bk.performBlock(function() end, 0)",
  Queue = "bk.queue('q')",
  Worker = "bk.worker(function() end)",
  Channel = "bk.channel(2)",
  Timer = "bk.timerWithTimeInterval(1, function() end)",
  DynamicDelegate = "bk.dynamicDelegateForProtocol({}, bk.protocol('SampleP', {ping = true}))",
  Protocol = "bk.protocol('SampleQ', {})",
  XMLParser = "bk.XMLParser('<a/>')",
  Task = "bk.async(function() end)",
  Debounced = "bk.debounce(function() end, 1)",
  Throttled = "bk.throttle(function() end, 1)",
}

-- Ends what a sample started (a scheduled block, a worker's thread).
M.cleanUp = "if sample_BlockHandle then sample_BlockHandle:cancel() end; if sample_Worker then sample_Worker:result() end"

-- The names of the methods of a live object: its metatable's `methods` or `__index` table's
-- functions, without their `bk_` twins and metamethods (a method known only as `bk_name` is `name`);
-- also the functions by name.
function M.liveMethods(object)
  local meta = debug.getmetatable(object)
  local names, functions = {}, {}
  if type(meta) ~= "table" then return names, functions end
  local methods = type(rawget(meta, "methods")) == "table" and rawget(meta, "methods") or rawget(meta, "__index")
  if type(methods) ~= "table" then return names, functions end
  for key, value in next, methods do
    if type(key) == "string" and not key:match("^__") and type(value) == "function" then
      local name = key:gsub("^bk_", "")
      if functions[name] == nil then names[#names + 1] = name end
      functions[name] = value
    end
  end
  table.sort(names)
  return names, functions
end

return M
